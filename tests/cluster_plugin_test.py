#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""srun --parallel-layout on a real Slurm: 4 emulated nodes with 8 fake GPUs,
two leaf switches whose node names interleave, one layoutd per node.  Every
task's environment is collected and checked; refusals, the daemon being down,
and a real torch.distributed client are exercised."""
import json
import os
import re
import shutil
import socket
import tempfile
import threading
import time

from clusterlib import Lab, LabError, skip_all, unavailable
from taplib import ETC, data, diag, done, is_eq, like, ok, run

why = unavailable()
PLUGIN = os.environ.get("PL_PLUGIN", "")
LAYOUTD = os.environ.get("LAYOUTD", "")
if not why and not os.path.exists(PLUGIN):
    why = "the SPANK plugin was not built (no spank.h at configure time)"
if why:
    skip_all(why)

tmp = tempfile.mkdtemp(prefix="pl-plugin-")
MAP = os.path.join(tmp, "map.json")
rc, out, err = run("topo", "build", "--name", "lab", "-o", MAP,
                   "--slurm-topology", data("lab-topology.conf"),
                   "--node", os.path.join(ETC, "examples", "h100-node-topo.txt"),
                   "--nccl-topo-file", "/etc/nccl/lab-topo.xml", "--gpu-mem", "80")
ok(rc == 0, "cluster map built for the lab")

ENV_VARS = ("SLURM_PROCID SLURMD_NODENAME SLURM_LOCALID RANK LOCAL_RANK WORLD_SIZE LOCAL_WORLD_SIZE "
            "NODE_RANK MASTER_ADDR MASTER_PORT PARALLEL_LAYOUT PARALLEL_LAYOUT_TP_RANK "
            "PARALLEL_LAYOUT_CP_RANK PARALLEL_LAYOUT_DP_RANK PARALLEL_LAYOUT_PP_RANK NCCL_IB_HCA "
            "NCCL_TOPO_FILE NCCL_RAS_ADDR").split()
PRINT_ENV = "echo " + " ".join("%s=${%s:-unset}" % (v, v) for v in ENV_VARS)


def rows_of(text):
    """Each task's variables, sorted by SLURM_PROCID."""
    rows = []
    for line in text.splitlines():
        if line.startswith("SLURM_PROCID="):
            rows.append(dict(kv.split("=", 1) for kv in line.split()))
    return sorted(rows, key=lambda r: int(r["SLURM_PROCID"]))


def expected(spec, nodes="node[1-4]", extra=()):
    """What layoutctl place computes on the same map."""
    rc, out, err = run("place", "--layout", spec, "--topology", MAP, "--nodes", nodes, "--json",
                       *extra)
    return json.loads(out) if rc == 0 else None


def check_rows(rows, spec, name, world=32, steered=False):
    """The invariants of the issue, plus equality with layoutctl place."""
    if not ok(len(rows) == world, "%s: %d tasks reported" % (name, world)):
        return
    ranks = [int(r["RANK"]) for r in rows]
    ok(sorted(ranks) == list(range(world)), name + ": RANKs are a permutation")
    tp_nodes = {}
    for r in rows:
        key = (r["PARALLEL_LAYOUT_CP_RANK"], r["PARALLEL_LAYOUT_DP_RANK"], r["PARALLEL_LAYOUT_PP_RANK"])
        tp_nodes.setdefault(key, set()).add(r["SLURMD_NODENAME"])
    ok(all(len(v) == 1 for v in tp_nodes.values()), name + ": every TP group on one node")
    per_node = {}
    for r in rows:
        per_node.setdefault(r["SLURMD_NODENAME"], []).append(int(r["LOCAL_RANK"]))
    ok(all(len(v) == len(set(v)) and all(0 <= x < 8 for x in v) for v in per_node.values()),
       name + ": LOCAL_RANKs distinct per node and in 0..7")
    rank0 = [r for r in rows if r["RANK"] == "0"][0]
    rc, out, err = lab.run(["scontrol", "-o", "show", "node", rank0["SLURMD_NODENAME"]], timeout=15)
    addr = dict(kv.split("=", 1) for kv in out.split() if "=" in kv).get("NodeAddr")
    ok(all(r["MASTER_ADDR"] == addr for r in rows),
       "%s: MASTER_ADDR is the Slurm address of %s, which hosts rank 0" % (name, rank0["SLURMD_NODENAME"]))
    ok(len({r["MASTER_PORT"] for r in rows}) == 1 and all(r["WORLD_SIZE"] == str(world) for r in rows),
       name + ": one MASTER_PORT and WORLD_SIZE for all")
    ok(all(r["NCCL_IB_HCA"] == "=mlx5_%s" % r["LOCAL_RANK"] for r in rows),
       name + ": NCCL_IB_HCA is the exact-match name of each GPU's own NIC")
    ok(all(r["NCCL_TOPO_FILE"] == "/etc/nccl/lab-topo.xml" for r in rows),
       name + ": NCCL_TOPO_FILE from the map")
    exp = expected(spec)
    if exp:
        want = {(t["node"], t["local_rank"]): t["rank"] for t in exp["tasks"]}
        got = {(r["SLURMD_NODENAME"], int(r["LOCAL_RANK"])): int(r["RANK"]) for r in rows}
        is_eq(got, want, name + ": the same ranks on the same GPUs as layoutctl place")
        if steered:
            ok(all(r["SLURM_PROCID"] == r["RANK"] for r in rows),
               name + ": Slurm placed the tasks itself: SLURM_PROCID == RANK")
    return exp


# The lab's cluster, by hand from tests/data/lab-topology.conf: 4 nodes of 8
# GPUs (one NVLink domain each), leaf0 = node[1,3], leaf1 = node[2,4].
LEAF = {"node1": "leaf0", "node3": "leaf0", "node2": "leaf1", "node4": "leaf1"}
LEAF_NODES = {"leaf0": {"node1", "node3"}, "leaf1": {"node2", "node4"}}


def groups(rows, key):
    """{key(row): set of nodes} over the rows."""
    g = {}
    for r in rows:
        g.setdefault(key(r), set()).add(r["SLURMD_NODENAME"])
    return g


def co(r, axis):
    return int(r["PARALLEL_LAYOUT_%s_RANK" % axis])


def by_hand_tp8_pp4(rows, name):
    """tp8,pp4 on 32 GPUs, worked out without lib/: Megatron's order gives
    rank = tp + 8*pp, so each stage is one TP group of 8, which only fits
    one whole node; the 3 stage boundaries (0-1, 1-2, 2-3) carry the
    activations, and 4 stages on 2 leaves of 2 nodes cross the spine at
    least once: the best chain puts stages 0,1 under one leaf and 2,3
    under the other."""
    if len(rows) != 32:
        return ok(False, name + ": by hand: 32 rows")
    ok(all(co(r, "TP") == int(r["RANK"]) % 8 and co(r, "PP") == int(r["RANK"]) // 8 for r in rows),
       name + ": by hand: rank = tp + 8*pp (Megatron order)")
    stage = groups(rows, lambda r: co(r, "PP"))
    ok(sorted(stage) == [0, 1, 2, 3] and all(len(v) == 1 for v in stage.values())
       and len(set().union(*stage.values())) == 4,
       name + ": by hand: each PP stage fills exactly one node, 4 distinct nodes")
    leaf = {s: LEAF[next(iter(n))] for s, n in stage.items() if len(n) == 1}
    ok(len(leaf) == 4 and leaf[0] == leaf[1] and leaf[2] == leaf[3] and leaf[1] != leaf[2],
       name + ": by hand: stages 0,1 under one leaf, 2,3 under the other (one spine crossing), got %s"
       % sorted((s, sorted(n)) for s, n in stage.items()))


def by_hand_tp4_pp2_dp4(rows, name):
    """tp4,pp2,dp4 on 32 GPUs, without lib/: rank = tp + 4*dp + 16*pp.  A
    TP group (4 GPUs) sits on one node, two per node.  What is left is which
    of DP and PP crosses the spine: a DP group all-reduces the gradients of
    its stage's share of the model every step (for the default 7B model,
    7e9/(tp*pp) parameters x 2 bytes x 2(dp-1)/dp, about 2.6 GB per rank),
    while a stage boundary sends one micro-batch's activations each way
    (seq 4096 x hidden 4096 x 2 bytes / tp, some MB per micro-batch): DP
    stays under a leaf, so each stage holds one leaf's two nodes."""
    if len(rows) != 32:
        return ok(False, name + ": by hand: 32 rows")
    ok(all(co(r, "TP") == int(r["RANK"]) % 4 and co(r, "DP") == int(r["RANK"]) // 4 % 4
           and co(r, "PP") == int(r["RANK"]) // 16 for r in rows),
       name + ": by hand: rank = tp + 4*dp + 16*pp (Megatron order)")
    tp = groups(rows, lambda r: (co(r, "DP"), co(r, "PP")))
    ok(len(tp) == 8 and all(len(v) == 1 for v in tp.values()), name + ": by hand: 8 TP groups, each on one node")
    per_node = {}
    for (d, p), n in tp.items():
        per_node.setdefault(next(iter(n)), set()).add(p)
    ok(len(per_node) == 4 and all(len(v) == 1 for v in per_node.values()),
       name + ": by hand: each node holds two TP groups of the same stage")
    stage = groups(rows, lambda r: co(r, "PP"))
    ok(sorted(map(sorted, stage.values())) == sorted(map(sorted, LEAF_NODES.values())),
       name + ": by hand: each stage holds one leaf's two nodes, got %s" % sorted((s, sorted(n)) for s, n in stage.items()))
    dp = groups(rows, lambda r: (co(r, "TP"), co(r, "PP")))
    ok(all(len({LEAF[n] for n in v}) == 1 for v in dp.values()),
       name + ": by hand: every DP group stays under one leaf")


lab = Lab(plugin=PLUGIN, plugin_args="map=%s socket=@LAB@/run/layoutd-%%n.sock timeout_ms=1000" % MAP)
# The socket pattern needs the lab's directory.
lab.knobs["plugin_args"] = lab.knobs["plugin_args"].replace("@LAB@", lab.dir)
have_layoutd = os.path.exists(LAYOUTD)
if have_layoutd:
    lab.knobs.update(layoutd=LAYOUTD, layoutd_map=MAP)
try:
    lab.up()
except LabError as e:
    ok(False, "lab up with the plugin")
    diag(e)
    done()
ok(True, "lab up with the plugin%s in %.2f s" % (" and 4 layoutds" if have_layoutd else "", lab.up_seconds))


def last_job_id():
    rc, out, err = lab.run(["scontrol", "-o", "show", "jobs"], timeout=15)
    ids = [int(kv.split("=", 1)[1]) for kv in out.split() if kv.startswith("JobId=")]
    return max(ids) if ids else 0


# 1. A standalone srun: Slurm places block-wise, the plugin remaps RANK.
rc, out, err = lab.srun(["-N4", "-n32", "--parallel-layout=tp8,pp4", "bash", "-c", PRINT_ENV])
is_eq(rc, 0, "srun -N4 -n32 --parallel-layout=tp8,pp4 exits 0")
if err.strip():
    diag(err)
rows = rows_of(out)
exp = check_rows(rows, "tp8,pp4", "standalone srun")
by_hand_tp8_pp4(rows, "standalone srun")
if exp:
    c, b = exp["cost"], exp["baseline_cost"]
    ok(c["cross_switch_bytes_per_step"] < b["cross_switch_bytes_per_step"],
       "cross-switch bytes %.3g GB per step vs %.3g GB in block order: strictly better"
       % (c["cross_switch_bytes_per_step"] / 1e9, b["cross_switch_bytes_per_step"] / 1e9))
ok(any(r["SLURM_PROCID"] != r["RANK"] for r in rows), "standalone: RANK differs from SLURM_PROCID (remapped)")
if have_layoutd:
    logs = "".join(lab.log_tail("layoutd.node%d.log" % k, 50) for k in range(1, 5))
    ok(logs.count("placement job") >= 4 and "tp8,pp4" in logs,
       "each node's slurmstepd asked its own layoutd (placements logged on all 4)")
is_eq(sorted({(r["SLURMD_NODENAME"], r["NODE_RANK"]) for r in rows}),
      [("node1", "0"), ("node2", "2"), ("node3", "1"), ("node4", "3")],
      "NODE_RANK orders nodes by the ranks they host (node3 holds stage 1)")

# 2. Inside an allocation: Slurm itself is steered.
script = "#!/bin/bash\nsrun --parallel-layout=tp8,pp4 bash -c '%s'\n" % PRINT_ENV
rc, out, err = lab.sbatch_wait(["-N4", "-n32"], script=script, timeout=120)
is_eq(rc, 0, "sbatch -N4 -n32 with srun --parallel-layout inside exits 0")
rows = rows_of(out)
check_rows(rows, "tp8,pp4", "inside sbatch", steered=True)
by_hand_tp8_pp4(rows, "inside sbatch")
script = "#!/bin/bash\nsrun --parallel-layout=tp4,pp2,dp4 bash -c '%s'\n" % PRINT_ENV
rc, out, err = lab.sbatch_wait(["-N4", "-n32"], script=script, timeout=120)
rows = rows_of(out)
is_eq(rc, 0, "sbatch -N4 -n32, srun --parallel-layout=tp4,pp2,dp4 exits 0")
check_rows(rows, "tp4,pp2,dp4", "tp4,pp2,dp4 inside sbatch", steered=True)
by_hand_tp4_pp2_dp4(rows, "tp4,pp2,dp4 inside sbatch")
rc, out, err = lab.srun(["-N4", "-n32", "--parallel-layout=tp4,pp2,dp4", "bash", "-c", PRINT_ENV])
by_hand_tp4_pp2_dp4(rows_of(out), "tp4,pp2,dp4 standalone")
rc, out, err = lab.sbatch_wait(["-N4", "-n32", "--parallel-layout=tp8,pp4", "--wrap",
                                "srun bash -c '%s'" % PRINT_ENV], timeout=120)
is_eq(rc, 0, "sbatch --parallel-layout (inherited by srun) exits 0")
check_rows(rows_of(out), "tp8,pp4", "option given to sbatch", steered=True)

# 2b. An auto layout: the planner chooses on the step's nodes; every task
# gets the chosen sizes, every node chose the same, and layoutctl computes
# the same choice on the same map.
AUTO = "auto,model=7b,seq=4096"
script = "#!/bin/bash\nsrun --parallel-layout=%s --parallel-layout-verbose bash -c '%s'\n" % (AUTO, PRINT_ENV)
rc, out, err = lab.sbatch_wait(["-N4", "-n32"], script=script, timeout=120)
is_eq(rc, 0, "sbatch -N4 -n32, srun --parallel-layout=%s exits 0" % AUTO)
rows = rows_of(out)
chosen = {r.get("PARALLEL_LAYOUT") for r in rows}
ok(len(chosen) == 1 and "auto" not in next(iter(chosen), "auto"),
   "auto: every task carries the same concrete layout (%s)" % sorted(chosen))
exp = check_rows(rows, AUTO, "auto inside sbatch", steered=True)
if exp:
    is_eq(next(iter(chosen), None), exp["layout"]["spec"],
          "auto: the layout chosen is the one layoutctl place chooses on the same map")
    sizes = {a: exp["layout"][a] for a in ("tp", "cp", "pp", "dp")}
    ok(all(r["WORLD_SIZE"] == "32" for r in rows) and
       max(co(r, "TP") for r in rows) + 1 == sizes["tp"] and
       max(co(r, "PP") for r in rows) + 1 == sizes["pp"] and
       max(co(r, "DP") for r in rows) + 1 == sizes["dp"],
       "auto: the coordinates span the chosen sizes %s" % sizes)
    ok(sizes["tp"] <= 8, "auto: TP stays inside a node's 8 GPUs (tp=%d)" % sizes["tp"])
like(err, "auto chose ", "auto, verbose: srun says what layoutd chose and why")
rc, out, err = lab.srun(["-N4", "-n32", "--parallel-layout=" + AUTO, "--parallel-layout-verbose",
                         "bash", "-c", PRINT_ENV])
is_eq(rc, 0, "standalone srun --parallel-layout=%s exits 0" % AUTO)
like(err, "the cluster's bounds pick ", "standalone auto, verbose: srun says the likely choice before allocating")
# The release's data are chosen by the running Slurm's version.
vrc, vout, _ = lab.srun(["--version"])
release = vout.split()[-1] if vrc == 0 and vout.split() else "?"
like(err, "Slurm %s: srun's options and behaviours of release %s" % (release, ".".join(release.split(".")[:2])),
     "verbose: srun names the running Slurm (%s) and the release table it uses" % release)
check_rows(rows_of(out), AUTO, "auto standalone")
rc, out, err = lab.srun(["-N4", "-n32", "--parallel-layout=auto,model=7b,tp4", "bash", "-c", PRINT_ENV])
ok(rc == 0 and {r["PARALLEL_LAYOUT"].split(",")[0] for r in rows_of(out)} == {"tp4"},
   "auto,tp4: the pinned tp4 is kept by every task")
before = last_job_id()
rc, out, err = lab.srun(["-N4", "-n32", "--parallel-layout=auto,model=405b,tp8,pp1", "true"], timeout=30)
ok(rc == 255 and "parallel-layout" in err, "auto with pins no layout of 32 80 GB GPUs fits: refused, rc 255")
like(err, "auto", "  the message is about the auto search")
is_eq(last_job_id(), before, "  refused before allocating")

# 3. Refusals: before allocation, a clear message, rc 255, no node drained.
before = last_job_id()
for spec, needle in (("tp16,pp2", "tp=16 exceeds the 8 GPUs"),
                     ("tp8,pp3", "not a multiple of tp*cp*pp = 24"),
                     ("tq8,pp4", "unknown key 'tq'"),
                     ("tp8,,pp4", "empty"),
                     ("tp8,gbs=30", "gbs=30 is not divisible by mbs*dp = 4")):
    rc, out, err = lab.srun(["-N4", "-n32", "--parallel-layout=" + spec, "true"], timeout=30)
    ok(rc == 255 and "parallel-layout" in err and needle in err,
       "refused --parallel-layout=%s: rc 255, says '%s'" % (spec, needle))
    if needle not in err:
        diag(err)
for n in (4000, 5000):  # parsed and refused; longer than a spec may be
    long_spec = "tp8," + "x" * n
    rc, out, err = lab.srun(["-N4", "-n32", "--parallel-layout=" + long_spec, "true"], timeout=30)
    ours = [l for l in err.splitlines() if "parallel-layout: " in l and "Invalid --parallel-layout argument" not in l]
    longest = max([len(x) for l in ours for x in re.findall("x+", l)] or [0])
    ok(rc == 255 and ours and longest <= 64,
       "a %d-character spec is refused and the plugin's messages echo at most 64 characters of it (%d)"
       % (len(long_spec), longest))
    like(err, "(%d bytes)" % len(long_spec), "saying how long it was")
# srun's command line is read whole: past 64 KiB it used to be "too long to
# trust", and then a world the layout does not divide went unrefused.
rc, out, err = lab.srun(["-N4", "-n32", "--parallel-layout=tp8,pp3", "true"] + ["x" * 60] * 1500,
                        timeout=30)
ok(rc == 255 and "not a multiple of tp*cp*pp = 24" in err,
   "a 90 KB command line: srun's task count still read, tp8,pp3 refused before allocating")
if rc != 255:
    diag(err[-800:])
is_eq(last_job_id(), before, "no job was allocated for the refused requests")
is_eq(lab.bad_nodes(), {}, "no node drained or down")

# The options are registered for srun, sbatch and salloc.
for cmd in ("srun", "sbatch", "salloc"):
    rc, out, err = lab.run([cmd, "--help"], timeout=15)
    ok("--parallel-layout=SPEC" in out + err and "--parallel-layout-verbose" in out + err,
       "%s --help lists --parallel-layout and --parallel-layout-verbose" % cmd)

# -w: Slurm cannot be steered inside the allocation, so RANK is remapped
# per task -- the same placement.
script = "#!/bin/bash\nsrun -w node[1-4] -n32 --parallel-layout=tp8,pp4 bash -c '%s'\n" % PRINT_ENV
rc, out, err = lab.sbatch_wait(["-N4", "-n32"], script=script, timeout=120)
rows = rows_of(out)
check_rows(rows, "tp8,pp4", "srun -w inside sbatch")
ok(rows and any(r["SLURM_PROCID"] != r["RANK"] for r in rows), "with -w the ranks are remapped, not steered")

# A step that srun says it steered but that Slurm placed otherwise fails
# on the nodes, with the reason (simulated by the variable srun would set).
rc, out, err = lab.srun(["-N4", "-n32", "--export=ALL,PARALLEL_LAYOUT_STEERED=1",
                         "--parallel-layout=tp8,pp4", "true"], timeout=60)
ok(rc != 0 and "did not place step" in err, "a steered step that does not match fails in task_init")
if "did not place step" not in err:
    diag(err)

# 4. What the user set is kept, unless the admin forces it.
rc, out, err = lab.srun(["-N1", "-n8", "--export=ALL,MASTER_PORT=29500", "--parallel-layout=tp8",
                         "--parallel-layout-verbose", "bash", "-c", PRINT_ENV])
rows = rows_of(out)
ok(rc == 0 and rows and all(r["MASTER_PORT"] == "29500" for r in rows), "a user's MASTER_PORT is kept")
like(err, "kept MASTER_PORT=29500 set by the user", "verbose mode says what was kept")
like(err, "RANK=", "verbose mode prints each task's placement")

long_addr = "h" * 2000  # longer than the plugin reads back
rc, out, err = lab.srun(["-N1", "-n8", "--export=ALL,MASTER_ADDR=" + long_addr, "--parallel-layout=tp8",
                         "bash", "-c", PRINT_ENV])
rows = rows_of(out)
ok(rc == 0 and rows and all(r["MASTER_ADDR"] == long_addr for r in rows),
   "a user's MASTER_ADDR of 2,000 characters is kept too")

base_args = lab.knobs["plugin_args"]
lab.up(plugin_args=base_args + " force=MASTER_PORT")
rc, out, err = lab.srun(["-N1", "-n8", "--export=ALL,MASTER_PORT=29500", "--parallel-layout=tp8",
                         "bash", "-c", PRINT_ENV])
rows = rows_of(out)
ok(rc == 0 and rows and all(r["MASTER_PORT"] != "29500" for r in rows), "force=MASTER_PORT overrides the user's")
lab.up(plugin_args=base_args + " export=framework,slurm")
rc, out, err = lab.srun(["-N4", "-n32", "--parallel-layout=tp8,pp4", "bash", "-c", PRINT_ENV])
rows = rows_of(out)
ok(rc == 0 and rows and all(r["SLURM_PROCID"] == r["RANK"] for r in rows)
   and all(r["NCCL_IB_HCA"] == "unset" for r in rows),
   "export=framework,slurm rewrites SLURM_PROCID to RANK and sets no NCCL variable")

# A bad plugstack line is reported to the jobs that use the option only.
lab.up(plugin_args=base_args + " timeout=5")
rc, out, err = lab.srun(["-N1", "-n1", "--parallel-layout=tp1", "true"], timeout=30)
ok(rc == 255 and "unknown key 'timeout'" in err and "timeout_ms" in err,
   "an unknown plugstack key refuses --parallel-layout, naming the key and the accepted ones")
rc, out, err = lab.srun(["-N1", "-n1", "true"], timeout=30)
is_eq(rc, 0, "jobs without --parallel-layout still run")
lab.up(plugin_args=base_args)

# 5. The daemon down: fall back in-process (same placement), or fail cleanly.
if have_layoutd:
    rc, out, err = lab.run(["ls", os.path.join(lab.dir, "run")], timeout=10)
    ok("layoutd-node1.sock" in out, "layoutd serves node1")
    lab.up(layoutd=None)
rc, out, err = lab.srun(["-N4", "-n32", "--parallel-layout=tp8,pp4", "bash", "-c", PRINT_ENV])
check_rows(rows_of(out), "tp8,pp4", "daemon down, fallback=local")
lab.up(plugin_args=lab.knobs["plugin_args"] + " fallback=fail")
rc, out, err = lab.srun(["-N4", "-n32", "--parallel-layout=tp8,pp4", "true"], timeout=60)
ok(rc != 0 and "layoutd did not answer" in err and "fallback=fail" in err,
   "daemon down, fallback=fail: the step fails with the reason")
if "fallback=fail" not in err:
    diag(err)
is_eq(lab.bad_nodes(), {}, "no node drained by the failed step")

# A daemon that accepts and never answers: srun waits no longer than the timeout.
socks, stop = [], threading.Event()


def mute(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    if os.path.exists(path):
        os.unlink(path)
    s.bind(path)
    s.listen(64)
    s.settimeout(0.2)
    held = []
    while not stop.is_set():
        try:
            held.append(s.accept()[0])
        except OSError:
            pass
    for c in held:
        c.close()
    s.close()
    os.unlink(path)


threads = [threading.Thread(target=mute, args=(os.path.join(lab.dir, "run", "layoutd-node%d.sock" % k),))
           for k in range(1, 5)]
for t in threads:
    t.start()
time.sleep(0.3)
t0 = time.monotonic()
rc, out, err = lab.srun(["-N4", "-n32", "--parallel-layout=tp8,pp4", "true"], timeout=60)
elapsed = time.monotonic() - t0
ok(rc != 0 and ("Timeout" in err or "timed out" in err), "a mute daemon times out (fallback=fail)")
ok(elapsed < 1.0 + 3.0, "srun returned after %.2f s with timeout_ms=1000" % elapsed)
lab.up(plugin_args=lab.knobs["plugin_args"].replace(" fallback=fail", ""))
t0 = time.monotonic()
rc, out, err = lab.srun(["-N4", "-n32", "--parallel-layout=tp8,pp4", "bash", "-c", PRINT_ENV])
elapsed = time.monotonic() - t0
check_rows(rows_of(out), "tp8,pp4", "mute daemon, fallback=local")
ok(elapsed < 1.0 + 3.0, "and srun still returned after %.2f s" % elapsed)
stop.set()
for t in threads:
    t.join()

# 6. A real client: torch.distributed builds Megatron's groups from RANK.
rc, out, err = lab.srun(["-N4", "--ntasks-per-node=2", "--parallel-layout=tp2,pp2,dp2",
                         "/usr/bin/python3", os.path.join(os.path.dirname(__file__), "torch_groups.py")],
                        timeout=240)
lines = [l for l in out.splitlines() if l.startswith("rank=")]
ok(rc == 0 and len(lines) == 8, "torch.distributed (gloo) ran 8 ranks from the plugin's environment")
if rc != 0:
    diag(err[-2000:])
ok(lines and all("tp_node_local=True" in l and "sum_ok=True" in l for l in lines),
   "every TP group all-reduced one node name: TP groups are node-local, seen from inside torch")
ok(lines and all(("tp_group=[%d, %d]" % (r - r % 2, r - r % 2 + 1)) in l
                 for l in lines for r in [int(l.split()[0].split("=")[1])]),
   "TP groups are Megatron's consecutive pairs")

lab.down()
ok(not lab.leftovers(), "nothing of the lab is left running")
shutil.rmtree(tmp, ignore_errors=True)
done()
