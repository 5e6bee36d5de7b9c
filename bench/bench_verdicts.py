#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The watch's verdicts as a matrix, on the emulated cluster with real parts:
srun --parallel-layout runs nccl_driver on 4 nodes, a layoutd per node
sends its summaries to the step's leader (munge, loopback TCP), the leader
alerts a real Alertmanager, and this script reads every alert
Alertmanager shows (polled all along).

Each scenario is a step with one fault of the driver (or none) and the
alerts it must give: per alert name, the ranks it names.  A scenario's
verdict is right when the alerts of its job are exactly those (the
pipeline-bubble advice, which names no rank, aside); its latency is the
time from srun's start to the first expected alert, and for a stop or an
exit also the time from the fault (the culprit's own last line) to it.
The targets on time: a stop or an exit named within threshold + 2 s of
it, a slow rank within 30 s of srun's start.  A step with a fault
is cancelled (scancel: the step ending by signal names nobody) once its
alerts are in and SETTLE more seconds have shown nothing else, or after
its deadline; then GRACE seconds more are watched.

  precision   of the (alert, rank) pairs raised, the share that name a
              scenario's culprit; a healthy scenario's alert counts
              against it (no critical alert on a healthy step, no alert
              naming a rank that only waits)
  recall      of the (alert, rank) pairs expected, the share raised

Both are 1.00 when the matrix holds.  Both sides did the same work: every
healthy scenario's ranks exit 0 with result=ok, and a fault scenario's
step ran the ranks its layout says.

Usage: bench/bench_verdicts.py [BUILD_DIR] [--only NAME[,NAME...]] [--repeat N]
       [--healthy N] [--threshold S] [--keep DIR]   (as root)
Exit: 0 the matrix holds, 1 a verdict is wrong or late, 2 a run did not do
its work.
"""
import argparse
import json
import os
import signal
import sys
import threading
import time

import benchlab

HERE = os.path.dirname(os.path.abspath(__file__))

p = argparse.ArgumentParser()
p.add_argument("build", nargs="?", default=os.path.join(HERE, "..", "_build"))
p.add_argument("--only", default="", help="the scenarios to run, by name (comma-separated)")
p.add_argument("--repeat", type=int, default=1, help="runs of the whole matrix")
p.add_argument("--healthy", type=int, default=0,
               help="extra healthy runs, cycling through the three schedules")
p.add_argument("--threshold", type=int, default=5)
p.add_argument("--interval-ms", type=int, default=1000)
p.add_argument("--keep", default=None, help="directory for every alert seen and the table")
a = p.parse_args()
PLUGIN, HOOK, DRIVER, LAYOUTD = benchlab.parts(a.build, "bench_verdicts")

from clusterlib import LabError  # noqa: E402
from watchlab import WatchLab, rows_of  # noqa: E402

T = a.threshold
SETTLE = 8              # seconds of nothing more after the expected alerts
GRACE = T + 8           # watched after the step ended
ADVICE = {"ParallelLayoutPipelineBubble"}   # names no rank: not scored

# The step shapes: tp8 pp4 on 4 nodes (a PP stage a node), and others.
TP8PP4 = ["-N4", "-n32", "--parallel-layout=tp8,pp4"]
DP32 = ["-N4", "-n32", "--parallel-layout=dp32"]
TPCP = ["-N4", "-n32", "--parallel-layout=tp4,cp2,dp4"]
PP2 = ["-N2", "-n2", "--parallel-layout=pp2"]
BASE = ["--compute-us", "20000", "--jitter", "2", "--spike", "20:50"]
ONE = []                                           # GPipe, one micro-batch a step
F1B = ["--schedule", "1f1b", "--microbatches", "8"]
INT = ["--schedule", "interleaved", "--vpp", "2", "--microbatches", "8"]
HANG = ["--steps", "100000", "--timeout", "120"]

S = [
    # name, step, driver args, {alert: {ranks}}, deadline (s after srun's start)
    ("healthy-gpipe", TP8PP4, ONE + ["--steps", "40"], {}, 0),
    ("healthy-1f1b", TP8PP4, F1B + ["--steps", "30"], {}, 0),
    ("healthy-interleaved", TP8PP4, INT + ["--steps", "30"], {}, 0),
    ("hang-stage0", TP8PP4, ONE + HANG + ["--fault=stop:3:3"], {"ParallelLayoutHang": {3}}, 40),
    ("hang-stage1", TP8PP4, ONE + HANG + ["--fault=stop:13:3"], {"ParallelLayoutHang": {13}}, 40),
    ("hang-stage2", TP8PP4, ONE + HANG + ["--fault=stop:21:3"], {"ParallelLayoutHang": {21}}, 40),
    ("hang-stage3", TP8PP4, ONE + HANG + ["--fault=stop:29:3"], {"ParallelLayoutHang": {29}}, 40),
    ("hang-1f1b", TP8PP4, F1B + HANG + ["--fault=stop:13:1"], {"ParallelLayoutHang": {13}}, 40),
    ("hang-dp", DP32, HANG + ["--fault=stop:13:3"], {"ParallelLayoutHang": {13}}, 40),
    ("exit-nonzero", TP8PP4, ONE + HANG + ["--fault=exit:13:3:1"],
     {"ParallelLayoutRankExited": {13}}, 40),
    ("end-with-skew", TP8PP4, ONE + ["--steps", "20", "--fault=tail:0:15"], {}, 0),
    ("busy-pause", TP8PP4, ONE + ["--steps", "30", "--timeout", "60", "--fault=busy:20:3:15"],
     {"ParallelLayoutRankBusy": {20}}, 0),
    ("busy-cpu", TP8PP4, ONE + ["--steps", "30", "--timeout", "60", "--fault=busycpu:20:3:15"],
     {"ParallelLayoutRankBusy": {20}}, 0),
    ("busy-io", TP8PP4, ONE + ["--steps", "30", "--timeout", "60", "--fault=busyio:20:3:15"],
     {"ParallelLayoutRankBusy": {20}}, 0),
    ("mismatch-func", TP8PP4, ONE + HANG + ["--fault=mismatch:11:3"],
     {"ParallelLayoutCollectiveMismatch": {11}}, 40),
    ("mismatch-count", TP8PP4, ONE + HANG + ["--fault=miscount:11:3"],
     {"ParallelLayoutCollectiveMismatch": {11}}, 40),
    ("forged-record", TP8PP4, ONE + HANG + ["--fault=forge:13:3"],
     {"ParallelLayoutHang": {13}}, 40),
    ("gpu-stuck", TP8PP4, ONE + HANG + ["--fault=wedge:13:3"], {"ParallelLayoutGpuStuck": {13}}, 40),
    ("unposted-pp2", PP2, HANG + ["--compute-us", "20000", "--fault=stop:1:3"],
     {"ParallelLayoutHang": {1}}, 40),
    ("slow-gpipe", TP8PP4, ONE + HANG + ["--fault=slow:13:10"], {"ParallelLayoutSlowRank": {13}}, 60),
    ("slow-1f1b", TP8PP4, F1B + HANG + ["--fault=slow:13:10"], {"ParallelLayoutSlowRank": {13}}, 60),
    ("slow-interleaved", TP8PP4, INT + HANG + ["--fault=slow:13:10"],
     {"ParallelLayoutSlowRank": {13}}, 60),
    ("slow-dp", DP32, HANG + ["--fault=slow:13:10"], {"ParallelLayoutSlowRank": {13}}, 60),
    ("slow-tp-cp", TPCP, HANG + ["--fault=slow:13:10"], {"ParallelLayoutSlowRank": {13}}, 60),
]
if a.only:
    want = set(a.only.split(","))
    S = [s for s in S if s[0] in want]
    if not S:
        print("bench_verdicts: --only names no scenario")
        sys.exit(2)
plan = [s for _ in range(a.repeat) for s in S]
healthy_kinds = [s for s in S if s[0].startswith("healthy-")] or \
    [s for s in S if not s[3]]
for i in range(a.healthy):
    if healthy_kinds:
        plan.append(healthy_kinds[i % len(healthy_kinds)])


def job_of(x):
    try:
        return int(x["labels"].get("job_id", 0))
    except (TypeError, ValueError):
        return 0


class Everything:
    """Every alert Alertmanager shows, by fingerprint, first sighting kept
    (its API leaves resolved alerts out: one gone by the end counts too)."""

    def __init__(self, wl):
        self.wl = wl
        self.by = {}
        self.mu = threading.Lock()
        self.done = threading.Event()
        self.th = threading.Thread(target=self.run, daemon=True)
        self.th.start()

    def run(self):
        while not self.done.is_set():
            now = time.time()
            try:
                got = self.wl.am.alerts()
            except OSError:
                got = []
            with self.mu:
                for x in got:
                    k = x.get("fingerprint") or json.dumps(x["labels"], sort_keys=True)
                    if k not in self.by:
                        self.by[k] = dict(x, first_seen=now)
            self.done.wait(0.2)

    def of(self, job):
        with self.mu:
            return sorted((x for x in self.by.values() if job_of(x) == job),
                          key=lambda x: x["first_seen"])

    def stop(self):
        self.done.set()
        self.th.join()
        return sorted(self.by.values(), key=lambda x: x["first_seen"])


def ranks_of(x):
    """The ranks an alert names: its rank label, one rank or a list
    ("5,21,29"); -1 when it names none."""
    v = x["labels"].get("rank", "")
    try:
        return [int(r) for r in v.split(",")] if v else [-1]
    except ValueError:
        return [-1]


def pairs(alerts):
    return {(x["labels"].get("alertname"), r)
            for x in alerts if x["labels"].get("alertname") not in ADVICE
            for r in ranks_of(x)}


def run_one(wl, ev, sc):
    name, step, dargs, expect, deadline = sc
    want = {(k, r) for k, rs in expect.items() for r in rs}
    before = wl.last_job_id()
    res = {}
    t0 = time.time()
    th = threading.Thread(target=lambda: res.update(r=wl.lab.srun(
        step + [wl.exec] + BASE + dargs, timeout=300)))
    th.start()
    job = None
    first = None
    got_all = None
    while th.is_alive():
        if job is None:
            j = wl.last_job_id()
            job = j if j > before else None
        if job is not None:
            have = pairs(ev.of(job))
            if want and first is None and have & want:
                first = min(x["first_seen"] for x in ev.of(job)
                            if any((x["labels"].get("alertname"), r) in want
                                   for r in ranks_of(x))) - t0
            if want and got_all is None and want <= have:
                got_all = time.time()
            # a step that would run on (its ranks hung) is cancelled once
            # its alerts are in and nothing more came; one with an end of
            # its own runs to it
            if want and "100000" in dargs and (
                    (got_all and time.time() - got_all > SETTLE) or
                    (deadline and time.time() - t0 > deadline)):
                wl.lab.run(["scancel", str(job)], timeout=15)
                break
        time.sleep(0.2)
    th.join()
    rc, out, err = res.get("r", (124, "", "no answer"))
    rows = rows_of(out)
    if job is None:
        job = before + 1
    # When the culprit's fault began, for a stop or an exit: its output
    # file was last written then (the driver's own line, then it sleeps or
    # is gone); the time from there to the first expected alert is what the
    # hang and exit targets (threshold + 2 s) speak of.
    fault_at = None
    kind = next((x.split("=", 1)[1].split(":") for x in dargs if x.startswith("--fault=")), None)
    if kind and kind[0] in ("stop", "exit", "forge"):
        path = os.path.join(wl.sync, "exec.%d.%s" % (job, kind[1]))
        try:
            with open(path) as f:
                said = f.read()
            if "result=stopped" in said or "exiting with status" in said:
                fault_at = os.stat(path).st_mtime
        except OSError:
            pass
    time.sleep(GRACE)
    have = pairs(ev.of(job))
    alerts = ev.of(job)
    from_fault = None
    if fault_at is not None and first is not None:
        from_fault = t0 + first - fault_at
    ntasks = int([x for x in step if x.startswith("-n")][0][2:])
    problem = None
    if len(rows) != ntasks:
        problem = "%d of %d tasks started (rc %d)" % (len(rows), ntasks, rc)
    elif not want:
        okd = 0
        for r in range(ntasks):
            try:
                with open(os.path.join(wl.sync, "exec.%d.%d" % (job, r))) as f:
                    okd += "result=ok" in f.read()
            except OSError:
                pass
        if rc != 0 or okd != ntasks:
            problem = "healthy step: rc %d, %d of %d ranks result=ok" % (rc, okd, ntasks)
    return dict(name=name, job=job, want=sorted(want), got=sorted(have),
                right=have == want, latency_s=first, fault_latency_s=from_fault,
                problem=problem,
                critical=sorted({(x["labels"].get("alertname"), x["labels"].get("rank"))
                                 for x in alerts if x["labels"].get("severity") == "critical"}),
                texts=[(x["labels"].get("alertname"), x["labels"].get("rank"),
                        (x.get("annotations") or {}).get("summary", "")[:200]) for x in alerts])


def on_term(signum, frame):
    # killed (make's ^C, a timeout): unwind, so that the lab's daemons go
    # down with the run instead of staying up for the next one
    raise SystemExit(128 + signum)


signal.signal(signal.SIGTERM, on_term)
wl = WatchLab(PLUGIN, HOOK, DRIVER, LAYOUTD, name="bench_verdicts", threshold=T,
              interval_ms=a.interval_ms)
try:
    wl.up()
except (LabError, RuntimeError) as e:
    print("bench_verdicts: the lab did not come up: %s" % e)
    wl.down()
    sys.exit(2)
ev = Everything(wl)
results = []
try:
    for sc in plan:
        r = run_one(wl, ev, sc)
        results.append(r)
        print("%-20s job %-4d %-5s want %s got %s%s%s%s" % (
            r["name"], r["job"], "ok" if r["right"] else "WRONG",
            r["want"] or "nothing", r["got"] or "nothing",
            "; %.1f s" % r["latency_s"] if r["latency_s"] is not None else "",
            " (%.1f s after the fault)" % r["fault_latency_s"]
            if r["fault_latency_s"] is not None else "",
            "; RUN: " + r["problem"] if r["problem"] else ""), flush=True)
finally:
    every = ev.stop()
    wl.down()

tp = sum(len(set(map(tuple, r["want"])) & set(map(tuple, r["got"]))) for r in results)
raised = sum(len(r["got"]) for r in results)
wanted = sum(len(r["want"]) for r in results)
precision = tp / raised if raised else 1.0
recall = tp / wanted if wanted else 1.0
healthy = [r for r in results if not r["want"]]
healthy_alerts = sum(len(r["got"]) for r in healthy)
bad = [r for r in results if r["problem"]]
wrong = [r for r in results if not r["right"]]
# The targets on time: a stop or an exit named within threshold + 2 s of
# the fault, a slow rank within 30 s of srun's start.
late = [(r["name"], r["job"], round(r["fault_latency_s"], 2)) for r in results
        if r["fault_latency_s"] is not None and r["fault_latency_s"] > T + 2] + \
    [(r["name"], r["job"], round(r["latency_s"], 2)) for r in results
     if r["name"].startswith("slow-") and r["latency_s"] is not None and r["latency_s"] > 30]
fl = sorted(r["fault_latency_s"] for r in results if r["fault_latency_s"] is not None)
summary = dict(scenarios=len(S), runs=len(results), precision=precision, recall=recall,
               healthy_runs=len(healthy), healthy_alerts=healthy_alerts,
               wrong=[(r["name"], r["job"]) for r in wrong],
               failed_runs=[(r["name"], r["problem"]) for r in bad], threshold_s=T,
               late=late, fault_latency_max_s=fl[-1] if fl else None,
               cpus=os.cpu_count())
print(json.dumps(summary))
def named(got):
    """The (alert, rank) pairs for the table: the first four, then how many more."""
    w = ["%s %d" % (k.replace("ParallelLayout", ""), n) for k, n in got]
    return (", ".join(w[:4]) + (", +%d more" % (len(w) - 4) if len(w) > 4 else "")) or "-"


print("# bench_verdicts: %d scenarios, %d runs, hang threshold %d s, %d CPUs" % (
    len(S), len(results), T, os.cpu_count()))
print("# %-20s %-7s %-44s %-9s %s" % ("scenario", "verdict", "ranks named", "latency",
                                      "after the fault"))
for r in results:
    print("# %-20s %-7s %-44s %-9s %s" % (
        r["name"], "right" if r["right"] else "WRONG",
        named(r["got"]),
        "%.1f s" % r["latency_s"] if r["latency_s"] is not None else "-",
        "%.1f s" % r["fault_latency_s"] if r["fault_latency_s"] is not None else "-"))
print("# precision %.2f, recall %.2f; %d healthy runs, %d alerts on them" % (
    precision, recall, len(healthy), healthy_alerts))
if fl:
    print("# a stop or an exit named %.1f to %.1f s after it (target %d s); %d late%s" % (
        fl[0], fl[-1], T + 2, len(late), ": %s" % late if late else ""))
for r in wrong:
    for t in r["texts"]:
        print("#   %s (job %d): %s rank %s: %s" % (r["name"], r["job"], *t))
if a.keep:
    os.makedirs(a.keep, exist_ok=True)
    with open(os.path.join(a.keep, "verdicts.json"), "w") as f:
        json.dump(dict(summary=summary, results=results, alerts=every), f, indent=1)
print("# result: %s" % ("RUNS FAILED" if bad else "WRONG VERDICTS" if wrong or precision < 1.0
                        or recall < 1.0 else "LATE" if late else "the matrix holds"))
sys.exit(2 if bad else 1 if wrong or late else 0)
