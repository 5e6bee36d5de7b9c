# SPDX-License-Identifier: GPL-2.0-or-later
"""The NCCL profiler hook under nccl_driver (a stand-in for NCCL 2.28):
a world of 8 processes (tp2, pp2, dp2) on this machine, and the per-rank
records the hook writes, read here with struct from the layout in
lib/watch/record.h (an independent reader: the offsets are written out by
hand).  Checks the communicators (sizes, ranks, commHash agreed by every
member), advancing sequence numbers and completed collectives in a healthy
run, and what each fault leaves in the records: a rank that stops entering
(its seq lags, its peers have a collective in flight with channels started
and not stopped), a rank that exits (its record stops), a collective whose
kernel never completes, and a slow rank (larger gaps between collectives).
The patterns the leader advises on: FSDP wrapped at the root (one
AllGather run of one call) against per block (one per layer), and a TP
group whose ranks sit on two nodes (nnodes 2 at its init).
"""
import glob
import os
import shutil
import struct
import subprocess
import tempfile
import time

from taplib import diag, done, is_eq, ok, skip

DRIVER = os.environ.get("NCCL_DRIVER", "")
HOOK = os.environ.get("PL_NCCL_HOOK", "")
# The directory the hook writes its record in (set by the SPANK plugin).
WATCH_DIR_ENV = "PARALLEL_LAYOUT_WATCH_DIR"

TP, PP, DP = 2, 2, 2
WORLD = TP * PP * DP
CH = 2                  # --channels
LAYERS = 2              # --layers: TP all-reduces per pass; two passes a step

# ---- record.h, by hand --------------------------------------------------
MAGIC = 0x3144524f4357504c
VERSION = 2
HDR_SIZE, IDENT_SIZE, LAUNCH_SIZE, GPU_SIZE = 256, 192, 448, 1408
SLOT_SIZE = IDENT_SIZE + LAUNCH_SIZE + GPU_SIZE          # 2048
NSLOTS = 32
REC_SIZE = HDR_SIZE + NSLOTS * SLOT_SIZE                 # 65792
RING = 32
SLOT_ACTIVE, SLOT_FINALIZED = 1, 2


def text(b):
    return b.split(b"\0", 1)[0].decode("ascii", "replace")


def parse(b, b2):
    """One consistent view of a record: b is one copy of the file, b2 a later
    one.  A part is taken from b when its sequence counter was even and the
    same in both copies (no write began or ended in between).  Returns None
    when some part was being written."""
    u = struct.unpack_from
    h = {}
    (h["magic"], h["version"], h["header_size"], h["slot_size"], h["nslots"],
     h["record_size"], h["job"], h["step"], h["rank"], h["pid"]) = u("<QIIIIQQQqq", b, 0)
    h["state"], h["off_reason"], h["mask"] = u("<IIQ", b, 80)
    h["abi"] = u("<I", b, 96)[0]
    (h["slots_taken"], h["comms_dropped"], h["events_dropped"], h["events_busy"],
     h["foreign"], h["bad_context"], h["bad_handle"]) = u("<7Q", b, 104)
    slots = []
    for i in range(NSLOTS):
        base = HDR_SIZE + i * SLOT_SIZE
        parts = (base, base + IDENT_SIZE, base + IDENT_SIZE + LAUNCH_SIZE)
        seqs = [u("<Q", b, p)[0] for p in parts]
        if any(s & 1 or s != u("<Q", b2, p)[0] for s, p in zip(seqs, parts)):
            return None
        if seqs[0] == 0:
            continue
        s = {}
        p = parts[0]
        s["hash"] = u("<Q", b, p + 8)[0]
        s["name"] = text(b[p + 16:p + 64])
        s["rank"], s["nranks"], s["nnodes"], s["state"] = u("<iiiI", b, p + 64)
        s["init_ns"], s["fini_ns"] = u("<QQ", b, p + 80)
        p = parts[1]
        (s["colls"], s["p2ps"], s["seq_number"], s["count"], s["enqueue_ns"]) = u("<5Q", b, p + 8)
        s["root"], s["nchannels"] = u("<iI", b, p + 48)
        s["func"] = text(b[p + 56:p + 72])
        s["datatype"] = text(b[p + 72:p + 88])
        s["sends"] = list(u("<16Q", b, p + 144))
        s["recvs"] = list(u("<16Q", b, p + 272))
        s["ag_peak_bytes"], s["ag_peak_calls"], s["ag_peak_top"] = u("<3Q", b, p + 400)
        s["bursts"] = u("<Q", b, p + 424)[0]
        p = parts[2]
        (s["ch_started"], s["ch_stopped"], s["progress_ns"], s["start_seq"], s["done"],
         s["done_seq"], s["done_enqueue_ns"], s["done_ns"], s["gpu_start"], s["gpu_stop"],
         s["p2p_done"]) = u("<11Q", b, p + 8)
        s["done_func"] = text(b[p + 96:p + 112])
        s["p2p_wait_ns"], s["p2p_span_ns"] = u("<2Q", b, p + 112)
        ring = []
        n = s["done"]
        for k in range(max(0, n - RING), n):       # oldest first
            ring.append(u("<4Q", b, p + 128 + (k % RING) * 32) +
                        u("<Q", b, p + 128 + RING * 32 + (k % RING) * 8))
        s["ring"] = ring       # (seq_number, enqueue_ns, wait_ns, gap_ns, p2p_ns)
        slots.append(s)
    h["slots"] = slots
    return h


def read_record(path):
    for _ in range(200):
        try:
            with open(path, "rb") as f:
                b = f.read()
            with open(path, "rb") as f:
                b2 = f.read()
        except OSError:
            return None
        if len(b) < REC_SIZE or len(b2) < REC_SIZE:
            return None
        r = parse(b, b2)
        if r is not None:
            return r
        time.sleep(0.001)
    return None


def records(wdir):
    """{rank: record} for the records in wdir."""
    out = {}
    for path in glob.glob(os.path.join(wdir, "**", "plw-*"), recursive=True):
        r = read_record(path)
        if r is not None and r["magic"] == MAGIC:
            r["path"] = path
            out[r["rank"]] = r
    return out


def slot(rec, name):
    for s in rec["slots"]:
        if s["name"] == name:
            return s
    return None


# ---- the communicators every rank should have, worked out here ----------
def fnv1a(data):
    h = 0xcbf29ce484222325
    for c in data:
        h = ((h ^ c) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def expected_comms(r):
    """Megatron order tp fastest, then (cp=1), dp, pp."""
    tp, dp, pp = r % TP, (r // TP) % DP, r // (TP * DP)
    groups = {
        "world": list(range(WORLD)),
        "tp": [k + TP * dp + TP * DP * pp for k in range(TP)],
        "dp": [tp + TP * k + TP * DP * pp for k in range(DP)],
        "pp": [tp + TP * dp + TP * DP * k for k in range(PP)],
    }
    out = {}
    for name, m in groups.items():
        h = fnv1a(("%s:%s" % (name, ",".join(map(str, m)))).encode())
        out[name] = (h, m.index(r), len(m), 1)
    return out


# ---- running a world ----------------------------------------------------
class World:
    def __init__(self, name, job, args, env_extra=None):
        self.dir = tempfile.mkdtemp(prefix="nccl-driver-%s." % name)
        self.wdir = os.path.join(self.dir, "watch")
        os.mkdir(self.wdir, 0o700)
        self.job = job
        self.procs = []
        self.t0 = time.monotonic()
        for r in range(WORLD):
            env = {k: v for k, v in os.environ.items()
                   if not k.startswith(("PARALLEL_LAYOUT", "NCCL_", "SLURM"))}
            env.update({
                "RANK": str(r), "WORLD_SIZE": str(WORLD), "LOCAL_RANK": str(r),
                "PARALLEL_LAYOUT_TP": str(TP), "PARALLEL_LAYOUT_PP": str(PP),
                "PARALLEL_LAYOUT_DP": str(DP), "PARALLEL_LAYOUT_CP": "1",
                "SLURM_JOB_ID": str(job), "SLURM_STEP_ID": "0", "SLURM_PROCID": str(r),
                "NCCL_PROFILER_PLUGIN": HOOK, WATCH_DIR_ENV: self.wdir,
            })
            extra = env_extra(r) if callable(env_extra) else env_extra
            for k, v in (extra or {}).items():
                if v is None:
                    env.pop(k, None)
                else:
                    env[k] = v
            out = open(os.path.join(self.dir, "out.%d" % r), "w")
            err = open(os.path.join(self.dir, "err.%d" % r), "w")
            self.procs.append(subprocess.Popen(
                [DRIVER, "--sync-dir", self.dir, "--channels", str(CH),
                 "--layers", str(LAYERS)] + args, env=env, stdout=out, stderr=err))
            out.close()
            err.close()

    def wait(self, limit):
        end = self.t0 + limit
        rcs = []
        for p in self.procs:
            try:
                rcs.append(p.wait(timeout=max(0.1, end - time.monotonic())))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
                rcs.append("killed")
        return rcs

    def poll(self, cond, limit):
        """Records once cond(records) holds, or the last seen after limit s."""
        end = time.monotonic() + limit
        recs = {}
        while time.monotonic() < end:
            recs = records(self.wdir)
            try:
                if cond(recs):
                    return recs, True
            except (KeyError, TypeError):
                pass
            time.sleep(0.05)
        return recs, False

    def output(self, r, which="out"):
        with open(os.path.join(self.dir, "%s.%d" % (which, r))) as f:
            return f.read()

    def dump(self):
        for r in range(WORLD):
            diag("rank %d: %s %s" % (r, self.output(r).strip(), self.output(r, "err").strip()[-600:]))

    def close(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def in_flight(s):
    return s["ch_started"] - s["ch_stopped"]


def tp_colls(steps):
    return 2 * LAYERS * steps


def check_healthy(w, recs, steps, abi, label):
    is_eq(sorted(recs), list(range(WORLD)), "%s: one record per rank" % label)
    bad = []
    for r in range(WORLD):
        rec = recs.get(r)
        if rec is None:
            bad.append("rank %d: no record" % r)
            continue
        hdr = (rec["version"], rec["header_size"], rec["slot_size"], rec["nslots"],
               rec["record_size"], rec["pid"], rec["abi"], rec["job"])
        want = (VERSION, HDR_SIZE, SLOT_SIZE, NSLOTS, REC_SIZE, w.procs[r].pid, abi, w.job)
        if hdr != want:
            bad.append("rank %d header %r, want %r" % (r, hdr, want))
        got = {s["name"]: (s["hash"], s["rank"], s["nranks"], s["nnodes"]) for s in rec["slots"]}
        if got != expected_comms(r):
            bad.append("rank %d comms %r, want %r" % (r, got, expected_comms(r)))
        for c in ("events_dropped", "bad_context", "bad_handle", "comms_dropped"):
            if rec[c]:
                bad.append("rank %d %s=%d" % (r, c, rec[c]))
    ok(not bad, "%s: every rank's communicators: name, rank, size, nodes and the commHash "
       "of its member list" % label)
    for b in bad:
        diag(b)

    bad = []
    for r in range(WORLD):
        rec = recs.get(r)
        if rec is None:
            bad.append("rank %d: no record" % r)
            continue
        stage = r // (TP * DP)
        want = {"world": (1, 0), "tp": (tp_colls(steps), 0), "dp": (steps, 0),
                "pp": (0, 2 * steps)}
        for name, (colls, p2ps) in want.items():
            s = slot(rec, name)
            if s is None:
                bad.append("rank %d: no %s communicator" % (r, name))
                continue
            got = (s["colls"], s["p2ps"], s["done"], s["p2p_done"], s["ch_started"],
                   s["ch_stopped"], s["state"])
            exp = (colls, p2ps, colls, p2ps, CH * (colls + p2ps), CH * (colls + p2ps),
                   SLOT_FINALIZED)
            if got != exp:
                bad.append("rank %d %s: colls, p2ps, done, p2p_done, ch_started, ch_stopped, "
                           "state = %r, want %r" % (r, name, got, exp))
            if colls and (s["seq_number"] != colls - 1 or s["done_seq"] != colls - 1 or
                          s["func"] != "AllReduce"):
                bad.append("rank %d %s: last seq %d, done seq %d, func %s; want %d, AllReduce"
                           % (r, name, s["seq_number"], s["done_seq"], s["func"], colls - 1))
            ring = [e[0] for e in s["ring"]]
            if ring != list(range(max(0, colls - RING), colls)):
                bad.append("rank %d %s: wait ring seqs %r" % (r, name, ring))
            if name == "pp":
                peer = 1 - stage
                if s["sends"][peer] != steps or s["recvs"][peer] != steps:
                    bad.append("rank %d pp: sends %r recvs %r, want %d to/from peer %d"
                               % (r, s["sends"][:2], s["recvs"][:2], steps, peer))
    ok(not bad, "%s: every collective and p2p entered, completed on the GPU, channels "
       "all stopped, seqNumbers advancing one by one, communicators finalized" % label)
    for b in bad[:12]:
        diag(b)


def main():
    if not (DRIVER and os.access(DRIVER, os.X_OK)):
        skip("nccl driver", "NCCL_DRIVER not built")
        done()
    if not (HOOK and os.path.exists(HOOK)):
        skip("nccl hook under the driver", "PL_NCCL_HOOK %r not built" % HOOK)
        done()
    t_start = time.monotonic()

    # 1. Healthy, v5 (NCCL 2.28), then the v4 table (NCCL 2.27's).
    for abi, job in ((5, 7101), (4, 7102)):
        steps = 4
        w = World("ok%d" % abi, job, ["--steps", str(steps), "--compute-us", "500",
                                      "--timeout", "10", "--abi", str(abi)])
        rcs = w.wait(30)
        label = "healthy v%d" % abi
        if not ok(rcs == [0] * WORLD and all("result=ok" in w.output(r) for r in range(WORLD)),
                  "%s: all %d ranks finish (exit 0)" % (label, WORLD)):
            diag("exit codes %r" % rcs)
            w.dump()
        check_healthy(w, records(w.wdir), steps, abi, label)
        w.close()

    timeout = "4"
    # 2. Rank 1 stops entering collectives at step 2: its TP peer (rank 0)
    # waits inside the first TP all-reduce of step 2 with channels started.
    k = 2
    w = World("stop", 7103, ["--steps", "6", "--compute-us", "500", "--timeout", timeout,
                             "--fault", "stop:1:%d" % k])

    def stopped(recs):
        a, b = slot(recs[1], "tp"), slot(recs[0], "tp")
        return (a["colls"] == tp_colls(k) and b["colls"] == tp_colls(k) + 1 and
                in_flight(b) == CH)
    recs, hit = w.poll(stopped, 3.5)
    if ok(hit, "stop: rank 1's TP seq lags (entered %d) while its peer rank 0 has TP seq %d "
          "entered with %d channels started and not stopped" % (tp_colls(k), tp_colls(k), CH)):
        b = slot(recs[0], "tp")
        is_eq((b["seq_number"], b["done"], b["done_seq"]), (tp_colls(k), tp_colls(k), tp_colls(k) - 1),
              "stop: rank 0's in-flight TP collective is seq %d; %d completed" % (tp_colls(k), tp_colls(k)))
        a = slot(recs[1], "tp")
        is_eq(in_flight(a), 0, "stop: the stopped rank has nothing in flight")
    else:
        diag(repr({r: (s["colls"], s["done"], in_flight(s)) for r in recs
                   for s in [slot(recs[r], "tp")] if s}))
    rcs = w.wait(10)
    is_eq(rcs, [3] * WORLD, "stop: every rank gives up after --timeout (status 3), none hangs")
    w.close()

    # 3. Rank 2 exits with status 7 at step 2: its record stops; its TP
    # peer (rank 3) waits inside the next TP all-reduce.
    w = World("exit", 7104, ["--steps", "6", "--compute-us", "500", "--timeout", timeout,
                             "--fault", "exit:2:%d:7" % k])
    try:
        rc2 = w.procs[2].wait(timeout=5)
    except subprocess.TimeoutExpired:
        rc2 = None
    is_eq(rc2, 7, "exit: rank 2 exits with the status given (7)")

    def exited(recs):
        b = slot(recs[3], "tp")
        return b["colls"] == tp_colls(k) + 1 and in_flight(b) == CH
    recs, hit = w.poll(exited, 3.0)
    ok(hit, "exit: rank 3 (rank 2's TP peer) has TP seq %d in flight, channels started" % tp_colls(k))
    first = slot(recs[2], "tp") if 2 in recs else None
    time.sleep(0.3)
    later = records(w.wdir).get(2)
    later = slot(later, "tp") if later else None
    if ok(first is not None and later is not None, "exit: the exited rank's record is still there"):
        is_eq((later["colls"], later["done"], in_flight(later), later["state"]),
              (tp_colls(k), tp_colls(k), 0, SLOT_ACTIVE),
              "exit: rank 2's record stopped at step %d: %d TP collectives, all completed, "
              "not finalized" % (k, tp_colls(k)))
        ok(first == later, "exit: rank 2's record no longer changes")
    rcs = w.wait(10)
    is_eq(rcs, [3, 3, 7, 3, 3, 3, 3, 3], "exit: the others give up after --timeout (status 3)")
    w.close()

    # 4. Rank 3 enters the first collective of step 2 but its kernel never
    # completes: rank 3 and its TP peer both have it in flight.
    w = World("stuck", 7105, ["--steps", "6", "--compute-us", "500", "--timeout", timeout,
                              "--fault", "stuck:3:%d" % k])

    def stuck(recs):
        return all(slot(recs[r], "tp")["colls"] == tp_colls(k) + 1 and
                   in_flight(slot(recs[r], "tp")) == CH and
                   slot(recs[r], "tp")["done"] == tp_colls(k) for r in (2, 3))
    recs, hit = w.poll(stuck, 3.5)
    if not ok(hit, "stuck: ranks 2 and 3 both entered TP seq %d, channels started, none "
              "stopped, %d completed" % (tp_colls(k), tp_colls(k))):
        diag(repr({r: (s["colls"], s["done"], in_flight(s)) for r in recs
                   for s in [slot(recs[r], "tp")] if s}))
    rcs = w.wait(10)
    is_eq(rcs, [3] * WORLD, "stuck: every rank gives up after --timeout (status 3)")
    w.close()

    # 5. Rank 5 computes 100 % slower: its gaps between TP collectives are
    # about twice its peer's, and its peer (rank 4) waits longer in them.
    w = World("slow", 7106, ["--steps", "8", "--compute-us", "3000", "--timeout", "10",
                             "--fault", "slow:5:100"])
    rcs = w.wait(30)
    is_eq(rcs, [0] * WORLD, "slow: the run completes")
    recs = records(w.wdir)

    def median(xs):
        xs = sorted(xs)
        return xs[len(xs) // 2] if xs else 0
    s4, s5 = slot(recs.get(4, {"slots": []}), "tp"), slot(recs.get(5, {"slots": []}), "tp")
    if ok(s4 is not None and s5 is not None and len(s4["ring"]) >= 16 and len(s5["ring"]) >= 16,
          "slow: both TP peers have a wait ring"):
        g4, g5 = median([e[3] for e in s4["ring"]]), median([e[3] for e in s5["ring"]])
        w4, w5 = median([e[2] for e in s4["ring"]]), median([e[2] for e in s5["ring"]])
        diag("median gap rank 4 %.2f ms, rank 5 %.2f ms; median wait rank 4 %.2f ms, rank 5 %.2f ms"
             % (g4 / 1e6, g5 / 1e6, w4 / 1e6, w5 / 1e6))
        ok(g5 > 1.5 * g4, "slow: rank 5's median gap between TP collectives is over 1.5x rank 4's")
        ok(w4 > w5 + 1e6, "slow: rank 4 waits longer in the TP collectives than rank 5 (> 1 ms more)")
    w.close()

    # 6. Every event type, network proxy ops, and PXN ProxyOps of "another
    # process" (their context and parent point at a page that faults): the
    # hook ignores the foreign ones and counts them, one per channel of
    # every operation.
    steps = 3
    w = World("all", 7107, ["--steps", str(steps), "--compute-us", "500", "--timeout", "10",
                            "--net", "--pxn"], {"PARALLEL_LAYOUT_WATCH_MASK": "0xfff"})
    rcs = w.wait(30)
    if not ok(rcs == [0] * WORLD, "all events: all %d ranks finish (exit 0)" % WORLD):
        diag("exit codes %r" % rcs)
        w.dump()
    recs = records(w.wdir)
    check_healthy(w, recs, steps, 5, "all events")
    ops = tp_colls(steps) + steps + 1 + 2 * steps       # tp, dp, world, pp
    is_eq([recs[r]["foreign"] if r in recs else None for r in range(WORLD)], [CH * ops] * WORLD,
          "all events: every foreign ProxyOp counted (%d per rank) and none followed" % (CH * ops))
    w.close()

    # 7. The event mask cleared at run time (step 2): NCCL 2.28.9 then stops
    # the last CollApi handle again for every later collective.  The hook
    # survives it and records nothing more.
    w = World("maskoff", 7108, ["--steps", "4", "--compute-us", "500", "--timeout", "10",
                                "--set-mask", "%d:0" % k])
    rcs = w.wait(30)
    is_eq(rcs, [0] * WORLD, "mask cleared at run time: the run completes")
    recs = records(w.wdir)
    got = [(s["colls"], s["done"], in_flight(s)) if s else None
           for s in (slot(recs[r], "tp") if r in recs else None for r in range(WORLD))]
    is_eq(got, [(tp_colls(k), tp_colls(k), 0)] * WORLD,
          "mask cleared at run time: TP records stop at step %d, all completed" % k)
    # tp, dp and the world's all-reduce after the mask went to 0
    stale = (4 - k) * (tp_colls(1) + 1) + 1
    is_eq([("stale_collapi_stops=%d " % stale) in w.output(r) for r in range(WORLD)], [True] * WORLD,
          "mask cleared at run time: the last CollApi handle was stopped again for each of the "
          "%d collectives after it" % stale)
    w.close()

    # 8. No record directory: the hook turns itself off, says so once
    # through NCCL's logger (a warning), and the run goes on without it.
    w = World("nodir", 7109, ["--steps", "2", "--compute-us", "500", "--timeout", "10"],
              {WATCH_DIR_ENV: None})
    rcs = w.wait(30)
    is_eq(rcs, [0] * WORLD, "no record directory: the run completes")
    warns = [[ln for ln in w.output(r, "err").splitlines() if "NCCL log level 2 " in ln]
             for r in range(WORLD)]
    if not ok(all(len(x) == 1 and WATCH_DIR_ENV in x[0] for x in warns),
              "no record directory: each rank's hook warns once, naming %s" % WATCH_DIR_ENV):
        diag(repr(warns[:2]))
    is_eq(records(w.dir), {}, "no record directory: no record anywhere")
    w.close()

    # 9. FSDP over the DP group, a 64 MiB model: wrapped at the root, one
    # AllGather of a rank's 32 MiB before each forward pass is its whole
    # run; wrapped per block, one per layer (LAYERS of 16 MiB).  The
    # ReduceScatter of the gradients ends each run.
    mib = 64
    for mode, want in (("root", (32 << 20, 1, 32 << 20)),
                       ("block", (32 << 20, LAYERS, (32 << 20) // LAYERS))):
        w = World("fsdp" + mode, 7110, ["--steps", "3", "--compute-us", "300", "--timeout", "10",
                                        "--fsdp", "%s:%d" % (mode, mib)])
        rcs = w.wait(30)
        is_eq(rcs, [0] * WORLD, "fsdp %s: the run completes" % mode)
        recs = records(w.wdir)
        got = [(lambda s: (s["ag_peak_bytes"], s["ag_peak_calls"], s["ag_peak_top"]) if s
                else None)(slot(recs[r], "dp") if r in recs else None) for r in range(WORLD)]
        is_eq(got, [want] * WORLD, "fsdp %s: every rank's DP slot keeps its AllGather run "
              "(bytes, calls, largest) = %r" % (mode, want))
        got = [(slot(recs[r], "tp") or {}).get("ag_peak_calls") if r in recs else None
               for r in range(WORLD)]
        is_eq(got, [0] * WORLD, "fsdp %s: no AllGather run in TP" % mode)
        w.close()

    # 10. A TP group across two nodes: even ranks on nodeA, odd on nodeB
    # (SLURMD_NODENAME), so each TP pair spans both; NCCL's init counts two
    # nodes for TP, one for the DP groups (whose members share a parity).
    w = World("tpnet", 7111, ["--steps", "2", "--compute-us", "300", "--timeout", "10"],
              lambda r: {"SLURMD_NODENAME": "nodeA" if r % 2 == 0 else "nodeB"})
    rcs = w.wait(30)
    is_eq(rcs, [0] * WORLD, "tp across nodes: the run completes")
    recs = records(w.wdir)
    got = [tuple((slot(recs[r], n) or {}).get("nnodes") for n in ("tp", "dp", "pp", "world"))
           if r in recs else None for r in range(WORLD)]
    is_eq(got, [(2, 1, 1, 2)] * WORLD, "tp across nodes: nnodes 2 in TP (and the world), 1 in "
          "DP and PP")
    w.close()

    # 11. The pipeline's idle share from the p2p time of each rank's PP
    # slot: GPipe with 1 micro-batch a step idles about half of each
    # stage's time ((p-1)/(m+p-1) = 1/2); with 8, about 1/9.
    idle = {}
    for m in (1, 8):
        w = World("bubble%d" % m, 7112, ["--steps", "4", "--compute-us", "5000", "--jitter", "0",
                                         "--timeout", "20", "--microbatches", str(m)])
        rcs = w.wait(60)
        is_eq(rcs, [0] * WORLD, "%d micro-batches: the run completes" % m)
        recs = records(w.wdir)
        got = []
        for r in range(WORLD):
            s = slot(recs[r], "pp") if r in recs else None
            got.append(s["p2p_wait_ns"] / s["p2p_span_ns"] if s and s["p2p_span_ns"] else None)
        idle[m] = got
        if m == 1:
            # the stage's waits on the pipeline fall in its TP gaps: each
            # TP slot's ring says how much of each gap went to p2p
            tpr = [slot(recs[r], "tp")["ring"] if r in recs and slot(recs[r], "tp") else []
                   for r in range(WORLD)]
            ok(all(ring and all(e[4] <= e[3] for e in ring) and
                   sum(e[4] for e in ring) > 0.3 * sum(e[3] for e in ring) for ring in tpr),
               "1 micro-batch: every TP slot's ring holds the p2p time in its gaps, at most "
               "each gap and over 30 %% of them all (%s)" % " ".join(
                   "%.2f" % (sum(e[4] for e in ring) / max(1, sum(e[3] for e in ring)))
                   for ring in tpr))
        diag("%d micro-batches: idle share per rank %s" % (
            m, " ".join("%.2f" % x if x is not None else "-" for x in got)))
        ok(all(s and s["p2p_wait_ns"] <= s["p2p_span_ns"] and s["p2p_span_ns"] > 0 for s in
               (slot(recs[r], "pp") if r in recs else None for r in range(WORLD))),
           "%d micro-batches: every rank's PP slot has p2p time, the wait within the span" % m)
        # the steps and micro-batches the leader counts: each DP slot's
        # bursts (its gradient all-reduce after the pipeline's transfers,
        # once a step), each PP slot's forward transfers (to the next
        # stage; the last stage's from its previous)
        got = [(slot(recs[r], "dp") or {}).get("bursts") if r in recs else None
               for r in range(WORLD)]
        is_eq(got, [4] * WORLD, "%d micro-batches: every DP slot counts 4 bursts, one a step" % m)

        def fwd(s):
            if not s:
                return None
            if s["rank"] < s["nranks"] - 1:
                return s["sends"][(s["rank"] + 1) % 16]
            return s["recvs"][(s["rank"] - 1) % 16]
        got = [fwd(slot(recs[r], "pp")) if r in recs else None for r in range(WORLD)]
        is_eq(got, [4 * m] * WORLD, "%d micro-batches: every PP slot's forward transfers are %d "
              "a step" % (m, m))
        w.close()
    ok(all(x is not None and x > 0.3 for x in idle[1]),
       "1 micro-batch: every stage idles over 30 % of its p2p span")
    # On a loaded two-core machine the scheduler adds idle time to every
    # stage (0.14 to 0.20 seen against the ideal 0.11), so the test holds
    # to what the bubble itself must do: shrink by more than half for
    # each stage, and stay under 30 %.
    ok(all(x is not None and x < 0.3 for x in idle[8]),
       "8 micro-batches: every stage idles under 30 %")
    ok(all(a is not None and b is not None and b < a / 2 for a, b in zip(idle[1], idle[8])),
       "8 micro-batches: every stage idles less than half as much as with 1")

    # 12. Megatron's schedules: 1F1B (8 micro-batches) and interleaved
    # 1F1B (2 chunks a stage, 4 micro-batches), their sends and receives
    # to the next and previous stage grouped as Megatron groups them.
    # Each runs to its end, and every rank's PP slot counts the p2p
    # operations the schedule makes: at pp2 both stages are ends, 2 m a
    # step for 1F1B, 4 m v - 2 m interleaved (each of the m v virtual
    # micro-batches receives its input and sends its output, forward and
    # backward, but the first chunk of stage 0 and the last of stage 1),
    # all completed, every kernel channel stopped.
    steps = 3
    for sched, m, v, per_step in (("1f1b", 8, 1, 2 * 8), ("interleaved", 4, 2, 4 * 4 * 2 - 2 * 4)):
        args = ["--steps", str(steps), "--compute-us", "2000", "--jitter", "0", "--timeout", "20",
                "--schedule", sched, "--microbatches", str(m)]
        if v > 1:
            args += ["--vpp", str(v)]
        w = World("sched-" + sched, 7113, args)
        rcs = w.wait(90)
        ok(rcs == [0] * WORLD and all("result=ok" in w.output(r) for r in range(WORLD)),
           "%s: the run completes (no deadlock in its grouped transfers): %s" % (sched, rcs))
        recs = records(w.wdir)
        got = []
        for r in range(WORLD):
            s = slot(recs[r], "pp") if r in recs else None
            got.append((s["p2ps"], s["p2p_done"], s["ch_started"] == s["ch_stopped"]) if s else None)
        is_eq(got, [(steps * per_step, steps * per_step, True)] * WORLD,
              "%s: every rank's PP slot counts %d p2p operations a step, all completed, every "
              "channel stopped" % (sched, per_step))
        w.close()

    diag("took %.1f s" % (time.monotonic() - t_start))
    done()


if __name__ == "__main__":
    main()
