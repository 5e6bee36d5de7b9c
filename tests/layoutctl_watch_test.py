#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""layoutctl watch JOBID[.STEP]: the whole step as its leader sees it, from
any node or a login host.  Three real layoutds on loopback TCP (node1-3 as
the map says, node1 leads), a private munged, nccl_driver ranks with rank 5
(on node2) stopped.  layoutctl is asked on a follower (its layoutd names
the leader, which layoutctl follows) and on "a login host" (no layoutd:
the nodes from --nodes or from Slurm, an scontrol that prints captured
output); the culprit is marked; a step of 2,048 ranks comes in pages and
is merged; a user sees only own steps; an unreachable leader, a node that
names itself, and answers of the wrong shape or of another step are
refused with a clear message within the timeout.
"""
import http.server
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time

from taplib import LAYOUTCTL, data, diag, done, is_eq, like, ok, skip, wait_for
from layoutd_peer_test import (DRIVER, HOOK, HOST, NOBODY, NODES, THRESHOLD, WORLD, Daemon,
                               Munged, World, free_ports, peer_call, peer_map, sha, summary)

JOB = 1                 # the captured scontrol output is of step 1.0 on node[1-3]
BIG = 7777
BIG_RANKS = {"node-x": range(0, 700), "node-y": range(700, 1400), "node-z": range(1400, 2048)}
BIG_SIZES = (2, 1, 1, 2, 512)


def ctl(*args, uid=None, timeout=60):
    """(rc, stdout, stderr, seconds) of layoutctl, as root or as uid."""
    pre = [] if uid is None else ["setpriv", "--reuid=%d" % uid, "--regid=%d" % uid,
                                  "--clear-groups"]
    # LAYOUTCTL_WRAPPER (e.g. valgrind) runs the same checks under a checker
    pre += os.environ.get("LAYOUTCTL_WRAPPER", "").split()
    t0 = time.monotonic()
    p = subprocess.run(pre + [LAYOUTCTL] + list(args), capture_output=True, text=True,
                       timeout=timeout)
    return p.returncode, p.stdout, p.stderr, time.monotonic() - t0


def rows(out):
    """The rank rows of the table: (marked, rank, node)."""
    got = []
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == ">>":
            f = f[1:]
            marked = True
        else:
            marked = False
        if len(f) > 10 and f[0].isdigit() and f[1].startswith("node"):
            got.append((marked, int(f[0]), f[1]))
    return got


class Fake(http.server.BaseHTTPRequestHandler):
    """A "leader" that answers what the test sets, whatever is asked."""
    answer = (200, {})

    def do_GET(self):
        ans = Fake.answer(self.path) if callable(Fake.answer) else Fake.answer
        st, body = ans[:2]
        cut = len(ans) > 2 and ans[2]     # promise more than is sent, then close
        text = json.dumps(body).encode()
        self.send_response(st)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(text) + (100 if cut else 0)))
        self.end_headers()
        self.wfile.write(text)
        if cut:
            self.close_connection = True

    def log_message(self, *args):
        pass


def fake_scontrol(tmp):
    """An scontrol that prints the captured output for job 1 (for step 1.3
    too, as if Slurm had answered another step) and the captured refusal
    for anything else."""
    path = os.path.join(tmp, "scontrol")
    with open(path, "w") as f:
        f.write("#!/bin/sh\n[ \"$1 $2 $3\" = \"-o show step\" ] || exit 3\n"
                "case \"$4\" in\n1.0|1.3) cat '%s' ;;\n1) cat '%s' ;;\n"
                "*) cat '%s' >&2; exit 1 ;;\nesac\n" %
                (data("lab-scontrol-show-step-o.txt"), data("lab-scontrol-show-step-job-o.txt"),
                 data("lab-scontrol-show-step-unknown.stderr")))
    os.chmod(path, 0o755)
    return path


def big_step(m, a, uid=0, job=BIG):
    """A hand-made step of 2,048 ranks on three nodes, posted to the leader."""
    sts = []
    for node, rs in BIG_RANKS.items():
        body = summary(node, job, 0, list(rs), uid=uid, world=2048, sizes=BIG_SIZES)
        sts.append(peer_call(HOST, a.port, "POST", "/v1/peer/summary", body,
                             m.cred(sha(body)))[0])
    return sts


def forged(tmp, mapf, m, a):
    """Answers that are not the step's view: refused, saying why."""
    srv = http.server.ThreadingHTTPServer((HOST, 0), Fake)
    th = threading.Thread(target=srv.serve_forever, daemon=True)
    th.start()
    port = srv.server_address[1]
    good = json.loads(peer_call(HOST, a.port, "GET", "/v1/watch/step?job=%d&step=0" % JOB,
                                cred=m.cred("GET /v1/watch/step?job=%d&step=0" % JOB))[1])
    other = dict(good, job_id=999)
    shuffled = dict(good, ranks=list(reversed(good["ranks"])))
    cases = [
        ("valid JSON of the wrong shape", (200, {"hello": "world"}), "'job_id' is not an integer"),
        ("the view of another step", (200, other), "it is the view of step 999.0"),
        ("ranks out of order", (200, shuffled), "is out of order"),
        ("a culprit that is no rank", (200, dict(good, findings=[{"kind": "exited",
                                                                  "culprits": ["x"]}])),
         "names a culprit that is not a rank"),
        ("a next page that does not move on", (200, dict(good, ranks_next=0)),
         "does not move on"),
        ("a credential refused", (403, {"error": "GET /v1/watch/step: the munge credential is "
                                        "refused: Replayed credential"}),
         "answered 403: GET /v1/watch/step: the munge credential is refused: Replayed"),
    ]
    try:
        for name, ans, want in cases:
            Fake.answer = ans
            rc, out, err, _ = ctl("watch", "%d.0" % JOB, "--once", "--json", "--socket",
                                  "/nonexistent.sock", "--leader", "%s:%d" % (HOST, port),
                                  "--munge-socket", m.sock, "--timeout", "3000")
            ok(rc == 1 and want in err and out == "" and "--leader %s:%d" % (HOST, port) in err,
               "a \"leader\" answering %s: refused, nothing shown, saying '%s' (rc %d): %s" %
               (name, want, rc, err.strip()[-300:]))
        # two pages, the second lost once on the way: asked again, merged
        half = len(good["ranks"]) // 2
        pages = {0: dict(good, ranks=good["ranks"][:half], ranks_next=good["ranks"][half]["rank"]),
                 1: dict(good, ranks=good["ranks"][half:], ranks_next=None)}
        lost = []

        def paged(path, times=1):
            second = "from=%d&" % good["ranks"][half]["rank"] in path
            if second and len(lost) < times:
                lost.append(path)
                return 200, pages[1], True
            return 200, pages[1 if second else 0]
        for times, want_rc in ((1, 0), (2, 1)):
            del lost[:]
            Fake.answer = lambda path: paged(path, times)
            rc, out, err, _ = ctl("watch", "%d.0" % JOB, "--once", "--json", "--socket",
                                  "/nonexistent.sock", "--leader", "%s:%d" % (HOST, port),
                                  "--munge-socket", m.sock, "--timeout", "3000")
            try:
                j = json.loads(out) if rc == 0 else {}
            except ValueError:
                j = {}
            if want_rc == 0:
                ok(rc == 0 and j.get("ranks") == good["ranks"] and j.get("ranks_next") is None
                   and len(lost) == 1, "two pages, the second cut short once: asked again, "
                   "merged into the %d ranks (rc %d): %s" % (len(good["ranks"]), rc, err.strip()[-200:]))
            else:
                ok(rc == 1 and "partial" in err and len(lost) == 2,
                   "the second page cut short twice: exit 1 saying so (rc %d): %s" %
                   (rc, err.strip()[-200:]))
        # a node naming itself as the leader it is not
        Fake.answer = (421, {"error": "not led here", "leader": "node9", "acting": False})
        with open(mapf) as f:
            mj = json.load(f)
        mj["nodes"].append({"name": "node9", "addr": HOST, "peer_port": port})
        map9 = os.path.join(tmp, "map9.json")
        with open(map9, "w") as f:
            json.dump(mj, f)
        rc, out, err, t = ctl("watch", "%d.0" % JOB, "--once", "--socket", "/nonexistent.sock",
                              "--topology", map9, "--nodes", "node9", "--munge-socket", m.sock,
                              "--timeout", "3000")
        ok(rc == 1 and "names itself (node9) as the leader, yet leads it not" in err,
           "a node naming itself as the leader: not followed round (rc %d, %.1f s): %s" %
           (rc, t, err.strip()[-300:]))
    finally:
        srv.shutdown()
        srv.server_close()


def main():
    if not DRIVER or not HOOK or not os.path.exists(HOOK):
        skip("layoutctl watch", "NCCL_DRIVER / PL_NCCL_HOOK not set")
        return done()
    if os.geteuid() != 0:
        skip("layoutctl watch", "registrations and munged are root's: run as root")
        return done()
    if not shutil.which("munged") or not shutil.which("munge") or not shutil.which("setpriv"):
        skip("layoutctl watch", "munged, munge or setpriv not installed")
        return done()
    tmp = tempfile.mkdtemp(prefix="ctl-watch.")
    os.chmod(tmp, 0o755)
    m = None
    ds, worlds = [], []
    try:
        base = free_ports(4)
        mapf = peer_map(tmp, base)
        if not ok(mapf is not None, "a map with node1-3's addresses and peer ports"):
            return done()
        m = Munged(tmp)
        if not ok(m.up and m.p.poll() is None, "a private munged runs"):
            return done()
        ds = [Daemon(tmp, NODES[k], mapf, m, base + k, base + 3) for k in range(3)]
        a, b, c = ds
        if not ok(all(d.up and d.p.poll() is None for d in ds), "three layoutds listen"):
            return done()
        w = World(tmp, JOB, ["--steps", "100000", "--compute-us", "3000", "--fault=stop:5:20"])
        worlds.append(w)
        is_eq(w.register(ds), [200] * WORLD, "step %d.0 registered on node1-3; rank 5 (on "
              "node2) will stop entering" % JOB)

        def named():
            f = (a.view(JOB) or {}).get("findings") or []
            return [x for x in f if x["kind"] == "not-entered" and 5 in x["culprits"]]
        ok(wait_for(named, THRESHOLD + 30, 0.2), "the leader names rank 5 as not entering")
        scontrol = fake_scontrol(tmp)
        login = ["--socket", os.path.join(tmp, "no-layoutd.sock"), "--munge-socket", m.sock,
                 "--timeout", "3000"]

        # --- from a follower: its layoutd names the leader ---
        def culprits():
            return {r for f in (a.view(JOB) or {}).get("findings", []) for r in f["culprits"]}
        before = culprits()
        rc, out, err, t = ctl("watch", "%d.0" % JOB, "--once", "--socket", b.sock,
                              "--munge-socket", m.sock)
        named_any = before | culprits()
        got = rows(out)
        ok(rc == 0 and sorted({r for _, r, _ in got}) == list(range(WORLD)),
           "on node2 (a follower): every rank of the step, %.2f s (rc %d): %s" %
           (t, rc, (out + err)[-500:]))
        is_eq(sorted({(r, n) for _, r, n in got}),
              [(r, NODES[k]) for k, rs in {0: [0, 1, 2, 3], 1: [4, 5], 2: [6, 7]}.items()
               for r in rs], "each rank with its node")
        marked = {r for mk, r, _ in got if mk}
        ok(5 in marked and marked <= named_any and all(mk == (r in marked) for mk, r, _ in got),
           "rank 5's rows are marked >>, and only the rows of ranks the leader's findings "
           "name (%s of %s)" % (sorted(marked), sorted(named_any)))
        like(out, "\n>> not-entered: TP group 0 of PP stage 1: rank 5 on node2 ",
             "the finding is marked >>, its text whole")
        like(out, "leader node1 (http://%s:%d)" % (HOST, base), "it says who leads and where")
        like(out, "\n>> node2 ", "the culprit's node is marked")
        diag("layoutctl watch %d.0 --once on node2:\n%s" % (JOB, out))

        # --- from a login host: the nodes given, node2 first (it redirects) ---
        rc, out, err, t = ctl("watch", "%d.0" % JOB, "--once", "--topology", mapf, "--nodes",
                              "node[2-3]", *login)
        ok(rc == 0 and sorted({r for _, r, _ in rows(out)}) == list(range(WORLD)) and
           [r for mk, r, _ in rows(out) if mk] and "leader node1" in out,
           "a login host, --nodes node[2-3]: node2 names the leader, the step is shown whole "
           "(rc %d, %.2f s): %s" % (rc, t, (out + err)[-400:]))

        # --- live: redrawn every --interval until interrupted ---
        live = subprocess.Popen(os.environ.get("LAYOUTCTL_WRAPPER", "").split() +
                                [LAYOUTCTL, "watch", "%d.0" % JOB, "--interval", "200",
                                 "--topology", mapf, "--nodes", "node2"] + login,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(3)
        live.send_signal(signal.SIGINT)
        try:
            out, err = live.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            live.kill()
            out, err = live.communicate()
        frames = out.count("step %d.0  world %d" % (JOB, WORLD))
        ok(live.returncode == 0 and frames >= 3 and out.count("\n>> not-entered: ") >= frames,
           "without --once: the view redrawn every 200 ms (%d times in 3 s), ended by SIGINT "
           "(rc %s): %s" % (frames, live.returncode, err.strip()[-200:]))

        # --- from a login host: the step's nodes from Slurm ---
        rc, out, err, t = ctl("watch", str(JOB), "--once", "--json", "--topology", mapf,
                              "--scontrol", scontrol, *login)
        try:
            j = json.loads(out)
        except ValueError:
            j = {}
        lead = a.view(JOB) or {}
        ok(rc == 0 and j.get("job_id") == JOB and j.get("step_id") == 0 and
           [r["rank"] for r in j.get("ranks", [])] == list(range(WORLD)),
           "a login host, JOBID alone: Slurm's step %d.0 on node[1-3], its leader's JSON "
           "(rc %d): %s" % (JOB, rc, err[-300:]))
        ok(any(f["kind"] == "not-entered" and f["culprits"] == [5] and f["node"] == "node2"
               for f in j.get("findings", [])), "the JSON names rank 5 on node2")
        is_eq([(r["rank"], r["node"], r["gpu"], r["nic"], r["coords"]) for r in j.get("ranks", [])],
              [(r["rank"], r["node"], r["gpu"], r["nic"], r["coords"]) for r in lead.get("ranks", [])],
              "the ranks as the leader's own view has them")
        rc, out, err, t = ctl("watch", "2.0", "--once", "--topology", mapf, "--scontrol",
                              scontrol, *login)
        ok(rc == 1 and "Slurm: " in err and "Invalid job id specified" in err,
           "a step Slurm does not know: exit 1 with what scontrol said: %s" % err.strip()[-300:])
        rc, out, err, t = ctl("watch", "1.3", "--once", "--topology", mapf, "--scontrol",
                              scontrol, *login)
        ok(rc == 1 and "Slurm lists no step 1.3" in err,
           "an scontrol answer without the step asked: exit 1 saying so (%s)" %
           err.strip()[-200:])

        hang = os.path.join(tmp, "scontrol-hangs")
        with open(hang, "w") as f:
            f.write("#!/bin/sh\nexec sleep 60\n")
        os.chmod(hang, 0o755)
        rc, out, err, t = ctl("watch", "1.0", "--once", "--topology", mapf, "--scontrol", hang,
                              "--socket", "/nonexistent.sock", "--timeout", "1000")
        ok(rc == 1 and "no answer in 1000 ms" in err and t < 4,
           "an scontrol that hangs: given up after the timeout, %.1f s: %s" %
           (t, err.strip()[-200:]))

        # --- a step larger than a page ---
        is_eq(big_step(m, a), [200, 200, 200], "a hand-made step of 2,048 ranks on three nodes "
              "reaches the leader")
        rc, out, err, t = ctl("watch", "%d.0" % BIG, "--once", "--json", "--leader",
                              "%s:%d" % (HOST, base), *login)
        try:
            j = json.loads(out)
        except ValueError:
            j = {}
        want = sorted((r, n) for n, rs in BIG_RANKS.items() for r in rs)
        ok(rc == 0 and sorted((r["rank"], r["node"]) for r in j.get("ranks", [])) == want and
           len(j.get("ranks", [])) == 2048 and j.get("ranks_next") is None and
           j.get("ranks_total") == 2048,
           "2,048 ranks in pages of 1,024: merged, each once, in order (rc %d, %.2f s): %s" %
           (rc, t, err[-300:]))
        st, p1 = peer_call(HOST, a.port, "GET", "/v1/watch/step?job=%d&step=0" % BIG,
                           cred=m.cred("GET /v1/watch/step?job=%d&step=0" % BIG))
        p1 = json.loads(p1) if st == 200 else {}
        ok(len(p1.get("ranks", [])) == 1024 and p1.get("ranks_next") == 1024,
           "(the leader's first page holds 1,024 ranks; the next from 1024)")
        rc, out, err, t = ctl("watch", "%d.0" % BIG, "--once", "--leader", "%s:%d" % (HOST, base),
                              *login)
        ok(rc == 0 and len(rows(out)) == 0 and "(2048 ranks, nothing found" in out and
           out.count("\n   node-") + out.count("\n>> node-") == 3,
           "its table: a line per node, no rank rows when nothing is found (rc %d): %s" %
           (rc, out[-300:]))

        # rank 1500 exits with status 7: in the condensed table it alone has rows
        rs = list(BIG_RANKS["node-z"])
        body = summary("node-z", BIG, 0, rs, seq=2, world=2048, sizes=BIG_SIZES,
                       exited={1500: 7 << 8})
        is_eq(peer_call(HOST, a.port, "POST", "/v1/peer/summary", body, m.cred(sha(body)))[0],
              200, "node-z's next summary: rank 1500 exited with status 7")
        ok(wait_for(lambda: any(f["kind"] == "exited" and f["culprits"] == [1500]
                                for f in (a.view(BIG) or {}).get("findings", [])), 10, 0.2),
           "the leader finds rank 1500 exited")
        rc, out, err, t = ctl("watch", "%d.0" % BIG, "--once", "--leader", "%s:%d" % (HOST, base),
                              *login)
        ok(rc == 0 and rows(out) == [(True, 1500, "node-z")] and "\n>> node-z " in out and
           "(2047 ranks more: the culprits and their groups are shown" in out and
           "\n>> exited: " in out,
           "the condensed table: the culprit's row marked, its node marked, the rest "
           "counted (rc %d): %s" % (rc, out[-500:]))

        # --- a user sees own steps only ---
        rc, out, err, t = ctl("watch", "%d.0" % JOB, "--once", "--leader", "%s:%d" % (HOST, base),
                              *login, uid=NOBODY)
        rc2, out2, err2, t = ctl("watch", "%d.0" % (JOB + 777), "--once", "--leader",
                                 "%s:%d" % (HOST, base), *login, uid=NOBODY)
        ok(rc == 1 and rc2 == 1 and "not led here" in err and
           err.replace("%d.0" % JOB, "J.0") == err2.replace("%d.0" % (JOB + 777), "J.0"),
           "as nobody: root's step is not shown, in the words of a step unknown there "
           "(rc %d): %s" % (rc, err.strip()[-300:]))
        is_eq(big_step(m, a, uid=NOBODY, job=BIG + 1), [200, 200, 200], "a step of nobody's")
        rc, out, err, t = ctl("watch", "%d.0" % (BIG + 1), "--once", "--json", "--leader",
                              "%s:%d" % (HOST, base), *login, uid=NOBODY)
        try:
            j = json.loads(out)
        except ValueError:
            j = {}
        ok(rc == 0 and j.get("uid") == NOBODY and len(j.get("ranks", [])) == 2048,
           "as nobody: its own step, whole (rc %d): %s" % (rc, err[-300:]))

        # --- nobody answers ---
        silent = socket.socket()
        silent.bind((HOST, 0))
        silent.listen(8)
        sport = silent.getsockname()[1]
        rc, out, err, t = ctl("watch", "%d.0" % JOB, "--once", "--leader", "%s:%d" % (HOST, sport),
                              "--socket", "/nonexistent.sock", "--munge-socket", m.sock,
                              "--timeout", "1500")
        ok(rc == 1 and t < 5 and "--leader %s:%d" % (HOST, sport) in err and "imeout" in err,
           "a leader that accepts and says nothing: exit 1 in %.1f s (timeout 1.5 s), naming "
           "it: %s" % (t, err.strip()[-300:]))
        silent.close()
        rc, out, err, t = ctl("watch", "%d.0" % JOB, "--once", "--topology", mapf, "--nodes",
                              "nodeq7,node3", "--socket", "/nonexistent.sock", "--munge-socket",
                              m.sock, "--timeout", "1500")
        ok(rc == 0 and "leader node1" in out,
           "a node the map lacks first: passed over, node3 redirects (rc %d): %s" %
           (rc, err.strip()[-300:]))
        a.stop()
        rc, out, err, t = ctl("watch", "%d.0" % JOB, "--once", "--topology", mapf, "--nodes",
                              "node1", *login)
        ok(rc == 1 and "node1 (node 1 of the step, at http://%s:%d)" % (HOST, base) in err and
           "onnect" in err and t < 5,
           "the leader stopped: exit 1 in %.1f s, saying which node was tried and why: %s" %
           (t, err.strip()[-300:]))
        def taken_over():
            v = b.view(JOB) or {}
            return v.get("role") == "acting" and \
                sorted(r["rank"] for r in v.get("ranks", []) if r["present"]) == [4, 5, 6, 7]
        ok(wait_for(taken_over, 20, 0.2), "node2 acts for the stopped leader, with the "
           "followers' ranks")
        rc, out, err, t = ctl("watch", "%d.0" % JOB, "--once", "--socket", c.sock,
                              "--munge-socket", m.sock)
        ok(rc == 0 and "leader node2, acting for node1 (http://%s:%d)" % (HOST, base + 1) in out
           and sorted({r for _, r, _ in rows(out)}) == [4, 5, 6, 7],
           "on node3: its layoutd names node2, the acting leader, which shows the followers' "
           "ranks (rc %d): %s" % (rc, (out + err)[:600]))
        rc, out, err, t = ctl("watch", "%d.0" % JOB, "--once", "--socket", "/nonexistent.sock",
                              "--nodes", "node1", "--timeout", "1500")
        ok(rc == 1 and "no cluster map" in err,
           "no map and no layoutd here: the message says so: %s" % err.strip()[-300:])
        ok(a.start() and wait_for(lambda: a.view(JOB), 30, 0.2),
           "the leader started again has the step back from the followers' summaries")
        other = os.path.join(tmp, "other")
        os.mkdir(other, 0o755)
        m2 = Munged(other)
        try:
            rc, out, err, t = ctl("watch", "%d.0" % JOB, "--once", "--leader",
                                  "%s:%d" % (HOST, base), "--socket", "/nonexistent.sock",
                                  "--munge-socket", m2.sock, "--timeout", "3000")
        finally:
            m2.stop()
        ok(rc == 1 and "answered 403: GET /v1/watch/step: the munge credential is refused: "
           in err, "a credential of another munge key: refused, saying what the leader said "
           "(rc %d): %s" % (rc, err.strip()[-300:]))
        forged(tmp, mapf, m, a)
        rc, out, err, t = ctl("watch", "1x", "--once")
        ok(rc == 2 and "expected JOBID or JOBID.STEP" in err, "a malformed job: usage error")
        rc, out, err, t = ctl("watch", "1.0", "--leader")
        ok(rc == 2 and "--leader needs a value" in err, "--leader without a value: usage error")
        for bad in ("gpu001", "gpu001:0", "gpu001:70000", "a:b:6830", "http://gpu001:6830",
                    "gpu001:68x"):
            rc, out, err, t = ctl("watch", "1.0", "--once", "--leader", bad)
            ok(rc == 2 and "expected HOST:PORT" in err,
               "--leader %s: usage error saying what is accepted (rc %d)" % (bad, rc))
        rc, out, err, t = ctl("watch", "--help")
        ok(rc == 0 and "--leader HOST:PORT" in out and "--munge-socket" in out,
           "watch --help names the new options")
        w.close(ds)
    finally:
        for w in worlds:
            for p in w.procs:
                if p.poll() is None:
                    p.kill()
                    p.wait()
        for d in ds:
            if d.p.poll() is None:
                d.p.kill()
                d.p.wait()
        if m:
            m.stop()
        if os.environ.get("PL_KEEP_TMP"):
            diag("kept " + tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return done()


if __name__ == "__main__":
    raise SystemExit(main())
