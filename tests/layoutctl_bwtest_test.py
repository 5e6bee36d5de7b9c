#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The bandwidth map (layoutctl topo show --svg) and the script that
measures it (layoutctl bwtest), with its import, on the real nccl-tests
outputs and topology.conf files in tests/data."""
import json
import os
import re
import shutil
import subprocess
import tempfile
import xml.etree.ElementTree as ET

from taplib import diag, done, is_close, is_eq, like, ok, run, data

tmp = tempfile.mkdtemp(prefix="pl-bwtest-")
SVG = "{http://www.w3.org/2000/svg}"
H200 = data("nccl", "h200-2x8-baremetal_all_reduce_perf_nccl-tests-issue256.txt")
GCP = data("nccl", "gcp-a3mega-2x8-h100_all_reduce_perf.txt")
LAB = data("lab-topology.conf")
TREE3 = data("slurm", "schedmd-testsuite_3level-tree_topology.conf")
NVL = data("slurm", "topograph_expected-block_nvl-racks_topology.conf")


def largest_busbw(path):
    """The best busbw (out of or in place) at the largest size, read here
    with a parser of the test's own."""
    best = (-1, 0.0)
    for line in open(path):
        tok = line.split()
        if len(tok) >= 12 and tok[0].isdigit():
            size, bw = int(tok[0]), max(float(tok[7]), float(tok[11]))
            if size > best[0] or (size == best[0] and bw > best[1]):
                best = (size, bw)
    return best[1]


def build(name, *args):
    out = os.path.join(tmp, name)
    rc, so, se = run("topo", "build", "-o", out, *args)
    if not ok(rc == 0, "topo build %s" % name):
        diag(se)
    return out


def svg_of(mappath, name):
    """(root element, bytes) of the map's SVG, or (None, b"")."""
    out = os.path.join(tmp, name)
    rc, so, se = run("topo", "show", mappath, "--svg", out)
    if not ok(rc == 0, "topo show --svg %s" % name):
        diag(se)
        return None, b""
    raw = open(out, "rb").read()
    if shutil.which("xmllint"):
        p = subprocess.run(["xmllint", "--noout", out], capture_output=True, text=True)
        ok(p.returncode == 0, "%s: xmllint accepts it" % name) or diag(p.stderr)
    try:
        root = ET.fromstring(raw)
    except ET.ParseError as e:
        ok(False, "%s parses as XML: %s" % (name, e))
        return None, raw
    ok(root.tag == SVG + "svg", "%s parses, an <svg> document" % name)
    return root, raw


def text_of(root, ident):
    """All text of the element with that id (tspans included), or ''."""
    if root is None:
        return ""
    for e in root.iter():
        if e.get("id") == ident:
            return "".join(e.itertext())
    return ""


def all_text(root):
    return "\n".join("".join(e.itertext()) for e in root.iter(SVG + "text")) if root is not None else ""


def ratio(text):
    m = re.search(r"([0-9.]+)\u00d7", text)
    return float(m.group(1)) if m else None


def links(mappath):
    try:
        return json.load(open(mappath))["link_classes"]
    except (OSError, ValueError, KeyError):
        return {}


# ---- the bandwidth map ----

leaf_bw, spine_bw = largest_busbw(H200), largest_busbw(GCP)
diag("busbw at the largest size: h200 %.2f, gcp %.2f GB/s" % (leaf_bw, spine_bw))
lab = build("lab.json", "--slurm-topology", LAB, "--node", "8",
            "--nccl-tests", H200 + "=leaf", "--nccl-tests", GCP + "=spine")
root, raw = svg_of(lab, "lab.svg")
lk = links(lab)
nv = (lk.get("nvlink") or {}).get("gbps", 0)
t = text_of(root, "link-leaf")
like(t, "%.1f GB/s" % leaf_bw, "leaf class: the h200 run's busbw in GB/s")
like(t, "measured (all_reduce_perf busbw at 9663676416 bytes, 16 ranks on 2 nodes)",
     "leaf class: marked measured, with its source")
t = text_of(root, "link-spine")
like(t, "%.1f GB/s measured (" % spine_bw, "spine class: the gcp run's busbw, measured")
t = text_of(root, "link-nvlink")
ok("nominal" in t and "measured" not in t, "nvlink class: marked nominal") or diag(t)
# The legend's sample line before each label: grey and dashed when nominal.
lines = [e for e in root.iter() if e.tag == SVG + "line"] if root is not None else []
dashed = [e.get("stroke-dasharray") is not None for e in lines[:4]]
is_eq(dashed, [True, True, False, False], "legend: nvlink and pcie dashed (nominal), leaf and spine solid")
is_close(ratio(text_of(root, "ratio-leaf")), round(nv / leaf_bw, 2), "intra/inter ratio = nvlink / leaf")
is_close(ratio(text_of(root, "ratio-spine")), round(nv / spine_bw, 2), "and across the spine = nvlink / spine")
like(all_text(root), "from a nominal and a measured figure", "the ratio says it rests on a nominal figure")
like(all_text(root), "leaf0 \u00b7 2 nodes, 16 GPUs", "leaf0 boxed with its 2 nodes")
like(all_text(root), "node[1,3] \u00d72 \u00b7 8 GPUs", "leaf0's nodes as one run")
like(all_text(root), "spine \u00b7 level-1 switch", "the spine switch holds the leaves")
rc, so, se = run("topo", "show", lab, "--json")
ii = json.loads(so).get("intra_inter", {}) if rc == 0 else {}
ok(ii.get("intra_class") == "nvlink" and abs(ii.get("leaf", 0) - nv / leaf_bw) < 1e-9 and
   abs(ii.get("spine", 0) - nv / spine_bw) < 1e-9, "show --json: the same ratios, unrounded") or diag(ii)
rc, so, se = run("topo", "show", lab)
like(so, "intra/inter  %.2f (nvlink / leaf), %.2f across the spine (nvlink / spine), resting on a nominal figure"
     % (nv / leaf_bw, nv / spine_bw), "plain show: the ratios, and that one rests on a nominal figure")
_, raw2 = svg_of(lab, "lab2.svg")
ok(raw and raw == raw2, "same map, same bytes")
eq = os.path.join(tmp, "eq.svg")
rc, so, se = run("topo", "show", lab, "--svg=" + eq)
ok(rc == 0 and open(eq, "rb").read() == raw, "--svg=FILE is --svg FILE")
rc, so, se = run("topo", "show", lab, "--svg", "-")
ok(rc == 0 and so.encode() == raw, "--svg - writes the same to stdout, and only that")
if os.path.exists("/dev/full"):
    rc, so, se = run("topo", "show", lab, "--svg", "/dev/full")
    ok(rc != 0 and "--svg /dev/full: No space left on device" in se,
       "--svg on a full device fails, saying so")

# Both inside and between nodes measured: the ratio is theirs.
both = build("both.json", "--slurm-topology", LAB, "--node", "8",
             "--nccl-tests", H200 + "=nvlink", "--nccl-tests", GCP + "=leaf")
root, raw = svg_of(both, "both.svg")
is_close(ratio(text_of(root, "ratio-leaf")), round(leaf_bw / spine_bw, 2),
         "measured nvlink / measured leaf: %.2f" % (leaf_bw / spine_bw))
ok("from a nominal" not in all_text(root) and "from nominal" not in all_text(root),
   "no nominal mark on a measured ratio")

# A bad --svg path is named.
bad = os.path.join(tmp, "no-such-dir", "map.svg")
rc, so, se = run("topo", "show", lab, "--svg", bad)
ok(rc == 1 and bad in se and "No such file" in se, "a bad --svg path: refused, naming it") or diag(se)
rc, so, se = run("topo", "show", lab, "--svg")
is_eq(rc, 2, "--svg without a file is a usage error")

# 10,000 nodes in a 3-level tree: summarised, not drawn box by box.
big = build("tree3.json", "--slurm-topology", TREE3, "--node", "8")
root, raw = svg_of(big, "tree3.svg")
nrect = sum(1 for e in root.iter(SVG + "rect")) if root is not None else 0
ok(0 < nrect < 300 and len(raw) < 100000, "10,000 nodes: %d boxes, %d bytes" % (nrect, len(raw)))
txt = all_text(root)
like(txt, "peta[10000-10019] \u00d720 \u00b7 8 GPUs", "a leaf's 20 nodes as one run")
like(txt, "\u00d718 more like leaf101", "grp10's other 18 leaves summarised")
like(txt, "leaf[102-119]", "naming them")
like(txt, "\u00d710 more like grp11", "im0's like grp switches summarised")
like(txt, "root \u00b7 level-3 switch \u00b7 10000 nodes, 80000 GPUs below", "the root holds all")

# A real floor: a node under two leaves is drawn once and counted in both.
circe = build("circe.json", "--slurm-topology", data("slurm", "circe-superpod_topology.conf"),
              "--node", data("nvidia-smi-topo", "hgx-h100_8gpu_nv18.txt"))
root, raw = svg_of(circe, "circe.svg")
like(all_text(root), "s4 \u00b7 7 nodes, 56 GPUs (+1 shared)", "circe-n051 drawn under s2, counted in s4")
like(all_text(root), "circe-n[001-016],n[019-020] \u00d718 \u00b7 8 GPUs", "s0's 18 nodes, as topology.conf names them")

# A map file may put nodes on a switch above leaves: they get a box of
# their own inside it, and are counted.
odd = json.load(open(lab))
odd["nodes"][0]["switch"] = "spine"
oddpath = os.path.join(tmp, "odd.json")
json.dump(odd, open(oddpath, "w"))
root, raw = svg_of(oddpath, "odd.svg")
t = all_text(root)
ok("spine \u00b7 1 node, 8 GPUs" in t and "node1 \u00b7 8 GPUs" in t and "leaf0 \u00b7 1 node, 8 GPUs" in t,
   "nodes on a spine switch: drawn in a box of their own") or diag(t)

# NVLink blocks are marked; one leaf has no spine; names are escaped.
nvl = build("nvl.json", "--slurm-topology", NVL, "--node", "4")
root, raw = svg_of(nvl, "nvl.svg")
like(all_text(root), "NVLink block rack11", "NVLink blocks are marked")
one_conf = os.path.join(tmp, "one-leaf.conf")
with open(one_conf, "w") as f:
    f.write("SwitchName=leaf0 Nodes=gpu[001-128]\n")
one = build("one.json", "--slurm-topology", one_conf, "--node", "8", "--name", "a<b&c \"d\"")
root, raw = svg_of(one, "one.svg")
like(text_of(root, "ratio-spine"), "no spine in this map", "one leaf: no spine ratio, said so")
rc, so, se = run("topo", "show", one, "--json")
is_eq(json.loads(so).get("intra_inter", {}).get("spine", 0) if rc == 0 else 0, None,
      "show --json: no spine ratio (null) on one leaf")
like(all_text(root), "gpu[001-128] \u00d7128", "128 like nodes: one run")
title = root.find(SVG + "title") if root is not None else None
is_eq(title.text if title is not None else None, "Bandwidth map: a<b&c \"d\"",
      "the map's name escaped, read back whole")

# Nodes without NVLink: the intra-node class is pcie.
pcie = build("pcie.json", "--slurm-topology", LAB, "--node", data("nvidia-smi-topo", "pcie-8gpu_2numa_sys-only_tabs.txt"))
root, raw = svg_of(pcie, "pcie.svg")
like(all_text(root), "inside a node (pcie): 25.0 GB/s", "PCIe-only nodes: the ratio's inside figure is pcie")
is_close(ratio(text_of(root, "ratio-leaf")), round(25.0 / 50.0, 2), "pcie / leaf, nominal: 0.50")

# ---- bwtest: the script ----


def script(*args):
    out = os.path.join(tmp, "bwtest%d.sh" % len(os.listdir(tmp)))
    rc, so, se = run("bwtest", "-o", out, *args)
    if not ok(rc == 0, "bwtest %s" % " ".join(os.path.basename(a) for a in args)):
        diag(se)
        return "", out
    p = subprocess.run(["bash", "-n", out], capture_output=True, text=True)
    ok(p.returncode == 0, "bash -n accepts it") or diag(p.stderr)
    return open(out).read(), out


def sruns(text):
    """{class: (nodes, gpus per node)} of the script's srun calls."""
    runs = {}
    joined = text.replace("\\\n", " ")
    for line in joined.splitlines():
        if not line.startswith("srun "):
            continue
        nodes = re.search(r"--nodelist=(\S+)", line).group(1).split(",")
        ntask = int(re.search(r"--ntasks-per-node=(\d+)", line).group(1))
        cls = re.search(r'all_reduce_perf_(\w+)\.txt"', line).group(1)
        ok(re.search(r'all_reduce_perf" -b 8 -e 8G -f 2 -g 1 ', line) is not None,
           "%s run: all_reduce_perf -b 8 -e 8G -f 2 -g 1" % cls)
        ok(int(re.search(r"--nodes=(\d+)", line).group(1)) == len(nodes),
           "%s run: --nodes matches its --nodelist" % cls)
        runs[cls] = (nodes, ntask)
    return runs


def sbatch(text, key):
    m = re.search(r"^#SBATCH --%s=(\S+)$" % key, text, re.M)
    return m.group(1) if m else None


# The lab: leaf0 = node[1,3], leaf1 = node[2,4], one spine above both
# (tests/data/lab-topology.conf).
text, path = script("--map", lab)
runs = sruns(text)
is_eq(runs, {"nvlink": (["node1"], 8), "leaf": (["node1", "node3"], 8), "spine": (["node1", "node2"], 8)},
      "lab: node1 inside, node1+node3 under leaf0, node1+node2 across the spine")
is_eq(sorted((sbatch(text, "nodelist") or "").split(",")), ["node1", "node2", "node3"],
      "the job asks for exactly those nodes")
is_eq((sbatch(text, "nodes"), sbatch(text, "gpus-per-node")), ("3", "8"), "3 nodes, 8 GPUs each")
like(text, "# spine: node1 (leaf0) and node2 (leaf1), joined at spine", "the spine run says its path")

# 3-level tree: the closest pair across leaves is under one grp switch
# (leaf100 = peta[10000-10019], leaf101 = peta[10020-10039], grp10 above both).
text, path = script("--map", big, "--partition", "gpu", "--time", "01:00:00", "--mpi", "pmix",
                    "--results", "out dir", "--nccl-tests-dir", "/opt/nccl tests/build")
runs = sruns(text)
is_eq([runs.get(c, ([], 0))[0] for c in ("nvlink", "leaf", "spine")],
      [["peta10000"], ["peta10000", "peta10001"], ["peta10000", "peta10020"]],
      "3-level tree: the spine pair under grp10, not across the root")
is_eq((sbatch(text, "partition"), sbatch(text, "time")), ("gpu", "01:00:00"), "--partition and --time")
like(text, "--mpi=pmix", "--mpi on each srun")
like(text, "RESULTS=${RESULTS:-'out dir'}", "--results quoted for the shell")

# --nodes limits the choice, --gpus-per-node overrides the map.
text, path = script("--map", big, "--nodes", "peta[10018-10021]", "--gpus-per-node", "4")
is_eq(sruns(text), {"nvlink": (["peta10018"], 4), "leaf": (["peta10018", "peta10019"], 4),
                    "spine": (["peta10018", "peta10020"], 4)}, "--nodes and --gpus-per-node")

text, path = script("--map", pcie)
is_eq(sorted(sruns(text)), ["leaf", "pcie", "spine"], "PCIe-only nodes: the intra-node run measures pcie")

# A node given twice is one node.
text, path = script("--map", lab, "--nodes", "node1,node1,node2,node3")
is_eq(sruns(text).get("leaf"), (["node1", "node3"], 8), "a node listed twice is not its own pair")

# One leaf: no spine run, and the script says why.
text, path = script("--map", one)
runs = sruns(text)
is_eq(sorted(runs), ["leaf", "nvlink"], "one leaf: no spine run")
like(text, "# no spine run: the map has one leaf (leaf0) and no spine", "said so in a comment")

# NVLink blocks: no leaf run (NVLink inside a block); the spine run crosses blocks.
text, path = script("--map", nvl)
runs = sruns(text)
is_eq(runs, {"nvlink": (["srv1101"], 4), "spine": (["srv1101", "srv1201"], 4)},
      "NVLink blocks: inside srv1101, then across two blocks")
like(text, "# no leaf run: nodes of one NVLink block talk over NVLink", "the missing leaf run explained")

rc, so, se = run("bwtest", "--map", lab, "--nodes", "node9")
ok(rc == 1 and "node9" in se and "not in the map" in se, "--nodes outside the map: refused, naming it") or diag(se)
rc, so, se = run("bwtest", "--map", lab, "--partition", "a b")
ok(rc == 2 and "--partition" in se, "a --partition sbatch cannot take is refused") or diag(se)
rc, so, se = run("bwtest", "--map", lab, "--max-bytes", "8X")
ok(rc == 2 and "--max-bytes=8X" in se, "a bad --max-bytes is refused") or diag(se)
badout = os.path.join(tmp, "no-dir", "bwtest.sh")
rc, so, se = run("bwtest", "--map", lab, "-o", badout)
ok(rc == 1 and badout in se, "a script path that cannot be written is named") or diag(se)
rc, so, se = run("bwtest")
ok(rc == 2 and "--map" in se, "bwtest without --map: a usage error") or diag(se)
rc, so, se = run("bwtest", "--map", os.path.join(tmp, "nomap.json"))
ok(rc == 1 and "nomap.json" in se, "a missing map is named") or diag(se)

plain = build("plain.json", "--slurm-topology", LAB, "--node", "8")
# The lab script run for real, with an srun that runs the command with the
# nodes it was given and an all_reduce_perf that prints nccl-tests' layout
# for them (a figure per class, so a mix-up shows), then imported.
fake = os.path.join(tmp, "fake")
os.mkdir(fake)
with open(os.path.join(fake, "srun"), "w") as f:
    f.write("""#!/bin/sh
for a in "$@"; do
    case "$a" in
    --nodelist=*) FAKE_NODES=${a#--nodelist=}; shift ;;
    --ntasks-per-node=*) FAKE_TASKS=${a#--ntasks-per-node=}; shift ;;
    --*) shift ;;
    *) break ;;
    esac
done
case "$FAKE_NODES" in *"$FAKE_FAIL"*) [ -n "$FAKE_FAIL" ] && { echo "srun: error: fake" >&2; exit 1; } ;; esac
export FAKE_NODES FAKE_TASKS
exec "$@"
""")
with open(os.path.join(fake, "all_reduce_perf"), "w") as f:
    f.write("""#!/bin/sh
case "$FAKE_NODES" in
*,node2) bw=45.25 ;;
*,*) bw=91.75 ;;
*) bw=360.50 ;;
esac
echo "# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) args: $*"
echo "#"
echo "# Using devices"
r=0
for h in $(echo "$FAKE_NODES" | tr , ' '); do
    d=0
    while [ $d -lt "$FAKE_TASKS" ]; do
        echo "#  Rank $r Group  0 Pid 100$r on $h device  $d [0x1$d] Fake GPU"
        r=$((r + 1)); d=$((d + 1))
    done
done
echo "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong"
echo "           8             2     float     sum      -1    30.00    0.00    0.00      0    30.00    0.00    0.00      0"
echo "  8589934592    2147483648     float     sum      -1    90000  100.00  $bw      0    90000  100.00    1.00      0"
echo "# Avg bus bandwidth    : 1.5"
""")
for x in ("srun", "all_reduce_perf"):
    os.chmod(os.path.join(fake, x), 0o755)
text, path = script("--map", plain, "--nccl-tests-dir", fake, "--results", os.path.join(tmp, "ran"))
env = dict(os.environ, PATH=fake + os.pathsep + os.environ["PATH"])
p = subprocess.run(["bash", path], capture_output=True, text=True, env=env, cwd=tmp)
ok(p.returncode == 0 and "pl-bwtest: done" in p.stdout, "the script runs its three runs") or diag(p.stdout + p.stderr)
ran = os.path.join(tmp, "ran")
is_eq(sorted(os.listdir(ran)) if os.path.isdir(ran) else [],
      sorted("all_reduce_perf_%s.%s" % (c, e) for c in ("nvlink", "leaf", "spine") for e in ("txt", "err")),
      "one output (and stderr) per class")
new2 = os.path.join(tmp, "ran.json")
rc, so, se = run("bwtest", "--import", ran, "--map", plain, "-o", new2)
ok(rc == 0 and "warning" not in se, "its outputs import, nothing missing") or diag(se)
lk = links(new2)
is_eq([((lk.get(c) or {}).get("gbps"), (lk.get(c) or {}).get("measured")) for c in ("nvlink", "leaf", "spine")],
      [(360.5, True), (91.75, True), (45.25, True)], "each class gets its own run's figure")
like((lk.get("nvlink") or {}).get("source"), "8 ranks on 1 nodes", "the intra-node run: 8 ranks on one node")
root, raw = svg_of(new2, "ran.svg")
is_close(ratio(text_of(root, "ratio-leaf")), round(360.5 / 91.75, 2), "the map of the run: its ratio")
ok("nominal" not in text_of(root, "link-nvlink") + text_of(root, "link-leaf") + text_of(root, "link-spine"),
   "and no nominal class among the three it measured")
# The leaf and spine outputs swapped: each file's hosts give it away.
swapped = os.path.join(tmp, "swapped")
os.mkdir(swapped)
for a, b in (("leaf", "spine"), ("spine", "leaf")):
    if os.path.exists(os.path.join(ran, "all_reduce_perf_%s.txt" % a)):
        shutil.copy(os.path.join(ran, "all_reduce_perf_%s.txt" % a),
                    os.path.join(swapped, "all_reduce_perf_%s.txt" % b))
rc, so, se = run("bwtest", "--import", swapped, "--map", plain)
ok(rc == 1 and "all_reduce_perf_leaf.txt: its hosts node1 (leaf0) and node2 (leaf1) are under different leaves" in se,
   "a spine run saved as the leaf run: refused, naming the file and why") or diag(se)
if os.path.exists(os.path.join(swapped, "all_reduce_perf_leaf.txt")):
    os.unlink(os.path.join(swapped, "all_reduce_perf_leaf.txt"))
rc, so, se = run("bwtest", "--import", swapped, "--map", plain)
ok(rc == 1 and "all_reduce_perf_spine.txt: its hosts node1 and node3 are both under leaf0" in se,
   "a leaf run saved as the spine run: refused too") or diag(se)
env["FAKE_FAIL"] = "node2"
shutil.rmtree(ran, ignore_errors=True)
p = subprocess.run(["bash", path], capture_output=True, text=True, env=env, cwd=tmp)
leaf_out = os.path.join(ran, "all_reduce_perf_leaf.txt")
ok(p.returncode == 1 and "failed: spine" in p.stderr and
   os.path.exists(leaf_out) and os.path.getsize(leaf_out) > 0,
   "a failed run is named, and the others still run") or diag(p.stdout + p.stderr)
rc, so, se = run("bwtest", "--import", ran, "--map", plain)
ok(rc == 1 and "all_reduce_perf_spine.txt" in se and "no result rows" in se,
   "its empty output: refused on import, naming the file") or diag(se)

# ---- bwtest --import: the outputs back into the map ----
res = os.path.join(tmp, "results")
os.mkdir(res)
# The two real runs under the names the script gives its leaf and spine runs.
shutil.copy(H200, os.path.join(res, "all_reduce_perf_leaf.txt"))
shutil.copy(GCP, os.path.join(res, "all_reduce_perf_spine.txt"))
new = os.path.join(tmp, "measured.json")
rc, so, se = run("bwtest", "--import", res, "--map", plain, "-o", new)
ok(rc == 0, "bwtest --import") or diag(se)
lk = links(new)
is_close((lk.get("leaf") or {}).get("gbps"), leaf_bw, "leaf: the h200 run's busbw")
is_close((lk.get("spine") or {}).get("gbps"), spine_bw, "spine: the gcp run's busbw")
is_eq([(lk.get(c) or {}).get("measured") for c in ("nvlink", "pcie", "leaf", "spine")],
      [False, False, True, True], "leaf and spine measured, nvlink and pcie left nominal")
like(se, "warning: --import %s: not measured, left as they were: intra-node" % res,
     "the missing intra-node run is a warning")
like(se, "its hosts fs-207 and fs-208 are not both in the map: not checked",
     "hosts the map lacks: a warning, the figure still taken")
ok(json.load(open(plain))["link_classes"]["leaf"]["measured"] is False, "the input map is not changed")
root, raw = svg_of(new, "measured.svg")
like(text_of(root, "link-leaf"), "%.1f GB/s measured" % leaf_bw, "the imported map draws measured")
# Same figures as topo build --nccl-tests gives (one code path).
is_eq({k: v for k, v in lk.items() if k in ("leaf", "spine")},
      {k: v for k, v in links(lab).items() if k in ("leaf", "spine")}, "the same classes as topo build --nccl-tests")
rc, so, se = run("bwtest", "--import", res, "--map", plain)
ok(rc == 0 and json.loads(so)["link_classes"]["spine"]["measured"], "without -o the map goes to stdout")

rc, so, se = run("bwtest", "--import", res, "--map", plain, "--nodes", "node1")
ok(rc == 2 and "--nodes" in se and "--import" in se, "a script option with --import: a usage error") or diag(se)

# Refusals name the file.
rc, so, se = run("bwtest", "--import", os.path.join(tmp, "nowhere"), "--map", plain)
ok(rc == 1 and "nowhere" in se, "a missing results directory is named") or diag(se)
empty = os.path.join(tmp, "empty")
os.mkdir(empty)
rc, so, se = run("bwtest", "--import", empty, "--map", plain)
ok(rc == 1 and empty in se and "all_reduce_perf_" in se, "an empty directory: refused, naming it and the names looked for") or diag(se)
notnt = os.path.join(tmp, "notnt")
os.mkdir(notnt)
shutil.copy(LAB, os.path.join(notnt, "all_reduce_perf_leaf.txt"))
rc, so, se = run("bwtest", "--import", notnt, "--map", plain)
ok(rc == 1 and os.path.join(notnt, "all_reduce_perf_leaf.txt") in se and "all_reduce_perf output" in se,
   "a file that is not nccl-tests output: refused, naming it") or diag(se)
multi = os.path.join(tmp, "multi")
os.mkdir(multi)
shutil.copy(H200, os.path.join(multi, "all_reduce_perf_nvlink.txt"))
rc, so, se = run("bwtest", "--import", multi, "--map", plain)
ok(rc == 1 and "all_reduce_perf_nvlink.txt" in se and "2 hosts" in se,
   "an intra-node file from two hosts: refused, naming it") or diag(se)
rc, so, se = run("bwtest", "--import", res, "--map", plain, "-o", os.path.join(tmp, "no", "x.json"))
ok(rc == 1 and os.path.join(tmp, "no", "x.json") in se, "an -o that cannot be written is named") or diag(se)

shutil.rmtree(tmp, ignore_errors=True)
done()
