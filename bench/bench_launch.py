#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""srun launch time for 32 tasks on the emulated cluster, with and without
the plugin, measured in one run.  Each round times both states, in
alternating order, each after the nodes are idle again, so drift and a
still-completing job hit both alike.  A run counts only when all 32 tasks
ran (each prints its rank) and, with the plugin, each task got its RANK and
every node's layoutd logged a placement: a step whose slurmstepds cannot
load the plugin ends before any task starts and still exits 0, which once
made the plugin look 4x faster.  Reports min/median/max of both and exits
1 when the target is missed (the plugin adds under 5 % to the median).
Needs root and Slurm (like the cluster tests).

Usage: bench_launch.py PLUGIN.so LAYOUTCTL [LAYOUTD] [RUNS]"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from clusterlib import Lab, unavailable  # noqa: E402

TARGET = 1.05
if len(sys.argv) < 3:
    raise SystemExit(__doc__)
# slurmstepd runs in another directory: a relative path loads in srun only.
plugin, layoutctl = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
layoutd = os.path.abspath(sys.argv[3]) if len(sys.argv) > 3 and os.path.exists(sys.argv[3]) else None
runs = int(sys.argv[4]) if len(sys.argv) > 4 else 15
for p in [plugin, layoutctl] + ([layoutd] if layoutd else []):
    if not os.path.isfile(p):
        raise SystemExit("bench_launch: %s: no such file" % p)
why = unavailable()
if why:
    print("bench_launch: skipped: " + why)
    sys.exit(0)
top = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
tmp = tempfile.mkdtemp(prefix="pl-bench-")
m = os.path.join(tmp, "map.json")
subprocess.run([layoutctl, "topo", "build", "-o", m, "--slurm-topology",
                os.path.join(top, "tests", "data", "lab-topology.conf"), "--node", "8"], check=True)
lab = Lab(name="bench_launch", plugin=plugin, layoutd=layoutd, layoutd_map=m if layoutd else None)
lab.knobs["plugin_args"] = "map=%s socket=%s/run/layoutd-%%n.sock" % (m, lab.dir)
lab.up()
conf = os.path.join(lab.dir, "etc", "plugstack.conf.d", "parallel-layout.conf")
with open(conf) as f:
    line = f.read()


def placements():
    """Placement lines in each node's layoutd log."""
    n = []
    for k in range(1, lab.nodes + 1):
        try:
            with open(os.path.join(lab.dir, "log", "layoutd.node%d.log" % k), errors="replace") as f:
                n.append(sum(1 for l in f if "placement" in l))
        except OSError:
            n.append(0)
    return n


def timed(with_plugin):
    # srun and slurmstepd re-read plugstack.conf on every start.
    with open(conf, "w") as f:
        f.write(line if with_plugin else "")
    lab.wait_idle()
    before = placements()
    args = ["-N4", "-n32"] + (["--parallel-layout=tp8,pp4"] if with_plugin else [])
    var = "RANK" if with_plugin else "SLURM_PROCID"
    t0 = time.monotonic()
    rc, out, err = lab.srun(args + ["printenv", var], timeout=60)
    dt = time.monotonic() - t0
    got = sorted(int(x) for x in out.split() if x.isdigit())
    if rc != 0 or got != list(range(32)):
        raise SystemExit("bench_launch: srun %s: rc %d, %d of 32 tasks printed their %s:\n%s"
                         % (" ".join(args), rc, len(got), var, err[-2000:]))
    if with_plugin and layoutd:
        after = placements()
        if any(a <= b for a, b in zip(after, before)):
            raise SystemExit("bench_launch: not every node's layoutd answered (placements logged "
                             "before %s, after %s)" % (before, after))
    return dt


base, with_pl = [], []
for i in range(runs + 2):
    order = (False, True) if i % 2 == 0 else (True, False)
    t = {w: timed(w) for w in order}
    if i >= 2:  # the first rounds warm caches
        base.append(t[False])
        with_pl.append(t[True])
lab.down()
mb, mp = statistics.median(base), statistics.median(with_pl)
res = {"runs": runs, "tasks": 32,
       "without_s": {"min": round(min(base), 4), "median": round(mb, 4), "max": round(max(base), 4)},
       "with_s": {"min": round(min(with_pl), 4), "median": round(mp, 4), "max": round(max(with_pl), 4)},
       "ratio": round(mp / mb, 4), "added_percent": round((mp / mb - 1) * 100, 2),
       "placement_from": "layoutd" if layoutd else "in-process"}
print(json.dumps(res))
met = mp / mb < TARGET
print("# target: under %.0f %% added: %s" % ((TARGET - 1) * 100, "met" if met else "MISSED"))
sys.exit(0 if met else 1)
