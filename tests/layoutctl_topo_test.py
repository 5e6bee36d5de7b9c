#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""layoutctl topo build / show on the real input files, and its refusals."""
import json
import re
import os
import shutil
import socket
import subprocess
import tempfile
import time
import xml.etree.ElementTree as ET

from taplib import diag, done, is_close, is_eq, like, ok, run, skip, data, ETC

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

# Peer addresses from `scontrol show nodes -o`.  The expectations are read
# from the captures here (NodeName, NodeAddr, Port words), not from
# layoutctl: the lab (Slurm 22.05.8, every node on 127.0.0.1, slurmd on a
# port of its own) and a hand-written cluster of distinct addresses on the
# default SlurmdPort (no Port= shown).
def scontrol_fields(path):
    """{node: (NodeAddr, Port or None)} from a -o capture: the words
    before OS=, after which come free-text fields (a Reason may say
    "Port=1")."""
    out = {}
    for line in open(path):
        words = dict(w.split("=", 1) for w in line.split(" OS=")[0].split() if "=" in w)
        out[words["NodeName"]] = (words["NodeAddr"], int(words["Port"]) if "Port" in words else None)
    return out


def peers(m):
    """{node: (addr, peer_port)} of a built map, None where it has none."""
    return {n["name"]: (n.get("addr"), n.get("peer_port")) for n in m.get("nodes", [])}


lab_nodes = data("lab-scontrol-nodes.txt")
lab = scontrol_fields(lab_nodes)
ok(sorted(lab) == ["node%d" % k for k in range(1, 5)] and all(a == "127.0.0.1" and p for a, p in lab.values()),
   "the lab capture: 4 nodes on 127.0.0.1, each with its slurmd Port=")
m, path = build("--slurm-topology", data("lab-topology.conf"), "--node", "8",
                "--slurm-nodes", lab_nodes, "--peer-port", "slurmd+200")
is_eq(peers(m), {n: (a, p + 200) for n, (a, p) in lab.items()},
      "--peer-port slurmd+200: each lab node its NodeAddr and its slurmd port + 200")
is_eq(len({p for a, p in peers(m).values()}), 4, "so each of the 4 nodes on one address has its own port")
s = show(path)
is_eq(get(s, "peers"), {"with_addr": 4, "with_peer_port": 4}, "show --json counts them")
lo, hi = min(p for a, p in lab.values()) + 200, max(p for a, p in lab.values()) + 200
rc, out, err = run("topo", "show", path)
like(out, "peers        4 of 4 nodes with an address, 4 with a peer port (%d to %d)" % (lo, hi),
     "plain show says how many nodes have them, and the ports")
rc, out, err = run("topo", "show", path, "--nodes")
rows = {l.split()[0]: l.split() for l in out.splitlines()[out.splitlines().index(
    [l for l in out.splitlines() if l.startswith("NODE ")][0]) + 1:]} if rc == 0 and "NODE " in out else {}
is_eq({n: (r[4], int(r[5])) for n, r in rows.items()}, {n: (a, p + 200) for n, (a, p) in lab.items()},
      "show --nodes: one line per node with its address and peer port")
is_eq({n: r[2] for n, r in rows.items()}, {"node1": "leaf0", "node2": "leaf1", "node3": "leaf0", "node4": "leaf1"},
      "and its leaf switch, as lab-topology.conf interleaves them")
rc, out, err = run("topo", "show", path, "--nodes", "--json")
nl = json.loads(out).get("node_list", []) if rc == 0 else []
is_eq({n["name"]: (n["addr"], n["peer_port"], n["block"]) for n in nl},
      {n: (a, p + 200, None) for n, (a, p) in lab.items()}, "show --nodes --json: node_list")
rc, out, err = run("place", "--layout", "tp8,pp4", "--topology", path, "--nodes", "node[1-4]")
is_eq(rc, 0, "a map with peer addresses places")
# The long form (no -o) and stdin give the same map.
m2, path2 = build("--slurm-topology", data("lab-topology.conf"), "--node", "8",
                  "--slurm-nodes", data("lab-scontrol-nodes-long.txt"), "--peer-port", "slurmd+200")
is_eq(peers(m2), peers(m), "the long form of scontrol show nodes gives the same peers")
out3 = os.path.join(tmp, "stdin-map.json")
p = subprocess.run([os.environ.get("LAYOUTCTL", "layoutctl"), "topo", "build", "--slurm-topology",
                    data("lab-topology.conf"), "--node", "8", "--slurm-nodes", "-", "--peer-port", "slurmd+200",
                    "-o", out3], stdin=open(lab_nodes), capture_output=True, text=True)
is_eq(peers(json.load(open(out3))) if p.returncode == 0 else p.stderr, peers(m), "--slurm-nodes - reads stdin")

# Slurm 25.05's topology.yaml: the lab's tree gives the map its topology.conf gives.
m_conf, _ = build("--slurm-topology", data("lab-topology.conf"), "--node", "8")
m_yaml, yaml_path = build("--slurm-topology", data("slurm", "lab-topology.yaml"), "--node", "8")
ok(m_yaml != {} and m_yaml == m_conf, "lab-topology.yaml gives the map of lab-topology.conf")
several = data("slurm", "tree-and-block-topology.yaml")
m, path = build("--slurm-topology", several, "--node", "8")
is_eq([get(show(path), k) for k in ("nodes", "switches", "blocks")], [16, 0, 2],
      "several topologies: the cluster_default one (2 NVLink blocks of 8) is read")
m, path = build("--slurm-topology", several, "--slurm-topology-name", "ib", "--node", "8")
is_eq([get(show(path), k) for k in ("nodes", "switches", "switch_levels", "blocks")], [16, 7, 3, 0],
      "--slurm-topology-name ib: the 3-level tree")
m, path = build("--slurm-topology", several, "--slurm-topology-name", "nvl-racks", "--blocks", "network",
                "--node", "8")
is_eq([b.get("nvlink") for b in m.get("blocks", [])], [False, False], "--blocks network applies to its blocks")
m, path = build("--slurm-topology", several, "--slurm-topology-name", "any", "--nodes", "gpu[01-16]",
                "--node", "8")
is_eq([get(show(path), k) for k in ("nodes", "switches", "blocks")], [16, 0, 0],
      "the flat topology: the nodes from --nodes, no switches or blocks")
rc, out, err = run("topo", "build", "--slurm-topology", several, "--slurm-topology-name", "any", "--node", "8")
ok(rc == 1 and "flat topology names no nodes" in err, "flat without --nodes: refused, saying why")
rc, out, err = run("topo", "build", "--slurm-topology", several, "--slurm-topology-name", "nvl", "--node", "8")
ok(rc == 1 and "tree-and-block-topology.yaml: no topology 'nvl' (accepted: ib, nvl-racks, any)" in err,
   "an unknown --slurm-topology-name is refused, listing the file's topologies")
deep = os.path.join(tmp, *(["a-directory-with-a-long-name-%d" % i for i in range(6)]))
os.makedirs(deep)
shutil.copy(several, deep)
rc, out, err = run("topo", "build", "--slurm-topology", os.path.join(deep, os.path.basename(several)),
                   "--slurm-topology-name", "nvl", "--node", "8")
ok(rc == 1 and "=..." in err and "/tree-and-block-topology.yaml: no topology 'nvl'" in err,
   "a path past %d characters is cut at its start: the file's name stays" % len(deep)) or diag(err)
rc, out, err = run("topo", "build", "--slurm-topology", data("lab-topology.conf"), "--slurm-topology-name", "lab",
                   "--node", "8")
ok(rc == 1 and "only with a topology.yaml" in err, "--slurm-topology-name with a topology.conf is refused")
bad_yaml = os.path.join(tmp, "bad-topology.yaml")
with open(bad_yaml, "w") as f:
    f.write("- topology: t\n  tree:\n    switches:\n    - switch: top\n      children: leaf[0-1]\n"
            "    - switch: leaf0\n      nodes: n1\n")
rc, out, err = run("topo", "build", "--slurm-topology", bad_yaml, "--node", "8")
ok(rc == 1 and "bad-topology.yaml:4: SwitchName=top: Switches= names 'leaf1'" in err,
   "an undefined child switch is refused, naming the yaml's file:line")
with open(bad_yaml, "w") as f:
    f.write("- topology: t\n\tflat: true\n")
rc, out, err = run("topo", "build", "--slurm-topology", bad_yaml, "--nodes", "a1", "--node", "8")
ok(rc == 1 and "bad-topology.yaml:2: a tab character" in err, "a tab is refused with its line")
rc, out, err = run("place", "--layout", "tp8,pp4", "--topology", data("slurm", "lab-topology.yaml"),
                   "--gpus-per-node", "8", "--nodes", "node[1-4]")
is_eq(rc, 0, "place --topology takes a topology.yaml")
if rc:
    diag(err)
flat_yaml = os.path.join(tmp, "flat-topology.yaml")
with open(flat_yaml, "w") as f:
    f.write("- topology: anywhere\n  cluster_default: true\n  flat: true\n")
rc, out, err = run("place", "--layout", "tp8,pp4", "--topology", flat_yaml,
                   "--gpus-per-node", "8", "--nodes", "node[1-4]")
ok(rc == 1 and "its default topology 'anywhere' is flat, and a flat topology names no nodes" in err
   and "topo build --slurm-topology" in err,
   "place --topology on a flat default topology says so and what to do instead")
if rc != 1:
    diag(out + err)

# A real-looking cluster: distinct addresses (IPv4, a DNS name, IPv6), one port.
ex_nodes = data("example-scontrol-nodes.txt")
ex = scontrol_fields(ex_nodes)
ok(len({a for a, p in ex.values()}) == 6 and all(p is None for a, p in ex.values()),
   "the example: 6 distinct NodeAddr, no Port= (the default SlurmdPort)")
m, path = build("--nodes", "gpu[001-006]", "--node", "8", "--slurm-nodes", ex_nodes, "--peer-port", "6830")
is_eq(peers(m), {n: (a, 6830) for n, (a, p) in ex.items()}, "--peer-port 6830: one port everywhere")
m, path = build("--nodes", "gpu[001-006]", "--node", "8", "--slurm-nodes", ex_nodes, "--peer-port", "slurmd+12")
is_eq({p for a, p in peers(m).values()}, {6818 + 12}, "slurmd+12 without Port= shown: SlurmdPort 6818 + 12")
m, path = build("--nodes", "gpu[001-006]", "--node", "8", "--slurm-nodes", ex_nodes, "--peer-port", "slurmd+12",
                "--slurmd-port", "7000")
is_eq({p for a, p in peers(m).values()}, {7012}, "--slurmd-port 7000: 7000 + 12")
m, path = build("--nodes", "gpu[001-006]", "--node", "8", "--slurm-nodes", ex_nodes)
is_eq(peers(m), {n: (a, None) for n, (a, p) in ex.items()}, "--slurm-nodes alone: addresses, no ports")
m, path = build("--nodes", "a[1-2]", "--node", "8", "--peer-port", "7777")
is_eq(peers(m), {"a1": (None, 7777), "a2": (None, 7777)}, "--peer-port alone: ports, no addresses")
s = show(path)
is_eq(get(s, "peers"), {"with_addr": 0, "with_peer_port": 2}, "show counts ports without addresses")
m, path = build("--nodes", "a[1-2]", "--node", "8")
rc, out, err = run("topo", "show", path)
like(out, "peers        no addresses or ports (peers use node names and layoutd's peer_port)",
     "a map without peers says what is used instead")
# Map nodes the listing does not name: built, warned, left without an address.
out4 = os.path.join(tmp, "partial.json")
rc, out, err = run("topo", "build", "--nodes", "gpu[001-008]", "--node", "8", "--slurm-nodes", ex_nodes,
                   "--peer-port", "slurmd+1", "-o", out4)
ok(rc == 0 and err.startswith("layoutctl: warning: --slurm-nodes=") and
   "2 nodes of the map have no line there (gpu007, gpu008)" in err and err.count("\n") == 1,
   "map nodes without a line: one warning naming them")
diag(err.strip())
is_eq({n: v for n, v in peers(json.load(open(out4)) if rc == 0 else {}).items() if n >= "gpu006"},
      {"gpu006": ("fd00:12::16", 6819), "gpu007": (None, None), "gpu008": (None, None)},
      "they are left without address and port; the listed ones have both")

# Refusals: the input named, what is accepted said.
bad_addr = os.path.join(tmp, "bad-addr.txt")
with open(bad_addr, "w") as f:
    f.write(open(lab_nodes).read().replace("NodeAddr=127.0.0.1 NodeHostName=vm Port=18803",
                                           "NodeAddr=127.0.0.300 NodeHostName=vm Port=18803"))
bad_port = os.path.join(tmp, "bad-port.txt")
with open(bad_port, "w") as f:
    f.write(open(lab_nodes).read().replace("Port=18802", "Port=0"))
twice = os.path.join(tmp, "twice.txt")
with open(twice, "w") as f:
    f.write(open(lab_nodes).read() + open(lab_nodes).readline())
lab_map = ["--slurm-topology", data("lab-topology.conf"), "--node", "8"]
for args, needle, name in (
        (["--nodes", "node[1-3]", "--node", "8", "--slurm-nodes", lab_nodes],
         "lab-scontrol-nodes.txt: 1 node is not in the map: node4 (line 4) (accepted: nodes of the map",
         "a listed node the map lacks"),
        (["--nodes", "x1", "--node", "8", "--slurm-nodes", ex_nodes],
         "6 nodes are not in the map: gpu001 (line 1), gpu002 (line 2), gpu003 (line 3), gpu004 (line 4), ...",
         "many unknown nodes: the first four named"),
        (lab_map + ["--slurm-nodes", bad_addr],
         "bad-addr.txt:3: node 'node3': NodeAddr: node address '127.0.0.300' is neither a host name nor an IP address (accepted: ",
         "a bad NodeAddr"),
        (lab_map + ["--slurm-nodes", bad_port], "bad-port.txt:2: node 'node2': Port=0 is not a port (accepted: 1 to 65535)",
         "a bad slurmd Port"),
        (lab_map + ["--slurm-nodes", twice], "twice.txt:5: node 'node1' is listed twice (also at line 1)",
         "a node listed twice"),
        (lab_map + ["--slurm-nodes", data("lab-topology.conf")],
         ":1: '#' does not start a node's record (accepted: `scontrol show nodes -o` output",
         "a topology.conf given as --slurm-nodes"),
        (lab_map + ["--slurm-nodes", "/nonexistent/nodes.txt"], "/nonexistent/nodes.txt: cannot open",
         "a missing --slurm-nodes file"),
        (lab_map + ["--slurm-nodes", lab_nodes, "--peer-port", "70000"],
         "--peer-port=70000: expected a port from 1 to 65535, or slurmd+K", "--peer-port 70000"),
        (lab_map + ["--slurm-nodes", lab_nodes, "--peer-port", "0"], "--peer-port=0: expected a port", "--peer-port 0"),
        (lab_map + ["--slurm-nodes", lab_nodes, "--peer-port", "slurmd-5"], "--peer-port=slurmd-5: expected",
         "--peer-port slurmd-5"),
        (lab_map + ["--slurm-nodes", lab_nodes, "--peer-port", "slurmd+x"], "--peer-port=slurmd+x: expected",
         "--peer-port slurmd+x"),
        (lab_map + ["--slurm-nodes", lab_nodes, "--peer-port", "slurmd+50000"],
         "--peer-port=slurmd+50000: node 'node1' has slurmd port %d, and %d is past 65535" % (lab["node1"][1], lab["node1"][1] + 50000),
         "a slurmd port + K past 65535, naming the node"),
        (lab_map + ["--peer-port", "slurmd+200"], "--peer-port=slurmd+200: needs --slurm-nodes FILE",
         "slurmd+K without --slurm-nodes"),
        (lab_map + ["--peer-port", "6830", "--slurmd-port", "7000"], "--slurmd-port=7000: only with --peer-port slurmd+K",
         "--slurmd-port without slurmd+K"),
        (lab_map + ["--slurm-nodes", lab_nodes, "--peer-port", "slurmd+1", "--slurmd-port", "0"],
         "--slurmd-port=0: expected a whole number from 1 to 65535", "--slurmd-port 0")):
    rc, out, err = run("topo", "build", *args)
    ok(rc in (1, 2) and err.startswith("layoutctl: ") and err.count("\n") == 1 and len(err) < 600 and
       needle in err, "refused: " + name)
    if needle not in err:
        diag(err)
# A map file whose node has a bad address or port is refused where it is read.
for node, needle, name in (({"name": "a", "addr": "a b"}, "node 'a': node address 'a b' is neither", "a bad addr"),
                           ({"name": "a", "peer_port": 70000}, "node 'a': peer_port must be an integer from 1 to 65535",
                            "a bad peer_port")):
    f = os.path.join(tmp, "badpeer.json")
    with open(f, "w") as fh:
        json.dump({"format": "parallel-layout-map", "version": 1, "name": "e",
                   "node_types": [{"name": "t", "gpus": [{"index": 0}]}], "default_type": "t", "nodes": [node]}, fh)
    rc, out, err = run("topo", "show", f)
    ok(rc == 1 and needle in err, "a map file with %s is refused, naming the node" % name)
    if needle not in err:
        diag(err)

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

# --version: the version, git describe when built from a git tree, and the
# Slurm release the plugin was built for, which should be the Slurm here.
rc, out, err = run("--version")
m = re.match(r"layoutctl (\S+)( \(git [0-9a-f]+(-dirty)?\))?, "
             r"(plugin built for Slurm (\d+\.\d+\.\d+)|no SPANK plugin built)\n\Z", out)
ok(rc == 0 and m is not None, "--version names the version, git describe and the Slurm release")
if m is None:
    diag(repr(out))
want = os.environ.get("PL_BUILD")
if want:
    is_eq(out.strip(), "layoutctl " + want, "--version reports what configure recorded")
# Independent of configure: the libslurm-dev package's upstream version.
dq = shutil.which("dpkg-query")
sv = subprocess.run([dq, "-W", "-f=${Version}", "libslurm-dev"], capture_output=True, text=True,
                    timeout=30).stdout if dq else ""
if m and m.group(5) and sv:
    is_eq(m.group(5), re.sub(r"^\d+:|-[^-]*$", "", sv), "the plugin's Slurm release is libslurm-dev's")
else:
    skip("the plugin's Slurm release is libslurm-dev's", "no plugin built or no libslurm-dev package")
shutil.rmtree(tmp, ignore_errors=True)
done()
