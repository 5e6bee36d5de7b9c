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
           with +-2 % jitter and 20 % one-step spikes: the time from the
           step's start (its first rank's record) to the
           ParallelLayoutSlowRank alert naming rank 13; target 30 s.
  healthy  the same step with jitter and spikes and no fault: every alert
           is a false alarm; target 0 over --healthy runs.

Both sides did the same work: every run's alert names exactly rank 13 on
its node, and every healthy run's 32 ranks finish with exit 0.

Usage: bench/bench_alert.py [BUILD_DIR] [--stalls N] [--healthy N] [--slow N]
       [--interval-ms MS] [--threshold S]      (as root; BUILD_DIR default _build)
Exit: 0 targets met, 1 a target missed, 2 a run did not do what it should.
"""
import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

p = argparse.ArgumentParser()
p.add_argument("build", nargs="?", default=os.path.join(HERE, "..", "_build"))
p.add_argument("--stalls", type=int, default=20)
p.add_argument("--healthy", type=int, default=30)
p.add_argument("--slow", type=int, default=3)
p.add_argument("--interval-ms", type=int, default=1000)
p.add_argument("--threshold", type=int, default=5)
a = p.parse_args()
B = os.path.abspath(a.build)
os.environ.setdefault("LAYOUTCTL", os.path.join(B, "ctl", "layoutctl"))
os.environ.setdefault("PL_TEST_DATA", os.path.join(HERE, "..", "tests", "data"))
os.environ.setdefault("PL_ETC", os.path.join(HERE, "..", "etc"))
os.environ.setdefault("LABCTL", os.path.join(HERE, "..", "tests", "cluster", "lab"))
os.environ.setdefault("LAB_DIR", os.path.join(B, "tests", "lab"))

from clusterlib import LabError, unavailable  # noqa: E402
from watchlab import WatchLab, rows_of  # noqa: E402

PLUGIN = os.path.join(B, "plugin", "spank", ".libs", "parallel_layout.so")
HOOK = os.path.join(B, "plugin", "nccl", ".libs", "libparallel-layout-nccl.so")
DRIVER = os.path.join(B, "tests", "nccl_driver")
LAYOUTD = os.path.join(B, "daemon", "layoutd")
why = unavailable()
for f in (PLUGIN, HOOK, DRIVER, LAYOUTD):
    if not why and not os.path.exists(f):
        why = "%s is not built (make, and make -C tests nccl_driver)" % f
if why:
    print("bench_alert: skipped: %s" % why)
    sys.exit(0)

STEP = ["-N4", "-n32", "--parallel-layout=tp8,pp4"]
HEALTHY = ["--compute-us", "20000", "--jitter", "2", "--spike", "20:50"]
bad = []


def named(alerts, name, job_after):
    return [x for x in alerts if x["labels"].get("alertname") == name and
            int(x["labels"].get("job_id", 0)) > job_after]


wl = WatchLab(PLUGIN, HOOK, DRIVER, LAYOUTD, name="bench_alert", threshold=a.threshold,
              interval_ms=a.interval_ms)
try:
    wl.up()
except (LabError, RuntimeError) as e:
    print("bench_alert: the lab did not come up: %s" % e)
    wl.down()
    sys.exit(2)

stall_s = []
for i in range(a.stalls):
    before = wl.last_job_id()
    rc, out, err, when, seen, stop = wl.watched(
        STEP + [wl.exec] + HEALTHY + ["--steps", "40", "--timeout", str(a.threshold + 8),
                                      "--fault=stop:13:3"],
        lambda al: named(al, "ParallelLayoutHang", before),
        at_sighting=lambda al: wl.stopped_at(None, 13))
    rows = rows_of(out)
    node13 = [r["node"] for r in rows if r["rank"] == "13"]
    mine = named(seen, "ParallelLayoutHang", before)
    if (when is None or stop is None or len(mine) != 1 or mine[0]["labels"].get("rank") != "13"
            or [mine[0]["labels"].get("node")] != node13):
        bad.append("stall run %d: %s" % (i, [x["labels"] for x in seen][:3] or "no alert"))
        continue
    stall_s.append(when - stop)
    print("stall %2d: rank 13 stopped; ParallelLayoutHang for rank 13 on %s in Alertmanager %.2f s later"
          % (i, node13[0], when - stop), flush=True)

slow_s = []
for i in range(a.slow):
    before = wl.last_job_id()
    t0 = time.time()
    rc, out, err, when, seen, _ = wl.watched(
        STEP + [wl.exec] + HEALTHY + ["--steps", "200", "--timeout", "30", "--fault=slow:13:10"],
        lambda al: named(al, "ParallelLayoutSlowRank", before), timeout=300)
    rows = rows_of(out)
    node13 = [r["node"] for r in rows if r["rank"] == "13"]
    mine = named(seen, "ParallelLayoutSlowRank", before)
    if when is None or len(mine) != 1 or mine[0]["labels"].get("rank") != "13":
        bad.append("slow run %d: %s" % (i, [x["labels"] for x in seen][:3] or "not named"))
        continue
    slow_s.append(when - t0)
    print("slow  %2d: rank 13 10 %% slower; named in Alertmanager %.1f s after srun started"
          % (i, when - t0), flush=True)

false_alarms = 0
for i in range(a.healthy):
    before = wl.last_job_id()
    rc, out, err, when, seen, _ = wl.watched(
        STEP + [wl.exec] + HEALTHY + ["--steps", "40", "--timeout", "30"],
        lambda al: any(int(x["labels"].get("job_id", 0)) > before for x in al))
    rows = rows_of(out)
    if rc != 0 or len(rows) != 32:
        bad.append("healthy run %d: rc %d, %d tasks" % (i, rc, len(rows)))
    if when is not None:
        false_alarms += 1
        print("healthy %2d: FALSE ALARM %s" % (i, [x["labels"] for x in seen][:3]), flush=True)
wl.down()

res = {"threshold_s": a.threshold, "interval_ms": a.interval_ms,
       "stalls": len(stall_s), "stall_median_s": statistics.median(stall_s) if stall_s else None,
       "stall_max_s": max(stall_s) if stall_s else None,
       "slow_runs": len(slow_s), "slow_median_s": statistics.median(slow_s) if slow_s else None,
       "slow_max_s": max(slow_s) if slow_s else None,
       "healthy_runs": a.healthy, "false_alarms": false_alarms, "failed_runs": bad}
print(json.dumps(res))
met = ((not stall_s or max(stall_s) <= a.threshold + 2) and (not slow_s or max(slow_s) <= 30)
       and false_alarms == 0)
print("# target: stall -> alert within threshold + 2 s = %d s (median %s, max %s over %d); "
      "10 %% slow rank named within 30 s (max %s over %d); 0 false alarms over %d healthy runs (%d): %s"
      % (a.threshold + 2, res["stall_median_s"] and round(res["stall_median_s"], 2),
         res["stall_max_s"] and round(res["stall_max_s"], 2), len(stall_s),
         res["slow_max_s"] and round(res["slow_max_s"], 1), len(slow_s), a.healthy, false_alarms,
         "met" if met and not bad else "MISSED" if not met else "RUNS FAILED"))
for b in bad:
    print("# %s" % b)
sys.exit(2 if bad else 0 if met else 1)
