# SPDX-License-Identifier: GPL-2.0-or-later
"""What the daemon tests of the watch share (layoutd_watch_test,
layoutd_peer_test, layoutd_alert_test): the nccl_driver ranks of one step
with their records and registrations (World), a layoutd on a test socket
(Daemon), and the valgrind command the daemon runs under when it can
(checker)."""
import json
import os
import shutil
import signal
import struct
import subprocess
import tempfile
import time

import amlib
from taplib import LAYOUTD, data, diag, http_request, ok, run, wait_for

DRIVER = os.environ.get("NCCL_DRIVER", "")
HOOK = os.environ.get("PL_NCCL_HOOK", "")


# ---- the node summary's wire (lib/watch/summary.h), for hand-made ones ----

SUM_MAGIC = 0x31304d5553574c50  # the bytes "PLWSUM01"
SUM_VERSION = 7                 # the only version a leader reads
SUM_NO_PROC = b"\0" * 10        # a rank's process tree not sampled (state 0,
                                # eight varints 0, an empty wchan); one a
                                # rank after the rank entries (then, for
                                # each communicator, its signature rest)
SUM_HEADER_BYTES = 168


def varint(x):
    """Unsigned LEB128, as summary.h has it."""
    out = bytearray()
    while x >= 0x80:
        out.append((x & 0x7f) | 0x80)
        x >>= 7
    out.append(x)
    return bytes(out)


def sum_header(node, job, step, seq, boot, uid, interval_ms, world, sizes, nranks, body_len,
               version=SUM_VERSION):
    """A summary's header for nranks rank entries of body_len bytes after it,
    sent now (the monotonic and real clocks); sizes: tp, cp, ep, dp, pp."""
    if isinstance(node, str):
        node = node.encode()
    return struct.pack("<QII64sQQQQQQIII5III", SUM_MAGIC, version, SUM_HEADER_BYTES + body_len,
                       node, job, step, time.monotonic_ns(), time.time_ns(), seq, boot, uid,
                       interval_ms, world, *sizes, nranks, 0)


def missing(alertmanager=False):
    """Why a watch test cannot run here (the driver or the hook not built,
    not root, Alertmanager not installed when asked for), or None."""
    if not DRIVER or not HOOK or not os.path.exists(HOOK):
        return "NCCL_DRIVER / PL_NCCL_HOOK not set"
    if os.geteuid() != 0:
        return "registrations are root's: run as root"
    if alertmanager and not amlib.ALERTMANAGER:
        return "prometheus-alertmanager not installed (Debian: prometheus-alertmanager)"
    return None


def lab_map(tmp):
    """The lab's map (its topology.conf, 8-GPU nodes) in tmp/map.json: its
    path, or None after saying why (a TAP line either way)."""
    mapf = os.path.join(tmp, "map.json")
    rc, _, err = run("topo", "build", "--slurm-topology", data("lab-topology.conf"),
                     "--node", "8", "--name", "lab", "-o", mapf)
    if not ok(rc == 0, "a map to serve"):
        diag(err)
        return None
    return mapf


def checker():
    """(wrapper, why_not): valgrind's command line for layoutd, or [] and
    why it cannot run under valgrind here."""
    vg = shutil.which("valgrind")
    with open(LAYOUTD, "rb") as f:
        exe = f.read()
    why_not = ("valgrind not installed" if not vg else
               "layoutd is a wrapper script" if exe.startswith(b"#!") else
               "layoutd is built with AddressSanitizer" if b"__asan_init" in exe else None)
    wrapper = [] if why_not else [vg, "--error-exitcode=99", "--leak-check=full",
                                  "--errors-for-leak-kinds=definite", "-q"]
    return wrapper, why_not


class World:
    """tp * dp * pp nccl_driver ranks of step 0 of job `job` (cp 1), their
    records in a temp dir below tmp.  A test sets its shape in a subclass:
    tp, dp, pp; nodes, (name, ranks) in node order (None: all on node1);
    timeout, the driver's --timeout; full, registrations with what the
    plugin sends beside the record (gpu, nic and, on each node's first
    task, the step)."""
    tp, dp, pp = 2, 2, 1
    nodes = None
    timeout = 120
    full = True
    env = None          # env(r): more environment for rank r
    watch = None        # the step's own settings ("watch" of its step:
                        # hang_s, busy_s, slow), as the plugin sends them

    def __init__(self, tmp, job, args):
        self.world = self.tp * self.dp * self.pp
        if self.nodes is None:
            self.nodes = [("node1", list(range(self.world)))]
        self.dir = tempfile.mkdtemp(prefix="w%d." % job, dir=tmp)
        self.wdir = os.path.join(self.dir, "watch")
        os.mkdir(self.wdir, 0o700)
        self.prepare(self.wdir)
        self.job = job
        self.procs = []
        for r in range(self.world):
            env = {k: v for k, v in os.environ.items()
                   if not k.startswith(("PARALLEL_LAYOUT", "NCCL_", "SLURM"))}
            env.update({
                "RANK": str(r), "WORLD_SIZE": str(self.world), "LOCAL_RANK": str(r),
                "PARALLEL_LAYOUT_TP": str(self.tp), "PARALLEL_LAYOUT_PP": str(self.pp),
                "PARALLEL_LAYOUT_DP": str(self.dp), "PARALLEL_LAYOUT_CP": "1",
                "SLURM_JOB_ID": str(job), "SLURM_STEP_ID": "0", "SLURM_PROCID": str(r),
                "NCCL_PROFILER_PLUGIN": HOOK, "PARALLEL_LAYOUT_WATCH_DIR": self.wdir,
            })
            if self.env:
                env.update(self.env(r))
            with open(os.path.join(self.dir, "err.%d" % r), "w") as err:
                self.procs.append(subprocess.Popen(
                    [DRIVER, "--sync-dir", self.dir, "--channels", "2", "--layers", "2",
                     "--timeout", str(self.timeout)] + args, env=env,
                    stdout=subprocess.DEVNULL, stderr=err))

    def prepare(self, wdir):
        """What a test does to the records' directory before the ranks start."""

    def coords(self, r):
        tp, dp = self.tp, self.dp
        return {"tp": r % tp, "cp": 0, "ep": 0, "dp": (r // tp) % dp, "pp": r // (tp * dp)}

    def record(self, r):
        pid = self.procs[r].pid
        path = os.path.join(self.wdir, "plw-%d.0.%d.%d" % (self.job, r, pid))
        return path if wait_for(lambda: os.path.exists(path), 20) else None

    def register(self, daemons, order=None, pause=0.0):
        """Each node's ranks with its daemon (daemons: one, or one per node
        in node order); the nodes in `order` (indices), pause seconds
        apart.  Returns the statuses in the order posted."""
        if not isinstance(daemons, (list, tuple)):
            daemons = [daemons]
        order = range(len(self.nodes)) if order is None else order
        sts = []
        for n, k in enumerate(order):
            name, ranks = self.nodes[k]
            if n:
                time.sleep(pause)
            for i, r in enumerate(ranks):
                reg = {"job_id": self.job, "step_id": 0, "task": i, "rank": r,
                       "pid": self.procs[r].pid, "uid": 0, "node": name,
                       "coords": self.coords(r)}
                if self.full:
                    reg.update({"gpu": i, "nic": "mlx5_%d" % i})
                reg["record"] = self.record(r) or os.path.join(self.wdir, "missing")
                if self.full and i == 0:
                    reg["step"] = {"world": self.world,
                                   "layout": {"tp": self.tp, "cp": 1, "ep": 1, "dp": self.dp,
                                              "pp": self.pp},
                                   "nodes": [x[0] for x in self.nodes]}
                    if self.watch:
                        reg["step"]["watch"] = self.watch
                st = daemons[k].post("/v1/watch/tasks", reg)
                if st[0] != 200:
                    diag("registration of rank %d: %d %s" % (r, st[0], st[2][:300]))
                sts.append(st[0])
        return sts

    def close(self, daemons):
        """Each rank killed if it still runs, its exit told to its node's
        daemon while that one runs."""
        if not isinstance(daemons, (list, tuple)):
            daemons = [daemons]
        for k, (_, ranks) in enumerate(self.nodes):
            for i, r in enumerate(ranks):
                p = self.procs[r]
                if p.poll() is None:
                    p.kill()
                p.wait()
                if daemons[k].p.poll() is None:
                    daemons[k].post("/v1/watch/exit", {
                        "job_id": self.job, "step_id": 0, "task": i,
                        "status": (p.returncode & 0xff) << 8
                        if p.returncode >= 0 else -p.returncode})


class Daemon:
    """layoutd with args (under wrapper, e.g. checker()'s) answering on
    socket sock; its output appended to log, or, with capture False (its
    config names log), dropped."""

    def __init__(self, args, log, wrapper, sock, capture=True):
        self.args, self.log, self.wrapper, self.sock = list(args), log, list(wrapper), sock
        self.capture = capture
        self.start()

    def start(self):
        """Start it and wait for it to answer; true when it runs."""
        out = open(self.log, "ab") if self.capture else subprocess.DEVNULL
        try:
            self.p = subprocess.Popen(self.wrapper + [LAYOUTD] + self.args, stdout=out,
                                      stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        finally:
            if self.capture:
                out.close()
        self.up = wait_for(self._answers, 120)
        return self.up and self.p.poll() is None

    def _answers(self):
        if self.p.poll() is not None:
            return True
        try:
            return http_request(self.sock, "GET", "/v1/health", timeout=2)[0] == 200
        except OSError:
            return False

    def post(self, path, body):
        """body: a text as is, anything else as JSON."""
        return http_request(self.sock, "POST", path,
                            body if isinstance(body, str) else json.dumps(body))

    def get(self, path):
        """(status, headers, body), or (None, {}, why) when it does not answer."""
        try:
            return http_request(self.sock, "GET", path, timeout=20)
        except OSError as e:
            return None, {}, str(e)

    def get_json(self, path, timeout=10):
        """(status, the body as JSON, or as text when it is not), or
        (None, None) when it does not answer."""
        try:
            st, _, body = http_request(self.sock, "GET", path, timeout=timeout)
        except OSError:
            return None, None
        try:
            return st, json.loads(body)
        except ValueError:
            return st, body

    def watch(self):
        st, j = self.get_json("/v1/watch")
        return j if st == 200 else None

    def step(self, job):
        """The step of job in GET /v1/watch."""
        w = self.watch() or {}
        for s in w.get("steps", []):
            if s["job_id"] == job:
                return s
        return None

    def view(self, job):
        """GET /v1/watch/step of job's step 0, or None."""
        st, j = self.get_json("/v1/watch/step?job=%d&step=0" % job)
        return j if st == 200 else None

    def alerts(self):
        st, _, body = self.get("/v1/alerts")
        return json.loads(body) if st == 200 else {}

    def metrics(self):
        st, hdr, body = self.get("/metrics")
        return st, hdr.get("content-type"), body

    def alive(self):
        try:
            return self.p.poll() is None and \
                http_request(self.sock, "GET", "/v1/health")[0] == 200
        except OSError:
            return False

    def stop(self, sig=signal.SIGTERM):
        if self.p.poll() is None:
            self.p.send_signal(sig)
        return self.p.wait(timeout=120)

    def log_text(self):
        try:
            with open(self.log, errors="replace") as f:
                return f.read()
        except OSError:
            return ""


def start_checked(conf, log, sock):
    """layoutd -f conf answering on sock, under valgrind when it can
    (checker()), and the TAP line saying whether it started: the Daemon,
    its .ok false when it did not start (its log shown then), .why_not why
    it runs without valgrind (None under it)."""
    wrapper, why_not = checker()
    d = Daemon(["-f", conf], log, wrapper, sock)
    d.why_not = why_not
    d.ok = ok(d.up and d.p.poll() is None, "layoutd starts%s" %
              (" under valgrind" if wrapper else " (%s)" % why_not))
    if not d.ok:
        diag(d.log_text())
    return d
