#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""layoutd's cost of watching 8 ranks at 10 Hz (watch_interval_ms = 100),
against the same daemon idle, in one run.  The issue's budget: sampling 8
ranks x 6 communicators costs under 1 % of one core.

One real layoutd; its CPU time (on-CPU ns from /proc/PID/task/*/schedstat,
with utime+stime from /proc/PID/stat in clock ticks as a cross-check: a
tick is 10 % of the budget over a 10 s window, too coarse alone) is taken
over a window of W seconds in each phase:
  baseline  no step registered: the sampling timer still fires every 100 ms
            and finds nothing, so the difference is reading the records
            and detection, not the timer;
  watched   8 nccl_driver ranks (the NCCL hook writing their records)
            registered as slurmstepd registers them, running throughout.
nccl_driver makes one communicator per axis larger than 1, plus the world:
8 ranks give at most 4 (tp2,pp2,dp2), not 6.  So the watched phase runs
twice, with 4 and with 2 communicators per rank (tp8); the cost per
communicator is the slope between them, and the figure held against the
budget is the 4-communicator cost plus 2 more communicators at that slope
(never less than the measured 4).  bench_watch_read (C, no daemon, exactly
6 communicators) measures the reader and detection in-process against
plain pread of the same bytes.

A window counts only when both sides did the same work: layoutd sampled
W / 0.1 times (within 20 %) in every phase; in the watched phases every
task's record was read ("ok") with the expected communicators, every
rank's collectives advanced during the window, no rank exited before the
window closed, and every rank exits 0 afterwards.  GET /v1/watch is asked
just outside the CPU window (its answer is larger when steps are
watched).  Prints the figures, a JSON line and a one-line summary; exits 1
when the budget is missed, 2 when a check fails.  Needs root
(registrations are root's).

Usage: bench_watch.py [BUILDDIR [WINDOW_S]]
  Programs from $LAYOUTD, $LAYOUTCTL, $NCCL_DRIVER and $PL_NCCL_HOOK when
  set, else from BUILDDIR (default: the source tree's _build)."""
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

top = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(top, "tests"))
from taplib import http_request, wait_for  # noqa: E402

PROG = "bench_watch"
BUDGET = 0.01           # of one core
INTERVAL_MS = 100
RANKS = 8
WANT_COMMS = 6          # the communicators per rank
# (spec, axis sizes); nccl_driver orders the axes tp fastest, then cp, dp, pp.
LAYOUTS = (("tp2,pp2,dp2", {"tp": 2, "cp": 1, "dp": 2, "pp": 2}),
           ("tp8", {"tp": 8, "cp": 1, "dp": 1, "pp": 1}))
LAYERS = 2
COMPUTE_US = 5000       # a rank sleeps this per layer and pass
SETTLE_S = 1.0          # after the records are read, before the window
RUN_SPARE_S = 3.0       # the ranks' start, registration, first reads
JOB = 9100


def fail(msg):
    print("%s: %s" % (PROG, msg), file=sys.stderr, flush=True)
    sys.exit(2)


def programs():
    build = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.join(top, "_build")
    p = {"LAYOUTD": os.path.join(build, "daemon", "layoutd"),
         "LAYOUTCTL": os.path.join(build, "ctl", "layoutctl"),
         "NCCL_DRIVER": os.path.join(build, "tests", "nccl_driver"),
         "PL_NCCL_HOOK": os.path.join(build, "plugin", "nccl", ".libs",
                                      "libparallel-layout-nccl.so")}
    for k in p:
        p[k] = os.environ.get(k) or p[k]
        if not os.path.isfile(p[k]):
            fail("%s: no such file (%s; build it, or give the build directory as the "
                 "first argument)" % (p[k], k))
    return p


def cpu(pid):
    """(on-CPU seconds from schedstat or None, utime+stime ticks)."""
    with open("/proc/%d/stat" % pid) as f:
        s = f.read()
    rest = s[s.rindex(")") + 2:].split()     # field 3 (state) onwards
    ticks = int(rest[11]) + int(rest[12])    # fields 14 and 15
    ns = 0
    try:
        for t in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/schedstat" % (pid, t)) as f:
                ns += int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None, ticks
    return ns / 1e9, ticks


class Daemon:
    def __init__(self, exe, tmp, mapf):
        self.sock = os.path.join(tmp, "ld.sock")
        self.log = os.path.join(tmp, "ld.log")
        conf = os.path.join(tmp, "ld.conf")
        with open(conf, "w") as f:
            f.write("map = %s\nsocket = %s\nsocket_mode = 0600\nnode_name = node1\n"
                    "hwloc_check = no\nwatch_interval_ms = %d\nhang_threshold_s = 60\n"
                    "watch_max_steps = 8\nwatch_max_tasks = %d\n"
                    % (mapf, self.sock, INTERVAL_MS, RANKS))
        with open(self.log, "ab") as lf:
            self.p = subprocess.Popen([exe, "-f", conf], stdout=lf, stderr=subprocess.STDOUT,
                                      stdin=subprocess.DEVNULL)
        if not wait_for(self._answers, 30) or self.p.poll() is not None:
            fail("layoutd did not start:\n" + self.log_text()[-2000:])

    def _answers(self):
        if self.p.poll() is not None:
            return True
        try:
            return http_request(self.sock, "GET", "/v1/health", timeout=2)[0] == 200
        except OSError:
            return False

    def post(self, path, body):
        st, _, text = http_request(self.sock, "POST", path, json.dumps(body))
        return st, text

    def watch(self):
        st, _, text = http_request(self.sock, "GET", "/v1/watch")
        if st != 200:
            fail("GET /v1/watch: status %d: %s" % (st, text[:300]))
        return json.loads(text)

    def log_text(self):
        with open(self.log, errors="replace") as f:
            return f.read()

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()


def coords(r, sizes):
    """Megatron order: tp fastest, then cp, dp, pp."""
    c = {"ep": 0}
    for a in ("tp", "cp", "dp", "pp"):
        c[a] = r % sizes[a]
        r //= sizes[a]
    return c


class World:
    """RANKS nccl_driver ranks of one job, the hook writing their records."""

    def __init__(self, prog, tmp, job, sizes, steps):
        self.dir = tempfile.mkdtemp(prefix="w%d." % job, dir=tmp)
        self.wdir = os.path.join(self.dir, "watch")
        os.mkdir(self.wdir, 0o700)
        self.job, self.sizes = job, sizes
        self.procs = []
        for r in range(RANKS):
            env = {k: v for k, v in os.environ.items()
                   if not k.startswith(("PARALLEL_LAYOUT", "NCCL_", "SLURM"))}
            env.update({
                "RANK": str(r), "WORLD_SIZE": str(RANKS), "LOCAL_RANK": str(r),
                "PARALLEL_LAYOUT_TP": str(sizes["tp"]), "PARALLEL_LAYOUT_CP": str(sizes["cp"]),
                "PARALLEL_LAYOUT_DP": str(sizes["dp"]), "PARALLEL_LAYOUT_PP": str(sizes["pp"]),
                "SLURM_JOB_ID": str(job), "SLURM_STEP_ID": "0", "SLURM_PROCID": str(r),
                "NCCL_PROFILER_PLUGIN": prog["PL_NCCL_HOOK"],
                "PARALLEL_LAYOUT_WATCH_DIR": self.wdir,
            })
            with open(os.path.join(self.dir, "out.%d" % r), "w") as out, \
                    open(os.path.join(self.dir, "err.%d" % r), "w") as err:
                self.procs.append(subprocess.Popen(
                    [prog["NCCL_DRIVER"], "--sync-dir", self.dir, "--steps", str(steps),
                     "--layers", str(LAYERS), "--compute-us", str(COMPUTE_US), "--jitter", "0",
                     "--timeout", "60"], env=env, stdout=out, stderr=err))

    def record(self, r):
        return os.path.join(self.wdir, "plw-%d.0.%d.%d" % (self.job, r, self.procs[r].pid))

    def register(self, d):
        if not wait_for(lambda: all(os.path.exists(self.record(r)) for r in range(RANKS)), 20):
            fail("job %d: not every rank made its record in 20 s:\n%s" % (self.job, self.errors()))
        for r in range(RANKS):
            st, text = d.post("/v1/watch/tasks", {
                "job_id": self.job, "step_id": 0, "task": r, "rank": r,
                "pid": self.procs[r].pid, "uid": os.geteuid(), "node": "node1",
                "coords": coords(r, self.sizes), "record": self.record(r)})
            if st != 200:
                fail("job %d: POST /v1/watch/tasks for rank %d: status %d: %s"
                     % (self.job, r, st, text[:300]))

    def output(self, r, which):
        with open(os.path.join(self.dir, "%s.%d" % (which, r)), errors="replace") as f:
            return f.read()

    def errors(self):
        return "\n".join("rank %d: %s" % (r, self.output(r, "err").strip()[-300:])
                         for r in range(RANKS))

    def finish(self, d, limit):
        """Every rank's exit status once all exited (None: killed at limit)."""
        end = time.monotonic() + limit
        rcs = []
        for r, p in enumerate(self.procs):
            try:
                rcs.append(p.wait(timeout=max(0.1, end - time.monotonic())))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
                rcs.append(None)
            d.post("/v1/watch/exit", {"job_id": self.job, "step_id": 0, "task": r,
                                      "status": (p.returncode & 0xff) << 8
                                      if p.returncode >= 0 else -p.returncode})
        return rcs

    def kill(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()


def step_of(w, job):
    for s in w["steps"]:
        if s["job_id"] == job:
            return s
    return None


def window(d, secs):
    """The daemon's CPU time and samples over secs: ({clock, cpu_s, ticks,
    ticks_s, wall_s, samples}, GET /v1/watch before, and after)."""
    w0 = d.watch()
    time.sleep(0.02)            # the answer's clean-up stays out of the window
    c0, k0 = cpu(d.p.pid)
    t0 = time.monotonic()
    time.sleep(secs)
    c1, k1 = cpu(d.p.pid)
    t1 = time.monotonic()
    w1 = d.watch()
    tck = os.sysconf("SC_CLK_TCK")
    clock = "schedstat" if c0 is not None and c1 is not None else "ticks"
    cpu_s = c1 - c0 if clock == "schedstat" else (k1 - k0) / tck
    # Both clocks count the same time: they differ by the rounding of two
    # tick readings.
    if abs(cpu_s - (k1 - k0) / tck) > 2.0 / tck + 0.05 * cpu_s:
        fail("layoutd's CPU time over the window: %.4f s by schedstat, %d ticks (%.2f s) by "
             "/proc/PID/stat; want them within 2 ticks" % (cpu_s, k1 - k0, (k1 - k0) / tck))
    return {"clock": clock, "cpu_s": cpu_s, "ticks": k1 - k0, "ticks_s": (k1 - k0) / tck,
            "wall_s": t1 - t0, "samples": w1["samples"] - w0["samples"]}, w0, w1


def check_samples(name, m, secs):
    want = secs * 1000 / INTERVAL_MS
    if abs(m["samples"] - want) > 0.2 * want:
        fail("%s: layoutd sampled %d times in %.1f s, want %d within 20 %% (is the machine "
             "overloaded?)" % (name, m["samples"], m["wall_s"], want))


def check_watched(name, world, w0, w1, ncomm):
    """The same work: every task read, its communicators there, advancing."""
    bad = []
    s0, s1 = step_of(w0, world.job), step_of(w1, world.job)
    if not s0 or not s1 or len(s1["tasks"]) != RANKS:
        fail("%s: job %d is not watched with %d tasks: %s" % (name, world.job, RANKS,
                                                              json.dumps(s1)[:300]))
    t0 = {t["rank"]: t for t in s0["tasks"]}
    for t in s1["tasks"]:
        r = t["rank"]
        entered = sum(c["entered"] for c in t["comms"])
        before = sum(c["entered"] for c in t0[r]["comms"])
        if t["record_state"] != "ok":
            bad.append("rank %d: record %s: %s" % (r, t["record_state"], t["refused"]))
        if len(t["comms"]) != ncomm:
            bad.append("rank %d: %d communicators (%s), want %d" % (
                r, len(t["comms"]), ",".join(c["name"] for c in t["comms"]), ncomm))
        if t["exited"] or world.procs[r].poll() is not None:
            bad.append("rank %d exited before the window closed (raise RUN_SPARE_S)" % r)
        if entered <= before:
            bad.append("rank %d: collectives entered %d at the window's start, %d at its end"
                       % (r, before, entered))
    if s1["verdicts"]:
        bad.append("verdicts on a healthy run: %s" % json.dumps(s1["verdicts"])[:300])
    if bad:
        fail("%s: the watched window did not do the expected work:\n  %s"
             % (name, "\n  ".join(bad)))


def share(m):
    return m["cpu_s"] / m["wall_s"]


def main():
    prog = programs()
    if os.geteuid() != 0:
        print("%s: skipped: registering tasks with layoutd is root's (run as root)" % PROG)
        return 0
    try:
        secs = float(sys.argv[2]) if len(sys.argv) > 2 else 10.0
    except ValueError:
        secs = 0
    if not 1 <= secs <= 600:
        fail("WINDOW_S=%s: want seconds from 1 to 600" % sys.argv[2])
    tmp = tempfile.mkdtemp(prefix="pl-bench-watch.")
    d, worlds = None, []
    try:
        mapf = os.path.join(tmp, "map.json")
        p = subprocess.run([prog["LAYOUTCTL"], "topo", "build", "--slurm-topology",
                            os.path.join(top, "tests", "data", "lab-topology.conf"),
                            "--node", "8", "--name", "lab", "-o", mapf],
                           capture_output=True, text=True)
        if p.returncode != 0:
            fail("layoutctl topo build: " + p.stderr)
        d = Daemon(prog["LAYOUTD"], tmp, mapf)
        time.sleep(SETTLE_S)
        if d.watch()["interval_ms"] != INTERVAL_MS:
            fail("layoutd samples every %d ms, want %d" % (d.watch()["interval_ms"], INTERVAL_MS))

        base, _, wb = window(d, secs)
        check_samples("baseline", base, secs)
        if wb["steps"]:
            fail("baseline: a step is watched: %s" % json.dumps(wb["steps"])[:300])

        phases = []
        for k, (spec, sizes) in enumerate(LAYOUTS):
            ncomm = 1 + sum(1 for v in sizes.values() if v > 1)
            # A step sleeps at least 2 passes x LAYERS x COMPUTE_US on every
            # stage in turn (no jitter; a stage's recv waits for the send):
            # the ranks outlive registration, the first reads, the settling
            # and the window, with RUN_SPARE_S to spare.
            need = secs + SETTLE_S + RUN_SPARE_S
            steps = int(math.ceil(need / (2 * LAYERS * sizes["pp"] * COMPUTE_US * 1e-6)))
            world = World(prog, tmp, JOB + k, sizes, steps)
            worlds.append(world)
            world.register(d)

            def all_read():
                s = step_of(d.watch(), world.job)
                return s and all(t["record_state"] == "ok" and len(t["comms"]) == ncomm
                                 for t in s["tasks"])
            if not wait_for(all_read, 10, 0.2):
                fail("%s: the records were not all read with %d communicators in 10 s: %s"
                     % (spec, ncomm, json.dumps(step_of(d.watch(), world.job))[:600]))
            time.sleep(SETTLE_S)
            m, w0, w1 = window(d, secs)
            check_samples(spec, m, secs)
            check_watched(spec, world, w0, w1, ncomm)
            rcs = world.finish(d, 3 * need + 60)
            if rcs != [0] * RANKS or not all("result=ok" in world.output(r, "out")
                                             for r in range(RANKS)):
                fail("%s: the ranks exited %r, want all 0:\n%s" % (spec, rcs, world.errors()))
            m["spec"], m["comms"] = spec, ncomm
            phases.append(m)
    finally:
        for w in worlds:
            w.kill()
        if d:
            d.stop()
        shutil.rmtree(tmp, ignore_errors=True)

    print("layoutd watch sampling: %d ranks, every %d ms, windows of %.1f s, CPU time from %s"
          % (RANKS, INTERVAL_MS, secs, base["clock"]))
    print("%-22s %6s %8s %10s %8s %10s %12s %12s" % (
        "phase", "comms", "samples", "cpu_ms", "ticks", "core_%", "added_%", "us/sample"))
    rows = [("baseline (no step)", 0, base)] + [(m["spec"], m["comms"], m) for m in phases]
    for name, nc, m in rows:
        added = share(m) - share(base)
        per = added * m["wall_s"] / m["samples"] * 1e6 if nc else 0.0
        m["added"], m["per_sample_us"] = added, per
        print("%-22s %6s %8d %10.2f %8d %10.4f %12s %12s" % (
            name, nc or "-", m["samples"], m["cpu_s"] * 1e3, m["ticks"], share(m) * 100,
            "%.4f" % (added * 100) if nc else "-", "%.1f" % per if nc else "-"))
    hi, lo = phases[0], phases[1]
    # per record and communicator: the slope between the two watched phases
    slope = (hi["per_sample_us"] - lo["per_sample_us"]) / (hi["comms"] - lo["comms"]) / RANKS
    per6 = hi["per_sample_us"] + max(slope, 0.0) * RANKS * (WANT_COMMS - hi["comms"])
    cost6 = per6 * 1e-6 * 1000 / INTERVAL_MS
    res = {"ranks": RANKS, "interval_ms": INTERVAL_MS, "window_s": secs,
           "baseline_core_percent": round(share(base) * 100, 4),
           "phases": [{"layout": m["spec"], "comms": m["comms"], "samples": m["samples"],
                       "core_percent": round(share(m) * 100, 4),
                       "added_core_percent": round(m["added"] * 100, 4),
                       "us_per_sample": round(m["per_sample_us"], 2),
                       "us_per_record": round(m["per_sample_us"] / RANKS, 2),
                       "ticks": m["ticks"], "ticks_cpu_s": round(m["ticks_s"], 2),
                       "schedstat_cpu_s": round(m["cpu_s"], 4)} for m in phases],
           "us_per_record_per_comm": round(slope, 3),
           "comms_wanted": WANT_COMMS, "us_per_sample_at_wanted": round(per6, 2),
           "core_percent_at_wanted": round(cost6 * 100, 4),
           "budget_percent": BUDGET * 100, "of_budget": round(cost6 / BUDGET, 3)}
    print(json.dumps(res))
    met = cost6 < BUDGET
    print("# target: %d ranks x %d comms at %d Hz under %g %% of a core: %.3f %% "
          "(%.1f us/sample; measured %.3f %% at %d comms, %.2f us per record and comm), "
          "%.0f %% of the budget: %s"
          % (RANKS, WANT_COMMS, 1000 // INTERVAL_MS, BUDGET * 100, cost6 * 100, per6,
             hi["added"] * 100, hi["comms"], slope, cost6 / BUDGET * 100,
             "met" if met else "MISSED"))
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
