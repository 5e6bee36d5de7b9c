#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The job-wide watch end to end on a real Slurm: srun --parallel-layout
runs nccl_driver on 4 nodes with a layoutd on each; the daemons find each
other from the map (NodeAddr from scontrol, a peer port per node from the
slurmd port), send their node summaries to the step's leader (the node of
rank 0) over loopback TCP with munge credentials, and the leader judges the
whole step and alerts a real Alertmanager and a webhook.  For each fault,
on rank 13 (a node other than the leader's), the test reads Alertmanager's
API and checks the exact culprit: rank, node, group; a healthy step raises
nothing; an alert resolves when its step ends; with drain on, the culprit's
node is drained in Slurm (and resumed by the test)."""
import json
import os
import shutil
import subprocess
import threading
import time

from clusterlib import LabError
from taplib import diag, done, is_eq, like, ok

from watchlab import WatchLab, parts, rows_of

PLUGIN, DRIVER, HOOK, LAYOUTD = parts()

THRESH = 5
wl = WatchLab(PLUGIN, HOOK, DRIVER, LAYOUTD, threshold=THRESH, interval_ms=200)
lab, am, hook = wl.lab, wl.am, wl.hook
try:
    wl.up()
except (LabError, RuntimeError) as e:
    ok(False, "the lab with a layoutd per node, peers on loopback TCP, Alertmanager and a webhook")
    diag(e)
    wl.down()
    done()
ok(True, "4 nodes, a layoutd on each (peers from the map: NodeAddr and slurmd port + 300, munge), "
   "Alertmanager at %s, a webhook at %s" % (am.url, hook.url))
ME = wl.user
EXEC = wl.exec


def bail(what, e):
    ok(False, what)
    diag(e)
    wl.down()
    done()


def watched(args, until, timeout=120):
    """wl.watched, with the first sighting in seconds since srun started."""
    t0 = time.time()
    rc, out, err, when, seen, _ = wl.watched(args, until, timeout=timeout)
    return rc, out, err, when and when - t0, seen


def ours(alerts, job):
    return [a for a in alerts if a["labels"].get("job_id") == str(job)]


last_job_id = wl.last_job_id
STEP = ["-N4", "-n32", "--parallel-layout=tp8,pp4"]
DRV = ["--compute-us", "20000"]

# 1. A healthy step: nothing in Alertmanager, nothing at the webhook.
before = last_job_id()
rc, out, err, when, seen = watched(STEP + [EXEC] + DRV + ["--steps", "40", "--timeout", "30"],
                                   lambda a: any(int(x["labels"].get("job_id", 0)) > before for x in a))
is_eq(rc, 0, "a healthy step runs (exit 0)")
rows = rows_of(out)
is_eq(len(rows), 32, "32 tasks reported")
ok(when is None, "a healthy step: no alert reached Alertmanager (%s)" %
   [a["labels"] for a in seen][:3])
time.sleep(1.5)
is_eq([a for a in am.alerts() if int(a["labels"].get("job_id", 0)) > before], [],
      "a healthy step: still none after it ended")
is_eq(hook.got(), [], "a healthy step: the webhook got nothing")
leader = [r["node"] for r in rows if r["rank"] == "0"]
diag("leader (rank 0's node): %s" % leader)


def fired_of(bodies, job, alertname):
    """The webhook's firing messages for job and alertname: fingerprint ->
    the alert's rank label."""
    return {b.get("fingerprint"): b.get("labels", {}).get("rank") for b in bodies
            if b.get("status") == "firing" and str(b.get("job_id", "")) == str(job)
            and b.get("alertname") == alertname}


# The alerts a fault must raise once over the whole run: an exit is named
# once (the exits of the others that Slurm or their timeouts end follow
# it and are not named); a stuck transfer once, none for the stages that
# wait on it.
EXACTLY_ONE = ("ParallelLayoutRankExited", "ParallelLayoutGpuStuck")


def fault_case(spec, alertname, what, severity="critical", evidence="observed"):
    """Run the step with a fault on rank 13; the alert for it must name rank
    13, its node (not the leader's), its group, with the severity and the
    evidence given."""
    pair = spec.startswith("stuck:")
    before = last_job_id()
    hook_n = len(hook.got())
    rc, out, err, when, seen = watched(
        STEP + [EXEC] + DRV + ["--steps", "40", "--timeout", "20", "--fault=" + spec],
        lambda a: any(x["labels"].get("alertname") == alertname and
                      int(x["labels"].get("job_id", 0)) > before and
                      "13" in x["labels"].get("rank", "").split(",") for x in a))
    rows = rows_of(out)
    node13 = [r["node"] for r in rows if r["rank"] == "13"]
    node0 = [r["node"] for r in rows if r["rank"] == "0"]
    job = rows[0]["job"] if rows else "?"
    ok(rc != 0 and node13 and node0 and node13 != node0,
       "--fault=%s: the step fails (rc %d); rank 13 on %s, the leader (rank 0) on %s" % (spec, rc, node13, node0))
    mine = [a for a in seen if a["labels"].get("alertname") == alertname and
            a["labels"].get("job_id") == job]
    if pair:
        # A rank stuck in its p2p transfer: the stages downstream wait in
        # theirs as long and cross the threshold with it, but each waits on
        # a peer that never sent (the summary carries the p2p peer): only
        # the stuck transfer is named, below once over the whole run.
        mine = [a for a in mine if "13" in a["labels"].get("rank", "").split(",")][:1]
    diag("--fault=%s: in Alertmanager after %s s: %s" % (spec, when and round(when, 2),
         [(a["labels"], a["annotations"].get("summary")) for a in seen]))
    if not ok(len(mine) == 1, "--fault=%s: one %s alert for job %s reached Alertmanager (%s s after srun started)"
              % (spec, alertname, job, when and round(when, 2))):
        diag(lab.log_tail("layoutd.%s.log" % (node0[0] if node0 else "node1"), 30))
        return job, None, node13
    lab_ = mine[0]["labels"]
    if pair:
        ranks = lab_.get("rank", "").split(",")
        ok("13" in ranks and node13[0] in lab_.get("node", "").split(",") and lab_.get("step") == "0"
           and lab_.get("user") == ME, "--fault=%s: rank 13 on %s is among the ranks whose kernels still run (%s)"
           % (spec, node13[0], lab_.get("rank")))
        # Rank 13 (stage 1) waits in its receive from rank 5 (stage 0),
        # whose send waits on it: the two ends of the stuck transfer, and no
        # rank of the stages downstream.
        ok(set(ranks) <= {"5", "13"}, "--fault=%s: only the two ends of the stuck transfer "
           "(ranks 5 and 13), no stage downstream (%s)" % (spec, lab_.get("rank")))
    else:
        is_eq((lab_.get("rank"), lab_.get("node"), lab_.get("step"), lab_.get("user")),
              ("13", node13[0], "0", ME),
              "--fault=%s: the culprit is rank 13 on %s (step 0, user %s)" % (spec, node13[0], ME))
    # Rank 13 (tp 5, pp 1) is in TP group 0 of PP stage 1 and, with the
    # ranks 5, 21 and 29 of the other stages, in PP group 5.
    group = {"stop": "TP group 0 of PP stage 1", "wedge": "TP group 0 of PP stage 1",
             "stuck": "PP group 5"}.get(spec.split(":")[0])
    if group:
        is_eq(lab_.get("group"), group, "--fault=%s: the alert names rank 13's group" % spec)
    # Over the whole run (every message the webhook got for the job, the
    # resolves included): this alert for rank 13, and no other of its kind.
    end = time.monotonic() + 30
    while time.monotonic() < end and ours(am.alerts(), job):
        time.sleep(0.2)
    fired = fired_of(hook.got()[hook_n:], job, alertname)
    if alertname in EXACTLY_ONE:
        is_eq(sorted(fired.values()), [lab_.get("rank")],
              "--fault=%s: exactly one %s alert over the whole run, the one naming rank 13 (%s)"
              % (spec, alertname, sorted(fired.values())))
    like(mine[0]["annotations"].get("summary", ""), "13 on %s" % node13[0],
         "--fault=%s: the summary names rank 13 on its node: %r" % (spec, mine[0]["annotations"].get("summary")))
    is_eq((lab_.get("severity"), mine[0]["annotations"].get("evidence")), (severity, evidence),
          "--fault=%s: severity %s, evidence %s" % (spec, severity, evidence))
    if evidence == "inferred":
        like(mine[0]["annotations"].get("summary", ""), "; inferred: ",
             "--fault=%s: the summary says it is inferred, and why" % spec)
    # Resolved once the step is over (the leader sends endsAt).
    end = time.monotonic() + 20
    while time.monotonic() < end and ours(am.alerts(), job):
        time.sleep(0.2)
    is_eq(ours(am.alerts(), job), [], "--fault=%s: the alert resolved after the step ended" % spec)
    got = hook.got()[hook_n:]
    states = sorted({b.get("status") for b in got if str(b.get("job_id", "")) == job or job in json.dumps(b)})
    ok("firing" in states and "resolved" in states and all(b.get("text") for b in got),
       "--fault=%s: the webhook got it firing and resolved, each with a one-line text (%s)" % (spec, states))
    return job, when, node13


# stop: rank 13 enters nothing more while its peers wait (observed in its
# record); wedge: its kernel runs where its TP peers' completed (observed);
# stuck: its pipeline receive never ends and the sender's send waits on it
# (either end may be the cause: inferred, a warning); exit: a non-zero exit.
for spec, name, what, sev, ev in (
        ("stop:13:3", "ParallelLayoutHang", "stops entering", "critical", "observed"),
        ("wedge:13:3", "ParallelLayoutGpuStuck", "its kernel runs on", "critical", "observed"),
        ("stuck:13:3", "ParallelLayoutGpuStuck", "stuck in a transfer", "warning", "inferred"),
        ("exit:13:5:7", "ParallelLayoutRankExited", "exits with 7", "critical", "observed")):
    fault_case(spec, name, what, sev, ev)

# A healthy step cancelled with scancel while it runs: every task gets
# SIGTERM; that is the step ending, not a fault, and nothing is alerted (the
# leader says so once in its log).  Watched until well past when a rank
# killed alone would be in Alertmanager (its grace, 2 s, and the deliveries).
before = last_job_id()
hook_n = len(hook.got())
res = {}
t0 = time.monotonic()
th = threading.Thread(target=lambda: res.update(r=lab.srun(
    STEP + [EXEC] + DRV + ["--steps", "100000", "--timeout", "30"], timeout=120)))
th.start()
job = None
while time.monotonic() - t0 < 60 and job is None and th.is_alive():
    j = last_job_id()
    job = j if j > before else None
    time.sleep(0.2)
time.sleep(5)
rc, out, err = lab.run(["scancel", str(job)], timeout=15) if job else (1, "", "no job")
ok(job is not None and rc == 0 and th.is_alive(),
   "scancel of a running healthy step (job %s, rc %d %s)" % (job, rc, err.strip()[:200]))
cancelled_at = time.monotonic()
seen = []
while time.monotonic() - cancelled_at < 10:
    seen += ours(am.alerts(), job)
    time.sleep(0.1)
th.join()
diag("scancel: srun ended %s" % (res.get("r", (None,))[0],))
is_eq([a["labels"] for a in seen], [], "scancel: no alert reached Alertmanager in the 10 s after it")
is_eq([b for b in hook.got()[hook_n:] if str(b.get("job_id", "")) == str(job)], [],
      "scancel: the webhook got nothing for the job")
log = lab.log_tail("layoutd.%s.log" % leader[0], 400) if leader else ""
is_eq(log.count("job %s.0: step cancelled/ended by signal: " % job), 1,
      "scancel: the leader's log says once that the step was ended by signal")

# 1b. layoutctl watch JOBID on a node that is not the leader's: its layoutd
# names the leader, which shows the whole step with rank 13 the culprit.
OTHER = [n for n in ("node4", "node3", "node2") if n not in leader][0]


def watch_from_other(alerts):
    jobs = sorted({a["labels"].get("job_id") for a in alerts
                   if a["labels"].get("alertname") == "ParallelLayoutHang"}, key=int)
    p = subprocess.run([os.environ.get("LAYOUTCTL", "layoutctl"), "watch", jobs[-1], "--once",
                        "--json", "--socket", os.path.join(lab.dir, "run", "layoutd-%s.sock" % OTHER),
                        "--munge-socket", os.path.join(lab.dir, "munge", "munge.socket")],
                       capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


before = last_job_id()
rc, out, err, when, seen, got = wl.watched(
    STEP + [EXEC] + DRV + ["--steps", "40", "--timeout", "20", "--fault=stop:13:3"],
    lambda a: any(x["labels"].get("alertname") == "ParallelLayoutHang" and
                  int(x["labels"].get("job_id", 0)) > before and
                  x["labels"].get("rank") == "13" for x in a), at_sighting=watch_from_other)
try:
    view = json.loads(got[1]) if got and got[0] == 0 else {}
except ValueError:
    view = {}
culprits = sorted({r for f in view.get("findings", []) if f.get("kind") == "not-entered"
                   for r in f.get("culprits", [])})
ok(view.get("self") not in (None, OTHER) and len(view.get("ranks", [])) == 32 and culprits == [13],
   "layoutctl watch JOBID --once --json on %s (not the leader): the leader (%s) shows all 32 "
   "ranks and names rank 13 (%s; rc %s: %s)" % (OTHER, view.get("self"), culprits,
                                                got and got[0], got and got[2][-300:]))

# 2. Drain on: a kernel that runs where its peers' completed drains the
# culprit's node in Slurm, once (a hang or an exit never does: the
# single-node alert test shows those); the test resumes it.
try:
    wl.restart_layoutds(drain="yes", drain_max_per_hour=1,
                        scontrol=shutil.which("scontrol") or "/usr/bin/scontrol")
except LabError as e:
    bail("layoutds restarted with drain on", e)
job, when, node13 = fault_case("wedge:13:3", "ParallelLayoutGpuStuck", "its kernel runs on, drain on")
rc, out, err = lab.run(["sinfo", "-h", "-N", "-o", "%N %T %E"], timeout=15)
diag("sinfo: %s" % out.strip().replace("\n", "; "))
drained = [l.split(None, 2) for l in out.splitlines() if len(l.split()) > 1 and "drain" in l.split()[1]]
is_eq([d[0] for d in drained], node13, "drain on: rank 13's node, and only it, is drained in Slurm")
if drained:
    like(drained[0][2] if len(drained[0]) > 2 else "", "parallel-layout",
         "drain on: the reason says who drained it (%s)" % (drained[0][2:],))
    for d in drained:
        rc, out, err = lab.run(["scontrol", "update", "nodename=" + d[0], "state=resume"], timeout=15)
        is_eq(rc, 0, "the test resumes %s" % d[0])

rc, err = wl.down()
is_eq(rc, 0, "lab down")
done()
