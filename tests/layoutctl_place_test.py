#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""layoutctl place: ranks, GPUs, NICs and cost on real topology files."""
import os
import tempfile
import time

from taplib import diag, done, is_eq, like, ok, run, run_json, data

LAB = data("lab-topology.conf")


def place(spec, topo, nodes, *extra):
    return run_json("place", "--layout", spec, "--topology", topo, "--nodes", nodes, *extra)


def check_common(res, world, name, domain=lambda node: node):
    """Invariants every placement must keep."""
    if not ok(res is not None, name + ": placed"):
        return []
    tasks = res["tasks"]
    ok(len(tasks) == world and [t["procid"] for t in tasks] == list(range(world)),
       name + ": one row per task in SLURM_PROCID order")
    ok(sorted(t["rank"] for t in tasks) == list(range(world)), name + ": RANKs are a permutation")
    per_node = {}
    for t in tasks:
        per_node.setdefault(t["node"], []).append(t["local_rank"])
    ok(all(len(v) == len(set(v)) for v in per_node.values()), name + ": LOCAL_RANKs distinct per node")
    tp = res["layout"]["tp"]
    groups = {}
    for t in tasks:
        groups.setdefault((t["cp"], t["dp"], t["pp"]), set()).add(domain(t["node"]))
    ok(all(len(v) == 1 for v in groups.values()), name + ": every TP group in one NVLink domain")
    ok(all(len([t for t in tasks if (t["cp"], t["dp"], t["pp"]) == k]) == tp for k in groups),
       name + ": TP groups have tp members")
    c, b = res["cost"], res["baseline_cost"]
    ok(c["cross_switch_bytes_per_step"] <= b["cross_switch_bytes_per_step"] * (1 + 1e-12),
       name + ": cross-switch bytes no worse than Slurm block order")
    return tasks


# tp8,pp4 on the interleaved lab: hand-worked.  Topology order is node1,
# node3 (leaf0), node2, node4 (leaf1); Megatron ranks have pp outermost, so
# stage s takes the s-th node in that order.
res = place("tp8,pp4", LAB, "node[1-4]", "--gpus-per-node", "8")
tasks = check_common(res, 32, "tp8,pp4 lab")
stage_of_node = {t["node"]: t["pp"] for t in tasks}
is_eq(stage_of_node, {"node1": 0, "node3": 1, "node2": 2, "node4": 3}, "PP stages follow the leaves")
is_eq([tasks[8]["rank"], tasks[8]["node"], tasks[8]["local_rank"]], [16, "node2", 0],
      "procid 8 (first task on node2) is rank 16 on GPU 0")
is_eq([t["rank"] for t in tasks if t["node"] == "node3"], list(range(8, 16)), "node3 holds ranks 8-15")
c, b = res["cost"], res["baseline_cost"]
# The pipeline chain crosses leaves once instead of three times.
ok(abs(b["cross_switch_bytes_per_step"] - 3 * c["cross_switch_bytes_per_step"]) < 1e-6 * b["cross_switch_bytes_per_step"]
   and c["cross_switch_bytes_per_step"] > 0, "cross-switch bytes are a third of block order's")

# tp8,pp2,dp2 with a 70b model: DP outweighs PP, so DP pairs share a leaf.
res = place("tp8,pp2,dp2,model=70b", LAB, "node[1-4]", "--gpus-per-node", "8")
tasks = check_common(res, 32, "tp8,pp2,dp2 lab")
dp_nodes = {}
for t in tasks:
    dp_nodes.setdefault(t["pp"], set()).add(t["node"])
is_eq(sorted(sorted(v) for v in dp_nodes.values()), [["node1", "node3"], ["node2", "node4"]],
      "each stage's DP replicas sit under one leaf")
ok(res["cost"]["cross_switch_bytes_per_step"] * 1.5 <= res["baseline_cost"]["cross_switch_bytes_per_step"],
   "at least 1.5x fewer cross-switch bytes than block order")

# Determinism: the same inputs give the same ranks.
again = place("tp8,pp2,dp2,model=70b", LAB, "node[1-4]", "--gpus-per-node", "8")
is_eq(again["tasks"], res["tasks"], "placement is deterministic")

# Partial nodes: 4 tasks per 8-GPU node.
res = place("tp4,pp2,dp2", LAB, "node[1-4]", "--gpus-per-node", "8", "--tasks-per-node", "4")
check_common(res, 16, "partial nodes")

# Refusals.
rc, out, err = run("place", "--layout", "tp16,pp2", "--topology", LAB, "--gpus-per-node", "8",
                   "--nodes", "node[1-4]")
ok(rc == 1 and "tp=16 exceeds the 8 GPUs per NVLink domain of node" in err, "tp16 on 8-GPU nodes refused")
diag(err.strip())
rc, out, err = run("place", "--layout", "tp8,pp4", "--topology", LAB, "--gpus-per-node", "8",
                   "--nodes", "node[1-3],node9")
ok(rc == 1 and "node9" in err, "a node missing from the map is named")
rc, out, err = run("place", "--layout", "tp8,pp3", "--topology", LAB, "--gpus-per-node", "8",
                   "--nodes", "node[1-4]")
ok(rc == 1 and "not a multiple" in err, "a world size the spec does not divide is refused")
rc, out, err = run("place", "--layout", "tp8", "--topology", LAB, "--nodes", "node[1-4]")
ok(rc == 1 and "--gpus-per-node" in err, "a topology.conf needs --gpus-per-node")
rc, out, err = run("place", "--layout", "tp8", "--topology", "/nonexistent/map.json", "--nodes", "n1")
ok(rc == 1 and "/nonexistent/map.json" in err, "a missing map file is named")
rc, out, err = run("place", "--layout", "tp4", "--topology", LAB, "--gpus-per-node", "8",
                   "--nodes", "node[1-2]", "--tasks-per-node", "6")
ok(rc == 1 and "not a multiple of tp=4" in err, "6 tasks per node cannot hold tp4 groups")

# Real topology files.
circe = data("slurm", "circe-superpod_topology.conf")
# n019/n020 are stray names in that file; circe-n019 does not exist.
res = place("tp8,pp4,dp5", circe, "circe-n[001-018,021-022]", "--gpus-per-node", "8")
check_common(res, 160, "circe superpod")
t0 = time.time()
res = place("tp8,pp8,dp64", data("slurm", "schedmd-testsuite_3level-tree_topology.conf"),
            "peta[10000-10511]", "--gpus-per-node", "8")
check_common(res, 4096, "10,000-node 3-level tree, 512-node step")
ok(time.time() - t0 < 30, "4096 tasks placed and printed promptly")
blocks = data("slurm", "schedmd-testsuite_block_topology.conf")
res = place("tp8,pp4", blocks, "node[01-16]", "--gpus-per-node", "4")
# Blocks b1 = node[01-04], b2 = node[05-08], ...
tasks = check_common(res, 64, "NVLink blocks, tp8 across two 4-GPU nodes",
                     domain=lambda node: (int(node[4:]) - 1) // 4)
ok(any(len({t["node"] for t in tasks if (t["dp"], t["pp"]) == k}) == 2
       for k in {(t["dp"], t["pp"]) for t in tasks}), "TP groups do span two nodes of a block")
rc, out, err = run("place", "--layout", "tp32,pp2", "--topology", blocks, "--gpus-per-node", "4",
                   "--nodes", "node[01-16]")
ok(rc == 1 and "block" in err, "tp32 does not fit a 16-GPU block: refused naming the block")
diag(err.strip())

# Plain table.
rc, out, err = run("place", "--layout", "tp8,pp4", "--topology", LAB, "--gpus-per-node", "8",
                   "--nodes", "node[1-4]")
ok(rc == 0 and out.count("\n") == 35 and "strategy:" in out, "table: header, 32 rows, cost, strategy")
done()
