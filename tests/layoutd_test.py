#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""layoutd: the real daemon on a temporary socket, killed by PID at the end."""
import http.client
import json
import multiprocessing
import os
import re
import resource
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time

from healthprobe import connect_unix, timed_health
from taplib import (LAYOUTCTL, LAYOUTD, as_user, data, diag, done, http_request, is_close, is_eq,
                    like, ok, run, skip, wait_for)


LAB = data("lab-topology.conf")
DGX2 = data("hwloc", "nvidiaDGX2.xml")


def build_map(path, name):
    rc, out, err = run("topo", "build", "--slurm-topology", LAB, "--node", "8", "--name", name,
                       "-o", path)
    if rc != 0:
        diag(err)
    return rc == 0


def replace_file(path, text):
    """Atomically, so a reload never reads half a file."""
    tmp = path + ".new"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


class Daemon:
    """A layoutd process; stop() ends it by PID and returns its exit status."""

    def __init__(self, args, log, wrapper=(), socket_path=None, start_timeout=15, nofile=None):
        self.log = log
        self.socket = socket_path

        def limit():
            if nofile:
                resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

        with open(log, "ab") as lf:
            self.p = subprocess.Popen(list(wrapper) + [LAYOUTD] + args, stdout=lf,
                                      stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                      preexec_fn=limit)
        self.up = socket_path is not None and wait_for(self._answers, start_timeout)

    def _answers(self):
        if self.p.poll() is not None:
            return True     # it died: stop waiting
        try:
            return http_request(self.socket, "GET", "/v1/health", timeout=2)[0] == 200
        except OSError:
            return False

    def get(self, path, where=None):
        st, hdr, body = http_request(where or self.socket, "GET", path)
        return st, hdr, body

    def health(self, where=None):
        st, _, body = self.get("/v1/health", where)
        return json.loads(body) if st == 200 else None

    def post(self, body, where=None, path="/v1/placement"):
        if not isinstance(body, (str, bytes)):
            body = json.dumps(body)
        return http_request(where or self.socket, "POST", path, body)

    def send(self, sig):
        if self.p.poll() is None:
            self.p.send_signal(sig)

    def stop(self, sig=signal.SIGTERM, timeout=30):
        if self.p.poll() is None:
            self.p.send_signal(sig)
            try:
                self.p.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait(timeout=10)
        return self.p.returncode

    def cpu_s(self):
        """User + system CPU seconds the daemon has used so far."""
        with open("/proc/%d/stat" % self.p.pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def log_text(self):
        try:
            with open(self.log, errors="replace") as f:
                return f.read()
        except OSError:
            return ""


def request(spec, nodes, ntasks=8, job=None, step=None, view=None, uid=None):
    r = {"spec": spec, "nodes": [{"name": n, "ntasks": ntasks} for n in nodes]}
    if uid is not None:
        r["uid"] = uid
    if job is not None:
        r["job_id"] = job
    if step is not None:
        r["step_id"] = step
    if view is not None:
        r["view"] = view
    return r


def by_name(resp):
    """The daemon's tasks with node names, in the shape of `layoutctl place --json`."""
    names = [n["name"] for n in resp["nodes"]]
    out = []
    for t in resp["tasks"]:
        t = dict(t)
        t["node"] = names[t["node"]]
        t["nic"] = t["nic"] or None
        out.append(t)
    return out


class HealthProbe:
    """Health requests every `every` seconds until stopped, from a process
    of its own; keeps the slowest answer (a failed request counts as
    `bound`)."""

    def __init__(self, path, bound, every=0.25):
        self.bound = bound
        self.results = []
        # A python of its own (see healthprobe.py); PYTHONPATH finds it.
        self.proc = subprocess.Popen([sys.executable, "-m", "healthprobe", path, str(bound), str(every)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.reader = threading.Thread(target=self._read, daemon=True)

    def _read(self):
        for line in self.proc.stdout:
            good, secs = line.split()
            self.results.append((good == "1", float(secs)))

    def start(self):
        self.reader.start()
        return self

    def wait_more(self, k, timeout):
        """Wait until the probe has made k more requests (or timeout s)."""
        goal = len(self.results) + k
        wait_for(lambda: len(self.results) >= goal, timeout)

    def finish(self):
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=self.bound + 10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.reader.join(timeout=5)
        res = list(self.results)
        worst = max([t if good else self.bound for good, t in res] or [self.bound])
        return len(res), all(g for g, _ in res), worst


def drip(path, n, every, duration):
    """n connections each sending a request one byte every `every` seconds,
    for at most `duration` seconds.  Returns how long each stayed open
    (None: still open at the end; then it is closed here)."""
    msg = (b"POST /v1/placement HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n" +
           b" " * 100000)
    conns = []
    for _ in range(n):
        s = connect_unix(path, time.monotonic() + 5)
        if s is not None:
            conns.append({"s": s, "t0": time.monotonic(), "sent": 0, "open_s": None})
    end = time.monotonic() + duration
    while time.monotonic() < end and any(c["open_s"] is None for c in conns):
        for c in conns:
            if c["open_s"] is not None:
                continue
            try:
                if c["s"].recv(4096) == b"":
                    c["open_s"] = time.monotonic() - c["t0"]
                    continue
            except BlockingIOError:
                pass
            except OSError:
                c["open_s"] = time.monotonic() - c["t0"]
                continue
            try:
                c["sent"] += c["s"].send(msg[c["sent"]:c["sent"] + 1])
            except BlockingIOError:
                pass
            except OSError:
                c["open_s"] = time.monotonic() - c["t0"]
        time.sleep(every)
    for c in conns:
        c["s"].close()
    return [c["open_s"] for c in conns] + [None] * (n - len(conns))


def hold_idle(path, n, budget):
    """Open up to n idle connections (nothing sent) within `budget` seconds;
    returns the sockets (caller closes)."""
    out, end = [], time.monotonic() + budget
    for _ in range(n):
        s = connect_unix(path, min(end, time.monotonic() + 0.05))
        if s is not None:
            out.append(s)
        if time.monotonic() > end:
            break
    return out


def mini_daemon(tmp, name, mapf, extra="", nofile=None, sock=None, node="node1"):
    """A layoutd of its own (no TCP unless extra says so), for one test."""
    cfg = os.path.join(tmp, name + ".conf")
    sock = sock or os.path.join(tmp, name + ".sock")
    lg = os.path.join(tmp, name + ".log")
    with open(cfg, "w") as f:
        f.write("map = %s\nsocket = %s\nnode_name = %s\nhwloc_check = no\nlog = %s\n%s" %
                (mapf, sock, node, lg, extra))
    dm = Daemon(["-f", cfg], lg, socket_path=sock, nofile=nofile)
    dm.up = dm.up and dm.p.poll() is None
    return dm, cfg


NODES4 = ["node1", "node2", "node3", "node4"]

tmp = tempfile.mkdtemp(prefix="layoutd-test.")
daemons = []
try:
    mapf = os.path.join(tmp, "map.json")
    map2 = os.path.join(tmp, "map2.json")
    ok(build_map(mapf, "cluster") and build_map(map2, "lab2"), "maps built with layoutctl topo build")
    with open(mapf) as f:
        map_text = f.read()
    with open(map2) as f:
        map2_text = f.read()
    sock = os.path.join(tmp, "run", "layoutd-%n.sock")      # run/ does not exist yet
    sock1 = os.path.join(tmp, "run", "layoutd-node1.sock")
    port_file = os.path.join(tmp, "port")
    pidfile = os.path.join(tmp, "layoutd.pid")
    logfile = os.path.join(tmp, "layoutd.log")
    conf = os.path.join(tmp, "layoutd.conf")
    conf_text = ("# layoutd for the tests\n"
                 "map = %s\n"
                 "socket = %s   # %%n is the node\n"
                 "socket_mode = 0640\n"
                 "tcp = 127.0.0.1:0\n"
                 "port_file = %s\n"
                 "node_name = node1\n"
                 "hwloc_check = no\n"
                 "pidfile = %s\n"
                 "log = %s\n"
                 "request_timeout_ms = 1500\n"
                 "max_body = 1M\n" % (mapf, sock, port_file, pidfile, logfile))
    with open(conf, "w") as f:
        f.write(conf_text)
    empty_conf = os.path.join(tmp, "empty.conf")    # -f: no system config
    open(empty_conf, "w").close()
    # --- --check-config ---
    p = subprocess.run([LAYOUTD, "-f", conf, "--check-config"], capture_output=True, text=True,
                       timeout=30)
    is_eq((p.returncode, p.stdout.strip()), (0, "layoutd: configuration OK (map cluster: 4 nodes)"),
          "--check-config accepts the good config")
    bad = os.path.join(tmp, "bad.conf")
    with open(bad, "w") as f:
        f.write("map = %s\n# a comment\nsokcet = /tmp/x.sock\n" % mapf)
    p = subprocess.run([LAYOUTD, "-f", bad, "--check-config"], capture_output=True, text=True,
                       timeout=30)
    ok(p.returncode == 1 and "bad.conf:3: unknown key 'sokcet' (accepted: map, socket," in p.stderr,
       "--check-config names file:line of an unknown key and the accepted keys")
    diag(p.stderr.strip())
    with open(bad, "w") as f:
        f.write("map = %s\nsocket_mode = 0999\n" % mapf)
    p = subprocess.run([LAYOUTD, "-f", bad, "--check-config"], capture_output=True, text=True,
                       timeout=30)
    ok(p.returncode == 1 and "bad.conf:2: socket_mode = 0999: expected an octal mode" in p.stderr,
       "--check-config refuses a bad value with file:line")
    with open(bad, "wb") as f:
        f.write(b"map = x\x00y\n")
    p = subprocess.run([LAYOUTD, "-f", bad, "--check-config"], capture_output=True, text=True,
                       timeout=30)
    ok(p.returncode == 1 and "NUL byte" in p.stderr, "a config file with a NUL byte is refused")
    for text, needle, name in (
            (b"request_timeout_ms = 99999999999999999999\n", b"bad.conf:1: request_timeout_ms = 9",
             "a huge number"),
            (b"max_body = 12Q\n", b"bad.conf:1: max_body = 12Q: expected bytes", "a bad size suffix"),
            (b"m\xc3\xa4p = x\n", b"bad.conf:1: unknown key 'm\xc3\xa4p'", "a non-ASCII key"),
            (b"map /tmp/x\n", b"bad.conf:1: expected 'key = value'", "a line without '='"),
            (b"map = x\nmap = y\n", b"bad.conf:2: 'map' is already set at line 1", "a repeated key"),
            (b"socket = relative.sock\n", b"expected an absolute path", "a relative socket"),
            (b"socket = /run/%x.sock\n", b"bad % sequence", "a bad % in the socket"),
            (b"map = x\n" * 200000, b"larger than", "a 1.6 MB file"),
            (b"# only a comment, no map\n", b"no cluster map", "no map at all"),
            (b"map = \n", b"bad.conf:1: map = : empty value", "an empty value"),
            (b"tcp_access = open\n", b"bad.conf:1: tcp_access = open: expected read-only",
             "an unknown tcp_access"),
            (b"max_connections = 0\n", b"bad.conf:1: max_connections = 0: expected a whole number from 1",
             "no connections at all"),
            (b"max_header = 12Q\n", b"bad.conf:1: max_header = 12Q: expected bytes", "a bad max_header"),
            (("map = %s\nslurm_user = no-such-user-here\n" % mapf).encode(),
             b"slurm_user no-such-user-here: no such user", "an unknown slurm_user")):
        with open(bad, "wb") as f:
            f.write(text)
        p = subprocess.run([LAYOUTD, "-f", bad, "--check-config"], capture_output=True,
                           timeout=30)
        if not ok(p.returncode == 1 and needle in p.stderr, "config with %s is refused" % name):
            diag(p.stderr.decode("utf-8", "replace"))
    p = subprocess.run([LAYOUTD, "-f", os.path.join(tmp, "missing.conf"), "--check-config"],
                       capture_output=True, text=True, timeout=30)
    ok(p.returncode == 1 and "missing.conf" in p.stderr, "-f with a missing file is an error")
    p = subprocess.run([LAYOUTD, "-f", empty_conf, "--map", os.path.join(tmp, "nomap.json"),
                        "--check-config"], capture_output=True, text=True, timeout=30)
    ok(p.returncode == 1 and "nomap.json" in p.stderr, "--check-config refuses a missing map")
    p = subprocess.run([LAYOUTD, "-f", conf, "--node", "node9", "--check-config"],
                       capture_output=True, text=True, timeout=30)
    ok(p.returncode == 0 and "warning: node node9 is not in the map cluster" in p.stdout,
       "--check-config warns about a node missing from the map (options override the file)")
    # The node check, hand-read from the exports (tests/data/SOURCES.md): the
    # g4dn.metal has 8 T4s without NVLink and one EFA NIC rdmap197s0; Lassen
    # has 4 V100s in NVLink and mlx5_0..3.
    g4dn = data("hwloc", "g4dnmetal.xml")
    p = subprocess.run([LAYOUTD, "-f", empty_conf, "--map", mapf, "--node", "node1",
                        "--hwloc-check", g4dn, "--check-config"], capture_output=True,
                       text=True, timeout=60)
    ok(p.returncode == 0 and "warning: NVLink: the map gives node node1 (type default) 1 NVLink islands, hwloc %s finds 0" % g4dn in p.stdout,
       "8 GPUs without NVLink against 8 in one island: the island count differs")
    lassen_map = os.path.join(tmp, "lassen.json")
    rc, out, err = run("topo", "build", "--slurm-topology", LAB, "--node",
                       data("hwloc", "coral-lassen.xml"), "-o", lassen_map)
    p = subprocess.run([LAYOUTD, "-f", empty_conf, "--map", lassen_map, "--node", "node1",
                        "--hwloc-check", g4dn, "--check-config"], capture_output=True,
                       text=True, timeout=60)
    ok(rc == 0 and p.returncode == 0 and " 4 GPUs, hwloc %s finds 8" % g4dn in p.stdout and
       "missing here: mlx5_0,mlx5_1,mlx5_2,mlx5_3; not in the map: rdmap197s0" in p.stdout,
       "Lassen map against the g4dn export: GPU count and NIC names differ")
    diag(p.stdout.strip())
    p = subprocess.run([LAYOUTD, "-f", empty_conf, "--map", lassen_map, "--node", "node1",
                        "--hwloc-check", data("hwloc", "coral-lassen.xml"), "--check-config"],
                       capture_output=True, text=True, timeout=60)
    is_eq((p.returncode, p.stdout.strip()), (0, "layoutd: configuration OK (map cluster: 4 nodes)"),
          "the node's own export matches its map: no warning")
    p = subprocess.run([LAYOUTD, "-f", empty_conf, "--map", mapf, "--node", "node1",
                        "--hwloc-check", LAB, "--check-config"], capture_output=True,
                       text=True, timeout=60)
    ok(p.returncode == 0 and "warning: hwloc_check: %s" % LAB in p.stdout,
       "an hwloc_check file that is not hwloc XML is a discrepancy, not a crash")
    # One mangled attribute name makes libhwloc 2.9 itself crash; the file
    # is read in a child process, so layoutd reports it and carries on.
    src = open(data("hwloc", "32em64t-2n8c2t-pci-wholeio.xml")).read()
    needle = 'os_index="26" cpuset="0x04000000" complete_cpuset'
    damaged = os.path.join(tmp, "damaged.xml")
    with open(damaged, "w") as f:
        f.write(src.replace(needle, needle.replace("complete_cpuset", "complete_cpu0et")))
    p = subprocess.run([LAYOUTD, "-f", empty_conf, "--map", mapf, "--node", "node1",
                        "--hwloc-check", damaged, "--check-config"], capture_output=True,
                       text=True, timeout=60)
    # Under AddressSanitizer the child's SIGSEGV becomes ASan's exit status 1.
    with open(LAYOUTD, "rb") as f:
        asan = b"__asan_init" in f.read()
    ok(needle in src and p.returncode == 0 and
       ("hwloc crashed reading this file" in p.stdout or
        (asan and "the hwloc reader died (exit status 1)" in p.stdout)),
       "a damaged hwloc export that crashes libhwloc is a discrepancy, not a daemon crash")
    p = subprocess.run([LAYOUTD, "-f", conf, "--tcp", "127.0.0.1:70000", "--check-config"],
                       capture_output=True, text=True, timeout=30)
    ok(p.returncode == 1 and "--tcp 127.0.0.1:70000" in p.stderr, "a bad --tcp is refused")
    p = subprocess.run([LAYOUTD, "--bogus"], capture_output=True, text=True, timeout=30)
    is_eq(p.returncode, 2, "an unknown option is a usage error")

    # --- start ---
    d = Daemon(["-f", conf, "-F"], logfile, socket_path=sock1)
    daemons.append(d)
    ok(d.up and d.p.poll() is None, "layoutd starts and answers on its socket")
    if not d.up:
        diag(d.log_text())
        raise SystemExit(done())
    ok(stat.S_ISSOCK(os.stat(sock1).st_mode) and stat.S_IMODE(os.stat(sock1).st_mode) == 0o640,
       "socket created in a new directory with mode 0640")
    with open(pidfile) as f:
        is_eq(f.read().strip(), str(d.p.pid), "pid file holds the daemon's pid")
    port = wait_for(lambda: os.path.exists(port_file) and open(port_file).read().strip(), 10)
    tcp = "http://127.0.0.1:%s" % port
    ok(port and int(port) > 0, "port_file holds the ephemeral TCP port")

    # --- health ---
    h = d.health()
    ver = subprocess.run([LAYOUTD, "--version"], capture_output=True, text=True, timeout=30).stdout
    is_eq([h["status"], h["node"], h["map"], h["map_nodes"], h["discrepancies"], h["reloads"]],
          ["ok", "node1", "cluster", 4, [], 0], "health: ok, node1, map cluster of 4 nodes")
    # "layoutd VERSION (git ...), ..." or, from a tarball, "layoutd VERSION, ...".
    is_eq(re.split(r"[ ,\n]", ver)[:2], ["layoutd", h["version"]], "health carries the version")
    if os.environ.get("PL_BUILD"):
        is_eq(ver.strip(), "layoutd " + os.environ["PL_BUILD"],
              "--version reports the build configure recorded (git describe, Slurm release)")
    h2 = d.health(tcp)
    is_eq((h2["status"], h2["requests"]), ("ok", h["requests"] + 1),
          "health over TCP too; every request is counted")
    ok(h2["uptime_s"] >= h["uptime_s"] >= 0, "uptime grows")

    # --- topology ---
    st, hdr, body = d.get("/v1/topology")
    is_eq((st, hdr.get("content-type")), (200, "application/json"), "topology: 200 JSON")
    is_eq(json.loads(body), json.loads(map_text), "topology is the map file")

    # --- placement equals layoutctl place ---
    for spec in ("tp8,pp4", "tp8,pp2,dp2,model=70b", "tp4,cp2,pp2,dp2"):
        st, _, body = d.post(request(spec, NODES4, job=42, step=1))
        rc, out, err = run("place", "--layout", spec, "--topology", mapf, "--nodes", "node[1-4]",
                           "--json")
        if not ok(st == 200 and rc == 0, "%s: placed by the daemon and by layoutctl" % spec):
            diag(body + err)
            continue
        resp, ref = json.loads(body), json.loads(out)
        is_eq(by_name(resp), ref["tasks"], "%s: the daemon's tasks equal layoutctl place's" % spec)
        is_eq([resp["cost"], resp["baseline_cost"], resp["strategy"], resp["world"]],
              [ref["cost"], ref["baseline_cost"], ref["strategy"], ref["world"]],
              "%s: same cost, baseline, strategy and world" % spec)
    all_view = json.loads(d.post(request("tp8,pp4", NODES4))[2])
    rank_node = {t["rank"]: all_view["nodes"][t["node"]]["name"] for t in all_view["tasks"]}
    st, _, body = d.post(request("tp8,pp4", NODES4, view="hostfile"))
    hf = json.loads(body)
    ok(st == 200 and hf["tasks"] == [] and
       [hf["nodes"][n]["name"] for n in hf["rank_nodes"]] == [rank_node[r] for r in range(32)],
       "view hostfile: no tasks, rank_nodes gives every rank's node")
    st, _, body = d.post(request("tp8,pp4", NODES4, view="node:node3"))
    nv = json.loads(body)
    ok(st == 200 and "rank_nodes" not in nv and len(nv["tasks"]) == 8 and
       nv["tasks"] == [t for t in all_view["tasks"] if t["node"] == 2],
       "view node:node3: that node's 8 tasks, as in the full view")

    # --- errors ---
    def error_case(name, want, body=None, method="POST", path="/v1/placement", needle=None):
        try:
            st, hdr, text = http_request(sock1, method, path, body)
        except OSError as e:
            ok(False, name)
            diag(str(e))
            return {}
        try:
            msg = json.loads(text).get("error", "")
        except ValueError:
            msg = None
        if not ok(st == want and isinstance(msg, str) and msg and (needle is None or needle in msg),
                  "%s: %d with a JSON error" % (name, want)):
            diag("got %d %r" % (st, text))
        return hdr

    error_case("not JSON", 400, "{\"spec\": ", needle="not JSON")
    error_case("empty body", 400, "")
    error_case("NUL byte in the body", 400, b"{\"spec\":\"tp8\"\x00}", needle="NUL")
    error_case("non-ASCII garbage", 400, "\u00e9\u00e9\u00e9".encode("utf-8"))
    error_case("invalid UTF-8 in a string", 400, b'{"spec": "tp8\xff\xfe", "nodes": []}')
    error_case("100,000-deep JSON", 400, "[" * 100000 + "]" * 100000)
    error_case("unknown request key", 400, json.dumps({"spec": "tp8", "nodes": [], "jobid": 1}),
               needle="jobid")
    error_case("view of a node not in the step", 400,
               json.dumps(request("tp8", ["node1"], view="node:node2")))
    error_case("tp16 on 8-GPU nodes", 422, json.dumps(request("tp16", NODES4)),
               needle="tp=16 exceeds the 8 GPUs per NVLink domain")
    error_case("bad spec", 422, json.dumps(request("tq8", NODES4)), needle="tq8")
    error_case("node not in the map", 422, json.dumps(request("tp8", ["node9"])), needle="node9")
    error_case("unknown path", 404, method="GET", path="/v1/nope", needle="/v1/nope")
    hdr = error_case("GET /v1/placement", 405, method="GET", needle="GET /v1/placement")
    is_eq(hdr.get("allow"), "POST", "405 names the allowed method")
    hdr = error_case("POST /v1/health", 405, "{}", path="/v1/health")
    is_eq(hdr.get("allow"), "GET, HEAD", "405 on health allows GET, HEAD")
    try:
        st, _, _ = http_request(sock1, "POST", "/v1/placement", b"x" * (2 << 20))
    except OSError:
        st = "closed"
    ok(st in (413, "closed"), "a body over max_body (1M) is refused (%s)" % st)

    # A client that sends half a request is dropped after request_timeout_ms
    # (1.5 s) and does not hold up the others.
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(sock1)
    s.sendall(b"POST /v1/placement HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
    t0 = time.monotonic()
    ok(d.health() is not None, "other requests are served while one hangs")
    try:
        rest = s.recv(4096)
    except OSError:
        rest = b""
    waited = time.monotonic() - t0
    s.close()
    ok(0.5 < waited < 8 and not rest.startswith(b"HTTP/1.1 200"),
       "the hanging request is closed after the timeout (%.1f s)" % waited)

    # --- steps ---
    st, _, body = d.get("/v1/steps")
    steps = json.loads(body)["steps"]
    first = next((x for x in steps if x["job_id"] == 42), None)
    ok(st == 200 and first is not None and
       [first["spec"], first["step_id"], first["world"], first["nnodes"], first["status"]] ==
       ["tp4,cp2,pp2,dp2", 1, 32, 4, 200] and first["strategy"] == resp["strategy"],
       "steps record job, step, spec, world, nodes, status and strategy")
    is_eq([(x["spec"], x["nnodes"], x["status"]) for x in steps[:3]],
          [("tp8", 1, 422), ("tq8", 4, 422), ("tp16", 4, 422)],
          "steps list refused placements too, newest first")
    for i in range(300):
        d.post(request("tp8", ["node2"], job=7, step=i))
    steps = json.loads(d.get("/v1/steps")[2])["steps"]
    is_eq([len(steps), steps[0]["step_id"], steps[-1]["step_id"], steps[0]["world"]],
          [256, 299, 44, 8], "steps keep the last 256 placements, newest first")
    like(d.log_text(), "placement job 42.1: tp8,pp4 on 4 nodes, 32 tasks: 200 in",
         "one log line per placement")
    like(d.log_text(), "tasks: 200 in", "a placement's log line carries no error")

    # --- layoutctl against the daemon ---
    rc, out, err = run("status", "--socket", sock1)
    ok(rc == 0 and "status       ok" in out and "node         node1" in out, "layoutctl status: ok")
    rc, out, err = run("status", "--socket", tcp, "--json")
    ok(rc == 0 and json.loads(out)["map"] == "cluster", "layoutctl status --json over TCP")
    rc, out, err = run("topology", "--socket", sock1)
    ok(rc == 0 and json.loads(out) == json.loads(map_text), "layoutctl topology prints the map")
    rc, out, err = run("query", "--socket", sock1, "--layout", "tp8,pp4", "--nodes", "node[1-4]")
    rc2, out2, err2 = run("place", "--topology", mapf, "--layout", "tp8,pp4", "--nodes", "node[1-4]")
    ok(rc == 0 and rc2 == 0 and out == out2, "layoutctl query prints the table of layoutctl place")
    rc, out, err = run("query", "--socket", sock1, "--layout", "tp8,pp2,dp2", "--nodes",
                       "node[1-4]", "--tasks-per-node", "8", "--json")
    rc2, out2, err2 = run("place", "--topology", mapf, "--layout", "tp8,pp2,dp2", "--nodes",
                          "node[1-4]", "--json")
    ok(rc == 0 and by_name(json.loads(out)) == json.loads(out2)["tasks"],
       "layoutctl query --json: the tasks of layoutctl place --json")
    rc, out, err = run("query", "--socket", sock1, "--layout", "tp8,pp4", "--nodes", "node[1-4]",
                       "--view", "hostfile")
    ok(rc == 0 and out.splitlines()[1].split() == ["0", rank_node[0]] and len(out.splitlines()) == 35,
       "layoutctl query --view hostfile prints each rank's node")
    rc, out, err = run("query", "--socket", sock1, "--layout", "tp16", "--nodes", "node[1-4]")
    ok(rc == 1 and "layoutd answered 422: tp=16 exceeds" in err, "layoutctl query: a refusal is exit 1")
    rc, out, err = run("status", "--socket", os.path.join(tmp, "nobody.sock"), "--timeout", "2000")
    ok(rc == 1 and "does not answer" in err, "layoutctl status: no daemon is exit 1")
    # Without --socket: layoutd's default socket for SLURMD_NODENAME, else the short host name.
    short = socket.gethostname().split(".")[0]
    for node, want in (("nosuchnode7", "nosuchnode7"), ("", short)):
        path = "/run/parallel-layout/layoutd-%s.sock" % want
        for cmd in ("status", "alerts"):
            name = "layoutctl %s without --socket asks %s" % (cmd, path)
            if os.path.exists(path):
                skip(name, "a layoutd serves it on this host")
                continue
            saved = os.environ.get("SLURMD_NODENAME")
            os.environ["SLURMD_NODENAME"] = node
            try:
                rc, out, err = run(cmd, "--timeout", "2000")
            finally:
                if saved is None:
                    del os.environ["SLURMD_NODENAME"]
                else:
                    os.environ["SLURMD_NODENAME"] = saved
            ok(rc == 1 and ("layoutctl: %s: layoutd does not answer: %s:" % (cmd, path)) in err, name)
            if rc != 1:
                diag("rc=%d err=%r" % (rc, err))
    rc, out, err = run("query", "--socket", sock1, "--nodes", "node1")
    is_eq(rc, 2, "layoutctl query without --layout is a usage error")
    for cmd in ("status", "topology", "query"):
        rc, out, err = run(cmd, "--help")
        ok(rc == 0 and out.startswith("Usage: layoutctl " + cmd), "layoutctl %s --help" % cmd)

    # --- a second layoutd on the same socket is refused ---
    p = subprocess.run([LAYOUTD, "-f", empty_conf, "--map", mapf, "--node", "node1",
                        "--hwloc-check", "no", "--socket", sock], capture_output=True, text=True,
                       timeout=30)
    ok(p.returncode == 1 and "another layoutd (node node1) is serving it" in p.stderr,
       "a second layoutd on a served socket refuses to start")
    diag(p.stderr.strip())
    ok(os.path.exists(sock1) and d.health() is not None, "the first one still serves")

    # --- SIGHUP: a new map while requests keep coming ---
    results, stop = [], threading.Event()

    def hammer():
        while not stop.is_set() and len(results) < 5000:
            try:
                st, _, body = d.post(request("tp8,pp4", NODES4))
                results.append((st, json.loads(body).get("map")))
            except (OSError, ValueError) as e:
                results.append((str(e), None))

    th = threading.Thread(target=hammer)
    th.start()
    try:
        wait_for(lambda: len(results) >= 10, 10)
        replace_file(mapf, map2_text)
        d.send(signal.SIGHUP)
        h = wait_for(lambda: (lambda x: x if x and x["reloads"] == 1 else None)(d.health()), 10)
        n0 = len(results)
        wait_for(lambda: len(results) >= n0 + 10, 10)
    finally:
        stop.set()
        th.join(timeout=30)
    ok(h is not None and h["map"] == "lab2", "SIGHUP reloaded the map (now lab2)")
    is_eq([r for r in results if r[0] != 200], [], "no request failed during the reload (%d sent)" % len(results))
    names = [r[1] for r in results]
    ok(len(results) >= 20 and names[0] == "cluster" and names[-1] == "lab2" and
       names == sorted(names, key=lambda n: n == "lab2"),
       "answers switch from the old map to the new one, never back")

    # A bad map on reload: the old one stays.
    replace_file(mapf, "{\"format\": \"parallel-layout-map\", \"version\": 1, \"nodes\": [")
    d.send(signal.SIGHUP)
    h = wait_for(lambda: (lambda x: x if x and x["reload_failures"] == 1 else None)(d.health()), 10)
    ok(h is not None and h["map"] == "lab2" and h["reloads"] == 1,
       "a broken map on reload is refused and the old map stays")
    st, _, body = d.post(request("tp8,pp4", NODES4))
    ok(st == 200 and json.loads(body)["map"] == "lab2", "placements go on with the old map")
    like(d.log_text(), "reload failed, still serving map lab2", "the refused reload is logged")

    # A config change on reload: hwloc_check against the 16-GPU DGX-2 export.
    replace_file(mapf, map2_text)
    replace_file(conf, conf_text.replace("hwloc_check = no", "hwloc_check = " + DGX2))
    d.send(signal.SIGHUP)
    h = wait_for(lambda: (lambda x: x if x and x["reloads"] == 2 else None)(d.health()), 20)
    ok(h is not None and h["status"] == "degraded" and len(h["discrepancies"]) == 1 and
       "8 GPUs" in h["discrepancies"][0] and "finds 16" in h["discrepancies"][0],
       "hwloc check with 16 GPUs against a map of 8: degraded, the discrepancy listed")
    if h:
        diag(h["discrepancies"])
    rc, out, err = run("status", "--socket", sock1)
    ok(rc == 1 and "status       degraded" in out and "discrepancy  GPUs" in out,
       "layoutctl status: degraded is exit 1")

    # --- SIGTERM: clean exit, files removed ---
    rc = d.stop()
    is_eq(rc, 0, "SIGTERM: exit 0")
    ok(not os.path.exists(sock1) and not os.path.exists(pidfile) and not os.path.exists(port_file),
       "socket, pid file and port file removed")
    like(d.log_text(), "exiting", "the exit is logged")

    # --- placements derived by hand, on a map written here ---
    # Four nodes of 4 GPUs in one NVLink island; node1 and node3 hang off
    # leaf0, node2 and node4 off leaf1 (interleaved, as on the lab).
    lc = {"gbps": 0.0, "measured": False, "source": ""}
    hand_map = {
        "format": "parallel-layout-map", "version": 1, "name": "hand",
        "link_classes": {"nvlink": dict(lc, gbps=450.0), "pcie": dict(lc, gbps=25.0),
                         "leaf": dict(lc, gbps=50.0), "spine": dict(lc, gbps=25.0)},
        "node_types": [{"name": "g4", "gpu_memory_gb": 0.0, "nccl_topo_file": "",
                        "gpus": [{"index": i, "numa": -1, "pci": "", "island": 0, "nic": -1,
                                  "name": ""} for i in range(4)], "nics": []}],
        "switches": [{"name": "leaf0", "level": 0, "gbps": 0.0, "parent": "spine"},
                     {"name": "leaf1", "level": 0, "gbps": 0.0, "parent": "spine"},
                     {"name": "spine", "level": 1, "gbps": 0.0}],
        "blocks": [],
        "nodes": [{"name": "node1", "switch": "leaf0"}, {"name": "node2", "switch": "leaf1"},
                  {"name": "node3", "switch": "leaf0"}, {"name": "node4", "switch": "leaf1"}],
        "default_type": "g4"}
    leaf = {"node1": 0, "node3": 0, "node2": 1, "node4": 1}
    hand_path = os.path.join(tmp, "hand.json")
    with open(hand_path, "w") as f:
        json.dump(hand_map, f)
    hd, _ = mini_daemon(tmp, "hand", hand_path)
    daemons.append(hd)
    ok(hd.up, "a daemon on the hand-written map starts")
    # tp4,pp4: rank = tp + 4*pp.  A TP group needs NVLink, so each node holds
    # one whole stage with local rank = tp; the stages form a chain
    # pp0-pp1-pp2-pp3 whose three links all cross nodes, and with two nodes
    # per leaf only one of them need cross the spine: the stages' leaves
    # read A A B B.  Slurm's block order (stage k on node k+1) alternates
    # leaves, so all three cross it: a third of its cross-switch bytes and
    # the same cross-node bytes.
    st, _, body = hd.post(request("tp4,pp4", NODES4, ntasks=4))
    resp = json.loads(body) if st == 200 else {}
    names = [n["name"] for n in resp.get("nodes", [])]
    stage_node = {}
    good = st == 200 and len(resp["tasks"]) == 16 and resp["world"] == 16
    for t in resp.get("tasks", []):
        good = good and t["tp"] == t["rank"] % 4 and t["pp"] == t["rank"] // 4 and \
            t["local_rank"] == t["tp"] and t["dp"] == 0 and t["cp"] == 0
        stage_node.setdefault(t["pp"], set()).add(names[t["node"]])
    ok(good and all(len(stage_node.get(k, ())) == 1 for k in range(4)) and
       len({next(iter(v)) for v in stage_node.values()}) == 4,
       "tp4,pp4: each node holds one whole stage, local rank = tp = rank % 4")
    seq = [leaf[next(iter(stage_node[k]))] for k in range(4)] if len(stage_node) == 4 else []
    ok(len(seq) == 4 and sum(seq[i] != seq[i + 1] for i in range(3)) == 1,
       "tp4,pp4: the stages' leaves read A A B B (one spine crossing): %s" % seq)
    if st == 200:
        c, b = resp["cost"], resp["baseline_cost"]
        is_close(c["cross_switch_bytes_per_step"], b["cross_switch_bytes_per_step"] / 3,
                 "tp4,pp4: a third of block order's cross-switch bytes")
        is_close(c["cross_node_bytes_per_step"], b["cross_node_bytes_per_step"],
                 "tp4,pp4: the same cross-node bytes as block order (three stage links)")
        ok(b["cross_switch_bytes_per_step"] > 0, "tp4,pp4: block order does cross the spine")
    st, _, body = hd.post(request("tp4,pp4", NODES4, ntasks=4, view="hostfile"))
    hf = json.loads(body) if st == 200 else {}
    want = [names.index(next(iter(stage_node[r // 4]))) for r in range(16)] if seq else None
    is_eq(hf.get("rank_nodes"), want, "tp4,pp4 hostfile: rank r on the node of stage r // 4")
    st, _, body = hd.post(request("tp8", ["node1", "node2"], ntasks=4))
    ok(st == 422 and "exceeds the 4 GPUs" in body, "tp8 on 4-GPU nodes is refused (422)")
    hd.stop()

    # --- hostile clients: loopback only, bounded, self-stopping ---
    # 50 requests dripped a byte every 0.2 s: request_timeout_ms (1 s) bounds
    # the whole request, not only the silence between bytes.
    hs, _ = mini_daemon(tmp, "hostile", mapf, "request_timeout_ms = 1000\n")
    daemons.append(hs)
    ok(hs.up, "a daemon for hostile clients starts")
    probe = HealthProbe(hs.socket, 2.0)
    probe.start()
    opened = drip(hs.socket, 50, 0.2, 5.0)
    n, good, worst = probe.finish()
    longest = max([t for t in opened if t is not None] or [0])
    ok(all(t is not None and t < 2.5 for t in opened),
       "50 dripped requests are all closed within 2.5 s (request_timeout_ms 1 s): %s" %
       ("%d still open after 5 s" % opened.count(None) if None in opened else
        "longest %.2f s" % longest))
    ok(n >= 4 and good and worst < 2.0,
       "health answers meanwhile (%d requests, slowest %.2f s)" % (n, worst))
    text = hs.log_text()
    drops = [ln for ln in text.splitlines() if "within request_timeout_ms 1000" in ln]
    ok(1 <= len(drops) <= 3, "the dropped connections are logged in a few lines (%d)" % len(drops))

    # One 16 MB header line: cut off after max_header, at little cost.
    s = connect_unix(hs.socket, time.monotonic() + 5)
    s.setblocking(True)
    s.settimeout(5)
    cpu0, sent, closed, t0 = hs.cpu_s(), 0, False, time.monotonic()
    try:
        s.sendall(b"GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Big: ")
        chunk = b"a" * 65536
        while sent < (16 << 20) and time.monotonic() - t0 < 10:
            sent += s.send(chunk)
    except socket.timeout:
        pass
    except OSError:
        closed = True
    s.close()
    ok(closed and sent < (4 << 20), "a 16 MB header line is refused early (connection closed after %d KB)" % (sent >> 10))
    cpu = hs.cpu_s() - cpu0
    ok(cpu < 1.0, "and costs little CPU (%.2f s)" % cpu)

    # A newline in a spec must not forge a log line.
    forged = "2026-01-01T00:00:00+0000 layoutd[1]: placement job 1.0: tp8 on 1 nodes: 200"
    st, _, _ = hs.post(request("tp8\n" + forged, ["node1"]))
    lines = hs.log_text().splitlines()
    ok(st == 422 and not any(ln.startswith(forged) for ln in lines) and
       any("tp8\\x0a2026-01-01" in ln for ln in lines),
       "a newline in a spec is logged escaped (\\x0a), never as a line of its own")
    is_eq(hs.stop(), 0, "the hostile clients' daemon exits 0 after SIGTERM")

    # An answer slower than request_timeout_ms is still sent, and logged.
    big_conf = os.path.join(tmp, "big-topology.conf")
    with open(big_conf, "w") as f:
        for lf in range(256):
            f.write("SwitchName=leaf%d Nodes=n[%d-%d]\n" % (lf, lf * 64 + 1, lf * 64 + 64))
        f.write("SwitchName=spine Switches=leaf[0-255]\n")
    big_map = os.path.join(tmp, "big.json")
    rc, _, err = run("topo", "build", "--slurm-topology", big_conf, "--node", "8", "-o", big_map)
    sl, _ = mini_daemon(tmp, "slow", big_map, "request_timeout_ms = 25\n", node="n1")
    daemons.append(sl)
    big_req = json.dumps(request("tp8,pp8,dp2048", ["n%d" % i for i in range(1, 16385)],
                                 view="hostfile", job=5, step=0))
    # 25 ms is also all the 500 KB request itself may take to arrive, and
    # a write of the 1.7 MB answer that stalls that long (a client slowed
    # by a loaded machine) is closed: either can fail, so up to three tries.
    for _ in range(3):
        try:
            st, _, body = sl.post(big_req)
        except (OSError, http.client.HTTPException) as e:
            st, body = str(e), "{}"
        if st == 200:
            break
    ok(rc == 0 and sl.up and st == 200 and len(json.loads(body)["rank_nodes"]) == 131072,
       "a 131072-task placement slower than request_timeout_ms (25 ms) is still answered")
    like(sl.log_text(), "more than request_timeout_ms 25: the caller has likely given up",
         "an answer slower than request_timeout_ms says so in the log")
    sl.stop()

    # 300 idle connections against 64 descriptors: once with a cap that fits
    # (the oldest idle connection is shed), once with the default cap (512),
    # which does not: accept() fails with EMFILE, and layoutd backs off,
    # sheds and logs a little instead of spinning.
    for name, extra in (("cap", "max_connections = 40\n"), ("emfile", "")):
        dm, _ = mini_daemon(tmp, name, mapf, extra + "request_timeout_ms = 30000\n", nofile=64)
        daemons.append(dm)
        if not ok(dm.up, "%s: layoutd starts with 64 descriptors" % name):
            diag(dm.log_text())
            continue
        cpu0, t0 = dm.cpu_s(), time.monotonic()
        probe = HealthProbe(dm.socket, 3.0).start()
        held = hold_idle(dm.socket, 300, 5.0)
        # At least 4 requests while the connections are held, 2 s at least.
        time.sleep(2)
        probe.wait_more(4, 20)
        n, good, worst = probe.finish()
        cpu, wall = dm.cpu_s() - cpu0, time.monotonic() - t0
        for s in held:
            s.close()
        hh = wait_for(lambda: timed_health(dm.socket, 2)[0] and dm.health(), 10)
        text = dm.log_text()
        ok(n >= 4 and good and worst < 3.0,
           "%s: health answers within 3 s while %d idle connections are held (%d requests, slowest %.2f s)" %
           (name, len(held), n, worst))
        ok(cpu < 0.5 * wall, "%s: no busy loop (%.2f s of CPU in %.1f s)" % (name, cpu, wall))
        ok(len(text) < 20000 and sum("accept" in ln for ln in text.splitlines()) <= 5,
           "%s: the log is not flooded (%d bytes)" % (name, len(text)))
        conn = (hh or {}).get("connections", {})
        if name == "cap":
            ok(conn.get("shed", 0) > 0 and conn.get("accept_errors") == 0,
               "cap: idle connections were shed, accept() never failed: %s" % conn)
        else:
            ok(conn.get("accept_errors", 0) > 0 and "warning: max_connections 512 does not fit" in text,
               "emfile: accept() failures were met and counted, the start warned: %s" % conn)
        is_eq(dm.stop(), 0, "%s: exit 0 after SIGTERM" % name)

    # --- who may see what ---
    # The socket is open to every user; the daemon asks the kernel who calls.
    os.chmod(tmp, 0o711)
    pub = os.path.join(tmp, "pub")
    os.mkdir(pub)
    os.chmod(pub, 0o755)
    NOBODY, SLURM, USER = 65534, 65533, 1000
    aport = os.path.join(tmp, "access.port")
    ac, acconf = mini_daemon(tmp, "access", mapf,
                             "socket_mode = 0666\nslurm_user = %d\ntcp = 127.0.0.1:0\n"
                             "port_file = %s\n" % (SLURM, aport), sock=os.path.join(pub, "ld.sock"))
    daemons.append(ac)
    if not ok(ac.up, "a daemon with slurm_user and a world-writable socket starts"):
        diag(ac.log_text())
        raise SystemExit(done())

    def call(uid, method, path, body=None, where=None):
        def fn():
            st, _, text = http_request(where or ac.socket, method, path, body)
            return [st, text]
        if body is not None and not isinstance(body, str):
            body = json.dumps(body)
        return fn() if uid == 0 else as_user(uid, fn)

    def step_jobs(res):
        try:
            return [x["job_id"] for x in json.loads(res[1])["steps"]]
        except (ValueError, KeyError, TypeError, IndexError):
            return res

    got = call(NOBODY, "GET", "/v1/health")
    ok(isinstance(got, list) and got[0] == 200, "uid %d reaches the socket" % NOBODY)
    results = [call(0, "POST", "/v1/placement", request("tp8", ["node1"], job=100, step=0, uid=NOBODY)),
               call(0, "POST", "/v1/placement", request("tp8", ["node1"], job=101, step=0, uid=USER)),
               call(0, "POST", "/v1/placement", request("tp8", ["node1"], job=102, step=0)),
               call(NOBODY, "POST", "/v1/placement", request("tp8", ["node1"], job=555, step=0, uid=NOBODY)),
               call(SLURM, "POST", "/v1/placement", request("tp8", ["node1"], job=103, step=0, uid=NOBODY))]
    is_eq([r[0] if isinstance(r, list) else r for r in results], [200] * 5,
          "placements are answered for root, an ordinary user and the Slurm user")
    is_eq(step_jobs(call(0, "GET", "/v1/steps")), [103, 102, 101, 100],
          "root sees every recorded step; the one a user asked for is not recorded")
    is_eq(step_jobs(call(NOBODY, "GET", "/v1/steps")), [103, 100],
          "uid %d sees only its own jobs" % NOBODY)
    is_eq(step_jobs(call(USER, "GET", "/v1/steps")), [101], "uid %d sees only its own job" % USER)
    is_eq(step_jobs(call(SLURM, "GET", "/v1/steps")), [103, 102, 101, 100],
          "the Slurm user sees every step")
    like(ac.log_text(), "caller uid %d (untrusted: not recorded)" % NOBODY,
         "an untrusted placement is logged as such")
    ok("job 555" not in ac.log_text(), "an untrusted caller's job id is not believed in the log")
    aport_n = wait_for(lambda: os.path.exists(aport) and open(aport).read().strip(), 10)
    atcp = "http://127.0.0.1:%s" % aport_n
    is_eq([call(0, "GET", "/v1/health", where=atcp)[0],
           call(0, "GET", "/v1/topology", where=atcp)[0],
           call(0, "POST", "/v1/placement", request("tp8", ["node1"]), where=atcp)[0],
           call(0, "GET", "/v1/steps", where=atcp)[0]], [200, 200, 403, 403],
          "TCP is read-only by default: health and topology, not placements or steps")
    like(call(0, "GET", "/v1/steps", where=atcp)[1], "tcp_access = read-only",
         "the 403 names tcp_access")
    with open(acconf) as f:
        acconf_text = f.read()
    replace_file(acconf, acconf_text + "tcp_access = query\n")
    ac.send(signal.SIGHUP)
    wait_for(lambda: (ac.health() or {}).get("reloads") == 1, 10)
    is_eq([call(0, "POST", "/v1/placement", request("tp8", ["node1"], job=104, step=0),
                where=atcp)[0], call(0, "GET", "/v1/steps", where=atcp)[0],
           step_jobs(call(0, "GET", "/v1/steps"))],
          [200, 403, [103, 102, 101, 100]],
          "tcp_access = query (applied on reload): TCP placements answered, not recorded; no steps")
    replace_file(acconf, acconf_text + "tcp_access = trusted\n")
    ac.send(signal.SIGHUP)
    wait_for(lambda: (ac.health() or {}).get("reloads") == 2, 10)
    is_eq(step_jobs(call(0, "GET", "/v1/steps", where=atcp)), [103, 102, 101, 100],
          "tcp_access = trusted: TCP sees every step")
    is_eq(ac.stop(), 0, "the access daemon exits 0 after SIGTERM")

    # --- a second full run, under valgrind when present, over a stale socket ---
    stale = os.path.join(tmp, "stale.sock")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(stale)
    s.close()   # the file stays, nothing listens: a crashed daemon's leftover
    replace_file(mapf, map_text)
    vg = shutil.which("valgrind")
    with open(LAYOUTD, "rb") as f:
        exe = f.read()
    # valgrind cannot run a wrapper script nor a binary built with ASan.
    why_not = ("valgrind not installed" if not vg else
               "layoutd is a wrapper script" if exe.startswith(b"#!") else
               "layoutd is built with AddressSanitizer" if b"__asan_init" in exe else None)
    wrapper = []
    if not why_not:
        wrapper = [vg, "--error-exitcode=99", "--leak-check=full",
                   "--errors-for-leak-kinds=definite", "-q"]
    vlog = os.path.join(tmp, "vg.log")
    vconf = os.path.join(tmp, "vg.conf")
    with open(vconf, "w") as f:
        f.write("max_connections = 4\nrequest_timeout_ms = 4000\n")
    v = Daemon(["-f", vconf, "--map", mapf, "--node", "node2", "--socket", stale,
                "--hwloc-check", DGX2, "--tcp", "127.0.0.1:0"], vlog, wrapper=wrapper,
               socket_path=stale, start_timeout=120)
    daemons.append(v)
    if not ok(v.up and v.p.poll() is None, "layoutd starts over a stale socket%s" %
              (" under valgrind" if wrapper else "")):
        diag(v.log_text())
        raise SystemExit(done())
    like(v.log_text(), "removed stale socket", "the stale socket is reported")
    h = v.health()
    ok(h is not None and h["status"] == "degraded" and "finds 16" in h["discrepancies"][0],
       "degraded at start with the DGX-2 export")
    st, _, body = v.post(request("tp8,pp2,dp2", NODES4, job=9, step=0))
    is_eq(st, 200, "a placement under the checker")
    is_eq(v.post("{]")[0], 400, "a bad request under the checker")
    is_eq(v.post(request("tp16", NODES4))[0], 422, "a refused layout under the checker")
    is_eq(v.get("/v1/steps")[0], 200, "steps under the checker")
    is_eq(v.get("/v1/nope")[0], 404, "404 under the checker")
    held = hold_idle(stale, 8, 10.0)
    dripped = drip(stale, 1, 0.2, 12.0)
    hv = v.health()
    for s in held:
        s.close()
    conn = (hv or {}).get("connections", {})
    ok(conn.get("shed", 0) >= 4 and dripped[0] is not None and conn.get("timed_out", 0) >= 1,
       "under the checker: idle connections past max_connections (4) are shed, a dripped "
       "request is dropped at request_timeout_ms: %s, %s" % (conn, dripped))
    v.send(signal.SIGHUP)
    wait_for(lambda: (lambda x: x and x["reloads"] == 1)(v.health()), 60)
    rc = v.stop(timeout=120)
    if wrapper:
        is_eq(rc, 0, "valgrind: no errors, no definite leaks, exit 0 after SIGTERM")
        if rc != 0:
            diag(v.log_text())
    else:
        is_eq(rc, 0, "exit 0 after SIGTERM")
        skip("valgrind run", why_not)
    ok(not os.path.exists(stale), "its socket is removed at exit")
finally:
    for dm in daemons:
        if dm.p.poll() is None:
            dm.p.kill()
            dm.p.wait(timeout=10)
    shutil.rmtree(tmp, ignore_errors=True)
done()
