#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""layoutd's watch: the real daemon (under valgrind when it can) samples the
records that nccl_driver's ranks write through the NCCL hook, registered as
slurmstepd would (root, POST /v1/watch/tasks), and GET /v1/watch shows the
verdicts: none for a healthy world; the exiting rank (first, with its
status); the rank that stopped entering; the collective stuck on the GPU.
A non-root registration is refused (403), a record replaced by a symbolic
link or owned by someone else is refused with a log line, and a user sees
only their own jobs.  The sweep removes the step directories of watch_dir
left behind (at start, and at each SIGHUP so the test need not wait for
its timer) and nothing else: not a fresh one, one whose record's pid runs,
a registered running step's, a name that is not JOB.STEP, nor what a
planted link points to.  A registered pid taken by a later process (handed
out again through ns_last_pid) counts as exited; one that renames itself
to a name full of ')' does not.  The expectations come from the faults
injected, not from the daemon's code.
"""
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import watchlib
from taplib import LAYOUTD, as_user, diag, done, http_request, is_eq, like, ok, skip, wait_for
from watchlib import DRIVER, HOOK

TP, PP, DP = 2, 1, 2
WORLD = TP * PP * DP
NOBODY = 65534
THRESHOLD = 5


class World(watchlib.World):
    """WORLD driver ranks of job `job` on node1, registered with the record alone."""
    tp, dp, pp = TP, DP, PP
    timeout = 40
    full = False


def as_nobody(sock, method, path, body=None):
    """One request from uid NOBODY (a child that drops root): (status, body)."""
    out = as_user(NOBODY, lambda: (lambda r: [r[0], r[2]])(http_request(sock, method, path, body)))
    return out if isinstance(out, list) else (None, None)


def open_in(pid, where):
    """The daemon's descriptors open on where or below it."""
    out = []
    fdd = "/proc/%d/fd" % pid
    for n in os.listdir(fdd):
        try:
            t = os.readlink(os.path.join(fdd, n))
        except OSError:
            continue
        if t == where or t.startswith(where + "/"):
            out.append(t)
    return out


def verdicts_when(d, job, cond, limit):
    """The step's verdicts once cond(verdicts) holds, or the last seen."""
    last = []

    def check():
        nonlocal last
        s = d.step(job)
        last = s["verdicts"] if s else []
        return cond(last)
    wait_for(check, limit, 0.2)
    return last


OLD_S = 3600           # how old a planted leftover is made (os.utime)
LEFTOVER = 10          # watch_leftover_s in the test's config
SWEEP_DIRS = 64        # step directories one pass reads (watch/sweep.c)


_dead = [0]


def dead_pid():
    """A pid no process has: above the kernel's pid_max, so that a busy
    machine (the suite runs beside distcheck and the fuzzers) cannot hand
    it to another process while the test runs, as it did a reaped one's."""
    with open("/proc/sys/kernel/pid_max") as f:
        top = int(f.read())
    _dead[0] += 1
    return top + 1000 + _dead[0]


def step_dir(wd, name, records=(), old=True, owner=NOBODY):
    """A step directory as the plugin makes it (0700, the job user's) with
    empty files at the record names the hook would give."""
    path = os.path.join(wd, name)
    os.mkdir(path, 0o700)
    for r in records:
        with open(os.path.join(path, r), "w"):
            pass
        os.chown(os.path.join(path, r), owner, owner)
    os.chown(path, owner, owner)
    if old:
        t = time.time() - OLD_S
        os.utime(path, (t, t))
    return path


def content(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError as e:
        return str(e)


def sweep(d):
    """SIGHUP (a reload sweeps once) and wait for the pass; the watch after."""
    before = (d.watch() or {}).get("sweeps", 0)
    d.p.send_signal(signal.SIGHUP)
    wait_for(lambda: (d.watch() or {}).get("sweeps", 0) > before, 60, 0.1)
    return d.watch() or {}


def leftovers(d, tmp, wd, removed_at_start):
    """The sweep of watch_dir: what goes, what stays, and the victims of
    planted links untouched."""
    sleeper = subprocess.Popen(["sleep", "600"])
    runner = subprocess.Popen(["sleep", "600"])
    ender = subprocess.Popen(["sleep", "600"])
    try:
        d0, d1 = dead_pid(), dead_pid()
        dead = step_dir(wd, "9001.0", ["plw-9001.0.0.%d" % d0, "plw-9001.0.1.%d" % d1])
        fresh = step_dir(wd, "9002.0", ["plw-9002.0.0.%d" % d0], old=False)
        live = step_dir(wd, "9003.0", ["plw-9003.0.0.%d" % d0,
                                       "plw-9003.0.1.%d" % sleeper.pid])
        # registered and running: its only record names a dead pid
        running = step_dir(wd, "9004.0", ["plw-9004.0.0.%d" % d1])
        # a link at a step's name, to a directory holding what looks like
        # a dead step's record
        victim = os.path.join(tmp, "victim")
        os.mkdir(victim)
        with open(os.path.join(victim, "plw-9005.0.0.%d" % d0), "w") as f:
            f.write("precious")
        link = os.path.join(wd, "9005.0")
        os.symlink(victim, link)
        t = time.time() - OLD_S
        os.utime(victim, (t, t))    # as old as a leftover, were it followed
        os.utime(link, (t, t), follow_symlinks=False)
        # names that are not a step's
        other = step_dir(wd, "notastep", ["plw-1.0.0.%d" % d0])
        padded = step_dir(wd, "0123.4", ["plw-123.4.0.%d" % d0])
        # a step directory holding a link to a file outside
        vfile = os.path.join(tmp, "victim-file")
        with open(vfile, "w") as f:
            f.write("precious")
        inner = step_dir(wd, "9006.0", ["plw-9006.0.0.%d" % d0])
        os.symlink(vfile, os.path.join(inner, "plw-9006.0.1.%d" % d1))
        os.utime(inner, (t, t))
        # registered, then ended; old on disk, but ended only now
        ended = step_dir(wd, "9007.0", ["plw-9007.0.0.%d" % ender.pid])
        reg = {"step_id": 0, "task": 0, "rank": 0, "uid": NOBODY, "node": "node1",
               "coords": {"tp": 0, "cp": 0, "ep": 0, "dp": 0, "pp": 0}}
        is_eq([d.post("/v1/watch/tasks", dict(reg, job_id=9004, pid=runner.pid,
                                              record=running + "/plw-9004.0.0.%d" % d1))[0],
               d.post("/v1/watch/tasks", dict(reg, job_id=9007, pid=ender.pid,
                                              record=ended + "/plw-9007.0.0.%d" % ender.pid))[0]],
              [200, 200], "leftovers: a running step and one about to end are registered")
        ender.kill()
        ender.wait()
        is_eq(d.post("/v1/watch/exit", {"job_id": 9007, "step_id": 0, "task": 0,
                                        "status": 9})[0], 200, "leftovers: 9007.0 has ended")
        t_end = time.monotonic()
        for p in (dead, live, running, ended, inner):
            os.utime(p, (t, t))     # registering touched nothing; make sure
        w = sweep(d)
        ok(not os.path.lexists(dead), "a step directory not watched here, unchanged for "
           "an hour, whose records' pids are gone: removed")
        ok(os.path.isdir(fresh), "one whose records' pids are gone but changed just now: kept")
        ok(os.path.isdir(live) and len(os.listdir(live)) == 2,
           "an old one with a record whose pid runs: kept whole")
        ok(os.path.isdir(running), "a registered running step's directory (its records' "
           "pids gone, old): kept")
        ok(not os.path.lexists(link), "a symbolic link at a step's name: the link removed")
        ok(os.path.isdir(victim) and
           content(os.path.join(victim, "plw-9005.0.0.%d" % d0)) == "precious",
           "and the directory it pointed to, and the file in it, untouched")
        ok(os.path.isdir(other) and os.path.isdir(padded),
           "names that are not JOB.STEP ('notastep', '0123.4'): left alone")
        ok(not os.path.lexists(inner), "a step directory holding a link to a file outside: "
           "removed")
        is_eq(content(vfile), "precious", "and the file the link pointed to untouched")
        ok(os.path.isdir(ended), "a registered step that ended %.1f s ago (old on disk): kept "
           "until watch_leftover_s after its end" % (time.monotonic() - t_end))
        is_eq(w.get("leftovers_removed"), removed_at_start + 3,
              "leftovers_removed counts the two directories and the link")
        lt = d.log_text()
        ok(re.search(r"9001\.0 removed \(2 entries\): not a step watched here, unchanged "
                     r"for 36\d\d s, no record's process runs", lt),
           "the removal is logged with why")
        like(lt, "9005.0 removed: a symbolic link, not a directory (removed itself, not "
             "followed)", "the link's removal is logged as a link's")
        wait_for(lambda: time.monotonic() - t_end > LEFTOVER + 0.5, LEFTOVER + 5, 0.2)
        os.utime(fresh)
        w = sweep(d)
        ok(not os.path.lexists(ended), "the ended step's directory, %d s after its end: "
           "removed" % LEFTOVER)
        like(d.log_text(), "9007.0 removed (1 entries): job 9007.0 ended",
             "logged as a registered step that ended and whose directory stayed")
        sleeper.kill()
        sleeper.wait()
        os.utime(fresh)     # fresh again: the wait above aged it
        w = sweep(d)
        ok(not os.path.lexists(live), "the one with a live record, once that pid has gone: "
           "removed")
        ok(os.path.isdir(fresh) and os.path.isdir(running),
           "the fresh one and the running step's stay")
        is_eq(w.get("leftovers_removed"), removed_at_start + 5, "leftovers_removed: 5 more")
        lt = d.log_text()
        is_eq((lt.count("notastep is not a step's name"), lt.count("0123.4 is not a step's name")),
              (1, 1), "each name that is not JOB.STEP is logged once over three passes")

        # A pass is bounded: 150 leftovers go SWEEP_DIRS at a time.
        shutil.rmtree(fresh)
        for n in range(150):
            step_dir(wd, "8000.%d" % n, owner=0)
        before = w.get("leftovers_removed")
        sweeps0 = w.get("sweeps")
        t0 = time.monotonic()
        w = sweep(d)
        took = time.monotonic() - t0
        passes = w.get("sweeps", 0) - sweeps0
        is_eq(w.get("leftovers_removed", 0) - before, min(150, SWEEP_DIRS * passes),
              "150 empty leftovers: %d removed in %d pass(es), %d a pass" %
              (w.get("leftovers_removed", 0) - before, passes, SWEEP_DIRS))
        diag("one pass of %d removals answered in %.2f s (valgrind included)" % (SWEEP_DIRS, took))
        for _ in range(3):
            if w.get("leftovers_removed", 0) - before >= 150:
                break
            w = sweep(d)
        left = [n for n in os.listdir(wd) if n.startswith("8000.")]
        ok(left == [] and w.get("leftovers_removed", 0) - before == 150,
           "and the next passes take the rest (%d left)" % len(left))
        # ... and so are the entries it reads and removes: three leftovers
        # of 6000 files each go one a pass.
        for n in range(3):
            path = step_dir(wd, "8001.%d" % n, owner=0)
            for k in range(6000):
                open(os.path.join(path, "plw-8001.%d.%d.%d" % (n, k, d0)), "w").close()
            os.utime(path, (t, t))
        before = w.get("leftovers_removed")
        got = []
        for _ in range(3):
            sweeps0 = w.get("sweeps")
            w = sweep(d)
            got.append((w.get("leftovers_removed", 0) - before, w.get("sweeps", 0) - sweeps0))
            before = w.get("leftovers_removed", 0)
        ok(all(r == p for r, p in got) and
           not [n for n in os.listdir(wd) if n.startswith("8001.")],
           "three leftovers of 6000 files: one removed a pass (removed, passes: %s)" % got)
        # A directory with more entries than a step has records is not
        # judged, and said so once.
        big = step_dir(wd, "8002.0", owner=0)
        for k in range(8300):
            open(os.path.join(big, "f%d" % k), "w").close()
        os.utime(big, (t, t))
        sweep(d)
        sweep(d)
        ok(os.path.isdir(big) and len(os.listdir(big)) == 8300,
           "a directory of 8300 entries: left alone whole")
        is_eq(d.log_text().count("8002.0 holds more than 8192 entries: left alone"), 1,
              "and logged once over two passes")
        shutil.rmtree(big)
        ok(d.alive(), "the daemon is alive and serving")
    finally:
        for p in (sleeper, runner, ender):
            if p.poll() is None:
                p.kill()
                p.wait()


def same_pid_again(pid):
    """A new process holding pid, through ns_last_pid (the kernel then gives
    the next fork pid; others may fork in between, so a few tries).  None
    when it cannot be had."""
    try:
        for _ in range(200):
            with open("/proc/sys/kernel/ns_last_pid", "w") as f:
                f.write(str(pid - 1))
            q = subprocess.Popen(["sleep", "600"])
            if q.pid == pid:
                return q
            q.kill()
            q.wait()
    except OSError as e:
        diag("ns_last_pid: %s" % e)
    return None


def task_of(d, job):
    s = d.step(job)
    return s["tasks"][0] if s and s["tasks"] else {}


def samples_pass(d, n):
    s0 = (d.watch() or {}).get("samples", 0)
    wait_for(lambda: (d.watch() or {}).get("samples", 0) >= s0 + n, 30, 0.1)


def pid_reuse(d, tmp):
    """A registered pid taken by a later process: gone, exit status unknown,
    found by the start time.  The reuse is real: the pid is handed out again
    through ns_last_pid while layoutd is stopped (SIGSTOP), so no sample
    sees the pid absent in between."""
    reg = {"step_id": 0, "task": 0, "rank": 0, "uid": 0, "node": "node1",
           "record": os.path.join(tmp, "no-record"),
           "coords": {"tp": 0, "cp": 0, "ep": 0, "dp": 0, "pp": 0}}
    p = subprocess.Popen(["sleep", "600"])
    q = None
    try:
        is_eq(d.post("/v1/watch/tasks", dict(reg, job_id=9100, pid=p.pid))[0], 200,
              "pid reuse: a live sleep registered")
        samples_pass(d, 3)
        ok(task_of(d, 9100).get("exited") is False, "pid reuse: alive over 3 samples")
        os.kill(d.p.pid, signal.SIGSTOP)
        try:
            p.kill()
            p.wait()
            time.sleep(0.05)    # the start time counts 10 ms ticks
            q = same_pid_again(p.pid)
        finally:
            os.kill(d.p.pid, signal.SIGCONT)
        if not q:
            skip("pid reuse: the registered pid taken by another process",
                 "could not have pid %d handed out again" % p.pid)
        else:
            ok(wait_for(lambda: task_of(d, 9100).get("exited"), 10, 0.1) and
               task_of(d, 9100).get("exit_status") is None,
               "pid reuse: pid %d held by a later process counts as exited, status unknown" %
               p.pid)
            like(d.log_text(), "job 9100.0 task 0 rank 0 pid %d is gone, the pid was reused: "
                 "pid %d started at clock tick" % (p.pid, p.pid), "pid reuse: logged as such")
            is_eq((d.watch() or {}).get("pids_reused"), 1, "pid reuse: counted in pids_reused")
    finally:
        for x in (p, q):
            if x and x.poll() is None:
                x.kill()
                x.wait()
    # A process that renames itself to a name full of ')' and field-like
    # text is still the one registered.
    code = ("import sys\nsys.stdin.readline()\nopen('/proc/self/comm', 'w').write(') 1 2 (x y) z')\n"
            "s = open('/proc/self/stat').read()\n"
            "print(s[s.index('(') + 1:s.rindex(')')], flush=True)\n"
            "sys.stdin.readline()\n")
    r = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    try:
        is_eq(d.post("/v1/watch/tasks", dict(reg, job_id=9101, pid=r.pid))[0], 200,
              "renamed: a live process registered")
        samples_pass(d, 2)
        r.stdin.write("rename\n")
        r.stdin.flush()
        is_eq(r.stdout.readline().strip(), ") 1 2 (x y) z", "renamed: it is now ') 1 2 (x y) z'")
        samples_pass(d, 5)
        ok(task_of(d, 9101).get("exited") is False and
           "job 9101.0 task 0 rank 0 pid %d is gone" % r.pid not in d.log_text(),
           "renamed: still the registered process over 5 samples")
    finally:
        r.kill()
        r.wait()
    # A pid without a stat line at registration: kill(pid, 0) alone.
    with open("/proc/sys/kernel/pid_max") as f:
        nopid = int(f.read()) + 5
    is_eq(d.post("/v1/watch/tasks", dict(reg, job_id=9102, pid=nopid))[0], 200,
          "no start time: a pid above pid_max registered")
    like(d.log_text(), "job 9102.0 task 0 pid %d: no start time (/proc/%d/stat: No such file or "
         "directory): its end is seen by kill(pid, 0) alone" % (nopid, nopid),
         "no start time: registered as before, saying so")
    ok(wait_for(lambda: task_of(d, 9102).get("exited"), 10, 0.1),
       "no start time: then gone by kill(pid, 0)")


def step_decl(nodes, world=8, tp=2, cp=1, ep=1, dp=2, pp=2):
    return {"world": world, "layout": {"tp": tp, "cp": cp, "ep": ep, "dp": dp, "pp": pp},
            "nodes": nodes}


class FullWorld(World):
    """The records' directory on a tmpfs of one page, that page taken:
    as /dev/shm full at the step's start."""
    mounted = False

    def prepare(self, wdir):
        self.mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4k,mode=0700",
                                       "tmpfs", wdir], capture_output=True).returncode == 0
        if self.mounted:
            with open(os.path.join(wdir, "filler"), "wb") as f:
                f.write(b"\0" * 4096)

    def record(self, r):
        return os.path.join(self.wdir, "plw-%d.0.%d.%d" % (self.job, r, self.procs[r].pid))

    def unmount(self):
        if self.mounted:
            subprocess.run(["umount", "-l", self.wdir], capture_output=True)


def shm_full(d, tmp, worlds):
    """The records' filesystem full at the step's start: each rank's hook
    turns itself off (it reserves its record's blocks first: no SIGBUS
    later), the job runs to its end, and layoutd says which ranks are
    unwatched and why."""
    f = FullWorld(tmp, 9300, ["--steps", "200", "--compute-us", "500"])
    worlds.append(f)
    try:
        if not f.mounted:
            skip("a full filesystem for the records", "cannot mount a tmpfs here")
            return
        is_eq(f.register(d), [200] * WORLD, "full: every rank registered")
        rcs = [p.wait(timeout=60) for p in f.procs]
        is_eq(rcs, [0] * WORLD, "full: every rank ran its 200 steps and exited 0 (the job runs)")
        with open(os.path.join(f.dir, "err.0")) as e:
            err0 = e.read()
        like(err0, "off: cannot size the record", "full: the hook said on the rank's stderr that "
             "it turned itself off")
        st = d.step(9300) or {}
        why = [t.get("refused") or "" for t in st.get("tasks", [])]
        ok(len(why) == WORLD and all("its filesystem has" in w and "full, so the rank's NCCL hook "
                                     "turned itself off (unwatched; the job runs)" in w
                                     for w in why),
           "full: layoutd names each rank unwatched and why: %s" % (why[0][:300] if why else st))
        for k in range(WORLD):
            d.post("/v1/watch/exit", {"job_id": 9300, "step_id": 0, "task": k, "status": 0})
    finally:
        f.unmount()


def registration_keys(d, tmp):
    """The optional keys: gpu, nic and the step (layout and node order) the
    node's first task brings; strict, bounded, and one step per job step."""
    sleeper = subprocess.Popen(["sleep", "600"])
    try:
        reg = {"step_id": 0, "pid": sleeper.pid, "uid": 0, "node": "node1",
               "record": os.path.join(tmp, "no-record"),
               "coords": {"tp": 0, "cp": 0, "ep": 0, "dp": 0, "pp": 0}}

        def post(job, task, rank, **kw):
            return d.post("/v1/watch/tasks", dict(reg, job_id=job, task=task, rank=rank, **kw))

        r = post(9200, 0, 0, gpu=3, nic="mlx5_2", step=step_decl(["node1", "node2"]))
        is_eq(r[0], 200, "a registration with gpu, nic and step is accepted: %s" % r[2][:200])
        st = d.step(9200) or {}
        t0 = (st.get("tasks") or [{}])[0]
        is_eq((t0.get("gpu"), t0.get("nic")), (3, "mlx5_2"), "GET /v1/watch shows its gpu and nic")
        is_eq(st.get("step"), {"world": 8, "layout": {"tp": 2, "cp": 1, "ep": 1, "dp": 2,
                                                      "pp": 2}, "nodes": 2, "leader": "node1"},
              "and the step: layout, node count, leader (nodes[0])")
        r = post(9200, 1, 1, coords={"tp": 1, "cp": 0, "ep": 0, "dp": 0, "pp": 0})
        t1 = [t for t in (d.step(9200) or {}).get("tasks", []) if t["task"] == 1]
        ok(r[0] == 200 and t1 and t1[0]["gpu"] == -1 and t1[0]["nic"] == "",
           "a later task without them: gpu -1, nic \"\" (%d)" % r[0])
        is_eq(post(9200, 1, 1, coords={"tp": 1, "cp": 0, "ep": 0, "dp": 0, "pp": 0},
                   step=step_decl(["node1", "node2"]))[0], 200,
              "the same step again (a task registered again): accepted")
        for kw, want, status, what in (
                ({"step": step_decl(["node1", "node3"])}, "nodes[1] node3, not node2", 409,
                 "another node order"),
                ({"step": step_decl(["node1", "node2"], world=16, dp=4)}, "world 16, not 8", 409,
                 "another world"),
                ({"rank": 1}, "rank 1 is task 1's already", 409, "a rank a second task claims"),
                ({"rank": 8}, "rank 8 is not below the step's world 8", 422, "a rank beyond the world"),
                ({"coords": {"tp": 2, "cp": 0, "ep": 0, "dp": 0, "pp": 0}},
                 "coords.tp = 2 is not below the step's tp = 2", 422, "a coordinate beyond the layout"),
                ({"node": "node2"}, "its tasks here are node node1's", 422, "another node")):
            args = dict({"rank": 2}, **kw)
            r = post(9200, 2, args.pop("rank"), **args)
            ok(r[0] == status and want in r[2], "%s: %d, saying '%s' (%d: %s)" %
               (what, status, want, r[0], r[2][:300]))
        # A step brought after tasks it does not fit.
        is_eq(post(9201, 0, 5)[0], 200, "a task without a step")
        r = post(9201, 1, 0, step=step_decl(["node1"], world=4, pp=1))
        ok(r[0] == 409 and "disagrees with task 0 registered before: rank 5 is not below" in r[2],
           "a step the tasks registered before do not fit: 409 (%s)" % r[2][:300])
        r = post(9202, 0, 0, step=step_decl(["node2", "node3"]))
        ok(r[0] == 422 and "node node1 is not among the step's 2 nodes" in r[2],
           "a step whose nodes do not hold this task's node: 422 (%s)" % r[2][:200])
        for kw, want in (
                ({"gpu": -2}, "gpu = -2: want the node's GPU index, 0 to 1023, or -1"),
                ({"gpu": 1024}, "gpu = 1024"),
                ({"nic": "n" * 32}, "want a NIC name of at most 31 printable ASCII bytes"),
                ({"nic": "mlx5\n0"}, "want a NIC name"),
                ({"step": step_decl(["node1"], world=7)}, "step.world = 7: want tp * cp * dp * pp = 8"),
                ({"step": step_decl(["node1"], tp=0)}, "step.layout.tp = 0: want 1 to"),
                ({"step": step_decl(["node1"], ep=9)}, "step.layout.ep = 9: want at most the world, 8"),
                ({"step": step_decl([])}, "step.nodes: want an array of 1 to 65536 node names"),
                ({"step": step_decl(["node1", "node1"])}, "step.nodes: node1 is there twice"),
                ({"step": step_decl(["node1", "n" * 64])}, "step.nodes[1] = nnnn"),
                ({"step": step_decl(["node1", "a b"])}, "step.nodes[1] = a b: want a node name"),
                ({"step": step_decl(["node1", 7])}, "step.nodes[1] = (not a string)"),
                ({"step": step_decl(["node1"] + ["n%d" % i for i in range(65536)])},
                 "want an array of 1 to 65536")):
            r = post(9203, 0, 0, **kw)
            ok(r[0] == 422 and want in r[2], "%s: refused, saying '%s' (%d: %s)" %
               (json.dumps(kw)[:60], want, r[0], r[2][:200]))
        for kw, want in (({"step": dict(step_decl(["node1"]), extra=1)}, "extra"),
                         ({"step": {"world": 8, "layout": {"tp": 8}, "nodes": ["node1"]}}, "step"),
                         ({"gpu": "0"}, "Expected integer, got string")):
            r = post(9203, 0, 0, **kw)
            ok(r[0] == 400 and want in r[2], "%s: 400 naming '%s' (%d: %s)" %
               (json.dumps(kw)[:60], want, r[0], r[2][:200]))
        ok(d.step(9203) is None, "a refused registration leaves no step behind")
        big = ["node1"] + ["n%05d" % i for i in range(65535)]
        t0 = time.monotonic()
        r = post(9204, 0, 0, step=step_decl(big, world=65536, tp=8, dp=4096, pp=2))
        is_eq(r[0], 200, "a step of 65536 nodes is accepted (%.2f s)" % (time.monotonic() - t0))
        is_eq((d.step(9204) or {}).get("step", {}).get("nodes"), 65536, "and shown with its 65536 nodes")
        # peer_listen = no (the default): a step of this node alone is led
        # and judged here; one of several nodes is not, and that is said.
        is_eq(post(9205, 0, 0, gpu=0, step=step_decl(["node1"], world=1, tp=1, dp=1, pp=1))[0],
              200, "a step of this node alone")
        v = wait_for(lambda: (lambda r: r[1] if r[0] == 200 else None)(
            d.get_json("/v1/watch/step?job=9205&step=0")), 10, 0.1)
        ok(v and v["role"] == "leader" and [(r["rank"], r["node"]) for r in v["ranks"]] ==
           [(0, "node1")] and [(n["name"], n["state"]) for n in v["nodes"]] == [("node1", "self")],
           "peer_listen = no: led and judged here all the same (%s)" % json.dumps(v)[:200])
        st, j = d.get_json("/v1/watch/step?job=9200&step=0")
        ok(st == 404 and "this node (node1) is its leader but leads it not (yet): peer_listen "
           "= no, and the step spans several nodes" in str(j),
           "a step of two nodes is not led here: 404 saying why (%s)" % str(j)[:200])
        like(d.log_text(), "job 9200.0 spans 2 nodes, but peer_listen = no: this node neither "
             "sends its summary nor leads the step", "and the log says why, once")
        # A node's tasks at once (the plugin sends them so, off the tasks'
        # start): each registered on its own, one refused keeps none out.
        tasks = [dict(reg, job_id=9206, task=k, rank=k,
                      coords={"tp": k % 2, "cp": 0, "ep": 0, "dp": 0, "pp": k // 2},
                      **({"step": step_decl(["node1"], world=4, dp=1)} if k == 0 else {}))
                 for k in range(4)]
        r = d.post("/v1/watch/tasks", {"tasks": tasks})
        st = d.step(9206) or {}
        ok(r[0] == 200 and sorted(t["task"] for t in st.get("tasks", [])) == [0, 1, 2, 3],
           "a batch of 4 tasks: all registered (%d: %s)" % (r[0], r[2][:200]))
        bad = [dict(tasks[0], job_id=9207), dict(tasks[1], job_id=9207, rank=9),
               dict(tasks[2], job_id=9207)]
        r = d.post("/v1/watch/tasks", {"tasks": bad})
        st = d.step(9207) or {}
        ok(r[0] == 422 and "task 2 of 3: " in r[2] and "rank 9 is not below the step's world 4"
           in r[2] and "(2 of 3 registered)" in r[2] and
           sorted(t["task"] for t in st.get("tasks", [])) == [0, 2],
           "a batch with one bad task: 422 naming it by its place, the other two registered "
           "(%d: %s)" % (r[0], r[2][:300]))
        for body, want in (({"tasks": []}, "an array of 1 to"),
                           ({"tasks": [tasks[0]] * 17}, "an array of 1 to 16 task objects"),
                           ({"tasks": {}}, "an array of 1 to")):
            r = d.post("/v1/watch/tasks", body)
            ok(r[0] == 422 and want in r[2], "a batch %s: 422 (%s)" % (json.dumps(body)[:40],
                                                                     r[2][:200]))
        r = d.post("/v1/watch/tasks", {"tasks": [tasks[0]], "extra": 1})
        ok(r[0] == 400, "a batch object with another key is read as one task and refused: %d"
           % r[0])
        for job in (9200, 9201, 9204, 9205, 9206, 9207):
            for task in (0, 1, 2, 3):
                d.post("/v1/watch/exit", {"job_id": job, "step_id": 0, "task": task, "status": 0})
    finally:
        sleeper.kill()
        sleeper.wait()


def conf_checks(tmp, mapf):
    """The two keys: bad values refused naming what is accepted; --help
    lists them."""
    for line, want in (("watch_leftover_s = 5", "watch_leftover_s = 5: expected a whole number "
                        "from 10 to 604800"),
                       ("watch_dir = dev/shm/x", "watch_dir = dev/shm/x: expected an absolute "
                        "directory path other than /"),
                       ("watch_dir = /dev/shm/../tmp", "without '.', '..' or empty parts"),
                       ("watch_dir = /", "other than /")):
        conf = os.path.join(tmp, "bad.conf")
        with open(conf, "w") as f:
            f.write("map = %s\nhwloc_check = no\nnode_name = node1\n%s\n" % (mapf, line))
        p = subprocess.run([LAYOUTD, "-f", conf, "--check-config"], capture_output=True,
                           text=True, timeout=60)
        ok(p.returncode == 1 and want in p.stderr, "config '%s': refused, saying '%s' (%s)" %
           (line, want, p.stderr.strip()[-200:]))
    p = subprocess.run([LAYOUTD, "--help"], capture_output=True, text=True, timeout=60)
    ok("watch_dir" in p.stdout and "watch_leftover_s" in p.stdout,
       "--help lists watch_dir and watch_leftover_s")


def main():
    if not DRIVER or not HOOK or not os.path.exists(HOOK):
        skip("layoutd watch", "NCCL_DRIVER / PL_NCCL_HOOK not set")
        return done()
    if os.geteuid() != 0:
        skip("layoutd watch", "registrations are root's: run as root")
        return done()
    tmp = tempfile.mkdtemp(prefix="ld-watch.")
    os.chmod(tmp, 0o755)
    worlds = []
    d = None
    try:
        mapf = watchlib.lab_map(tmp)
        if not mapf:
            return done()
        conf_checks(tmp, mapf)
        sock = os.path.join(tmp, "ld.sock")
        conf = os.path.join(tmp, "ld.conf")
        wd = os.path.join(tmp, "watchdir")
        os.mkdir(wd, 0o755)
        with open(conf, "w") as f:
            f.write("map = %s\nsocket = %s\nsocket_mode = 0666\nnode_name = node1\n"
                    "hwloc_check = no\nwatch_interval_ms = 200\nhang_threshold_s = %d\n"
                    "watch_max_steps = 8\nwatch_max_tasks = 16\nwatch_dir = %s\n"
                    "watch_leftover_s = %d\nstate_dir = %s\n" %
                    (mapf, sock, THRESHOLD, wd, LEFTOVER, os.path.join(tmp, "state")))
        # a leftover from before the daemon started
        at_start = step_dir(wd, "9000.0", ["plw-9000.0.0.%d" % dead_pid()])
        d = watchlib.start_checked(conf, os.path.join(tmp, "ld.log"), sock)
        if not d.ok:
            return done()
        w0 = d.watch()
        ok(w0 is not None and w0["interval_ms"] == 200 and w0["hang_threshold_s"] == THRESHOLD
           and w0["steps"] == [] and w0["watch_dir"] == wd and w0["leftover_s"] == LEFTOVER,
           "GET /v1/watch: the settings, no step yet")
        ok(not os.path.lexists(at_start) and (w0 or {}).get("leftovers_removed") == 1,
           "a leftover from before the start is swept at start, and counted")
        bad = d.post("/v1/watch/tasks", {"job_id": 1, "step_id": 0, "task": 0, "rank": 0,
                                         "pid": 1, "uid": 0, "node": "n", "record": "/x",
                                         "coords": {"tp": 0, "cp": 0, "ep": 0, "dp": 0,
                                                    "pp": 0}, "extra": 1})
        ok(bad[0] == 400 and "extra" in bad[2], "an unknown key is refused: %s" % bad[2][:200])
        st, text = as_nobody(sock, "POST", "/v1/watch/tasks", json.dumps(
            {"job_id": 1, "step_id": 0, "task": 0, "rank": 0, "pid": 1, "uid": NOBODY,
             "node": "n", "record": "/x", "coords": {"tp": 0, "cp": 0, "ep": 0, "dp": 0,
                                                      "pp": 0}}))
        is_eq(st, 403, "a registration from a user (not root) is refused")
        is_eq(as_nobody(sock, "POST", "/v1/watch/exit", json.dumps(
            {"job_id": 1, "step_id": 0, "task": 0, "status": 0}))[0], 403,
            "an exit from a user (not root) is refused")

        # --- healthy ---
        h = World(tmp, 101, ["--steps", "400", "--compute-us", "2000"])
        worlds.append(h)
        is_eq(h.register(d), [200] * WORLD, "healthy: every rank registered")
        seen = []

        def healthy_sampled():
            s = d.step(101)
            if s:
                seen.append(s)
            return s and all(t["record_state"] == "ok" and t["comms"] for t in s["tasks"]) \
                and len(seen) >= 10
        wait_for(healthy_sampled, 30, 0.3)
        last = seen[-1] if seen else None
        running = [s for s in seen if all(not t["exited"] for t in s["tasks"])]
        ok(last and all(t["record_state"] == "ok" for t in last["tasks"]) and
           all(len(t["comms"]) >= 2 for t in last["tasks"]),
           "healthy: every record read, each rank in its TP and DP communicators")
        ok(running and all(s["verdicts"] == [] for s in running),
           "healthy: no verdict in %d samples while it runs" % len(running))
        c0 = max(last["tasks"][0]["comms"], key=lambda c: c["entered"]) if last else {}
        ok(c0.get("entered", 0) > 0 and c0.get("last_entered", {}).get("func") and
           c0.get("completed") is not None, "a communicator shows the last collective "
           "entered and the count completed: %s" % json.dumps(c0)[:300])
        # a user sees only their own jobs
        st, text = as_nobody(sock, "GET", "/v1/watch")
        ok(st == 200 and json.loads(text)["steps"] == [],
           "a user other than the owner sees none of root's watched steps")
        h.close(d)

        # --- exit: rank 1 exits with status 7 at step 3 ---
        e = World(tmp, 102, ["--steps", "1000", "--compute-us", "1000", "--fault=exit:1:3:7"])
        worlds.append(e)
        is_eq(e.register(d), [200] * WORLD, "exit: every rank registered")
        rc1 = e.procs[1].wait(timeout=30)
        is_eq(rc1, 7, "exit: the driver's rank 1 exits 7")
        v = verdicts_when(d, 102, lambda v: v and v[0]["kind"] == "exited", 10)
        ok(v and v[0]["kind"] == "exited" and v[0]["rank"] == 1 and v[0]["exit_status"] is None,
           "exit: the gone pid is rank 1 exited, status unknown: %s" % json.dumps(v)[:300])
        is_eq(d.post("/v1/watch/exit", {"job_id": 102, "step_id": 0, "task": 1,
                                        "status": 7 << 8})[0], 200, "exit: the status given")
        v = verdicts_when(d, 102, lambda v: v and v[0].get("exit_status") == 7 << 8, 10)
        ok(v and v[0]["kind"] == "exited" and v[0]["rank"] == 1 and
           v[0]["exit_status"] == 7 << 8,
           "exit: rank 1 named first with wait status 0x700: %s" % json.dumps(v)[:300])
        like(d.log_text(), "verdict: job 102.0 rank 1", "exit: the verdict is logged")
        e.close(d)

        # --- stop: rank 2 stops entering at step 3 ---
        s = World(tmp, 103, ["--steps", "1000", "--compute-us", "1000", "--fault=stop:2:3"])
        worlds.append(s)
        is_eq(s.register(d), [200] * WORLD, "stop: every rank registered")
        v = verdicts_when(d, 103, lambda v: any(x["kind"] == "not-entered" for x in v),
                          THRESHOLD + 20)
        ne = [x for x in v if x["kind"] == "not-entered"]
        ok(ne and ne[0]["rank"] == 2 and ne[0]["for_s"] > THRESHOLD,
           "stop: rank 2 named as not entering, for more than %d s: %s" %
           (THRESHOLD, json.dumps(v)[:400]))
        ok(not any(x["kind"] == "exited" for x in v), "stop: no rank named as exited")
        like(d.log_text(), "verdict: job 103.0 rank 2", "stop: the verdict is logged")
        # layoutctl watch shows the node's view: a table, and the JSON of the job.
        ctl = os.environ["LAYOUTCTL"]
        w = subprocess.run([ctl, "watch", "103", "--local", "--once", "--socket", d.sock],
                           capture_output=True, text=True, timeout=30)
        rows = [l.split() for l in w.stdout.splitlines() if l[:5].strip().isdigit()]
        ok(w.returncode == 0 and "not-entered: rank 2 " in w.stdout and "COLLECTIVE" in w.stdout,
           "layoutctl watch --once: the table names rank 2 as not entering (rc %d): %s"
           % (w.returncode, (w.stdout + w.stderr)[-600:]))
        is_eq(sorted(set(int(r[0]) for r in rows)), list(range(WORLD)),
              "layoutctl watch --once: a row for every rank")
        st = d.step(103)
        is_eq([t.get("record") for t in (st or {}).get("tasks", [])],
              [s.record(r) for r in range(WORLD)],
              "stop: /v1/watch shows each task's registered record path (and its node apart)")
        ok(any(r[0] != "2" and "in-flight" in r for r in rows),
           "layoutctl watch --once: rank 2's peers are in flight")
        diag("layoutctl watch 103 --once:\n" + w.stdout)
        w = subprocess.run([ctl, "watch", "103.0", "--local", "--json", "--socket", d.sock],
                           capture_output=True, text=True, timeout=30)
        try:
            j = json.loads(w.stdout)
        except ValueError:
            j = None
        ok(w.returncode == 0 and j and j[0]["job_id"] == 103 and len(j[0]["tasks"]) == WORLD
           and any(v["kind"] == "not-entered" and v["rank"] == 2 for v in j[0]["verdicts"]),
           "layoutctl watch --json: the job's step, its tasks and the verdict")
        w = subprocess.run([ctl, "watch", "99999", "--local", "--once", "--socket", d.sock],
                           capture_output=True, text=True, timeout=30)
        ok(w.returncode == 1 and "no step of job 99999" in w.stderr,
           "layoutctl watch of a job not watched here: exit 1, saying so")
        w = subprocess.run([ctl, "watch", "1x", "--once", "--socket", d.sock],
                           capture_output=True, text=True, timeout=30)
        ok(w.returncode == 2 and "expected JOBID or JOBID.STEP" in w.stderr,
           "layoutctl watch of a malformed job id: usage error naming what is accepted")
        s.close(d)
        wait_for(lambda: "cleared: job 103.0 rank 2" in d.log_text(), 10)
        like(d.log_text(), "cleared: job 103.0 rank 2",
             "stop: the verdict clears once the step has ended")

        # --- stuck: rank 0's collective never completes on the GPU at step 3 ---
        k = World(tmp, 104, ["--steps", "1000", "--compute-us", "1000", "--fault=stuck:0:3"])
        worlds.append(k)
        is_eq(k.register(d), [200] * WORLD, "stuck: every rank registered")
        v = verdicts_when(d, 104, lambda v: any(x["kind"] == "gpu-stuck" for x in v),
                          THRESHOLD + 20)
        gs = [x for x in v if x["kind"] == "gpu-stuck"]
        ok(gs and any(x["rank"] == 0 for x in gs) and all(x["func"] for x in gs) and
           gs[0]["for_s"] > THRESHOLD,
           "stuck: the collective stuck on the GPU, rank 0 among those named: %s" %
           json.dumps(v)[:400])
        k.close(d)

        # --- hostile records: a symlink, a foreign owner ---
        a = World(tmp, 105, ["--steps", "1000", "--compute-us", "1000"])
        worlds.append(a)
        real = a.record(0)
        link = os.path.join(a.wdir, "link")
        os.symlink(real, link)
        foreign = os.path.join(a.wdir, "foreign")
        shutil.copyfile(real, foreign)
        os.chmod(foreign, 0o600)
        os.chown(foreign, NOBODY, NOBODY)
        base = {"job_id": 105, "step_id": 0, "rank": 0, "pid": a.procs[0].pid, "uid": 0,
                "node": "node1", "coords": {"tp": 0, "cp": 0, "ep": 0, "dp": 0, "pp": 0}}
        is_eq(d.post("/v1/watch/tasks", dict(base, task=0, record=link))[0], 200,
              "a symlinked record is registered (it is read later)")
        is_eq(d.post("/v1/watch/tasks", dict(base, task=1, record=foreign))[0], 200,
              "a foreign record is registered")

        def refused():
            st = d.step(105)
            return st and [t["record_state"] for t in st["tasks"]] == ["refused", "refused"]
        ok(wait_for(refused, 10), "both records refused")
        st = d.step(105) or {"tasks": [{}, {}]}
        like(st["tasks"][0].get("refused") or "", "symbolic link", "the symlink's reason shown")
        like(st["tasks"][1].get("refused") or "", "owned by uid %d, want uid 0" % NOBODY, "the foreign owner's reason shown")
        time.sleep(1.0)
        lt = d.log_text()
        is_eq(lt.count("job 105.0 task 0 rank 0: record refused"), 1,
              "the symlink's refusal is logged once")
        is_eq(lt.count("job 105.0 task 1 rank 0: record refused"), 1,
              "the foreign record's refusal is logged once")
        ok(d.alive(),
           "the daemon is alive and serving")
        # A record its owner keeps shrinking and restoring: a read that
        # finds it whole at the check and shrunk under the mapping gets
        # SIGBUS, which must cost neither the daemon nor a descriptor.
        shrink = os.path.join(a.wdir, "shrink")
        shutil.copyfile(real, shrink)
        os.chmod(shrink, 0o600)
        size = os.path.getsize(shrink)
        is_eq(d.post("/v1/watch/tasks", dict(base, task=2, record=shrink))[0], 200,
              "a record to shrink is registered")
        fd = os.open(shrink, os.O_RDWR)
        end = time.monotonic() + 6
        while time.monotonic() < end:
            os.ftruncate(fd, 0)
            os.ftruncate(fd, size)
        os.close(fd)
        time.sleep(0.5)
        if not ok(d.alive(), "a record shrunk and restored while sampled: the daemon "
                  "is alive and serving"):
            diag(d.log_text()[-2000:])
            return done()
        fds1 = open_in(d.p.pid, a.wdir)
        n_bus = (d.watch() or {}).get("records_shrunk")
        diag("reads cut short by SIGBUS: %s (a read may also see the record truncated "
             "at its check)" % n_bus)
        is_eq(fds1, [], "and holds no descriptor of the record or its directory")
        with open("/proc/%d/maps" % d.p.pid) as f:
            maps = [m for m in f if shrink in m]
        is_eq(maps, [], "and keeps no mapping of the record")
        a.close(d)

        # --- leftovers in watch_dir, and pids reused ---
        leftovers(d, tmp, wd, 1)
        pid_reuse(d, tmp)
        registration_keys(d, tmp)
        shm_full(d, tmp, worlds)

        d.p.send_signal(signal.SIGTERM)
        rc = d.p.wait(timeout=120)
        if d.wrapper:
            is_eq(rc, 0, "valgrind: no errors, no definite leaks, exit 0 after SIGTERM")
        else:
            is_eq(rc, 0, "exit 0 after SIGTERM")
            skip("valgrind run", d.why_not)
        if rc != 0:
            diag(d.log_text()[-3000:])
    finally:
        for w in worlds:
            for p in w.procs:
                if p.poll() is None:
                    p.kill()
                    p.wait()
        if d and d.p.poll() is None:
            d.p.kill()
            d.p.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    return done()


if __name__ == "__main__":
    sys.exit(main())
