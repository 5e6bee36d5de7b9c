#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The NCCL watch on a real Slurm: srun --parallel-layout gives every task
NCCL_PROFILER_PLUGIN (the hook) and PARALLEL_LAYOUT_WATCH_DIR (the step's
record directory, made by slurmstepd); nccl_driver (a stand-in for NCCL)
loads the hook and each rank's record appears there, the user's and mode
0600, while the step runs; the directory is gone after the step.
--parallel-layout-watch=no and a user's own NCCL_PROFILER_PLUGIN leave the
hook off, and a symlink planted at the step's directory is refused without
failing the step (nor is it followed).  With a layoutd on every node,
slurmstepd registers each task there (GET /v1/watch lists the node's ranks
and pids, their records read), reports each task's exit status, and a
layoutd that is down leaves the step running as before."""
import os
import shutil
import stat
import json
import tempfile
import threading
import time

from clusterlib import Lab, LabError, skip_all, unavailable
from taplib import ETC, data, diag, done, http_request, is_eq, ok, run

why = unavailable()
PLUGIN = os.environ.get("PL_PLUGIN", "")
DRIVER = os.environ.get("NCCL_DRIVER", "")
HOOK = os.environ.get("PL_NCCL_HOOK", "")
LAYOUTD = os.environ.get("LAYOUTD", "")
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
	# (non-empty: the hook creates its record, then sizes it)
	for i in $(seq 200); do [ -s "$f" ] && break; sleep 0.05; done
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
ok(rc != 0 and "--parallel-layout-watch=maybe: 'maybe' has no value: want yes, no or "
   "hang=DURATION,busy=DURATION,slow=on|off" in err,
   "--parallel-layout-watch=maybe is refused, saying what is accepted (rc %d)" % rc)
rc, out, err = lab.srun(["-N1", "-n1", "--parallel-layout=tp1", "--parallel-layout-watch=hang=10x",
                         "true"], timeout=30)
ok(rc != 0 and "--parallel-layout-watch: hang=10x: want a duration of 1 s to 30 days" in err,
   "--parallel-layout-watch=hang=10x is refused before launch, saying what a duration is "
   "(rc %d)" % rc)

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

# 5. A layoutd on every node: slurmstepd registers each task of the step
#    (its pid, rank and record) and, at its end, its exit status.  The task
#    execs the driver, so the task's pid is the pid the hook names its
#    record after.
EXEC = os.path.join(tmp, "exec.sh")
with open(EXEC, "w") as f:
    f.write(r"""#!/bin/bash
echo "TASK rank=${RANK:-unset} pid=$$ node=$SLURMD_NODENAME job=$SLURM_JOB_ID step=$SLURM_STEP_ID"
exec "$DRIVER" --sync-dir "$SYNC" --compute-us 20000 "$@" > "$SYNC/exec.$SLURM_JOB_ID.$RANK" 2>&1
""")
os.chmod(EXEC, 0o755)
NODES = ["node%d" % k for k in range(1, 5)]


def sock_of(node):
    return os.path.join(lab.dir, "run", "layoutd-%s.sock" % node)


def watch_of(node):
    """GET /v1/watch from node's layoutd: the parsed answer, or None."""
    try:
        st, hdr, body = http_request(sock_of(node), "GET", "/v1/watch", timeout=5)
        return json.loads(body) if st == 200 else None
    except (OSError, ValueError):
        return None


def newest_step(w):
    steps = (w or {}).get("steps") or []
    return max(steps, key=lambda s: (s["job_id"], s["step_id"])) if steps else None


def srun_in_background(args, timeout):
    res = {}
    th = threading.Thread(target=lambda: res.update(r=lab.srun(args, timeout=timeout)))
    th.start()
    return th, res


def seen_while_running(nodes, before, wait=20.0):
    """Poll each node's layoutd until its newest step (a job after before)
    runs with 8 tasks whose records were read: {node: step} as then seen."""
    seen, end = {}, time.monotonic() + wait
    while time.monotonic() < end and len(seen) < len(nodes):
        for n in nodes:
            s = newest_step(watch_of(n))
            if (n not in seen and s and s["job_id"] > before and s["state"] == "running"
                    and len(s["tasks"]) == 8 and all(t["record_state"] == "ok" for t in s["tasks"])):
                seen[n] = s
        time.sleep(0.1)
    return seen


def ended_step(node, before, wait=10.0):
    """node's newest step once it has ended (the exit callbacks may come
    just after srun returned), or what is there at the deadline."""
    end = time.monotonic() + wait
    while True:
        s = newest_step(watch_of(node))
        if (s and s["job_id"] > before and s["state"] == "ended") or time.monotonic() > end:
            return s if s and s["job_id"] > before else None
        time.sleep(0.1)


def rows_of(text):
    return [dict(kv.split("=", 1) for kv in line.split()[1:])
            for line in text.splitlines() if line.startswith("TASK ")]


def run_watched(args, nodes, before, timeout=120):
    """srun args in the background while every node's layoutd is polled
    (every 0.1 s) until srun returns: (rc, out, err, seen, verdicts), seen as
    seen_while_running gives it, verdicts {node: [(seconds since srun
    started, verdict)]} of the newest step after before, each verdict once
    (at its first sighting; kind, rank and comm tell them apart)."""
    t0 = time.monotonic()
    th, res = srun_in_background(args, timeout)
    seen, verdicts, known = {}, {n: [] for n in nodes}, set()
    while th.is_alive():
        for n in nodes:
            s = newest_step(watch_of(n))
            if not s or s["job_id"] <= before:
                continue
            if (n not in seen and s["state"] == "running" and len(s["tasks"]) == 8
                    and all(t["record_state"] == "ok" for t in s["tasks"])):
                seen[n] = s
            for v in s["verdicts"]:
                key = (n, v["kind"], v["rank"], v.get("comm_hash"))
                if key not in known:
                    known.add(key)
                    verdicts[n].append((time.monotonic() - t0, v))
        time.sleep(0.1)
    th.join()
    rc, out, err = res.get("r", (124, "", "no answer"))
    return rc, out, err, seen, verdicts


def kinds_of(verdicts):
    return sorted({(n, v["kind"], v["rank"]) for n, vs in verdicts.items() for _, v in vs})


# The watch's verdicts within seconds: a 5 s hang threshold (the least
# accepted), records read every 200 ms.
THRESH, INTERVAL = 5, 0.2
LDCONF = os.path.join(tmp, "layoutd.conf")
with open(LDCONF, "w") as f:
    f.write("hang_threshold_s = %d\nwatch_interval_ms = %d\nstate_dir = %s\n" %
            (THRESH, INTERVAL * 1000, os.path.join(tmp, "state", "%n")))
have_layoutd = os.path.exists(LAYOUTD)
if have_layoutd:
    args = lab.knobs["plugin_args"].replace("/run/none-%n.sock", "/run/layoutd-%n.sock")
    try:
        lab.up(layoutd=LAYOUTD, layoutd_map=MAP, layoutd_conf=LDCONF, plugin_args=args)
        ok(all(os.path.exists(sock_of(n)) for n in NODES), "a layoutd on each of the 4 nodes")
    except LabError as e:
        ok(False, "lab up with a layoutd per node")
        diag(e)
        have_layoutd = False
if have_layoutd:
    w = watch_of("node1") or {}
    is_eq((w.get("hang_threshold_s"), w.get("interval_ms")), (THRESH, INTERVAL * 1000),
          "layoutd runs with the lab's watch settings")
    before = last_job_id()
    rc, out, err, seen, verdicts = run_watched(
        ["-N4", "-n32", "--parallel-layout=tp8,pp4", "--parallel-layout-verbose",
         EXEC, "--steps", "40", "--timeout", "30"], NODES, before)
    is_eq(rc, 0, "with layoutd: srun -N4 -n32 nccl_driver exits 0")
    rows = rows_of(out)
    is_eq(len(rows), 32, "with layoutd: 32 tasks reported")
    want = {n: sorted((int(r["rank"]), int(r["pid"])) for r in rows if r["node"] == n) for n in NODES}
    got = {n: sorted((t["rank"], t["pid"]) for t in seen[n]["tasks"]) if n in seen else None
           for n in NODES}
    if not ok(len(seen) == 4, "while the driver ran, each node's layoutd listed 8 tasks with their records read"):
        diag("seen on %s; %s" % (sorted(seen), lab.log_tail("layoutd.node1.log", 20)))
    is_eq(got, want, "each layoutd lists its node's ranks with the pids the tasks had")
    job = rows[0]["job"] if rows else "?"
    ok(all(s["job_id"] == int(job) and s["step_id"] == 0 and s["uid"] == ME for s in seen.values()),
       "registered as the step's job, step and user")
    ok(seen and all(t["node"] == n for n, s in seen.items() for t in s["tasks"]),
       "every task registered with its node's name")
    ok(seen and all(t["record"].endswith("/plw-%s.0.%d.%d" % (job, t["rank"], t["pid"]))
                    for s in seen.values() for t in s["tasks"]),
       "every task's record is the one the hook names after its job, step, rank and pid")
    ok(seen and all(len(t["comms"]) >= 3 for s in seen.values() for t in s["tasks"]),
       "every task's record shows its communicators (world, tp, pp)")
    is_eq(kinds_of(verdicts), [], "a healthy step of %d ranks: no verdict on any node" % 32)
    ended = {n: ended_step(n, before) for n in NODES}
    is_eq(sorted({(s["state"], t["exited"], t["exit_status"]) for s in ended.values() if s
                  for t in s["tasks"]}), [("ended", True, 0)],
          "after the step: every task exited with wait status 0, as the exit callback said")

    # 6. Faults on rank 13 (TP group 1, PP stage 1): each named by its
    #    node's layoutd while the step still runs (its peers wait, bounded
    #    by the driver's --timeout of 15 s).  Ranks of other nodes are left
    #    to the job-wide judgement: a node sees only its own ranks.
    def fault_run(spec, what):
        before = last_job_id()
        rc, out, err, seen, verdicts = run_watched(
            ["-N4", "-n32", "--parallel-layout=tp8,pp4", EXEC, "--steps", "40",
             "--timeout", "15", "--fault=" + spec], NODES, before)
        rows = rows_of(out)
        node13 = [r["node"] for r in rows if r["rank"] == "13"]
        ok(rc != 0 and len(node13) == 1, "--fault=%s: the step fails (rc %d), rank 13 on %s"
           % (spec, rc, node13))
        home = node13[0] if node13 else "?"
        mine = [(t, v) for t, v in verdicts.get(home, []) if v["rank"] == 13]
        diag("--fault=%s: verdicts %s" % (spec, [(n, round(t, 2), v["kind"], v["rank"], v.get("comm"))
                                                  for n, vs in verdicts.items() for t, v in vs]))
        return home, mine, verdicts

    home, mine, verdicts = fault_run("exit:13:5:7", "exits")
    ex = [v for t, v in mine if v["kind"] == "exited"]
    is_eq([(v["rank"], v["exit_status"]) for v in ex], [(13, 7 << 8)],
          "exit:13:5:7: rank 13's layoutd names it exited with wait status 7 << 8, while its peers wait")
    st13 = None
    s = ended_step(home, last_job_id() - 1)
    if s:
        st13 = [t["exit_status"] for t in s["tasks"] if t["rank"] == 13]
    is_eq(st13, [7 << 8], "rank 13's node: layoutd has wait status 7 << 8 for rank 13 after the step")

    home, mine, verdicts = fault_run("stop:13:3", "stops entering")
    ne = [(t, v) for t, v in mine if v["kind"] == "not-entered"]
    ok(ne and ne[0][1]["comm"] == "tp" and 8 <= ne[0][1]["peer_rank"] <= 15,
       "stop:13:3: rank 13's layoutd names it not entering a tp collective its TP peers wait in (%s)"
       % ([(v["comm"], v["func"], v["seq"], v["peer_rank"]) for _, v in ne][:1]))
    ok(ne and THRESH < ne[0][1]["for_s"] < THRESH + 1.5,
       "stop:13:3: named within one interval past the %d s threshold (its peers had waited %.2f s)"
       % (THRESH, ne[0][1]["for_s"] if ne else -1))
    early = [v for t, v in verdicts.get(home, []) if v["kind"] != "exited" and v["rank"] != 13]
    is_eq(early, [], "stop:13:3: no other rank of rank 13's node is blamed")

    home, mine, verdicts = fault_run("stuck:13:3", "stuck on the GPU")
    gs = [(t, v) for t, v in mine if v["kind"] == "gpu-stuck"]
    ok(gs and THRESH < gs[0][1]["for_s"] < THRESH + 1.5,
       "stuck:13:3: rank 13's layoutd names its collective stuck on the GPU past the threshold (%s)"
       % ([(v["comm"], v["func"], v["seq"], round(v["for_s"], 2)) for _, v in gs][:1]))
    early = [v for t, v in verdicts.get(home, []) if v["kind"] != "exited" and v["rank"] != 13]
    is_eq(early, [], "stuck:13:3: no other rank of rank 13's node is blamed (its TP peers wait on it)")
    # Its stuck kernel is the pipeline receive of step 3, whose sender is on
    # another node: the node infers it (the leader sees both ends).
    is_eq(sorted(set((v["comm"], v["evidence"]) for _, v in gs)), [("pp", "inferred")],
          "stuck:13:3: the stuck kernel is its pp receive, named inferred on its own node")

    # 7. One node's layoutd down: the step runs as before, the other nodes
    #    register their tasks, and slurmd's log says why node2's did not.
    ok(lab.stop_layoutd("node2"), "node2's layoutd stopped")
    said = lab.log_tail("slurmd.node2.log", 100000).count("NCCL watch not registered with layoutd")
    before = last_job_id()
    t0 = time.monotonic()
    th, res = srun_in_background(["-N4", "-n32", "--parallel-layout=tp8,pp4", "--parallel-layout-verbose",
                                  EXEC, "--steps", "40", "--timeout", "30"], timeout=120)
    seen = seen_while_running(["node1", "node3", "node4"], before)
    th.join()
    rc, out, err = res.get("r", (124, "", "no answer"))
    is_eq(rc, 0, "node2's layoutd down: the step still runs and exits 0")
    is_eq(len(rows_of(out)), 32, "node2's layoutd down: 32 tasks reported")
    diag("node2's layoutd down: the step took %.2f s" % (time.monotonic() - t0))
    is_eq(sorted(seen), ["node1", "node3", "node4"], "the other three layoutds list their 8 tasks")
    log = lab.log_tail("slurmd.node2.log", 100000)
    is_eq(log.count("NCCL watch not registered with layoutd") - said, 1,
          "node2's slurmd log: one line, for the first task, in verbose mode")

rc, err = lab.down()
is_eq(rc, 0, "lab down")
shutil.rmtree(tmp, ignore_errors=True)
done()
