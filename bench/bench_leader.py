#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The leader's cost for a simulated 16,384-rank step: summaries from 2,048
nodes (8 ranks x 6 communicators each, tp8 dp256 pp8) at 1 Hz, each with a
real munge credential, against the same daemon taking the same requests
refused early, in one run.  The issue's budget: under 5 % of one core.

One real layoutd (peer_listen on loopback, watch_interval_ms = 1000, so it
judges the whole step once a second) and two private munged sharing one
key: the leader's (its CPU is taken apart: every credential a leader gets
is decoded by its node's munged) and the senders' (the credentials are
made there, as each follower's own munged would, so that work is not
charged to the leader's node).  2,048 keep-alive connections, one per
simulated node, each sending one POST /v1/peer/summary a second, spread
evenly over the second.  The summaries are real ones (lib/watch/summary.h,
version 7 as layoutd sends them; one header a round before the same ranks,
msg_seq counting up); the
credentials (payload: the body's SHA-256) are made before a phase for
every round of it, with a TTL that outlasts the phase.

Phases, W rounds each (the first round of each is not counted; the fan-in
three windows of W, its figure their median):
  baseline  the same requests without X-PL-Munge: refused with 401 after
            the headers (HTTP, connections, the refusal and its counter);
  munge     with a real credential each, of another payload: the
            credential checked (the worker thread and munged), then
            refused with 403 on the checksum;
  leader    the real thing: credential checked, checksum, decode, rebase,
            the step's 16,384 ranks kept, the judge over them every second.
The differences between them are the munge path's cost and the summaries'
own (decode, state, judge).
CPU is on-CPU ns from /proc/PID/task/*/schedstat (every thread, the munge
worker included), munged's the same way; memory is VmRSS and VmHWM.  A
phase counts only when every request got the answer the phase expects and
the leader shows all 2,048 nodes and 16,384 ranks afterwards.  Prints the
figures, a JSON line and a one-line summary; exits 1 when the budget is
missed, 2 when a check fails, 77 when it cannot run here (not root, no
munged).

Usage: bench_leader.py [BUILDDIR [ROUNDS]]"""
import ctypes
import ctypes.util
import hashlib
import json
import os
import resource
import selectors
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time

top = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(top, "tests"))
from taplib import http_request, wait_for  # noqa: E402
from watchlib import SUM_VERSION, sum_header, varint  # noqa: E402

PROG = "bench_leader"
BUDGET = 0.05           # of one core
NODES = 2048
RANKS = 8               # per node
TP, DP, PP = 8, 256, 8
WORLD = TP * DP * PP
COMMS = ("tp", "dp", "pp", "world", "mp", "dp-cp")
JOB = 900001
MUNGE_OPT_TTL, MUNGE_OPT_SOCKET = 4, 8
FAN_WINDOWS = 3         # the fan-in phase: its median of three windows


def die(code, msg):
    print("%s: %s" % (PROG, msg), file=sys.stderr)
    sys.exit(code)


def h64(*parts):
    return int.from_bytes(hashlib.sha256(repr(parts).encode()).digest()[:8], "little")


def text(s):
    """A counted text (summary.h)."""
    return bytes([len(s)]) + s


def comm(name, key, rank, nranks):
    """One communicator of a healthy rank: its last collective entered 50 ms
    ago and completed, a full wait window."""
    colls = 10 if name == "world" else 1000
    c = struct.pack("<Q", h64(name, key)) + text(name.encode()) + b"".join(
        varint(x) for x in (rank, nranks, 1, 32, 0, colls, colls)) + text(b"AllReduce") + \
        b"".join(varint(x) for x in (50000000, colls, 0, 40000000, 32 * 2000000,
                                     32 * 20000000))
    # nnodes (TP inside the node), no AllGather run, and the p2p time of a
    # pipeline rank that idles a tenth of the time
    nnodes = 1 if name == "tp" else max(1, nranks // RANKS)
    wait, span = (100000000, 1000000000) if name == "pp" else (0, 0)
    return c + b"".join(varint(x) for x in (nnodes, 0, 0, 0, wait, span))


def node_ranks(n):
    """The ranks (and their communicators) of simulated node n."""
    out = b""
    for i in range(RANKS):
        r = n * RANKS + i
        tp, dp, pp = r % TP, (r // TP) % DP, r // (TP * DP)
        cs = [comm("tp", (dp, pp), tp, TP), comm("dp", (tp, pp), dp, DP),
              comm("pp", (tp, dp), pp, PP), comm("world", (), r, WORLD),
              comm("mp", (dp,), tp + TP * pp, TP * PP), comm("dp-cp", (tp, pp), dp, DP)]
        out += b"".join(varint(x) for x in (r, 100000 + r, 0, 0, i + 1, tp, 0, 0, dp, pp))
        out += b"\0" + text(b"mlx5_%d" % i) + varint(len(cs))
        out += b"".join(cs)
    # then each rank's process tree (version 5), not sampled, and each
    # communicator's signature rest (version 7): count, datatype, root + 1,
    # the p2p counts to and from its neighbours, its bursts
    out += b"\0" * 10 * RANKS
    out += (varint(1 << 20) + text(b"ncclBfloat16") + varint(0) + b"\0" * 5) * \
        (RANKS * len(COMMS))
    return out


def header(n, seq, blob_len):
    return sum_header(b"sim%04d" % n, JOB, 0, seq, 1000 + n, 0, 1000, WORLD, (TP, 1, 1, DP, PP),
                      RANKS, blob_len)


class Munge:
    """munge_encode through libmunge, on a given munged."""

    def __init__(self, sock, ttl):
        self.lib = ctypes.CDLL(ctypes.util.find_library("munge") or "libmunge.so.2")
        self.libc = ctypes.CDLL(None)
        self.lib.munge_ctx_create.restype = ctypes.c_void_p
        self.lib.munge_ctx_set.argtypes = [ctypes.c_void_p, ctypes.c_int]
        self.lib.munge_encode.argtypes = [ctypes.POINTER(ctypes.c_char_p), ctypes.c_void_p,
                                          ctypes.c_char_p, ctypes.c_int]
        self.libc.free.argtypes = [ctypes.c_void_p]
        self.ctx = self.lib.munge_ctx_create()
        self.lib.munge_ctx_set(ctypes.c_void_p(self.ctx), MUNGE_OPT_SOCKET,
                               ctypes.c_char_p(sock.encode()))
        self.lib.munge_ctx_set(ctypes.c_void_p(self.ctx), MUNGE_OPT_TTL, ctypes.c_int(ttl))

    def encode(self, payload):
        out = ctypes.c_char_p()
        e = self.lib.munge_encode(ctypes.byref(out), self.ctx, payload, len(payload))
        if e != 0:
            die(2, "munge_encode: error %d" % e)
        cred = out.value
        self.libc.free(ctypes.cast(out, ctypes.c_void_p))
        return cred


def start_munged(d, key, name):
    sock = os.path.join(d, name + ".socket")
    p = subprocess.Popen(["munged", "-F", "-f", "--socket=" + sock, "--key-file=" + key,
                          "--pid-file=" + os.path.join(d, name + ".pid"),
                          "--log-file=" + os.path.join(d, name + ".log"),
                          "--seed-file=" + os.path.join(d, name + ".seed")],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.STDOUT)
    if not wait_for(lambda: p.poll() is not None or os.path.exists(sock), 20) or p.poll():
        die(2, "munged %s did not start" % name)
    return p, sock


def cpu_ns(pid):
    """On-CPU ns of every thread of pid."""
    total = 0
    for t in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/schedstat" % (pid, t)) as f:
                total += int(f.read().split()[0])
        except OSError:
            pass
    return total


def mem_kb(pid):
    out = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                out[line.split(":")[0]] = int(line.split()[1])
    return out


class Conn:
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port))
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""
        self.pending = 0


def read_answers(sel, statuses, wait):
    """Read what has come back; each complete answer's status into statuses."""
    for key, _ in sel.select(wait):
        c = key.data
        try:
            data = c.s.recv(65536)
        except BlockingIOError:
            continue
        if not data:
            if c.pending:
                die(2, "the leader closed a connection with an answer owed")
            sel.unregister(c.s)     # idle past request_timeout_ms: the fan-in uses few
            continue
        c.buf += data
        while True:
            end = c.buf.find(b"\r\n\r\n")
            if end < 0:
                break
            head = c.buf[:end].decode("latin-1")
            length = 0
            for line in head.split("\r\n")[1:]:
                k, _, v = line.partition(":")
                if k.lower() == "content-length":
                    length = int(v)
            if len(c.buf) < end + 4 + length:
                break
            statuses.append(int(head.split()[1]))
            c.buf = c.buf[end + 4 + length:]
            c.pending -= 1


def run_phase(conns, sel, port, blobs, creds, rounds, seq0):
    """rounds rounds of one summary per node, spread over each second.
    creds None: no credential.  Returns the statuses of every round."""
    out = []
    t0 = time.monotonic() + 0.2
    for r in range(rounds):
        st = []
        for n in range(NODES):
            due = t0 + r + n / NODES
            while time.monotonic() < due:
                read_answers(sel, st, max(0.0, min(0.002, due - time.monotonic())))
            body = header(n, seq0 + r, len(blobs[n])) + blobs[n] if creds is None else \
                creds[r][n][0]
            cred = b"" if creds is None else b"X-PL-Munge: " + creds[r][n][1] + b"\r\n"
            c = conns[n]
            c.s.setblocking(True)
            c.s.sendall(b"POST /v1/peer/summary HTTP/1.1\r\nHost: leader\r\n"
                        b"Content-Type: application/octet-stream\r\nContent-Length: %d\r\n"
                        b"%s\r\n" % (len(body), cred) + body)
            c.s.setblocking(False)
            c.pending += 1
        end = time.monotonic() + 5
        while sum(c.pending for c in conns) and time.monotonic() < end:
            read_answers(sel, st, 0.05)
        out.append(st)
    return out


def make_creds(m, blobs, rounds, seq0, forged=False):
    """Per round and node the body and its credential (forged: the
    credential of another payload)."""
    creds = []
    for r in range(rounds):
        row = []
        for n in range(NODES):
            body = header(n, seq0 + r, len(blobs[n])) + blobs[n]
            payload = hashlib.sha256(body + (b"x" if forged else b"")).hexdigest().encode()
            row.append((body, m.encode(payload)))
        creds.append(row)
    return creds


def fanin_width(n):
    """peer_fanin = auto for a step of n nodes (daemon/watch/peer.c)."""
    if n <= 64:
        return 0
    w = 1
    while w * w < n:
        w += 1
    return w


BATCH_MAGIC = 0x3130544142574c50


def fanin_msgs(m, blobs, rounds, seq0):
    """Per round what the leader gets with the fan-in of auto: the step's
    order is the leader then the simulated nodes (N = NODES + 1), width w;
    the first node of each group (the second in the leader's) sends one
    batch of its own summary and its members' (each member held a share
    of the interval), with one credential of the batch's SHA-256.  Per
    round a list of (sender, path, body, credential)."""
    w = fanin_width(NODES + 1)
    groups = [range(1, w)] + [range(g, min(g + w, NODES + 1)) for g in range(w, NODES + 1, w)]
    out = []
    for r in range(rounds):
        row = []
        for grp in groups:
            i = grp[0]                      # order index i is node i - 1
            items = b""
            for j in grp:
                sb = header(j - 1, seq0 + r, len(blobs[j - 1])) + blobs[j - 1]
                hold = 0 if j == i else int(1e9 * (j - i) / w)
                items += struct.pack("<QII", hold, len(sb), 0) + sb
            body = struct.pack("<QIIQ", BATCH_MAGIC, 1, len(grp), 24 + len(items)) + items
            row.append((i - 1, b"/v1/peer/batch", body,
                        m.encode(hashlib.sha256(body).hexdigest().encode())))
        out.append(row)
    return out


def run_msgs(conns, sel, msgs):
    """One round per entry of msgs, its messages spread over the second."""
    out = []
    t0 = time.monotonic() + 0.2
    for r, row in enumerate(msgs):
        st = []
        for k, (n, path, body, cred) in enumerate(row):
            due = t0 + r + k / len(row)
            while time.monotonic() < due:
                read_answers(sel, st, max(0.0, min(0.002, due - time.monotonic())))
            c = conns[n]
            c.s.setblocking(True)
            c.s.sendall(b"POST %s HTTP/1.1\r\nHost: leader\r\n"
                        b"Content-Type: application/octet-stream\r\nContent-Length: %d\r\n"
                        b"X-PL-Munge: %s\r\n\r\n" % (path, len(body), cred) + body)
            c.s.setblocking(False)
            c.pending += 1
        end = time.monotonic() + 5
        while sum(c.pending for c in conns) and time.monotonic() < end:
            read_answers(sel, st, 0.05)
        out.append((st, len(row)))
    return out


def fanin_phase(ld, mp, conns, sel, msgs, windows):
    """The fan-in's traffic: a round not counted, then the rest in
    `windows` windows of equal rounds, each counted on its own.  Its CPU
    share is the windows' median: on a shared machine one window can run
    on a busy neighbour's time (the fan-in's few wakeups a second pay for
    cold caches), the median is what the leader costs."""
    st = run_msgs(conns, sel, msgs[:1])
    per = (len(msgs) - 1) // windows
    cpu, mung = [], []
    for k in range(windows):
        c0, m0, t0 = cpu_ns(ld.pid), cpu_ns(mp.pid), time.monotonic()
        st += run_msgs(conns, sel, msgs[1 + k * per:1 + (k + 1) * per])
        c1, m1, t1 = cpu_ns(ld.pid), cpu_ns(mp.pid), time.monotonic()
        cpu.append((c1 - c0) / 1e9 / (t1 - t0))
        mung.append((m1 - m0) / 1e9 / (t1 - t0))
    return {"cpu": sorted(cpu)[len(cpu) // 2], "windows": cpu,
            "munged": sorted(mung)[len(mung) // 2], "munged_windows": mung,
            "mem": mem_kb(ld.pid), "messages": msgs and len(msgs[0]),
            "answers_ok": all(len(x) == n and set(x) == {200} for x, n in st)}


def phase(ld, mp, conns, sel, port, blobs, creds, rounds, seq0, want):
    """One phase: a round not counted, then rounds counted.  Its CPU shares
    (layoutd, munged), memory, and whether every answer was want."""
    st = run_phase(conns, sel, port, blobs, creds[:1] if creds else None, 1, seq0)
    c0, m0, t0 = cpu_ns(ld.pid), cpu_ns(mp.pid), time.monotonic()
    st += run_phase(conns, sel, port, blobs, creds[1:] if creds else None, rounds, seq0 + 1)
    c1, m1, t1 = cpu_ns(ld.pid), cpu_ns(mp.pid), time.monotonic()
    return {"cpu": (c1 - c0) / 1e9 / (t1 - t0), "munged": (m1 - m0) / 1e9 / (t1 - t0),
            "mem": mem_kb(ld.pid),
            "answers_ok": all(len(x) == NODES and set(x) == {want} for x in st)}


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(top, "_build")
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    layoutd = os.environ.get("LAYOUTD") or os.path.join(build, "daemon", "layoutd")
    layoutctl = os.environ.get("LAYOUTCTL") or os.path.join(build, "ctl", "layoutctl")
    if os.geteuid() != 0:
        print("%s: skipped: needs root (munged and its key)" % PROG)
        return 77
    if not shutil.which("munged"):
        print("%s: skipped: munged not installed (Debian: munge)" % PROG)
        return 77
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard < NODES + 256:
        die(77, "the descriptor limit %d is below %d" % (hard, NODES + 256))
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    tmp = tempfile.mkdtemp(prefix="bench-leader.")
    procs = []
    ld = None
    try:
        os.chmod(tmp, 0o755)
        kd = os.path.join(tmp, "key")
        os.mkdir(kd, 0o700)
        key = os.path.join(kd, "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o400)
        mp, msock = start_munged(tmp, key, "leader-munged")
        sp, ssock = start_munged(tmp, key, "senders-munged")
        procs += [mp, sp]
        mapf = os.path.join(tmp, "map.json")
        subprocess.run([layoutctl, "topo", "build", "--nodes", "leader", "--node", "8",
                        "--name", "bench", "-o", mapf], check=True, capture_output=True)
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        conf = os.path.join(tmp, "ld.conf")
        log = os.path.join(tmp, "ld.log")
        with open(conf, "w") as f:
            f.write("map = %s\nsocket = %s/ld.sock\nnode_name = leader\nhwloc_check = no\n"
                    "watch_interval_ms = 1000\nwatch_dir = %s/wd\npeer_listen = 127.0.0.1:%d\n"
                    "munge_socket = %s\npeer_max_connections = 4096\nmax_connections = 64\n"
                    "request_timeout_ms = 60000\nlog = %s\n" % (mapf, tmp, tmp, port, msock, log))
        ld = subprocess.Popen([layoutd, "-f", conf], stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        sockp = os.path.join(tmp, "ld.sock")
        if not wait_for(lambda: ld.poll() is not None or os.path.exists(sockp), 30) or \
                ld.poll() is not None:
            die(2, "layoutd did not start")
        t = time.monotonic()
        blobs = [node_ranks(n) for n in range(NODES)]
        size = 168 + len(blobs[0])
        print("%s: %d summaries of %d bytes a round (%d ranks, %d communicators each), built "
              "in %.1f s" % (PROG, NODES, size, RANKS, len(COMMS), time.monotonic() - t))
        conns = [Conn(port) for _ in range(NODES)]
        sel = selectors.DefaultSelector()
        for c in conns:
            c.s.setblocking(False)
            sel.register(c.s, selectors.EVENT_READ, c)
        m = Munge(ssock, 3600)

        # baseline: the same traffic refused early
        base = phase(ld, mp, conns, sel, port, blobs, None, rounds, 1, 401)
        # munge: real credentials of other payloads, made just before
        t = time.monotonic()
        creds = make_creds(m, blobs, rounds + 1, 1, forged=True)
        print("%s: %d credentials made on the senders' munged in %.1f s" %
              (PROG, len(creds) * NODES, time.monotonic() - t))
        mung = phase(ld, mp, conns, sel, port, blobs, creds, rounds, 1, 403)
        # the leader: the real thing
        creds = make_creds(m, blobs, rounds + 1, 1)
        lead = phase(ld, mp, conns, sel, port, blobs, creds, rounds, 1, 200)
        # the fan-in: the same step's summaries as relays bring them
        del creds
        t = time.monotonic()
        msgs = fanin_msgs(m, blobs, FAN_WINDOWS * rounds + 1, rounds + 10)
        print("%s: fan-in of width %d: %d messages a round (%d summaries, %d batches), "
              "built in %.1f s" % (PROG, fanin_width(NODES + 1), len(msgs[0]),
                                   sum(1 for x in msgs[0] if x[1].endswith(b"summary")),
                                   sum(1 for x in msgs[0] if x[1].endswith(b"batch")),
                                   time.monotonic() - t))
        # the direct phases' 2,048 connections go (a leader with a fan-in
        # has only its relays' and group 0's), and each sender of the
        # fan-in gets one of its own
        for c in conns:
            sel.unregister(c.s)
            c.s.close()
        conns = [Conn(port) for _ in msgs[0]]
        for c in conns:
            c.s.setblocking(False)
            sel.register(c.s, selectors.EVENT_READ, c)
        msgs = [[(k,) + x[1:] for k, x in enumerate(row)] for row in msgs]
        fan = fanin_phase(ld, mp, conns, sel, msgs, FAN_WINDOWS)
        del msgs
        with open(log, errors="replace") as f:
            item_refusals = sum(1 for x in f if "an item of POST /v1/peer/batch" in x)
        base_ok, lead_ok = base["answers_ok"] and mung["answers_ok"], lead["answers_ok"]
        fan_ok = fan["answers_ok"] and item_refusals == 0
        # the whole step, a page of ranks at a time
        ranks, nxt, v, worst, size_v, pages = [], 0, {}, 0.0, 0, 0
        while nxt is not None:
            t = time.monotonic()
            stv, _, body = http_request(sockp, "GET", "/v1/watch/step?job=%d&step=0&from=%d" %
                                        (JOB, nxt), timeout=60)
            worst = max(worst, time.monotonic() - t)
            size_v += len(body)
            pages += 1
            v = json.loads(body) if stv == 200 else {}
            ranks += [r["rank"] for r in v.get("ranks", [])]
            nxt = v.get("ranks_next")
            if stv != 200 or pages > WORLD:
                break
        print("%s: GET /v1/watch/step of the whole step: %d pages, %.1f MB, the slowest page "
              "in %.3f s" % (PROG, pages, size_v / 1e6, worst))
        view_ok = ranks == list(range(WORLD)) and len(v.get("nodes", [])) == NODES and \
            all(n["state"] == "ok" for n in v["nodes"]) and v.get("rounds", 0) >= 2 * rounds and \
            all(n["msg_seq"] == (FAN_WINDOWS + 1) * rounds + 10 for n in v["nodes"])
        for c in conns:
            c.s.close()
        print("%s: baseline (%d rounds, %d requests a second refused with 401): layoutd %.2f %% "
              "of a core, munged %.2f %%" % (PROG, rounds, NODES, 100 * base["cpu"],
                                            100 * base["munged"]))
        print("%s: munge    (%d rounds, %d credentials a second checked, refused on the "
              "checksum): layoutd %.2f %% of a core, munged %.2f %%" %
              (PROG, rounds, NODES, 100 * mung["cpu"], 100 * mung["munged"]))
        print("%s: leader   (%d rounds, %d summaries a second taken, the step judged each "
              "second): layoutd %.2f %% of a core, munged %.2f %%" %
              (PROG, rounds, NODES, 100 * lead["cpu"], 100 * lead["munged"]))
        print("%s: of that, HTTP %.2f %%, the munge path %.2f %% (%.0f us a credential), the "
              "summaries and the judge %.2f %% (%.0f us a summary); memory VmRSS %.1f MB, "
              "VmHWM %.1f MB (%.1f MB before the step)" %
              (PROG, 100 * base["cpu"], 100 * (mung["cpu"] - base["cpu"]),
               1e6 * (mung["cpu"] - base["cpu"]) / NODES, 100 * (lead["cpu"] - mung["cpu"]),
               1e6 * (lead["cpu"] - mung["cpu"]) / NODES, lead["mem"]["VmRSS"] / 1024,
               lead["mem"]["VmHWM"] / 1024, base["mem"]["VmRSS"] / 1024))
        print("%s: fan-in   (%d windows of %d rounds, %d messages a second, every summary in "
              "them taken, the step judged each second): layoutd %.2f %% of a core, the median "
              "of %s (%.2f of the direct leader's), munged %.2f %%; VmRSS %.1f MB" %
              (PROG, FAN_WINDOWS, rounds, fan["messages"], 100 * fan["cpu"],
               " ".join("%.2f" % (100 * x) for x in fan["windows"]), fan["cpu"] / lead["cpu"],
               100 * fan["munged"], fan["mem"]["VmRSS"] / 1024))
        print(json.dumps({"bench": PROG, "nodes": NODES, "ranks": WORLD, "comms": len(COMMS),
                          "summary_bytes": size, "summary_version": SUM_VERSION, "rounds": rounds, "baseline": base,
                          "munge": mung, "leader": lead, "fanin": fan,
                          "checks": {"baseline": base_ok, "leader": lead_ok, "fanin": fan_ok,
                                     "view": view_ok}}))
        if not (base_ok and lead_ok and fan_ok and view_ok):
            die(2, "a check failed: baseline answers %s, leader answers %s, fan-in answers %s, "
                "view %s (%d ranks, %d nodes)" % (base_ok, lead_ok, fan_ok, view_ok, len(ranks),
                                                  len(v.get("nodes", []))))
        within = fan["cpu"] < BUDGET
        print("%s: %s: the leader of a %d-rank step of %d nodes at 1 Hz spends %.2f %% of a "
              "core with the fan-in of auto (budget %.0f %%; %.2f %% without it), its munged "
              "%.2f %%" % (PROG, "OK" if within else "OVER BUDGET", WORLD, NODES,
                           100 * fan["cpu"], 100 * BUDGET, 100 * lead["cpu"],
                           100 * fan["munged"]))
        return 0 if within else 1
    finally:
        if ld and ld.poll() is None:
            ld.terminate()
            ld.wait(timeout=60)
        for p in procs:
            if p.poll() is None:
                p.terminate()
                p.wait(timeout=20)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
