#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The NCCL watch on a real Slurm: srun --parallel-layout gives every task
NCCL_PROFILER_PLUGIN (the hook) and PARALLEL_LAYOUT_WATCH_DIR (the step's
record directory, made by slurmstepd); nccl_driver (a stand-in for NCCL)
loads the hook and each rank's record appears there, the user's and mode
0600, while the step runs; the directory is gone after the step.
--parallel-layout-watch=no and a user's own NCCL_PROFILER_PLUGIN leave the
hook off, and a symlink planted at the step's directory is refused without
failing the step (nor is it followed)."""
import os
import shutil
import stat
import tempfile
import time

from clusterlib import Lab, LabError, skip_all, unavailable
from taplib import ETC, data, diag, done, is_eq, ok, run

why = unavailable()
PLUGIN = os.environ.get("PL_PLUGIN", "")
DRIVER = os.environ.get("NCCL_DRIVER", "")
HOOK = os.environ.get("PL_NCCL_HOOK", "")
if not why and not os.path.exists(PLUGIN):
    why = "the SPANK plugin was not built (no spank.h at configure time)"
if not why and not (os.path.exists(DRIVER) and os.path.exists(HOOK)):
    why = "nccl_driver or the NCCL hook was not built"
if why:
    skip_all(why)

tmp = tempfile.mkdtemp(prefix="pl-watch-")
os.chmod(tmp, 0o755)
MAP = os.path.join(tmp, "map.json")
rc, out, err = run("topo", "build", "--name", "lab", "-o", MAP,
                   "--slurm-topology", data("lab-topology.conf"),
                   "--node", os.path.join(ETC, "examples", "h100-node-topo.txt"),
                   "--gpu-mem", "80")
ok(rc == 0, "cluster map built for the lab")

# Each task starts the driver, waits for its own record while the driver
# runs (the step, and with it the directory, lasts as long as the ranks),
# and reports what it saw.  The record is named after the driver's pid.
SYNC = os.path.join(tmp, "sync")
os.mkdir(SYNC)
TASK = os.path.join(tmp, "task.sh")
with open(TASK, "w") as f:
    f.write(r"""#!/bin/bash
"$DRIVER" --sync-dir "$SYNC" --steps 20 --compute-us 20000 --timeout 30 > "$SYNC/out.$SLURM_JOB_ID.$RANK" 2>&1 &
pid=$!
rec=none dirst=none
if [ -n "$PARALLEL_LAYOUT_WATCH_DIR" ]; then
	f="$PARALLEL_LAYOUT_WATCH_DIR/plw-$SLURM_JOB_ID.$SLURM_STEP_ID.$RANK.$pid"
	for i in $(seq 200); do [ -e "$f" ] && break; sleep 0.05; done
	rec=$(stat -c '%u:%a:%F' "$f" 2>/dev/null | tr ' ' _)
	dirst=$(stat -c '%u:%a:%F' "$PARALLEL_LAYOUT_WATCH_DIR" 2>/dev/null | tr ' ' _)
fi
wait $pid
st=$?
echo "TASK rank=${RANK:-unset} job=$SLURM_JOB_ID step=$SLURM_STEP_ID plugin=${NCCL_PROFILER_PLUGIN:-unset} dir=${PARALLEL_LAYOUT_WATCH_DIR:-unset} rec=${rec:-missing} dirst=${dirst:-missing} rc=$st"
""")
os.chmod(TASK, 0o755)

lab = Lab(plugin=PLUGIN, plugin_args="map=%s timeout_ms=1000 socket=@LAB@/run/none-%%n.sock hook=%s "
          "watch_dir=@LAB@/watch" % (MAP, HOOK))
lab.knobs["plugin_args"] = lab.knobs["plugin_args"].replace("@LAB@", lab.dir)
WATCH = os.path.join(lab.dir, "watch")
lab.env.update(DRIVER=DRIVER, SYNC=SYNC)
try:
    lab.up()
except LabError as e:
    ok(False, "lab up with the plugin")
    diag(e)
    done()
ok(True, "lab up with the plugin in %.2f s" % lab.up_seconds)


def tasks_of(text):
    rows = []
    for line in text.splitlines():
        if line.startswith("TASK "):
            rows.append(dict(kv.split("=", 1) for kv in line.split()[1:]))
    return sorted(rows, key=lambda r: int(r["rank"]) if r["rank"].isdigit() else -1)


def gone_after(path, wait=10.0):
    """slurmstepd removes the directory at its end, which may come just
    after srun returned."""
    end = time.monotonic() + wait
    while time.monotonic() < end:
        if not os.path.lexists(path):
            return True
        time.sleep(0.1)
    return False


def last_job_id():
    rc, out, err = lab.run(["scontrol", "-o", "show", "jobs"], timeout=15)
    ids = [int(kv.split("=", 1)[1]) for kv in out.split() if kv.startswith("JobId=")]
    return max(ids) if ids else 0


ME = os.getuid()

# 1. The watch on: every task has the hook and the step's directory, and
#    every rank's record is there while the step runs.
rc, out, err = lab.srun(["-N4", "-n32", "--parallel-layout=tp8,pp4", "--parallel-layout-verbose",
                         TASK], timeout=90)
is_eq(rc, 0, "srun -N4 -n32 --parallel-layout=tp8,pp4 nccl_driver exits 0")
rows = tasks_of(out)
if not ok(len(rows) == 32, "32 tasks reported (%d)" % len(rows)):
    diag(out[-2000:] + err[-2000:])
is_eq(sorted(int(r["rank"]) for r in rows), list(range(32)), "ranks 0..31, once each")
job = rows[0]["job"] if rows else "?"
step_dir = os.path.join(WATCH, "%s.0" % job)
is_eq(sorted({r["plugin"] for r in rows}), [HOOK], "every task: NCCL_PROFILER_PLUGIN is the hook")
is_eq(sorted({r["dir"] for r in rows}), [step_dir], "every task: PARALLEL_LAYOUT_WATCH_DIR is WATCH_DIR/JOB.STEP")
is_eq(sorted({r["dirst"] for r in rows}), ["%d:700:directory" % ME],
      "the step directory: the job's user's, mode 0700")
is_eq([r["rec"] for r in rows], ["%d:600:regular_file" % ME] * 32,
      "a record per rank while it ran: the user's, mode 0600")
is_eq([r["rc"] for r in rows], ["0"] * 32, "every driver rank finished (exit 0)")
st = os.lstat(WATCH)
ok(stat.S_ISDIR(st.st_mode) and st.st_uid == 0 and stat.S_IMODE(st.st_mode) == 0o755,
   "WATCH_DIR made by slurmstepd: root's, mode 0755 (%o)" % stat.S_IMODE(st.st_mode))
ok(gone_after(step_dir), "the step directory is gone after the step")
ok("NCCL watch on: NCCL_PROFILER_PLUGIN=" in err, "verbose mode says the watch is on")

# 2. --parallel-layout-watch=no: no hook, no directory.
rc, out, err = lab.srun(["-N4", "-n32", "--parallel-layout=tp8,pp4", "--parallel-layout-watch=no",
                         "--parallel-layout-verbose", TASK], timeout=90)
is_eq(rc, 0, "--parallel-layout-watch=no: the step runs (exit 0)")
rows = tasks_of(out)
is_eq(len(rows), 32, "--parallel-layout-watch=no: 32 tasks reported")
is_eq(sorted({(r["plugin"], r["dir"]) for r in rows}), [("unset", "unset")],
      "--parallel-layout-watch=no: no NCCL_PROFILER_PLUGIN, no watch directory")
ok(rows and not os.path.lexists(os.path.join(WATCH, "%s.0" % rows[0]["job"])),
   "--parallel-layout-watch=no: no step directory made")
ok("NCCL watch off: --parallel-layout-watch=no" in err, "verbose mode says why")
rc, out, err = lab.srun(["-N1", "-n1", "--parallel-layout=tp1", "--parallel-layout-watch=maybe",
                         "true"], timeout=30)
ok(rc != 0 and "--parallel-layout-watch=maybe: expected yes or no" in err,
   "--parallel-layout-watch=maybe is refused, saying what is accepted (rc %d)" % rc)

# 3. A user's own profiler plugin is never overridden.
rc, out, err = lab.srun(["-N4", "-n32", "--export=ALL,NCCL_PROFILER_PLUGIN=none",
                         "--parallel-layout=tp8,pp4", "--parallel-layout-verbose", TASK], timeout=90)
is_eq(rc, 0, "user's NCCL_PROFILER_PLUGIN: the step runs (exit 0)")
rows = tasks_of(out)
is_eq(sorted({(r["plugin"], r["dir"]) for r in rows}), [("none", "unset")],
      "user's NCCL_PROFILER_PLUGIN=none kept in every task, no watch directory given")
ok("NCCL watch off: NCCL_PROFILER_PLUGIN=none is the user's" in err, "verbose mode says so")

# 4. A symlink planted at the step's directory (at the next job ids): the
#    watch is off, the step runs, the link's target is left alone.
victim = os.path.join(tmp, "victim")
os.mkdir(victim, 0o755)
os.chmod(victim, 0o755)
with open(os.path.join(victim, "keep"), "w") as f:
    f.write("keep\n")
nxt = last_job_id() + 1
planted = [os.path.join(WATCH, "%d.0" % j) for j in range(nxt, nxt + 3)]
for p in planted:
    os.symlink(victim, p)
rc, out, err = lab.srun(["-N4", "-n32", "--parallel-layout=tp8,pp4", "--parallel-layout-verbose",
                         TASK], timeout=90)
is_eq(rc, 0, "a symlink at the step's directory: the step still runs (exit 0)")
rows = tasks_of(out)
is_eq(len(rows), 32, "symlink planted: 32 tasks reported")
ok(rows and os.path.join(WATCH, "%s.0" % rows[0]["job"]) in planted,
   "the step's job id was one planted for (%s)" % (rows[0]["job"] if rows else "?"))
is_eq(sorted({(r["plugin"], r["dir"]) for r in rows}), [("unset", "unset")],
      "symlink planted: the watch is off (no hook, no directory)")
ok("something other than a directory is there (not followed)" in err,
   "verbose mode gives the reason")
st = os.stat(victim)
is_eq((stat.S_IMODE(st.st_mode), st.st_uid, sorted(os.listdir(victim))), (0o755, ME, ["keep"]),
      "the link's target is neither chmod-ed, given away, nor written into")
ok(all(os.path.islink(p) for p in planted), "the planted links are left as they were")
for p in planted:
    os.unlink(p)

rc, err = lab.down()
is_eq(rc, 0, "lab down")
shutil.rmtree(tmp, ignore_errors=True)
done()
