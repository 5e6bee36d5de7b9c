#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""layoutctl plan: the planner's figures, warnings and errors end to end."""
import json
import os
import tempfile
import xml.etree.ElementTree as ET

from taplib import diag, done, is_close, is_eq, like, ok, run, run_json, data


def plan(spec, nodes, gpn, *extra):
    return run_json("plan", "--layout", spec, "--nodes", str(nodes),
                    "--gpus-per-node", str(gpn), *extra)


# The contract's JSON shape.
p = plan("tp8,pp4", 4, 8)
ok(p is not None, "plan tp8,pp4 on 4x8 succeeds")
lay = p["layout"]
is_eq([lay[k] for k in ("tp", "pp", "cp", "ep", "dp")], [8, 4, 1, 1, 1], "layout sizes, dp auto = 1")
is_eq(lay["order"], "megatron", "default order is megatron")
for key in ("state_gb_per_gpu", "activation_gb_per_gpu"):
    ok(key in p["memory"], "memory has " + key)
for key in ("tp_bytes_per_step", "pp_bytes_per_step", "dp_bytes_per_step", "cp_bytes_per_step"):
    ok(key in p["communication"], "communication has " + key)
for key in ("bubble_fraction", "micro_batches", "grad_accum_steps", "warnings"):
    ok(key in p, "plan has " + key)
ok(p["model"]["assumed"] is True and p["model"]["name"] == "7b", "no model= means the 7b default, marked assumed")
# 7e9 params over tp*pp = 32 GPUs at 16 B each: 3.5 GB.
is_close(p["memory"]["state_gb_per_gpu"], 3.5, "7b state over tp8,pp4 is 3.5 GB per GPU")
# Unpinned gbs: 4*pp micro-batches, bubble 3/16.
is_eq(p["micro_batches"], 16, "16 micro-batches by default for pp4")
is_close(p["bubble_fraction"], 3 / 16, "bubble (pp-1)/m = 0.1875")
is_eq(p["warnings"], [], "no warnings for a healthy layout")

# The seed's figures, no parallelism, 7B.
p = plan("tp1,model=7b", 1, 1)
is_close(p["memory"]["state_gb_per_gpu"], 112.0, "7b Adam state is 112 GB")
is_close(p["memory"]["activation_gb_per_gpu"], 104.152956928, "activations per sample, no recompute: 104.15 GB")
p = plan("tp1,model=7b,recompute=selective", 1, 1)
is_close(p["memory"]["activation_gb_per_gpu"], 18.253611008, "selective recompute: 18.25 GB")
p = plan("tp1,model=7b,recompute=full", 1, 1)
is_close(p["memory"]["activation_gb_per_gpu"], 1.073741824, "full recompute: 1.07 GB")
p = plan("tp1,model=7b,optimizer=sgd", 1, 1)
is_close(p["memory"]["state_gb_per_gpu"], 84.0, "SGD with momentum: 12 B/param = 84 GB")

# ZeRO at world 8 (dp8) for 7B/13B/70B.
zero = {"7b": [112.0, 38.5, 26.25, 14.0], "13b": [208.0, 71.5, 48.75, 26.0],
        "70b": [1120.0, 385.0, 262.5, 140.0]}
for model, figures in zero.items():
    for stage, want in enumerate(figures):
        p = plan("dp8,model=%s,zero=%d" % (model, stage), 1, 8)
        is_close(p["memory"]["state_gb_per_gpu"], want,
                 "%s ZeRO-%d at dp8: %.2f GB" % (model, stage, want))

# TP traffic, tp=8: 4 all-reduces x 32 layers x s*b*h*2 x 2*7/8.
p = plan("tp8,model=7b", 1, 8)
is_close(p["communication"]["tp_bytes_per_step"], 7516192768, "tp8 moves 7.516192768 GB per step")

# Bubble for 8 stages and 4..64 micro-batches.
for m, want in ((4, 1.75), (8, 0.875), (16, 0.4375), (32, 0.21875), (64, 0.109375)):
    p = plan("pp8,mbs=1,gbs=%d" % m, 1, 8)
    is_eq(p["micro_batches"], m, "gbs=%d with mbs=1, dp=1 gives %d micro-batches" % (m, m))
    is_close(p["bubble_fraction"], want, "pp8 bubble with %d micro-batches is %.1f %%" % (m, want * 100))
    has = any("bubble" in w for w in p["warnings"])
    ok(has == (want > 0.25), "bubble warning %s at %.1f %%" % ("present" if want > 0.25 else "absent", want * 100))

# Warnings.
# A refused placement: the plan is shown, and the exit status is 1.
rc, out, err = run("plan", "--layout", "tp16,pp2", "--nodes", "4", "--gpus-per-node", "8", "--json")
is_eq(rc, 1, "tp16 on 8-GPU nodes: placement refused, exit 1")
p = json.loads(out) if out.strip() else {"warnings": [], "placement": 0}
ok(any("tp=16" in w and "NVLink" in w for w in p["warnings"]), "tp16 on 8-GPU nodes warns TP crosses NVLink domains")
ok(p["placement"] is None and any("placement refused" in w for w in p["warnings"]),
   "and placement is refused with the reason")
rc, out, err = run("plan", "--layout", "tp16", "--nodes", "4", "--gpus-per-node", "8")
is_eq(rc, 1, "plain plan of a refused layout exits 1")
like(out, "placement refused: tp=16 exceeds", "and shows why")
# The refusal is said on stderr too, one line naming the layout and why, as
# every other refusal is; stdout keeps the plan with the refusal in it.
why = ("layoutctl: --layout=tp16: placement refused: tp=16 exceeds the 8 GPUs per NVLink "
       "domain of node node1")
for extra in ((), ("--json",)):
    rc, out, err = run("plan", "--layout", "tp16", "--nodes", "2", "--gpus-per-node", "8", *extra)
    said = [line for line in err.splitlines() if line.startswith("layoutctl:")]
    is_eq((rc, said), (1, [why]), "plan %s of a refused layout: exit 1, why on stderr" %
          " ".join(("tp16",) + extra))
    like(out, "placement refused: tp=16 exceeds the 8 GPUs", "and the plan on stdout still says it")

# An assumed model never refuses a layout; pp that does not divide the
# layers plans Megatron-Core's uneven stages (7b: 32 layers on pp3 is
# 11+11+10; m = 12, bubble 14*11/(12*32/3) - 1 = 26/128).
for spec in ("tp8,pp3", "tp8,pp3,model=7b"):
    rc, out, err = run("plan", "--layout", spec, "--nodes", "3", "--gpus-per-node", "8", "--json")
    is_eq(rc, 0, "plan %s on 3x8 exits 0 (%s)" % (spec, err.strip()))
    p = json.loads(out) if rc == 0 else {"bubble_fraction": None, "warnings": []}
    is_close(p["bubble_fraction"], 26 / 128, "%s: bubble of the 11-layer stage, 20.3 %%" % spec)
    ok(any("first 11, 1 middle of 11, last 10 layers" in w for w in p["warnings"]),
       "%s: the uneven split is a warning" % spec)
rc, out, err = run("plan", "--layout", "tp3,cp3", "--nodes", "1", "--gpus-per-node", "9", "--json")
is_eq(rc, 0, "tp3,cp3: the assumed heads and the default seq do not refuse it (%s)" % err.strip())
rc, out, err = run("plan", "--layout", "tp3,model=7b", "--nodes", "1", "--gpus-per-node", "3")
ok(rc == 1 and "heads=32 is not divisible by tp=3" in err, "a named model still holds tp to its heads")

# Echoed input is cut to a readable length.
rc, out, err = run("plan", "--layout", "tp8," + "x" * 5000, "--nodes", "1", "--gpus-per-node", "8")
ok(rc == 1 and len(err) < 400 and "...(5004 bytes)" in err,
   "a 5,004-byte spec is echoed clipped (%d bytes of message)" % len(err))
rc, out, err = run("plan", "--layout", "tp8", "--nodes", "n\x1b[1-2", "--topology", data("lab-topology.conf"),
                   "--gpus-per-node", "8")
ok(rc == 1 and "\\x1b" in err and "\x1b" not in err, "an escape byte in --nodes is echoed as \\x1b")
p = plan("tp8,model=70b", 1, 8, "--gpu-mem", "80")
ok(any("exceeds the 80 GB" in w for w in p["warnings"]), "70b on one node of 80 GB GPUs warns about memory")
p = plan("tp8,pp8,model=70b,zero=1", 8, 8, "--gpu-mem", "80")
ok(any("exceeds" in w for w in p["warnings"]), "70b on tp8,pp8 without recompute needs 82.7 GB: warned")
p = plan("tp8,pp8,model=70b,zero=1,recompute=selective", 8, 8, "--gpu-mem", "80")
ok(not any("exceeds" in w for w in p["warnings"]), "with selective recompute it fits 80 GB (no memory warning)")
# Trading pp for dp keeps the default 4*pp micro-batches' global batch
# (4*mbs*world/(tp*cp)); halving tp doubles dp and the global batch.
p = plan("tp8,pp2", 8, 8, "--previous", "tp8,pp4")
ok(not any("global batch" in w for w in p["warnings"]), "pp4->pp2 keeps the global batch: no warning")
p = plan("tp4,pp4", 8, 8, "--previous", "tp8,pp4")
ok(any("dp changes from 2 to 4" in w for w in p["warnings"]), "changing the layout changes dp: warned")
ok(any("global batch" in w for w in p["warnings"]), "the warning names the global batch")
p = plan("tp4,pp4,gbs=64", 8, 8, "--previous", "tp8,pp4,gbs=64")
ok(not any(w.startswith("dp changes") for w in p["warnings"]), "with gbs pinned, no global-batch warning")

# Human output.
rc, out, err = run("plan", "--layout", "tp8,pp4", "--nodes", "4", "--gpus-per-node", "8")
is_eq(rc, 0, "plain plan exits 0")
like(out, "bubble       18.8 %", "table shows the bubble")
like(out, "memory/GPU", "table shows memory")

# SVG.
with tempfile.TemporaryDirectory() as tmp:
    svg = os.path.join(tmp, "plan.svg")
    rc, out, err = run("plan", "--layout", "tp4,pp2,dp4", "--nodes", "4", "--gpus-per-node", "8",
                       "--svg", svg)
    is_eq(rc, 0, "plan --svg exits 0")
    root = ET.parse(svg).getroot()
    ns = "{http://www.w3.org/2000/svg}"
    cells = [r for r in root.iter(ns + "rect") if r.get("rx")]
    is_eq(len(cells), 32, "the SVG has one cell per GPU")
    texts = " ".join(t.text or "" for t in root.iter(ns + "text"))
    like(texts, "pp1 dp3", "cells are labelled with PP stage and DP replica")
    fills = {r.get("fill") for r in cells}
    is_eq(len(fills), 8, "eight TP groups, eight colours")
    rc, out2, err = run("plan", "--layout", "tp4,pp2,dp4", "--nodes", "4", "--gpus-per-node", "8",
                        "--svg", "-")
    ok(rc == 0 and out2 == open(svg).read(), "plan --svg - writes the same picture to stdout, and only that")
    if os.path.exists("/dev/full"):
        rc, _, err = run("plan", "--layout", "tp4,pp2,dp4", "--nodes", "4", "--gpus-per-node", "8",
                         "--svg", "/dev/full")
        ok(rc != 0 and "--svg /dev/full: No space left on device" in err,
           "plan --svg on a full device fails, saying so")


# auto: the planner chooses, the choice is explained, and it plans like any layout.
p = plan("auto,model=70b,gbs=1024", 16, 8)
ok(p is not None and "auto" in p, "auto,model=70b on 16x8: an auto section")
if p is not None and "auto" in p:
    a = p["auto"]
    cands = a["candidates"]
    is_eq(len(cands), 5, "five candidates side by side")
    ok(a["considered"] >= a["fitting"] >= 5, "considered >= fitting >= 5")
    steps = [c["step"]["step_seconds"] for c in cands]
    ok(steps == sorted(steps), "ranked by step time")
    ok(all(c["total_gb_per_gpu"] <= a["usable_gb"] for c in cands), "every one fits the usable memory")
    is_close(a["usable_gb"], 72.0, "80 GB less the default 10 % headroom")
    ok(a["gpu_memory_nominal"] is True and a["gbs_chosen"] is False,
       "--nodes without a map: 80 GB nominal; gbs pinned")
    is_eq(p["layout"]["spec"], cands[0]["spec"], "the plan is the winner's")
    ok("auto" not in p["layout"]["spec"], "the chosen spec is concrete")
    like(a["why"], "faster than", "why names the runner-up")
    ok(all(c["tp"] <= 8 for c in cands), "TP inside the 8-GPU node")
    st = p["step"]
    is_close(st["step_seconds"], st["compute_seconds"] + st["exposed_comm_seconds"] + st["bubble_seconds"],
             "step = compute + exposed + bubble")
    # the concrete spec planned on its own gives the same step time
    q = plan(p["layout"]["spec"], 16, 8)
    is_close(q["step"]["step_seconds"], st["step_seconds"], "the chosen spec plans to the same step time")
    again = plan("auto,model=70b,gbs=1024", 16, 8)
    is_eq(again["auto"], a, "deterministic: the same answer twice")
p = plan("auto,model=70b,tp4,zero=1", 16, 8, "--headroom", "0.3")
if p is not None:
    ok(all(c["tp"] == 4 and c["zero"] == 1 for c in p["auto"]["candidates"]), "pins tp4, zero=1 kept")
    is_close(p["auto"]["usable_gb"], 56.0, "--headroom 0.3: 56 of 80 GB")
rc, out, err = run("plan", "--layout", "auto,model=70b", "--nodes", "16", "--gpus-per-node", "8")
is_eq(rc, 0, "auto plan exits 0")
like(out, "#1 chosen", "the table heads the candidates")
like(out, "gbs=1024 chosen by the planner", "an unpinned gbs is said to be the planner's")
like(out, "step s", "with a step time row")
like(out, "why          ", "and the why line")
like(out, "step time    compute", "the chosen plan shows its step time")
like(out, "schedule     ", "and its schedule")
rc, out, err = run("plan", "--layout", "tp4,pp2,vpp=2,sp,cp2,cp_algo=ulysses,model=7b", "--nodes", "2",
                   "--gpus-per-node", "8")
like(out, "schedule     interleaved 1F1B, vpp 2, sequence parallel, ZeRO 0, recompute none, "
     "CP all-to-all (Ulysses)", "the schedule line names vpp, sp and the CP kind")
rc, out, err = run("plan", "--layout", "tp8,recompute=full,zero=1", "--nodes", "2", "--gpus-per-node", "8")
like(out, "schedule     no pipeline, no sequence parallelism, ZeRO 1, recompute full",
     "and says what is off")
for spec, needle in (("auto,model=405b", "the smallest needs"),
                     ("auto,model=70b,tp8,pp32", "does not divide the 128 GPUs"),
                     ("tp8,vpp2", "vpp=2 needs pp > 1"),
                     ("tp8,cp8,cp_algo=ulysses,model=7b", "heads=32 do not divide by tp*cp")):
    nodes = "1" if spec == "auto,model=405b" else "16"
    rc, out, err = run("plan", "--layout", spec, "--nodes", nodes, "--gpus-per-node", "8")
    ok(rc == 1 and err.startswith("layoutctl: ") and err.count("\n") == 1 and needle in err,
       "bad auto input %r: exit 1, one line saying %r" % (spec, needle))
    if rc != 1 or needle not in err:
        diag("rc=%d err=%r" % (rc, err))
rc, out, err = run("plan", "--layout", "auto,model=7b", "--nodes", "1", "--gpus-per-node", "8",
                   "--headroom", "2")
is_eq(rc, 2, "--headroom 2 is a usage error")

# Errors: one line, non-zero, naming the token.
for spec, needle in (("tp8,,pp4", "empty"), ("tq8", "tq8"), ("tp0", "tp0"), ("tp8,tp4", "tp"),
                     ("tp3,pp4", "not a multiple"), ("tp8,gbs=30", "gbs=30"),
                     ("tp8,order=tp-pp", "order"), ("", "empty"), ("tp8,\u00e9", "non-ASCII"),
                     ("tp99999999999999999999", "tp")):
    rc, out, err = run("plan", "--layout", spec, "--nodes", "4", "--gpus-per-node", "8")
    ok(rc == 1 and err.startswith("layoutctl: ") and err.count("\n") == 1 and needle in err,
       "bad spec %r: exit 1, one line naming it" % spec)
    if rc != 1 or needle not in err:
        diag("rc=%d err=%r" % (rc, err))
rc, out, err = run("plan", "--layout", "tp8", "--nodes", "4")
is_eq(rc, 2, "missing --gpus-per-node is a usage error")
rc, out, err = run("plan", "--bogus")
is_eq(rc, 2, "unknown option is a usage error")
for cmd in (["--help"], ["plan", "--help"], ["place", "--help"], ["topo", "--help"],
            ["topo", "build", "--help"], ["topo", "show", "--help"]):
    rc, out, err = run(*cmd)
    ok(rc == 0 and "Usage" in out, "layoutctl %s prints usage" % " ".join(cmd))
done()
