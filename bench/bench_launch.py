#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""srun launch time for 32 tasks on the emulated cluster, with and without
the plugin, measured in one run: runs alternate between the two plugstack
states so drift hits both alike.  Reports medians and the ratio (target:
under 5 % added).  Needs root and Slurm (like the cluster tests).

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

plugin, layoutctl = sys.argv[1], sys.argv[2]
layoutd = sys.argv[3] if len(sys.argv) > 3 and os.path.exists(sys.argv[3]) else None
runs = int(sys.argv[4]) if len(sys.argv) > 4 else 15
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


def timed(args):
    t0 = time.monotonic()
    rc, out, err = lab.srun(args, timeout=60)
    dt = time.monotonic() - t0
    if rc != 0:
        raise SystemExit("bench_launch: srun %s failed: %s" % (" ".join(args), err))
    return dt


base, with_pl = [], []
for i in range(runs + 2):
    # srun re-reads plugstack.conf on every start: no restart is needed.
    with open(conf, "w") as f:
        f.write("")
    a = timed(["-N4", "-n32", "true"])
    with open(conf, "w") as f:
        f.write(line)
    b = timed(["-N4", "-n32", "--parallel-layout=tp8,pp4", "true"])
    if i >= 2:  # the first runs warm caches
        base.append(a)
        with_pl.append(b)
lab.down()
mb, mp = statistics.median(base), statistics.median(with_pl)
print(json.dumps({"runs": runs, "tasks": 32, "median_s_without": round(mb, 4),
                  "median_s_with": round(mp, 4), "ratio": round(mp / mb, 4),
                  "added_percent": round((mp / mb - 1) * 100, 2),
                  "placement_from": "layoutd" if layoutd else "in-process"}))
print("# target: under 5 %% added: %s" % ("met" if mp / mb < 1.05 else "MISSED"))
