#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""How fast the job-wide watch names a culprit, and how often it is wrong,
on the emulated cluster with real parts: srun --parallel-layout runs
nccl_driver on 4 nodes (tp8, pp4: 32 ranks), a layoutd per node sends its
summaries to the step's leader over loopback TCP with munge, the leader
alerts a real Alertmanager, and this script reads Alertmanager's API.

  stalls   rank 13 (not on the leader's node) stops entering collectives:
           the time from its stop (the driver's own line, written as it
           stops) to the ParallelLayoutHang alert naming it in
           Alertmanager; median and max over --stalls runs, against the
           target threshold + 2 s.
  slow     rank 13's compute 10 % slower (--fault slow:13:10) among ranks
           with +-2 % jitter and 20 % one-step spikes: the time from
           srun's start (a bound from above on the time from the step's
           first record) to the ParallelLayoutSlowRank alert naming rank
           13; target 30 s.
  healthy  the same step with jitter and spikes and no fault: every alert
           is a false alarm; target 0 over --healthy runs.

Alertmanager is polled all along, and --grace seconds past the last step:
an alert that comes after its step ended, or is gone before a phase ends,
counts as much as one seen while the step runs.

Both sides did the same work: every stall's and slow run's alert names
exactly rank 13 on the node srun put it on, and every healthy run's 32
ranks exit 0 (srun's status, and each rank's own result=ok line).  A run
with a fault that brings other alerts (but the ranks' failed exits after
the driver's own timeout, in a stall) is a wrong culprit.

Usage: bench/bench_alert.py [BUILD_DIR] [--stalls N] [--healthy N] [--slow N]
       [--interval-ms MS] [--threshold S] [--seed-base N] [--grace S] [--keep DIR]
       (as root; BUILD_DIR default _build)
Exit: 0 targets met, 1 a target missed or a detection problem (late,
missed, wrong culprit, false alarm), 2 a run did not do what it should.
"""
import argparse
import json
import os
import shutil
import statistics
import sys
import threading
import time

import benchlab

HERE = os.path.dirname(os.path.abspath(__file__))

p = argparse.ArgumentParser()
p.add_argument("build", nargs="?", default=os.path.join(HERE, "..", "_build"))
p.add_argument("--stalls", type=int, default=20)
p.add_argument("--healthy", type=int, default=30)
p.add_argument("--slow", type=int, default=3)
p.add_argument("--interval-ms", type=int, default=1000)
p.add_argument("--threshold", type=int, default=5)
p.add_argument("--seed-base", type=int, default=1,
               help="run i of each phase gives the driver --seed BASE+i: its own jitter and spikes")
p.add_argument("--grace", type=float, default=None,
               help="seconds to watch Alertmanager after a phase's last step ended "
               "(default threshold + 10: an exit is judged a threshold after it, and "
               "the leader keeps a step 6 s after its last summary)")
p.add_argument("--keep", default=None,
               help="directory for the evidence: every alert Alertmanager showed (polled "
               "all along), what the leader sent the webhook, the layoutd logs, each "
               "rank's driver output, srun's output of a run with a problem")
a = p.parse_args()
GRACE = a.grace if a.grace is not None else a.threshold + 10
PLUGIN, HOOK, DRIVER, LAYOUTD = benchlab.parts(a.build, "bench_alert")

from clusterlib import LabError  # noqa: E402
from watchlab import WatchLab, rows_of  # noqa: E402

STEP = ["-N4", "-n32", "--parallel-layout=tp8,pp4"]
HEALTHY = ["--compute-us", "20000", "--jitter", "2", "--spike", "20:50"]
SLOW_S = 30
bad = []        # a run that did not do its work (exit 2)
problems = []   # a detection problem: late, missed, wrong culprit, false alarm (exit 1)
keep_out = {}   # run label -> srun's output, kept for a run with a problem


def job_of(x):
    try:
        return int(x["labels"].get("job_id", 0))
    except (TypeError, ValueError):
        return 0


def named(alerts, name, job_after):
    return [x for x in alerts if x["labels"].get("alertname") == name and job_of(x) > job_after]


def brief(x):
    """An alert in one line: name, labels that place it, its summary."""
    lab_ = x["labels"]
    return "%s job %s rank %s node %s: %s" % (
        lab_.get("alertname"), lab_.get("job_id"), lab_.get("rank", "-"), lab_.get("node", "-"),
        (x.get("annotations") or {}).get("summary", "")[:160])


def the_job(rows, before):
    """The step's job id from its tasks' lines (before + 1 when none)."""
    ids = {int(r["job"]) for r in rows if r.get("job", "").isdigit()}
    return ids.pop() if len(ids) == 1 else before + 1


def load():
    return "%.2f %.2f %.2f" % os.getloadavg()


def exits_ok(job):
    """Ranks (of 32) whose driver said result=ok for this job."""
    n = 0
    for r in range(32):
        try:
            with open(os.path.join(wl.sync, "exec.%d.%d" % (job, r))) as f:
                n += "result=ok" in f.read()
        except OSError:
            pass
    return n


def keep(label, job, rc, out, err):
    keep_out[label] = "job %s rc %s\n--- stdout\n%s\n--- stderr\n%s\n" % (job, rc, out, err)


phases = {}


def phase(name, fn, n):
    if n <= 0:
        return
    t0, l0 = time.time(), load()
    fn(n)
    phases[name] = dict(wall_s=round(time.time() - t0, 1), load_start=l0, load_end=load())


wl = WatchLab(PLUGIN, HOOK, DRIVER, LAYOUTD, name="bench_alert", threshold=a.threshold,
              interval_ms=a.interval_ms)
try:
    wl.up()
except (LabError, RuntimeError) as e:
    print("bench_alert: the lab did not come up: %s" % e)
    wl.down()
    sys.exit(2)

# Per run: (phase, index, job, rank 13's node); every alert of the job is
# looked at once the phases are over (late ones included).
runs = []
stall_s = []
stall_named_13 = 0


def stalls(n):
    global stall_named_13
    for i in range(n):
        before = wl.last_job_id()
        rc, out, err, when, seen, stop = wl.watched(
            STEP + [wl.exec] + HEALTHY + ["--steps", "40", "--timeout", str(a.threshold + 8),
                                          "--fault=stop:13:3", "--seed", str(a.seed_base + i)],
            lambda al: named(al, "ParallelLayoutHang", before),
            at_sighting=lambda al: wl.stopped_at(None, 13))
        rows = rows_of(out)
        job = the_job(rows, before)
        node13 = [r["node"] for r in rows if r["rank"] == "13"]
        runs.append(("stall", i, job, node13[0] if node13 else None))
        label = "stall %d (job %d)" % (i, job)
        if stop is None:
            stop = wl.stopped_at(job, 13)
        if stop is None or len(node13) != 1:
            bad.append("%s: rank 13 did not stop as told (%d tasks, rc %d)" % (label, len(rows), rc))
            keep(label, job, rc, out, err)
            continue
        mine = named(seen, "ParallelLayoutHang", before)
        if when is None:
            problems.append("%s: no ParallelLayoutHang while the step ran" % label)
            keep(label, job, rc, out, err)
            continue
        if not culprit_13(mine, node13[0], label, job, rc, out, err):
            continue
        stall_named_13 += 1
        stall_s.append(when - stop)
        late = when - stop > a.threshold + 2
        if late:
            problems.append("%s: late: %.2f s" % (label, when - stop))
            keep(label, job, rc, out, err)
        print("stall %2d: job %d: rank 13 stopped; ParallelLayoutHang for rank 13 on %s in "
              "Alertmanager %.2f s later%s" % (i, job, node13[0], when - stop, " LATE" if late else ""),
              flush=True)


def culprit_13(mine, node13, label, job, rc, out, err):
    """Whether the run's alerts of the kind looked for name exactly rank 13
    on its node; else a problem noted and the evidence kept."""
    if (len(mine) == 1 and mine[0]["labels"].get("rank") == "13"
            and mine[0]["labels"].get("node") == node13):
        return True
    problems.append("%s: wrong culprit: %s (rank 13 is on %s)"
                    % (label, "; ".join(brief(x) for x in mine), node13))
    keep(label, job, rc, out, err)
    return False


slow_s = []
slow_named_13 = 0


def slows(n):
    global slow_named_13
    for i in range(n):
        before = wl.last_job_id()
        t0 = time.time()
        rc, out, err, when, seen, _ = wl.watched(
            STEP + [wl.exec] + HEALTHY + ["--steps", "200", "--timeout", "30", "--fault=slow:13:10",
                                          "--seed", str(a.seed_base + i)],
            lambda al: named(al, "ParallelLayoutSlowRank", before), timeout=300)
        rows = rows_of(out)
        job = the_job(rows, before)
        node13 = [r["node"] for r in rows if r["rank"] == "13"]
        runs.append(("slow", i, job, node13[0] if node13 else None))
        label = "slow %d (job %d)" % (i, job)
        if len(node13) != 1 or len(rows) != 32:
            bad.append("%s: %d tasks, rc %d" % (label, len(rows), rc))
            keep(label, job, rc, out, err)
            continue
        mine = named(seen, "ParallelLayoutSlowRank", before)
        if when is None:
            problems.append("%s: rank 13 not named while the step ran (%.0f s)"
                            % (label, time.time() - t0))
            keep(label, job, rc, out, err)
            print("slow  %2d: job %d (seed %d): rank 13 10 %% slower; NOT NAMED in %.0f s"
                  % (i, job, a.seed_base + i, time.time() - t0), flush=True)
            continue
        if not culprit_13(mine, node13[0], label, job, rc, out, err):
            continue
        slow_named_13 += 1
        slow_s.append(when - t0)
        if when - t0 > SLOW_S:
            problems.append("%s: late: %.1f s" % (label, when - t0))
            keep(label, job, rc, out, err)
        print("slow  %2d: job %d (seed %d): rank 13 10 %% slower; named on %s in Alertmanager "
              "%.1f s after srun started" % (i, job, a.seed_base + i, node13[0], when - t0), flush=True)


healthy_ok = 0


def healthies(n):
    global healthy_ok
    for i in range(n):
        before = wl.last_job_id()
        rc, out, err, when, seen, _ = wl.watched(
            STEP + [wl.exec] + HEALTHY + ["--steps", "40", "--timeout", "30",
                                          "--seed", str(a.seed_base + i)],
            lambda al: any(job_of(x) > before for x in al))
        rows = rows_of(out)
        job = the_job(rows, before)
        runs.append(("healthy", i, job, None))
        label = "healthy %d (job %d)" % (i, job)
        done = exits_ok(job)
        if rc != 0 or len(rows) != 32 or done != 32:
            bad.append("%s: rc %d, %d tasks, %d of 32 ranks result=ok" % (label, rc, len(rows), done))
            keep(label, job, rc, out, err)
        else:
            healthy_ok += 1
        print("healthy %2d: job %d (seed %d): rc %d, %d ranks result=ok%s" % (
            i, job, a.seed_base + i, rc, done, "; an alert while it ran" if when is not None else ""),
            flush=True)


class Everything:
    """Every alert Alertmanager shows while the benchmark runs, by
    fingerprint, with the wall time it was first seen (Alertmanager's API
    leaves out resolved alerts: a false alarm gone by the phase's end is
    caught here)."""

    def __init__(self):
        self.by = {}
        self.done = threading.Event()
        self.th = threading.Thread(target=self.run, daemon=True)
        self.th.start()

    def run(self):
        while not self.done.is_set():
            now = time.time()
            for x in wl.am.alerts():
                k = x.get("fingerprint") or json.dumps(x["labels"], sort_keys=True)
                if k not in self.by:
                    self.by[k] = dict(x, first_seen=now)
            self.done.wait(0.25)

    def stop(self):
        self.done.set()
        self.th.join()
        return sorted(self.by.values(), key=lambda x: x["first_seen"])


everything = Everything()
every = []
try:
    phase("stalls", stalls, a.stalls)
    phase("healthy", healthies, a.healthy)
    phase("slow", slows, a.slow)
    # Alerts that come after a step ended (an exit is judged a threshold
    # after it) count as much as those that came while it ran.
    time.sleep(GRACE)
finally:
    every = everything.stop()
    if a.keep:
        os.makedirs(a.keep, exist_ok=True)
        logs = os.path.join(wl.lab.dir, "log")
        for f in sorted(os.listdir(logs)) if os.path.isdir(logs) else []:
            if f.startswith("layoutd.") and f.endswith(".log"):
                shutil.copy(os.path.join(logs, f), os.path.join(a.keep, f))
        drv = os.path.join(a.keep, "driver")
        os.makedirs(drv, exist_ok=True)
        for f in os.listdir(wl.sync):
            if f.startswith("exec."):
                shutil.copy(os.path.join(wl.sync, f), os.path.join(drv, f))
for label, text in keep_out.items():
    if a.keep:
        with open(os.path.join(a.keep, label.split(" (")[0].replace(" ", "-") + ".srun.txt"), "w") as f:
            f.write(text)
if a.keep:
    with open(os.path.join(a.keep, "alerts.json"), "w") as f:
        json.dump(every, f, indent=1)
    with open(os.path.join(a.keep, "webhook.json"), "w") as f:
        json.dump(wl.hook.got(), f, indent=1)
wl.down()

# Every alert of every run, by job: a healthy run's are false alarms; a
# stall's or slow run's other than the one expected are wrong culprits,
# but for the ranks' exits with a failure after the driver's own timeout
# (it aborts as PyTorch's watchdog does, --timeout after the stop).
false_alarms = 0
false_runs = 0
extra = []
extra_first = []  # runs where such an alert showed before the expected one
# The driver runs its tp8 pp4 pipeline with one micro-batch a step, so its
# stages really idle about 3/4 of the time: the pipeline-bubble warning is
# right about it, and is counted apart (not a false alarm, not a culprit).
ADVICE = {"ParallelLayoutPipelineBubble"}
advice = {}
for ph, i, job, node13 in runs:
    mine = [x for x in every if job_of(x) == job]
    for x in mine:
        if x["labels"].get("alertname") in ADVICE:
            advice[x["labels"]["alertname"]] = advice.get(x["labels"]["alertname"], 0) + 1
    mine = [x for x in mine if x["labels"].get("alertname") not in ADVICE]
    if ph == "healthy":
        if mine:
            false_runs += 1
            false_alarms += len(mine)
            problems.append("healthy %d (job %d): %d false alarm(s), e.g. %s"
                            % (i, job, len(mine), brief(mine[0])))
        continue
    want = "ParallelLayoutHang" if ph == "stall" else "ParallelLayoutSlowRank"
    other = [x for x in mine if not (
        x["labels"].get("alertname") == want and x["labels"].get("rank") == "13"
        and x["labels"].get("node") == node13)
        and not (ph == "stall" and x["labels"].get("alertname") == "ParallelLayoutRankExited"
                 and "exited with status 0" not in (x.get("annotations") or {}).get("summary", ""))]
    if other:
        names = sorted({x["labels"].get("alertname") for x in other})
        # When they showed, against the expected alert: one that comes
        # first sends the operator to the wrong ranks.
        exp = [x["first_seen"] for x in mine if x not in other and x["labels"].get("alertname") == want]
        when_ = ("; first seen %+.1f s from the expected alert" % (other[0]["first_seen"] - exp[0])
                 if exp else "; the expected alert never showed")
        if exp and other[0]["first_seen"] < exp[0]:
            extra_first.append("%s %d" % (ph, i))
        extra.append("%s %d (job %d): %d other alert(s) (%s)%s, e.g. %s"
                     % (ph, i, job, len(other), ", ".join(names), when_, brief(other[0])))


def fig(v, nd):
    return "-" if v is None else "%.*f" % (nd, v)


def verdict(ok, ran):
    return "not run" if not ran else "met" if ok else "MISSED"


n_stall = sum(1 for r in runs if r[0] == "stall")
n_slow = sum(1 for r in runs if r[0] == "slow")
n_healthy = sum(1 for r in runs if r[0] == "healthy")
stall_ok = len(stall_s) == n_stall and all(s <= a.threshold + 2 for s in stall_s)
slow_ok = len(slow_s) == n_slow and all(s <= SLOW_S for s in slow_s)
res = {"threshold_s": a.threshold, "interval_ms": a.interval_ms, "grace_s": GRACE,
       "stall_runs": n_stall, "stall_measured": len(stall_s),
       "stall_median_s": statistics.median(stall_s) if stall_s else None,
       "stall_max_s": max(stall_s) if stall_s else None,
       "slow_runs": n_slow, "slow_named": len(slow_s),
       "slow_median_s": statistics.median(slow_s) if slow_s else None,
       "slow_max_s": max(slow_s) if slow_s else None,
       "healthy_runs": n_healthy, "healthy_exit_ok": healthy_ok,
       "false_alarms": false_alarms, "false_alarm_runs": false_runs, "advice": advice,
       "other_alerts": extra, "other_alert_first": extra_first, "problems": problems,
       "failed_runs": bad, "phases": phases,
       "cpus": os.cpu_count()}
print(json.dumps(res))


def L(ph):
    if ph not in phases:
        return ""
    return "; wall %s s, load %s -> %s" % (phases[ph]["wall_s"], phases[ph]["load_start"],
                                          phases[ph]["load_end"])


print("# bench_alert: tp8,pp4 on 4 emulated nodes (32 ranks), hang threshold %d s, rounds of "
      "%d ms, %d CPUs (load average 1/5/15 min)" % (a.threshold, a.interval_ms, os.cpu_count()))
print("# stall -> alert:   median %s s, max %s s, %d of %d runs; target <= %d s: %s%s"
      % (fig(res["stall_median_s"], 2), fig(res["stall_max_s"], 2), len(stall_s), n_stall,
         a.threshold + 2, verdict(stall_ok, n_stall), L("stalls")))
print("# 10 %% slow rank:   median %s s, max %s s, named in %d of %d runs; target <= %d s: %s%s"
      % (fig(res["slow_median_s"], 1), fig(res["slow_max_s"], 1), len(slow_s), n_slow, SLOW_S,
         verdict(slow_ok, n_slow), L("slow")))
if advice:
    print("# advice:           %s (the driver's one-micro-batch pipeline; not counted)"
          % ", ".join("%s x%d" % kv for kv in sorted(advice.items())))
print("# false alarms:     %d alert(s) in %d of %d healthy runs (watched %d s past each step); "
      "target 0: %s%s" % (false_alarms, false_runs, n_healthy, GRACE,
                          verdict(false_alarms == 0, n_healthy), L("healthy")))
print("# same work:        the alert named exactly rank 13 on its node in %d of %d stall runs "
      "and %d of %d slow runs; %d of %d healthy runs had 32 ranks exit 0 (result=ok)"
      % (stall_named_13, n_stall, slow_named_13, n_slow, healthy_ok, n_healthy))
print("# other alerts:     %d run(s) of %d with a fault had alerts besides the expected one, in %d "
      "of them before it%s" % (len(extra), n_stall + n_slow, len(extra_first),
                               " (the ranks' exits after the driver's timeout not counted)"
                               if n_stall else ""))
met = stall_ok and slow_ok and false_alarms == 0 and not problems and not extra
print("# result: %s" % ("RUNS FAILED" if bad else "targets met" if met else "MISSED"))
for b in bad + problems + extra:
    print("# %s" % b)
if a.keep:
    print("# evidence in %s" % a.keep)
sys.exit(2 if bad else 0 if met else 1)
