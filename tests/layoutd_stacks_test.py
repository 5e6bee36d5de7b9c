#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The culprit's stacks on one node: a layoutd leads a one-node step of
real nccl_driver ranks (the NCCL hook's records), one rank stops entering
its collectives, and the leader's own node captures it: the file
STATE_DIR/JOB.STEP/stack-rankR.txt names the node, the step, the rank and
its pid, the tool and its status, and holds frames of nccl_driver's own
code (sleep_us, train), with eu-stack and with gdb; no file for the
healthy ranks; GET /v1/watch/step names the file; layoutctl watch --stack
prints it.  A tool that runs past stack_timeout_s is killed with its
process group, the file says so and the daemon goes on.  A culprit whose
pid was handed to another process is never attached."""
import glob
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

from taplib import LAYOUTD, diag, done, is_eq, like, ok, skip, wait_for
import watchlib
from watchlib import DRIVER, HOOK, Daemon, World

THRESHOLD = 5
FRAMES = re.compile(r"\b(sleep_us|train)\b")


def stack_file(state, job, rank):
    return os.path.join(state, "node1", "%d.0" % job, "stack-rank%d.txt" % rank)


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def header(text):
    """The header's key: value lines."""
    h = {}
    for line in text.split("\n\n", 1)[0].splitlines():
        if ": " in line and not line.startswith("#"):
            k, v = line.split(": ", 1)
            h[k] = v
    return h


def proc_state(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def same_pid_again(pid):
    """A new process given pid through ns_last_pid (the next fork gets the
    pid after it; another fork may come first, hence the tries), or None."""
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


def write_conf(path, mapf, sock, state, wd, **more):
    keys = dict(map=mapf, socket=sock, socket_mode="0666", node_name="node1", hwloc_check="no",
                watch_interval_ms=200, hang_threshold_s=THRESHOLD, watch_dir=wd,
                state_dir=os.path.join(state, "%n"))
    keys.update(more)
    with open(path, "w") as f:
        for k, v in keys.items():
            f.write("%s = %s\n" % (k, v))


def hang(d, tmp, job, rank, state):
    """A step whose rank `rank` stops entering at step 3; its file, once
    written (None after the threshold and 30 s)."""
    w = World(tmp, job, ["--steps", "100000", "--compute-us", "1000",
                         "--fault=stop:%d:3" % rank])
    sts = w.register(d)
    path = stack_file(state, job, rank)
    got = wait_for(lambda: os.path.exists(path), THRESHOLD + 30, 0.1)
    return w, sts, path if got else None


def captured(d, w, path, rank, tool, what):
    text = read(path)
    h = header(text)
    pid = w.procs[rank].pid
    ok(path is not None, "%s: %s written" % (what, path))
    is_eq((h.get("node"), h.get("step"), h.get("rank"), h.get("pid")),
          ("node1", "%d.0" % w.job, str(rank), str(pid)),
          "%s: the header names node1, the step, rank %d and its pid %d" % (what, rank, pid))
    ok(h.get("finding", "").startswith("not-entered: ") and h.get("when", "").endswith("Z"),
       "%s: the finding and when (%s; %s)" % (what, h.get("finding"), h.get("when")))
    like(h.get("tool", ""), tool, "%s: the tool" % what)
    is_eq(h.get("status"), "exit code 0", "%s: the tool's status" % what)
    body = text.split("\n\n", 1)[1] if "\n\n" in text else ""
    ok(FRAMES.search(body), "%s: a frame of nccl_driver's own code (sleep_us or train)" % what)
    if not FRAMES.search(body):
        diag(text[:3000])
    others = [p for p in glob.glob(os.path.join(os.path.dirname(path or "/none"), "*"))
              if p != path]
    is_eq(others, [], "%s: no file for the healthy ranks" % what)
    st = proc_state(pid)
    ok(st in ("S", "R", "D"), "%s: the rank runs on after the capture (state %s)" % (what, st))
    mode = os.stat(path).st_mode & 0o777 if path else 0
    is_eq(oct(mode), oct(0o640), "%s: the file's mode" % what)
    return text


def main():
    if not DRIVER or not HOOK or not os.path.exists(HOOK):
        skip("layoutd stacks", "NCCL_DRIVER / PL_NCCL_HOOK not set")
        return done()
    if os.geteuid() != 0:
        skip("layoutd stacks", "registrations and ptrace are root's: run as root")
        return done()
    if not shutil.which("eu-stack") or not shutil.which("gdb"):
        skip("layoutd stacks", "eu-stack and gdb are needed (scripts/deps: elfutils, gdb)")
        return done()
    tmp = tempfile.mkdtemp(prefix="ld-stacks.")
    os.chmod(tmp, 0o755)
    worlds, d = [], None
    try:
        mapf = watchlib.lab_map(tmp)
        if not mapf:
            return done()
        sock, conf = os.path.join(tmp, "ld.sock"), os.path.join(tmp, "ld.conf")
        state, wd = os.path.join(tmp, "state"), os.path.join(tmp, "watchdir")
        os.mkdir(wd, 0o755)
        log = os.path.join(tmp, "ld.log")
        write_conf(conf, mapf, sock, state, wd)
        d = Daemon(["-f", conf], log, [], sock)
        if not ok(d.up and d.p.poll() is None, "layoutd starts"):
            diag(d.log_text())
            return done()

        # eu-stack, found in PATH (stack_tool = auto)
        t0 = time.monotonic()
        w, sts, path = hang(d, tmp, 201, 2, state)
        worlds.append(w)
        is_eq(sts, [200] * w.world, "eu-stack: every rank registered")
        diag("eu-stack: the file %.1f s after the step started" % (time.monotonic() - t0))
        text = captured(d, w, path, 2, "eu-stack -i -p %d" % w.procs[2].pid, "eu-stack")
        diag(text[:1500])
        view = d.view(201) or {}
        files = [f.get("stack_files") for f in view.get("findings", [])
                 if f.get("kind") == "not-entered"]
        is_eq(files[:1], [["node1:" + stack_file(state, 201, 2)]],
              "GET /v1/watch/step: the not-entered finding names its stack file")
        ctl = os.environ["LAYOUTCTL"]
        p = subprocess.run([ctl, "watch", "201", "--stack", "2", "--state-dir",
                            os.path.join(state, "%n")], env=dict(os.environ, SLURMD_NODENAME="node1"),
                           capture_output=True, text=True, timeout=30)
        ok(p.returncode == 0 and p.stdout == text, "layoutctl watch 201 --stack 2 prints the "
           "file (rc %d): %s" % (p.returncode, p.stderr.strip()))
        p = subprocess.run([ctl, "watch", "201", "--stack", "3", "--state-dir",
                            os.path.join(state, "%n")], env=dict(os.environ, SLURMD_NODENAME="node1"),
                           capture_output=True, text=True, timeout=30)
        ok(p.returncode == 1 and "stack-rank3.txt" in p.stderr,
           "layoutctl watch --stack of a rank not captured: exit 1 naming the file (%s)"
           % p.stderr.strip())
        like(d.log_text(), "stacks: job 201.0 rank 2 pid %d" % w.procs[2].pid,
             "eu-stack: the capture is logged")
        w.close(d)

        # gdb (stack_tool = gdb, by a reload)
        write_conf(conf, mapf, sock, state, wd, stack_tool="gdb")
        d.p.send_signal(signal.SIGHUP)
        wait_for(lambda: d.log_text().count("reload") > 0, 10)
        w, sts, path = hang(d, tmp, 202, 1, state)
        worlds.append(w)
        captured(d, w, path, 1, "gdb -batch -nx -p %d -ex 'thread apply all bt'" % w.procs[1].pid,
                 "gdb")
        w.close(d)

        # a pid handed to another process before the finding: never attached
        w = World(tmp, 204, ["--steps", "100000", "--compute-us", "1000", "--fault=stop:2:3"])
        worlds.append(w)
        w.register(d)
        time.sleep(1.5)
        os.kill(d.p.pid, signal.SIGSTOP)
        q = None
        try:
            old = w.procs[2].pid
            w.procs[2].kill()
            w.procs[2].wait()
            time.sleep(0.05)
            q = same_pid_again(old)
        finally:
            os.kill(d.p.pid, signal.SIGCONT)
        if q is None:
            skip("pid reuse", "the pid could not be had again through ns_last_pid")
        else:
            time.sleep(THRESHOLD + 4)
            ok(not os.path.exists(stack_file(state, 204, 2)) and
               "stacks: job 204.0 rank 2 pid" not in d.log_text(),
               "pid reuse: no capture of the pid another process holds now")
            is_eq(proc_state(q.pid), "S", "pid reuse: that process was never stopped")
            q.kill()
            q.wait()
        w.close(d)

        # a tool that hangs: killed with its group after stack_timeout_s
        d.stop()
        fake = os.path.join(tmp, "bin")
        os.mkdir(fake)
        pidf = os.path.join(tmp, "fake.pid")
        with open(os.path.join(fake, "eu-stack"), "w") as f:
            f.write("#!/bin/sh\necho \"fake eu-stack $*\"\n(sleep 60) &\necho $! > %s\n"
                    "exec sleep 60\n" % pidf)
        os.chmod(os.path.join(fake, "eu-stack"), 0o755)
        write_conf(conf, mapf, sock, state, wd, stack_tool="eu-stack", stack_timeout_s=1)
        env_path = os.environ["PATH"]
        os.environ["PATH"] = fake + os.pathsep + env_path
        try:
            d = Daemon(["-f", conf], log, [], sock)
        finally:
            os.environ["PATH"] = env_path
        w, sts, path = hang(d, tmp, 203, 2, state)
        worlds.append(w)
        h = header(read(path))
        like(h.get("status", ""), "killed after 1 s (stack_timeout_s)",
             "timeout: the file says the tool was killed after stack_timeout_s")
        like(read(path), "fake eu-stack -i -p %d" % w.procs[2].pid,
             "timeout: with what it printed before")
        grand = int(read(pidf) or 0)
        ok(grand and wait_for(lambda: proc_state(grand) in (None, "Z"), 5),
           "timeout: what the tool started is killed with it (its process group)")
        ok(d.alive(), "timeout: the daemon answers on")
        st, _, m = d.metrics()
        ok(st == 200 and re.search(r'^parallel_layout_stacks_total\{result="timed_out"\} 1$', m, re.M)
           and re.search(r'^parallel_layout_stacks_total\{result="written"\} 1$', m, re.M),
           "timeout: /metrics counts the capture written and the tool timed out")
        is_eq(proc_state(w.procs[2].pid), "S", "timeout: the rank runs on")
        w.close(d)
    finally:
        for w in worlds:
            for p in w.procs:
                if p.poll() is None:
                    p.kill()
                    p.wait()
        if d:
            rc = d.stop()
            is_eq(rc, 0, "layoutd exits 0 on SIGTERM")
        shutil.rmtree(tmp, ignore_errors=True)
    return done()


if __name__ == "__main__":
    main()
