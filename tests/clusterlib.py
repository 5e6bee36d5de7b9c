# SPDX-License-Identifier: GPL-2.0-or-later
"""Helpers for TAP tests that run real Slurm daemons (tests/cluster/lab).

    from clusterlib import Lab, skip_all, unavailable
    why = unavailable()
    if why:
        skip_all(why)
    with Lab(plugin=SO, plugin_args="log=...") as lab:
        rc, out, err = lab.srun(["-N4", "-n32", "hostname"], timeout=60)

Every cluster test gets its own lab directory and port base, and all of
them take one machine-wide lock while their lab is up: two emulated
clusters of one suite at once are too heavy for a small CI machine.  A
second suite run beside the first (scripts/check runs distcheck's while the
build tree's runs) sets LAB_SLOT=1: its labs take their own lock, and get
their own directories, ports and job ids, so one lab of each suite may be
up at a time.
"""
import atexit
import fcntl
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
LABCTL = os.environ.get("LABCTL") or os.path.join(HERE, "cluster", "lab")
LAB_DIR = os.environ.get("LAB_DIR", "")
LOCK = os.environ.get("LAB_LOCK", "/tmp/pl-lab.lock")
# 0 or 1: which of two suites run at once this one is (the module's
# docstring); slot 1 adds ".1" to the lock and the lab's directory, 50 to its
# port base (the bases are 100 apart) and starts its job ids at 5501.
SLOT = 1 if os.environ.get("LAB_SLOT", "0") == "1" else 0
if SLOT:
    LOCK += ".1"
# The first port of the labs' bases.  A second Slurm release tested beside
# the machine's own (scripts/slurm-root) gives its labs another range, so
# both can be up at once; every base stays below the ephemeral ports (32768).
PORT_BASE = int(os.environ.get("PL_LAB_PORT_BASE") or 16800)

# The lab refuses longer paths: slurmstepd makes unix sockets below it.
MAX_LAB_PATH = 60

# Printed by srun when the previous job still holds the CPUs (completing, or
# running its SPANK epilog); they say nothing about the test.
NOISE = re.compile(r"^srun: job \d+ (queued and waiting for resources|has been allocated resources)$")

# Node states (sinfo %T) that mean the test broke a node.
BAD_STATE = re.compile(r"drain|down|fail|inval|maint|unknown|not_responding|\*$")

NEEDED = ("slurmctld", "slurmd", "munged", "srun", "sbatch", "sinfo", "squeue", "scontrol",
          "scancel", "flock", "setsid", "pgrep")


class LabError(Exception):
    """`lab up`, `down` or `restart-slurmd` failed; the text holds its stderr."""


def skip_all(reason):
    """Skip the whole TAP test: for machines where Slurm cannot run."""
    print("1..0 # SKIP %s" % reason, flush=True)
    sys.exit(0)


def which(cmd):
    for d in os.environ.get("PATH", "").split(os.pathsep) + ["/usr/sbin", "/sbin"]:
        p = os.path.join(d, cmd)
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    return None


def unavailable():
    """Why the lab cannot run here (a reason for skip_all), or None."""
    if os.environ.get("PL_CLUSTER_TESTS", "").lower() in ("0", "no", "skip", "off"):
        return "PL_CLUSTER_TESTS=%s" % os.environ["PL_CLUSTER_TESTS"]
    if os.geteuid() != 0:
        return "the emulated Slurm cluster needs root"
    missing = [c for c in NEEDED if not which(c)]
    if missing:
        return ("not installed: %s (Debian: slurm-wlm slurmctld slurmd slurm-client munge)"
                % " ".join(missing))
    if not os.access(LABCTL, os.X_OK):
        return "%s is not executable" % LABCTL
    # The fake GPUs are character devices; containers may drop CAP_MKNOD.
    d = tempfile.mkdtemp(prefix="pl-mknod-")
    try:
        os.mknod(os.path.join(d, "probe"), 0o600 | 0o020000, os.makedev(1, 3))
    except OSError as e:
        return "cannot mknod the fake GPU devices here (%s)" % e.strerror
    finally:
        try:
            os.unlink(os.path.join(d, "probe"))
        except OSError:
            pass
        os.rmdir(d)
    return None


def clean_stderr(text):
    """stderr without srun's harmless queued/allocated lines."""
    return "".join(l for l in (text or "").splitlines(True) if not NOISE.match(l.rstrip("\n")))


def pid_alive(pid):
    """A pid that runs (a zombie has exited; it only waits to be reaped)."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("State:"):
                    return "Z" not in line.split()[1]
    except OSError:
        return False
    return False


def _cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""


class Lab:
    """One emulated cluster; a context manager (up on enter, down on exit).

    Knobs map to the lab script's environment: plugin -> PLUGIN,
    plugin_args -> PLUGIN_ARGS, plugin_mode -> PLUGIN_MODE, layoutd ->
    LAYOUTD, layoutd_map -> LAYOUTD_MAP, layoutd_conf -> LAYOUTD_CONF (%n:
    the node's name), and nodes/gpus/cpus/leaves.
    """

    def __init__(self, name=None, plugin=None, plugin_args="", plugin_mode="required",
                 layoutd=None, layoutd_map=None, layoutd_conf=None, nodes=4, gpus=8, cpus=8, leaves=2,
                 port_base=None, lock_timeout=900, up_timeout=120):
        if name is None:
            name = os.path.splitext(os.path.basename(sys.argv[0]))[0] or "lab"
        name = re.sub(r"[^A-Za-z0-9_.-]", "_", name)
        self.name = name
        self.dir = self._pick_dir(name)
        # A base per test name: labs of different tests never share ports,
        # even when someone runs them by hand without the lock.
        self.port_base = port_base or PORT_BASE + 100 * (zlib.crc32(name.encode()) % 30) + 50 * SLOT
        self.nodes = nodes
        self.knobs = dict(plugin=plugin, plugin_args=plugin_args, plugin_mode=plugin_mode,
                          layoutd=layoutd, layoutd_map=layoutd_map, layoutd_conf=layoutd_conf)
        self.shape = dict(nodes=nodes, gpus=gpus, cpus=cpus, leaves=leaves)
        self.lock_timeout = lock_timeout
        self.up_timeout = up_timeout
        self.conf = os.path.join(self.dir, "etc", "slurm.conf")
        self.env = dict(os.environ, SLURM_CONF=self.conf)
        path = self.env.get("PATH", "").split(os.pathsep)
        self.env["PATH"] = os.pathsep.join(path + [d for d in ("/usr/sbin", "/sbin") if d not in path])
        # A user's own Slurm settings must not steer the lab's jobs.
        for k in list(self.env):
            if k.startswith(("SLURM_", "SBATCH_", "SALLOC_")) and k != "SLURM_CONF":
                del self.env[k]
        self.up_seconds = None
        self._lock = None
        self._jobs = 0
        self._is_up = False
        # A test that dies on an exception must not leave daemons behind.
        atexit.register(self._at_exit)

    def _at_exit(self):
        if self._is_up or self._lock is not None:
            self.down()

    @staticmethod
    def _pick_dir(name):
        if SLOT:
            name += ".1"
        if LAB_DIR:
            d = os.path.join(os.path.abspath(LAB_DIR), name)
            if len(d) <= MAX_LAB_PATH:
                return d
        d = "/tmp/pl-lab-" + name
        if len(d) > MAX_LAB_PATH:
            d = "/tmp/pl-lab-%s-%08x" % (name[:30], zlib.crc32(name.encode()))
        return d

    # -- the lab script

    def _lab_env(self):
        e = dict(self.env, LAB=self.dir, PORT_BASE=str(self.port_base),
                 NODES=str(self.shape["nodes"]), GPUS=str(self.shape["gpus"]),
                 CPUS=str(self.shape["cpus"]), LEAVES=str(self.shape["leaves"]),
                 PLUGIN=self.knobs["plugin"] or "", PLUGIN_ARGS=self._plugin_args(),
                 PLUGIN_MODE=self.knobs["plugin_mode"] or "required",
                 LAYOUTD=self.knobs["layoutd"] or "", LAYOUTD_MAP=self.knobs["layoutd_map"] or "",
                 LAYOUTD_CONF=self.knobs["layoutd_conf"] or "",
                 FIRST_JOB_ID="5501" if SLOT else "1")
        return e

    def _plugin_args(self):
        """The plugstack arguments; the NCCL watch's record directories go
        below the lab (not the machine's /dev/shm) unless a test says where."""
        args = self.knobs["plugin_args"] or ""
        if self.knobs["plugin"] and "watch_dir=" not in args:
            args = (args + " watch_dir=%s/watch" % self.dir).strip()
        return args

    def lab(self, *args, timeout=120):
        """Run the lab script with this lab's knobs: (rc, stdout, stderr)."""
        try:
            p = subprocess.run([LABCTL] + list(args), env=self._lab_env(), capture_output=True,
                               text=True, timeout=timeout, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired as e:
            return 124, e.stdout or "", "lab %s: no answer within %ds" % (" ".join(args), timeout)
        return p.returncode, p.stdout, p.stderr

    def _take_lock(self):
        if self._lock is not None:
            return
        f = open(LOCK, "a")
        deadline = time.monotonic() + self.lock_timeout
        said = False
        while True:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    f.close()
                    raise LabError("another cluster test held %s for over %ds"
                                   % (LOCK, self.lock_timeout))
                if not said:
                    print("# waiting for %s (another cluster test runs)" % LOCK, flush=True)
                    said = True
                time.sleep(0.2)
        self._lock = f

    def _drop_lock(self):
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    def up(self, **knobs):
        """Start the lab, or make a running one match new knobs (plugin,
        plugin_args, plugin_mode, layoutd, layoutd_map, layoutd_conf). Raises LabError."""
        for k, v in knobs.items():
            if k not in self.knobs:
                raise TypeError("Lab.up: unknown knob %r (accepted: %s)" % (k, ", ".join(self.knobs)))
            self.knobs[k] = v
        self._take_lock()
        t0 = time.monotonic()
        rc, out, err = self.lab("up", timeout=self.up_timeout)
        if rc != 0:
            if not self._is_up:
                self.lab("down")
                self._drop_lock()
            raise LabError("lab up (LAB=%s) failed, rc %d:\n%s" % (self.dir, rc, err))
        self.up_seconds = time.monotonic() - t0
        self._is_up = True
        return self

    def restart_slurmd(self):
        rc, out, err = self.lab("restart-slurmd")
        if rc != 0:
            raise LabError("lab restart-slurmd failed, rc %d:\n%s" % (rc, err))

    def down(self):
        """Stop everything the lab started; returns (rc, stderr). Idempotent."""
        rc, out, err = self.lab("down")
        self._is_up = False
        self._drop_lock()
        return rc, err

    def __enter__(self):
        return self.up()

    def __exit__(self, *exc):
        self.down()
        return False

    # -- running things in the lab

    def run(self, argv, timeout=60, input=None, cleanup=None):
        """Run argv with the lab's SLURM_CONF: (rc, stdout, stderr).

        On timeout the whole process group is killed, cleanup() runs, and
        rc is 124 with a line saying so on stderr."""
        p = subprocess.Popen(argv, env=self.env, stdin=subprocess.PIPE if input else subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             start_new_session=True)
        try:
            out, err = p.communicate(input, timeout=timeout)
            return p.returncode, out, err
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except OSError:
                pass
            out, err = p.communicate()
            if cleanup:
                cleanup()
            return 124, out, (err or "") + "%s: killed after %ds\n" % (argv[0], timeout)

    def _job_name(self):
        self._jobs += 1
        return "pl-%s-%d-%d" % (self.name, os.getpid(), self._jobs)

    def cancel(self, job_name, wait=15):
        """scancel the jobs called job_name and wait until they are gone."""
        self.run(["scancel", "--quiet", "--name=" + job_name], timeout=10)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            rc, out, err = self.run(["squeue", "-h", "-o", "%i", "--name=" + job_name], timeout=10)
            if rc == 0 and not out.strip():
                return True
            time.sleep(0.2)
        return False

    def srun(self, args, timeout=60):
        """srun ARGS...: (rc, stdout, stderr without the queued/allocated lines).
        A run past timeout is killed and its job cancelled; rc is then 124."""
        if isinstance(args, str):
            args = shlex.split(args)
        name = self._job_name()
        rc, out, err = self.run(["srun", "--job-name=" + name] + list(args), timeout=timeout,
                                cleanup=lambda: self.cancel(name))
        return rc, out, clean_stderr(err)

    def job_info(self, job_id):
        """`scontrol show job` fields of one job as a dict ({} if unknown)."""
        rc, out, err = self.run(["scontrol", "-o", "show", "job", str(job_id)], timeout=15)
        if rc != 0:
            return {}
        return dict(kv.split("=", 1) for kv in out.split() if "=" in kv)

    def sbatch_wait(self, args=(), script=None, timeout=120):
        """sbatch ARGS... (script text on stdin when given, else --wrap in
        ARGS) and wait for the job: (rc, job stdout, job stderr + sbatch's
        stderr). rc is the job's exit code (128+N when killed by signal N),
        sbatch's own when it refused the job, 124 past timeout (cancelled)."""
        if isinstance(args, str):
            args = shlex.split(args)
        name = self._job_name()
        tmp = os.path.join(self.dir, "tmp")
        os.makedirs(tmp, exist_ok=True)
        out_f = os.path.join(tmp, name + ".out")
        err_f = os.path.join(tmp, name + ".err")
        argv = ["sbatch", "--parsable", "--job-name=" + name, "--output=" + out_f,
                "--error=" + err_f] + list(args)
        deadline = time.monotonic() + timeout
        rc, so, se = self.run(argv, timeout=timeout, input=script,
                              cleanup=lambda: self.cancel(name))
        job = so.strip().split(";")[0]
        if rc == 0 and job.isdigit():
            # sbatch --wait polls every 2 s or more; the lab answers in
            # milliseconds, and the tests are waiting.
            rc = None
            while rc is None:
                info = self.job_info(job)
                state = info.get("JobState", "")
                if state and state not in ("PENDING", "CONFIGURING", "RUNNING", "COMPLETING",
                                           "SUSPENDED", "REQUEUED", "RESIZING", "SIGNALING",
                                           "STAGE_OUT"):
                    code, _, sig = info.get("ExitCode", "1:0").partition(":")
                    rc = 128 + int(sig) if sig.isdigit() and int(sig) else int(code)
                elif time.monotonic() > deadline:
                    self.cancel(name)
                    rc = 124
                    se += "sbatch job %s: still %s after %ds, cancelled\n" % (job, state, timeout)
                else:
                    time.sleep(0.1)
        texts = []
        for f in (out_f, err_f):
            try:
                with open(f) as fh:
                    texts.append(fh.read())
            except OSError:
                texts.append("")
        return rc, texts[0], clean_stderr(texts[1] + se)

    # -- looking at the lab

    def node_states(self):
        """{node: sinfo state}, e.g. {"node1": "idle"}; {} when sinfo fails."""
        rc, out, err = self.run(["sinfo", "-h", "-N", "-o", "%N %T"], timeout=15)
        states = {}
        if rc == 0:
            for line in out.splitlines():
                f = line.split()
                if len(f) == 2:
                    states[f[0]] = f[1]
        return states

    def bad_nodes(self):
        """Nodes that are drained, down, failing or not answering: {node: state}."""
        return {n: s for n, s in self.node_states().items() if BAD_STATE.search(s)}

    def wait_idle(self, timeout=30):
        """Wait until every node is idle (a finished job may still be
        completing); returns the last node_states()."""
        deadline = time.monotonic() + timeout
        while True:
            st = self.node_states()
            if len(st) == self.nodes and all(s == "idle" for s in st.values()):
                return st
            if time.monotonic() > deadline:
                return st
            time.sleep(0.2)

    def daemon_pids(self):
        """{pid file name: pid} of the daemons the lab started and that run."""
        pids = {}
        run = os.path.join(self.dir, "run")
        try:
            names = os.listdir(run)
        except OSError:
            return pids
        for n in names:
            if n.endswith(".pid") or n.endswith(".lab"):
                try:
                    with open(os.path.join(run, n)) as f:
                        pid = int(f.read().strip() or 0)
                except (OSError, ValueError):
                    continue
                if pid > 0 and pid_alive(pid):
                    pids[n] = pid
        return pids

    def stop_layoutd(self, node, timeout=10):
        """Stop one node's layoutd (by the pid the lab recorded), as if it
        had died; the next up() starts it again.  True once its socket is
        gone."""
        sock = os.path.join(self.dir, "run", "layoutd-%s.sock" % node)
        pid = self.daemon_pids().get("layoutd.%s.lab" % node)
        if pid:
            os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not os.path.exists(sock) and "layoutd.%s.lab" % node not in self.daemon_pids():
                return True
            time.sleep(0.05)
        return False

    def leftovers(self):
        """Running processes whose command line names this lab's directory:
        [(pid, cmdline)]; empty after a clean down."""
        found = []
        me = os.getpid()
        for d in os.listdir("/proc"):
            if not d.isdigit() or int(d) == me:
                continue
            c = _cmdline(int(d))
            if (self.dir + "/") in c and pid_alive(int(d)):
                found.append((int(d), c.strip()))
        return found

    def log_tail(self, name, lines=20):
        """The last lines of $LAB/log/NAME (e.g. "slurmd.node1.log")."""
        try:
            with open(os.path.join(self.dir, "log", name), errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except OSError as e:
            return "(%s)" % e
