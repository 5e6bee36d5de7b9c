#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""layoutctl topo build / show on the real input files, and its refusals."""
import json
import os
import shutil
import tempfile

from taplib import diag, done, is_close, is_eq, like, ok, run, data, ETC

tmp = tempfile.mkdtemp(prefix="pl-topo-")


def build(*args):
    out = os.path.join(tmp, "map%d.json" % len(os.listdir(tmp)))
    rc, so, se = run("topo", "build", "-o", out, *args)
    if rc != 0:
        diag("topo build %s: %s" % (" ".join(args), se))
        return None, out
    return json.load(open(out)), out


def show(path):
    rc, so, se = run("topo", "show", path, "--json")
    return json.loads(so) if rc == 0 else None


# A real floor (no root switch, a node under two switches) with DGX-like nodes.
m, path = build("--slurm-topology", data("slurm", "circe-superpod_topology.conf"),
                "--node", data("nvidia-smi-topo", "hgx-h100_8gpu_nv18.txt"), "--gpu-mem", "80")
ok(m is not None, "circe topology.conf + HGX H100 nvidia-smi builds a map")
s = show(path)
is_eq([s["nodes"], s["gpus"], s["switches"], s["switch_levels"]], [79, 632, 5, 1],
      "79 nodes, 632 GPUs, 5 leaf switches, no root")
is_eq(s["node_types"][0]["nvlink_islands"], 1, "NV18 everywhere: one NVLink island")
is_eq(s["node_types"][0]["gpu_memory_gb"], 80, "--gpu-mem recorded")
n051 = [n for n in m["nodes"] if n["name"] == "circe-n051"][0]
is_eq((n051["switch"], n051.get("switch2")), ("s2", "s4"), "circe-n051 keeps both of its switches")
rc, out, err = run("topo", "show", path)
like(out, "79 nodes, 632 GPUs", "plain show summarises")

# The 10,000-node tree: three levels.
m, path = build("--slurm-topology", data("slurm", "schedmd-testsuite_3level-tree_topology.conf"),
                "--node", "8")
s = show(path)
is_eq([s["nodes"], s["gpus"], s["switch_levels"]], [10000, 80000, 4], "10,000 nodes under a 4-level switch tree")
rc, out, err = run("place", "--layout", "tp8,pp4", "--topology", path, "--nodes", "peta[10000-10003]")
is_eq(rc, 0, "a built map places")

# Blocks are NVLink domains unless told otherwise.
m, path = build("--slurm-topology", data("slurm", "schedmd-testsuite_block_topology.conf"), "--node", "4")
is_eq([b["nvlink"] for b in m["blocks"]], [True] * 8, "blocks are NVLink domains by default")
m, path = build("--slurm-topology", data("slurm", "schedmd-testsuite_block_topology.conf"), "--node", "4",
                "--blocks", "network")
is_eq([b["nvlink"] for b in m["blocks"]], [False] * 8, "--blocks network")
rc, out, err = run("place", "--layout", "tp8", "--topology", path, "--nodes", "node[01-04]")
ok(rc == 1 and "exceeds the 4 GPUs" in err, "network blocks do not let TP leave a node")

# hwloc XML as the node type.
m, path = build("--nodes", "dgx2-[1-2]", "--node", data("hwloc", "nvidiaDGX2.xml"))
s = show(path)
is_eq([s["gpus"], s["node_types"][0]["gpus"], s["node_types"][0]["nvlink_islands"]], [32, 16, 1],
      "DGX-2 hwloc XML: 16 GPUs in one NVSwitch island per node")

# Mixed cluster: a default type and a named type.
m, path = build("--nodes", "a[1-2]", "--node", "8", "--node-type", "small:b[1-3]=4")
s = show(path)
is_eq([s["nodes"], s["gpus"]], [5, 28], "mixed: 2x8 + 3x4 GPUs")
is_eq(sorted((t["name"], t["nodes"]) for t in s["node_types"]), [("default", 2), ("small", 3)],
      "both types with their node counts")

# nvidia-smi with a NIC legend: names and closest NICs reach the placement.
m, path = build("--nodes", "h[1-2]", "--node", os.path.join(ETC, "examples", "h100-node-topo.txt"))
gpus = m["node_types"][0]["gpus"]
nics = m["node_types"][0]["nics"]
is_eq([nics[g["nic"]]["name"] for g in gpus], ["mlx5_%d" % i for i in range(8)],
      "each GPU's closest NIC is its PIX neighbour")
is_eq([g["numa"] for g in gpus], [0, 0, 0, 0, 1, 1, 1, 1], "NUMA affinity read")
rc, out, err = run("place", "--layout", "tp8,dp2", "--topology", path, "--nodes", "h[1-2]", "--json")
tasks = json.loads(out)["tasks"]
is_eq([t["nic"] for t in tasks[:8]], ["mlx5_%d" % i for i in range(8)], "tasks get their GPU's NIC")

# Measured bandwidth from nccl-tests.
m, path = build("--nodes", "h[1-2]", "--node", "8",
                "--nccl-tests", data("nccl", "h200-2x8-baremetal_all_reduce_perf_nccl-tests-issue256.txt"))
leaf = m["link_classes"]["leaf"]
ok(leaf["measured"] and abs(leaf["gbps"] - 488.81) < 1e-6, "2-node all_reduce_perf sets the leaf class to 488.81 GB/s")
like(leaf["source"], "16 ranks on 2 nodes", "and says where the figure came from")
m, path = build("--nodes", "h[1-2]", "--node", "8",
                "--nccl-tests", data("nccl", "gcp-a3mega-2x8-h100_all_reduce_perf.txt") + "=spine")
ok(m["link_classes"]["spine"]["measured"] and abs(m["link_classes"]["spine"]["gbps"] - 338.82) < 1e-6,
   "=spine puts a measurement on the spine class")

# Round trip: the map file reads back identically through show/place.
m2 = json.load(open(path))
is_eq(m2, m, "the map file is stable")

# Refusals.
for args, needle, name in (
        (["--nodes", "x1"], "no node type", "nodes without a node description"),
        (["--node", "8"], "no nodes", "a node type without nodes"),
        (["--nodes", "x1", "--node", "/nonexistent.xml"], "/nonexistent.xml", "a missing source file"),
        (["--nodes", "x1", "--node", data("slurm", "unsw-abacus_topology.conf")], "slurm-topology input",
         "a topology.conf given as a node description"),
        (["--nodes", "x1", "--node", data("nccl", "azure-ncv4-graph.xml")], "azure-ncv4-graph.xml",
         "an NCCL graph file"),
        (["--nodes", "x[1-", "--node", "8"], "x[1-", "a broken hostlist"),
        (["--nodes", "x1", "--node-type", "bad"], "NAME:HOSTLIST=SOURCE", "a malformed --node-type"),
        (["--nodes", "x1", "--node", "8", "--nccl-tests", data("nccl", "azure-ndv4-topo.xml")], "azure-ndv4",
         "a non-nccl-tests file as --nccl-tests"),
        (["--nodes", "x1", "--node", "8", "--nccl-tests", data("nccl", "aws-g5.48xl-topo.xml") + "=warp"],
         "unknown link class 'warp'", "an unknown link class"),
        (["--nodes", "x1", "--node", "0"], "1..4096", "zero GPUs"),
        (["--slurm-topology", "/nonexistent.conf", "--node", "8"], "/nonexistent.conf", "a missing topology.conf")):
    rc, out, err = run("topo", "build", *args)
    ok(rc in (1, 2) and err.startswith("layoutctl: ") and needle in err, "refused: " + name)
    if needle not in err:
        diag(err)
# A damaged hwloc export (one mangled attribute name) crashes libhwloc 2.9
# itself; layoutctl reads hwloc files in a child process and reports it.
src = open(data("hwloc", "32em64t-2n8c2t-pci-wholeio.xml")).read()
needle = 'os_index="26" cpuset="0x04000000" complete_cpuset'
ok(needle in src, "the PU line to damage is in the fixture")
damaged = os.path.join(tmp, "damaged.xml")
with open(damaged, "w") as f:
    f.write(src.replace(needle, needle.replace("complete_cpuset", "complete_cpu0et")))
rc, out, err = run("topo", "build", "--nodes", "x1", "--node", damaged)
ok(rc == 1 and err.startswith("layoutctl: --node=") and "damaged.xml" in err,
   "a damaged hwloc XML is a clean error, not a crash")
diag(err.strip())

# Live discovery through hwloc runs; this test machine has no GPU, which is
# refused by name (on a GPU node the same call describes it).
rc, out, err = run("topo", "build", "--nodes", "x1", "--node", "live")
ok((rc == 1 and "has no GPUs" in err) or rc == 0, "--node live discovers this machine")
bad = os.path.join(tmp, "bad.json")
with open(bad, "w") as f:
    f.write('{"format": "parallel-layout-map", "version": 1, "nodes": [{"name": "a", "gpus": 8}]}')
rc, out, err = run("topo", "show", bad)
ok(rc == 1 and "nodes[0]" in err and "gpus" in err, "a map with a misplaced key is refused, naming it")
rc, out, err = run("topo", "frobnicate")
is_eq(rc, 2, "unknown topo subcommand is a usage error")
shutil.rmtree(tmp, ignore_errors=True)
done()
