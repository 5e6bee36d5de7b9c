#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The culprit's stacks end to end on a real Slurm: srun --parallel-layout
runs nccl_driver on 4 nodes with a layoutd on each (the cluster of
cluster_alert_test.py); rank 13, on a node other than the leader's, stops
entering its collectives.  The leader names it in a ParallelLayoutHang
alert, whose stack_file annotation names rank 13's stack file on its node,
and asks that node, in its answer to that node's next summary, to capture
it: the file appears in that node's state directory within the threshold
and stack_timeout_s, names rank 13 and its pid, and holds frames of
nccl_driver's own code; no other rank gets one.  Once with eu-stack, once
with gdb (stack_tool = gdb)."""
import os
import re
import shutil
import tempfile
import time

from clusterlib import LabError
from taplib import diag, done, is_eq, like, ok

from watchlab import WatchLab, parts, rows_of


def stack_tools():
    if not shutil.which("eu-stack") or not shutil.which("gdb"):
        return "eu-stack and gdb are needed (scripts/deps: elfutils, gdb)"
    if os.geteuid() != 0:
        return "layoutd attaches to the ranks as root: run as root"
    return None


PLUGIN, DRIVER, HOOK, LAYOUTD = parts(stack_tools)

THRESH = 5
STACK_TIMEOUT = 10
FRAMES = re.compile(r"\b(sleep_us|train)\b")
state = tempfile.mkdtemp(prefix="pl-stacks-")
os.chmod(state, 0o755)
wl = WatchLab(PLUGIN, HOOK, DRIVER, LAYOUTD, threshold=THRESH, interval_ms=200,
              state_dir=os.path.join(state, "%n"), stack_timeout_s=STACK_TIMEOUT)
lab, am = wl.lab, wl.am
try:
    wl.up()
except (LabError, RuntimeError) as e:
    ok(False, "the lab with a layoutd per node, peers on loopback TCP, Alertmanager")
    diag(e)
    wl.down()
    done()
ok(True, "4 nodes, a layoutd on each, Alertmanager at %s; state_dir %s/%%n" % (am.url, state))
STEP = ["-N4", "-n32", "--parallel-layout=tp8,pp4"]
DRV = ["--compute-us", "20000"]


def header(text):
    h = {}
    for line in text.split("\n\n", 1)[0].splitlines():
        if ": " in line and not line.startswith("#"):
            k, v = line.split(": ", 1)
            h[k] = v
    return h


def stack_files(job):
    """Every stack file of job on any node: {path: text}."""
    got = {}
    for node in os.listdir(state):
        d = os.path.join(state, node, "%s.0" % job)
        if os.path.isdir(d):
            for n in os.listdir(d):
                with open(os.path.join(d, n), errors="replace") as f:
                    got[os.path.join(d, n)] = f.read()
    return got


def hang_case(tool, what):
    before = wl.last_job_id()

    def hang13(alerts):
        return any(a["labels"].get("alertname") == "ParallelLayoutHang" and
                   int(a["labels"].get("job_id", 0)) > before and
                   "13" in a["labels"].get("rank", "").split(",") for a in alerts)

    rc, out, err, when, seen, _ = wl.watched(
        STEP + [wl.exec] + DRV + ["--steps", "40", "--timeout", "25", "--fault=stop:13:3"],
        hang13, timeout=150)
    rows = rows_of(out)
    job = rows[0]["job"] if rows else "?"
    node13 = [r["node"] for r in rows if r["rank"] == "13"]
    node0 = [r["node"] for r in rows if r["rank"] == "0"]
    pid13 = [r["pid"] for r in rows if r["rank"] == "13"]
    ok(node13 and node0 and node13 != node0, "%s: rank 13 on %s, the leader (rank 0) on %s"
       % (what, node13, node0))
    if not node13:
        diag(out[-2000:] + err[-2000:])
        return
    path = os.path.join(state, node13[0], "%s.0" % job, "stack-rank13.txt")
    files = stack_files(job)
    ok(path in files, "%s: %s written on rank 13's node" % (what, path))
    if path not in files:
        diag(lab.log_tail("layoutd.%s.log" % node13[0], 30))
        diag(lab.log_tail("layoutd.%s.log" % node0[0], 30))
        return
    text = files[path]
    h = header(text)
    is_eq((h.get("node"), h.get("step"), h.get("rank"), h.get("pid")),
          (node13[0], "%s.0" % job, "13", pid13[0]),
          "%s: the header names %s, the step, rank 13 and its pid %s" % (what, node13[0], pid13[0]))
    like(h.get("finding", ""), "not-entered: ", "%s: the finding" % what)
    like(h.get("tool", ""), tool, "%s: the tool" % what)
    is_eq(h.get("status"), "exit code 0", "%s: the tool's status" % what)
    ok(FRAMES.search(text.split("\n\n", 1)[-1]),
       "%s: a frame of nccl_driver's own code (sleep_us or train)" % what)
    is_eq(sorted(files), [path], "%s: no file for the healthy ranks" % what)
    stopped = wl.stopped_at(job, 13)
    lag = os.stat(path).st_mtime - stopped if stopped else None
    diag("%s: the file %s s after rank 13 stopped (threshold %d s, stack_timeout_s %d)"
         % (what, lag and round(lag, 2), THRESH, STACK_TIMEOUT))
    ok(lag is not None and lag < THRESH + STACK_TIMEOUT + 5,
       "%s: written within the threshold and stack_timeout_s (%s s)" % (what, lag and round(lag, 1)))
    mine = [a for a in seen if a["labels"].get("alertname") == "ParallelLayoutHang" and
            a["labels"].get("job_id") == job]
    is_eq([a["annotations"].get("stack_file") for a in mine][:1], ["%s:%s" % (node13[0], path)],
          "%s: the alert's stack_file annotation names it" % what)
    diag(text[:1200])


hang_case("eu-stack -i -p", "eu-stack")
wl.restart_layoutds(stack_tool="gdb")
hang_case("gdb -batch -nx -p", "gdb")
bad = lab.bad_nodes()
is_eq(bad, {}, "no node left drained or down")
rc, err = wl.down()
ok(rc == 0, "the lab goes down (%s)" % err.strip()[-200:])
shutil.rmtree(state, ignore_errors=True)
done()
