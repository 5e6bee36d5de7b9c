#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The emulated Slurm cluster itself, without our plugin: 4 nodes with 8
fake GPUs each under two interleaved leaf switches; jobs land where Slurm's
block distribution says; `lab down` leaves nothing running."""
import os
import re
import time

from clusterlib import Lab, LabError, pid_alive, skip_all, unavailable
from taplib import data, diag, done, is_eq, ok

why = unavailable()
if why:
    skip_all(why)

t_start = time.monotonic()
lab = Lab()
try:
    lab.up()
except LabError as e:
    ok(False, "lab up")
    diag(e)
    done()
ok(True, "lab up in %.2f s (LAB=%s, ports %d-%d)"
   % (lab.up_seconds, lab.dir, lab.port_base, lab.port_base + 4))
is_eq(lab.node_states(), {"node%d" % k: "idle" for k in range(1, 5)}, "4 idle nodes")


def switch_lines(text):
    """SwitchName lines without comments and blanks, in file order."""
    return [l.strip() for l in text.splitlines() if l.strip() and not l.lstrip().startswith("#")]


with open(os.path.join(lab.dir, "etc", "topology.conf")) as f:
    generated = switch_lines(f.read())
with open(data("lab-topology.conf")) as f:
    expected = switch_lines(f.read())
is_eq(generated, expected, "generated topology.conf is tests/data/lab-topology.conf")

# What slurmctld made of it: leaves interleave, the spine spans all.
rc, out, err = lab.run(["scontrol", "show", "topology"], timeout=15)
sw = {}
for line in out.splitlines():
    f = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
    if "SwitchName" in f:
        sw[f["SwitchName"]] = f
is_eq([sw.get(s, {}).get("Nodes") for s in ("leaf0", "leaf1", "spine")],
      ["node[1,3]", "node[2,4]", "node[1-4]"], "scontrol show topology: leaf0 node[1,3], leaf1 node[2,4]")
is_eq([sw.get("spine", {}).get("Level"), sw.get("spine", {}).get("Switches")], ["1", "leaf[0-1]"],
      "spine is level 1 above leaf[0-1]")

# 32 tasks on 4 full nodes: block distribution puts ranks 8k..8k+7 on node k+1.
rc, out, err = lab.srun(["-N4", "-n32", "--gres=gpu:8", "bash", "-c",
                         "echo $SLURM_PROCID $SLURMD_NODENAME $SLURM_LOCALID $CUDA_VISIBLE_DEVICES"],
                        timeout=60)
is_eq(rc, 0, "srun -N4 -n32 --gres=gpu:8 exits 0")
if not ok(not err.strip(), "srun says nothing on stderr"):
    diag(err)
rows = sorted((int(r[0]), r[1], int(r[2]), r[3]) for r in
              (l.split() for l in out.splitlines()) if len(r) == 4 and r[0].isdigit())
is_eq(len(rows), 32, "32 tasks reported")
want = [(r, "node%d" % (r // 8 + 1), r % 8, "0,1,2,3,4,5,6,7") for r in range(32)]
is_eq(rows, want, "rank r on node r/8+1, local id r%8, all 8 GPUs visible")

# One GPU per task: each node hands out its 8 devices once.
rc, out, err = lab.srun(["-N4", "-n32", "--gpus-per-task=1", "bash", "-c",
                         "echo $SLURMD_NODENAME $CUDA_VISIBLE_DEVICES"], timeout=60)
per_node = {}
for l in out.splitlines():
    f = l.split()
    if len(f) == 2:
        per_node.setdefault(f[0], []).append(f[1])
is_eq((rc, {n: sorted(g, key=int) for n, g in per_node.items()}),
      (0, {"node%d" % k: [str(i) for i in range(8)] for k in range(1, 5)}),
      "--gpus-per-task=1: GPUs 0-7 once on each node")

# The scheduler uses the tree: two nodes come from one leaf.
rc, out, err = lab.srun(["-N2", "-n2", "bash", "-c", "echo $SLURMD_NODENAME $SLURM_TOPOLOGY_ADDR"],
                        timeout=60)
got = sorted(l.split()[0] for l in out.splitlines() if l.strip())
if not ok(rc == 0 and got in (["node1", "node3"], ["node2", "node4"]),
          "srun -N2 gets two nodes under one leaf (%s)" % ",".join(got)):
    diag(err)
leaf = {"node1": "leaf0", "node3": "leaf0", "node2": "leaf1", "node4": "leaf1"}
addrs = sorted(l.split()[1] for l in out.splitlines() if len(l.split()) == 2)
is_eq(addrs, sorted("spine.%s.%s" % (leaf.get(n, "?"), n) for n in got),
      "SLURM_TOPOLOGY_ADDR is spine.leafN.nodeK")

# Batch jobs, and their inner steps.
rc, out, err = lab.sbatch_wait(["-N4", "--ntasks-per-node=1"],
                               script="#!/bin/bash\nsrun bash -c 'echo $SLURM_PROCID $SLURMD_NODENAME'\n",
                               timeout=60)
is_eq((rc, sorted(l for l in out.splitlines() if l.strip())),
      (0, ["0 node1", "1 node2", "2 node3", "3 node4"]), "sbatch --wait: a step on each node")
if rc != 0:
    diag(err)

# A hung step is killed at the timeout and its job cancelled.
t0 = time.monotonic()
rc, out, err = lab.srun(["-N1", "-n1", "sleep", "300"], timeout=2)
is_eq(rc, 124, "srun past its timeout: rc 124")
ok(time.monotonic() - t0 < 20, "... and returns promptly (%.1f s)" % (time.monotonic() - t0))
rc, out, err = lab.run(["squeue", "-h", "-o", "%i %j %T"], timeout=15)
is_eq(out.strip(), "", "... and its job is gone from squeue")

states = lab.wait_idle(timeout=30)
is_eq(states, {"node%d" % k: "idle" for k in range(1, 5)}, "sinfo: 4 idle nodes after the jobs")
is_eq(lab.bad_nodes(), {}, "no node drained or down")

# Down: every daemon it started is gone, and nothing else names the lab.
pids = lab.daemon_pids()
is_eq(sorted(re.sub(r"node\d", "nodeK", n) for n in pids),
      ["munged.pid", "slurmctld.pid"] + ["slurmd.nodeK.pid"] * 4, "daemons recorded before down")
t0 = time.monotonic()
rc, err = lab.down()
if not ok(rc == 0, "lab down exits 0 (%.2f s)" % (time.monotonic() - t0)):
    diag(err)
alive = {n: p for n, p in pids.items() if pid_alive(p)}
is_eq(alive, {}, "no munged, slurmctld or slurmd of the lab left")
is_eq(lab.leftovers(), [], "no process names the lab directory")
rc, err = lab.down()
is_eq(rc, 0, "lab down again: nothing to do, exits 0")

diag("whole test: %.1f s" % (time.monotonic() - t_start))
done()
