#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""layoutctl topo build / show on the real input files, and its refusals."""
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import xml.etree.ElementTree as ET

from taplib import diag, done, is_close, is_eq, like, ok, run, data, ETC

tmp = tempfile.mkdtemp(prefix="pl-topo-")


def build(*args):
    """The map layoutctl builds, or {} after a failed check (so the checks
    that follow fail too instead of being skipped)."""
    out = os.path.join(tmp, "map%d.json" % len(os.listdir(tmp)))
    rc, so, se = run("topo", "build", "-o", out, *args)
    if not ok(rc == 0, "topo build %s" % " ".join(os.path.basename(a) for a in args)):
        diag(se)
        return {}, out
    return json.load(open(out)), out


def show(path):
    """topo show --json of path, or {} after a failed check."""
    rc, so, se = run("topo", "show", path, "--json")
    if not ok(rc == 0, "topo show %s" % os.path.basename(path)):
        diag(se)
        return {}
    return json.loads(so)


def get(d, *keys):
    """d[k1][k2]..., or None where the path is missing (a failed build)."""
    for k in keys:
        try:
            d = d[k]
        except (KeyError, IndexError, TypeError):
            return None
    return d


# A real floor (no root switch, a node under two switches) with DGX-like nodes.
m, path = build("--slurm-topology", data("slurm", "circe-superpod_topology.conf"),
                "--node", data("nvidia-smi-topo", "hgx-h100_8gpu_nv18.txt"), "--gpu-mem", "80")
s = show(path)
is_eq([get(s, k) for k in ("nodes", "gpus", "switches", "switch_levels")], [79, 632, 5, 1],
      "79 nodes, 632 GPUs, 5 leaf switches, no root")
is_eq(get(s, "node_types", 0, "nvlink_islands"), 1, "NV18 everywhere: one NVLink island")
is_eq(get(s, "node_types", 0, "gpu_memory_gb"), 80, "--gpu-mem recorded")
n051 = ([n for n in m.get("nodes", []) if n["name"] == "circe-n051"] or [{}])[0]
is_eq((n051["switch"], n051.get("switch2")), ("s2", "s4"), "circe-n051 keeps both of its switches")
rc, out, err = run("topo", "show", path)
like(out, "79 nodes, 632 GPUs", "plain show summarises")

# The 10,000-node tree: three levels.
m, path = build("--slurm-topology", data("slurm", "schedmd-testsuite_3level-tree_topology.conf"),
                "--node", "8")
s = show(path)
is_eq([get(s, k) for k in ("nodes", "gpus", "switch_levels")], [10000, 80000, 4],
      "10,000 nodes under a 4-level switch tree")
rc, out, err = run("place", "--layout", "tp8,pp4", "--topology", path, "--nodes", "peta[10000-10003]")
is_eq(rc, 0, "a built map places")

# Blocks are NVLink domains unless told otherwise.
m, path = build("--slurm-topology", data("slurm", "schedmd-testsuite_block_topology.conf"), "--node", "4")
is_eq([b["nvlink"] for b in m.get("blocks", [])], [True] * 8, "blocks are NVLink domains by default")
m, path = build("--slurm-topology", data("slurm", "schedmd-testsuite_block_topology.conf"), "--node", "4",
                "--blocks", "network")
is_eq([b["nvlink"] for b in m.get("blocks", [])], [False] * 8, "--blocks network")
rc, out, err = run("place", "--layout", "tp8", "--topology", path, "--nodes", "node[01-04]")
ok(rc == 1 and "exceeds the 4 GPUs" in err, "network blocks do not let TP leave a node")

# hwloc XML as the node type.
m, path = build("--nodes", "dgx2-[1-2]", "--node", data("hwloc", "nvidiaDGX2.xml"))
s = show(path)
is_eq([get(s, "gpus"), get(s, "node_types", 0, "gpus"), get(s, "node_types", 0, "nvlink_islands")],
      [32, 16, 1],
      "DGX-2 hwloc XML: 16 GPUs in one NVSwitch island per node")

# Mixed cluster: a default type and a named type.
m, path = build("--nodes", "a[1-2]", "--node", "8", "--node-type", "small:b[1-3]=4")
s = show(path)
is_eq([get(s, "nodes"), get(s, "gpus")], [5, 28], "mixed: 2x8 + 3x4 GPUs")
is_eq(sorted((t["name"], t["nodes"]) for t in s.get("node_types", [])), [("default", 2), ("small", 3)],
      "both types with their node counts")

# nvidia-smi with a NIC legend: names and closest NICs reach the placement.
m, path = build("--nodes", "h[1-2]", "--node", os.path.join(ETC, "examples", "h100-node-topo.txt"))
gpus = get(m, "node_types", 0, "gpus") or []
nics = get(m, "node_types", 0, "nics") or []
is_eq([nics[g["nic"]]["name"] for g in gpus], ["mlx5_%d" % i for i in range(8)],
      "each GPU's closest NIC is its PIX neighbour")
is_eq([g["numa"] for g in gpus], [0, 0, 0, 0, 1, 1, 1, 1], "NUMA affinity read")
rc, out, err = run("place", "--layout", "tp8,dp2", "--topology", path, "--nodes", "h[1-2]", "--json")
is_eq(rc, 0, "a map with NICs places")
tasks = json.loads(out)["tasks"] if rc == 0 else []
is_eq([t["nic"] for t in tasks[:8]], ["mlx5_%d" % i for i in range(8)], "tasks get their GPU's NIC")

# Measured bandwidth from nccl-tests.
m, path = build("--nodes", "h[1-2]", "--node", "8",
                "--nccl-tests", data("nccl", "h200-2x8-baremetal_all_reduce_perf_nccl-tests-issue256.txt"))
leaf = get(m, "link_classes", "leaf") or {}
ok(leaf.get("measured") is True and abs(leaf.get("gbps", 0) - 488.81) < 1e-6,
   "2-node all_reduce_perf sets the leaf class to 488.81 GB/s")
like(leaf.get("source"), "16 ranks on 2 nodes", "and says where the figure came from")
m, path = build("--nodes", "h[1-2]", "--node", "8",
                "--nccl-tests", data("nccl", "gcp-a3mega-2x8-h100_all_reduce_perf.txt") + "=spine")
ok(get(m, "link_classes", "spine", "measured") is True and
   abs((get(m, "link_classes", "spine", "gbps") or 0) - 338.82) < 1e-6,
   "=spine puts a measurement on the spine class")

# Round trip: what build writes, show reads back; the expectations are
# stated here from the inputs, not taken from either side.  Two node
# types (2 nodes of 8 GPUs with --gpu-mem and --nccl-topo-file, 3 of 4),
# a tree of one spine over two leaves, and one measured class.
conf = os.path.join(tmp, "rt-topology.conf")
with open(conf, "w") as f:
    f.write("SwitchName=l0 Nodes=a[1-2],b1\nSwitchName=l1 Nodes=b[2-3]\nSwitchName=sp Switches=l[0-1]\n")
m, path = build("--name", "roundtrip", "--slurm-topology", conf, "--node", "8", "--gpu-mem", "80",
                "--nccl-topo-file", "/etc/nccl-topo.xml", "--node-type", "small:b[1-3]=4",
                "--nccl-tests", data("nccl", "gcp-a3mega-2x8-h100_all_reduce_perf.txt") + "=spine")
s = show(path)
nominal = {"nvlink": 450.0, "pcie": 25.0, "leaf": 50.0}
want = {
    "name": "roundtrip", "nodes": 5, "gpus": 2 * 8 + 3 * 4, "switches": 3, "switch_levels": 2,
    "blocks": 0,
    "node_types": [
        {"name": "default", "nodes": 2, "gpus": 8, "nics": 0, "nvlink_islands": 1,
         "gpu_memory_gb": 80.0, "nccl_topo_file": "/etc/nccl-topo.xml"},
        {"name": "small", "nodes": 3, "gpus": 4, "nics": 0, "nvlink_islands": 1,
         "gpu_memory_gb": 0.0, "nccl_topo_file": ""}],
}
is_eq({k: s.get(k) for k in want}, want, "round trip: show reads back what build was given")
is_eq({k: get(s, "link_classes", k, "gbps") for k in nominal}, nominal,
      "round trip: the nominal classes are the documented figures")
ok(get(s, "link_classes", "spine", "measured") is True and
   abs((get(s, "link_classes", "spine", "gbps") or 0) - 338.82) < 1e-6 and
   get(s, "link_classes", "leaf", "measured") is False,
   "round trip: only the spine class is measured, at 338.82 GB/s")
is_eq(sorted((n["name"], n.get("type", "default"), n.get("switch")) for n in m.get("nodes", [])),
      [("a1", "default", "l0"), ("a2", "default", "l0"), ("b1", "small", "l0"),
       ("b2", "small", "l1"), ("b3", "small", "l1")],
      "round trip: each node's type and leaf switch as topology.conf and --node-type give them")
rc, out, err = run("place", "--layout", "tp4", "--topology", path, "--nodes", "b[1-3]", "--json")
is_eq(rc, 0, "round trip: the map places")
placed = json.loads(out) if rc == 0 else {"tasks": []}
is_eq([(t["node"], t["local_rank"]) for t in placed["tasks"]],
      [("b%d" % (i // 4 + 1), i % 4) for i in range(12)], "round trip: 3 nodes of 4 GPUs as typed")

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
        (["--slurm-topology", "/nonexistent.conf", "--node", "8"], "/nonexistent.conf", "a missing topology.conf"),
        (["--nodes", "x[1-2]", "--node-type", "t:x1=4", "--node-type", "t:x2=8"],
         "node type 't' is given twice", "a repeated --node-type name"),
        (["--nodes", "x1", "--node", "8", "--node-type", "default:x1=4"],
         "node type 'default' is given twice", "a --node-type named like --node's type"),
        (["--slurm-topology", os.devnull, "--node", "8"], "the map has no nodes", "an empty topology.conf"),
        (["--nodes", "x1", "--node", "8", "--name", "n" * 64], "longer than 63 characters",
         "a 64-character --name"),
        (["--nodes", "x1", "--node", "8", "--name", ""], "--name is empty", "an empty --name"),
        (["--nodes", "x" * 5000 + "[", "--node", "8"], "...(5001 bytes)", "a 5,000-character hostlist, echoed clipped")):
    rc, out, err = run("topo", "build", *args)
    ok(rc in (1, 2) and err.startswith("layoutctl: ") and err.count("\n") == 1 and len(err) < 600 and
       needle in err, "refused: " + name)
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

# A 63-character name is kept whole.
m, path = build("--nodes", "x1", "--node", "8", "--name", "n" * 63)
is_eq(m.get("name"), "n" * 63, "a 63-character --name is kept whole")
# A map file of no nodes is refused where it is read.
empty = os.path.join(tmp, "empty.json")
with open(empty, "w") as f:
    json.dump({"format": "parallel-layout-map", "version": 1, "name": "e",
               "node_types": [{"name": "t", "gpus": [{"index": 0}]}], "default_type": "t",
               "nodes": []}, f)
rc, out, err = run("topo", "show", empty)
ok(rc == 1 and "the map has no nodes" in err, "a 0-node map file is refused by show")
rc, out, err = run("place", "--layout", "tp1", "--topology", empty, "--nodes", "a")
ok(rc == 1 and "the map has no nodes" in err, "and by place")

# 100,000 nodes: the build was quadratic (40,000 nodes took 9.4 s, 100,000
# over a minute); it is O(n log n) now.
t0 = time.monotonic()
rc, out, err = run("topo", "build", "--nodes", "n[1-50000]", "--node", "8",
                   "--node-type", "small:m[1-50000]=4", "-o", os.path.join(tmp, "big.json"))
took = time.monotonic() - t0
ok(rc == 0 and took < 10, "100,000 nodes build in under 10 s (%.2f s)" % took)
diag("topo build: 100000 nodes in %.2f s" % took)

# Live discovery through hwloc, checked against what this machine is: its
# own lstopo export, read here with ElementTree (GPUs are hwloc's CoProc
# or GPU OS devices, RDMA NICs its OpenFabrics ones), and read by
# layoutctl's XML reader, must give what live discovery gives.
lstopo = shutil.which("lstopo-no-graphics") or shutil.which("lstopo")
if not ok(lstopo is not None, "lstopo is installed (the live checks compare with it)"):
    lstopo = "lstopo"
export = os.path.join(tmp, "live.xml")
p = subprocess.run([lstopo, "--of", "xml", export], capture_output=True, text=True)
ok(p.returncode == 0 and os.path.getsize(export) > 0, "lstopo exports this machine")
root = ET.parse(export).getroot() if p.returncode == 0 else ET.Element("topology")
osdevs = [o for o in root.iter("object") if o.get("type") == "OSDev"]
ngpus = len([o for o in osdevs if o.get("osdev_type") in ("1", "5") and
             any(o.get("name", "").startswith(k) for k in ("cuda", "nvml", "rsmi"))])
rdma = sorted(o.get("name") for o in osdevs if o.get("osdev_type") == "3")
diag("lstopo: %d GPUs, RDMA NICs %s" % (ngpus, rdma))
rc, out, err = run("topo", "build", "--nodes", "x1", "--node", "live")
rc2, out2, err2 = run("topo", "build", "--nodes", "x1", "--node", export)
if ngpus == 0:
    ok(rc == 1 and "has no GPUs (live: hwloc found none on host '%s')" % socket.gethostname() in err,
       "--node live: no GPU on this host, named in the refusal")
    ok(rc2 == 1 and "has no GPUs" in err2, "its lstopo export read as XML: no GPU either")
else:
    is_eq(len(get(json.loads(out) if rc == 0 else {}, "node_types", 0, "gpus") or []), ngpus,
          "--node live finds the GPUs lstopo lists")
    is_eq(len(get(json.loads(out2) if rc2 == 0 else {}, "node_types", 0, "gpus") or []), ngpus,
          "and so does its export read as XML")
# The NICs live discovery and the XML reader see are lstopo's RDMA NICs.
m, path = build("--nodes", "x1", "--node", "%d+live" % max(ngpus, 1))
m2, path2 = build("--nodes", "x1", "--node", "%d+%s" % (max(ngpus, 1), export))
live_nics = get(m, "node_types", 0, "nics")
is_eq(sorted(n["name"] for n in (live_nics or [])), rdma, "live discovery finds lstopo's RDMA NICs")
ok(live_nics is not None and live_nics == get(m2, "node_types", 0, "nics"),
   "and reads them as the XML reader reads the export")
bad = os.path.join(tmp, "bad.json")
with open(bad, "w") as f:
    f.write('{"format": "parallel-layout-map", "version": 1, "nodes": [{"name": "a", "gpus": 8}]}')
rc, out, err = run("topo", "show", bad)
ok(rc == 1 and "nodes[0]" in err and "gpus" in err, "a map with a misplaced key is refused, naming it")
rc, out, err = run("topo", "frobnicate")
is_eq(rc, 2, "unknown topo subcommand is a usage error")
shutil.rmtree(tmp, ignore_errors=True)
done()
