#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""layoutd's fan-in: five real daemons on loopback TCP (node1-5, at
127.0.0.1 with a port each, as the map says) with peer_fanin = 2 and a
private munged.  A five-rank step (dp5, rank k on node k+1, node1 first)
is registered as slurmstepd would.  With width 2, node3 (nodes[2]) relays
for node4 (nodes[3]) and node5 (nodes[4]) is a relay with no member; node2
sends to the leader itself.  Checked: the leader (under valgrind, as is the
relay) has every rank, node4's summaries reach it only inside node3's
batches, the counters and /metrics say so; a member that registers before
its relay goes to the leader and back to the relay once it answers; the
relay stopped, its member goes to the leader within peer_fail_intervals
and is never lost, the relay back, it goes there again; the leader
stopped, the next node leads with the relayed ranks; and what a relay and
a leader refuse: a summary from a node not after the relay, a step the
relay does not know, a stale one, a batch that is garbage or forged, a
batch whose items are refused one by one.  Then width 3 over three nodes:
the leader's own group is relayed too (node2 for node3), so the leader
takes one batch a round.
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time

from taplib import LAYOUTD, diag, done, http_request, is_eq, like, ok, run, skip, wait_for
from layoutd_peer_test import Daemon, Munged, free_ports, peer_call, sha
from watchlib import SUM_NO_PROC, checker, sum_header, varint

NODES = ["node1", "node2", "node3", "node4", "node5"]
HOST = "127.0.0.1"
WORLD = 5
SIZES = (1, 1, 1, 5, 1)         # tp, cp, ep, dp, pp
INTERVAL_MS = 200
FAIL_INTERVALS = 3
LOST_S = 5.0
JOB = 5150
BATCH_MAGIC = 0x3130544142574c50


def coords(r):
    return {"tp": 0, "cp": 0, "ep": 0, "dp": r, "pp": 0}


def summary(node, ranks, seq=1, boot=9, job=JOB, world=WORLD, sizes=SIZES):
    """A hand-made node summary (lib/watch/summary.h) of ranks, no communicators."""
    body = b""
    for r in ranks:
        # rank, pid, exit age, status, gpu + 1 (unknown), coordinates (dp
        # r); the exit bits, an empty NIC; no communicator
        body += b"".join(varint(x) for x in (r, 2000 + r, 0, 0, 0, 0, 0, 0, r, 0)) + \
            b"\0\0" + varint(0)
    body += SUM_NO_PROC * len(ranks)    # after the rank entries, one a rank
    return sum_header(node, job, 0, seq, boot, 0, INTERVAL_MS, world, sizes, len(ranks),
                      len(body)) + body


def batch(items):
    """A batch (summary.h) of (hold_ns, summary bytes)."""
    body = b"".join(struct.pack("<QII", h, len(s), 0) + s for h, s in items)
    return struct.pack("<QIIQ", BATCH_MAGIC, 1, len(items), 24 + len(body)) + body


class Node(Daemon):
    """Node `name`'s layoutd as layoutd_peer_test starts it, with
    peer_fanin = 2 (or fanin), its peer listener where the map says."""

    def __init__(self, tmp, name, mapf, munged, port, wrapper=(), fanin=2, job=JOB):
        super().__init__(tmp, name, mapf, munged, port, port, wrapper=wrapper,
                         extra="peer_fanin = %d\n" % fanin)
        self.job = job

    def view(self):
        return super().view(self.job)

    def peer(self):
        return super().peer() or {}

    def sending(self):
        s = [x for x in self.peer().get("sending", []) if x["job_id"] == self.job]
        return s[0] if s else {}


def leaders_group(tmp, mapf, m, base):
    """Width 3 over three nodes: the leader's group is relayed too, node2
    (nodes[1]) for node3 (nodes[2]), so the leader takes one batch."""
    job, nodes = JOB + 1, NODES[:3]
    d = os.path.join(tmp, "g0")
    os.mkdir(d)
    os.chmod(d, 0o755)
    ns = [Node(d, n, mapf, m, base + k, fanin=3, job=job) for k, n in enumerate(nodes)]
    sleepers = [subprocess.Popen(["sleep", "600"]) for _ in nodes]
    try:
        if not ok(all(n.up and n.p.poll() is None for n in ns),
                  "width 3: three more layoutds listen"):
            return
        for k, n in enumerate(ns):
            register(n, k, sleepers[k].pid, job=job, nodes=nodes)
        everyone = [(k, nodes[k]) for k in range(3)]
        v = wait_for(lambda: ns[0].view() if present(ns[0].view()) == everyone else None, 20,
                     0.1)
        is_eq(present(v), everyone, "width 3: the leader has the three ranks")
        time.sleep(1.0)
        paths = [[(x["node"], x["path"]) for x in n.sending().get("links", []) if x["sent"] > 0]
                 for n in ns[1:]]
        is_eq(paths, [[(nodes[0], "/v1/peer/batch")], [(nodes[1], "/v1/peer/relay")]],
              "width 3: node3 posts to node2 at /v1/peer/relay, node2 its batches to the leader")
        ok(ns[1].peer().get("relayed", 0) >= 3, "width 3: node2 counts what it relays (%s)" %
           ns[1].peer().get("relayed"))
        is_eq([n.stop() for n in ns], [0, 0, 0], "width 3: the three exit 0 after SIGTERM")
    finally:
        for s in sleepers:
            s.kill()
            s.wait()
        for n in ns:
            if n.p.poll() is None:
                n.p.kill()
                n.p.wait()


def peer_map(tmp, base, addr=lambda k: HOST):
    """The five nodes' map: node K at addr(K), its peer port base + K."""
    nodes = os.path.join(tmp, "scontrol-nodes.txt")
    with open(nodes, "w") as f:
        for k, n in enumerate(NODES):
            f.write("NodeName=%s Arch=x86_64 CPUTot=8 NodeAddr=%s NodeHostName=vm Port=%d "
                    "State=IDLE Partitions=main\n" % (n, addr(k), base + k))
    topo = os.path.join(tmp, "topology.conf")
    with open(topo, "w") as f:
        f.write("SwitchName=leaf0 Nodes=node[1-5]\n")
    mapf = os.path.join(tmp, "map.json")
    rc, _, err = run("topo", "build", "--slurm-topology", topo, "--node", "8", "--name", "five",
                     "--slurm-nodes", nodes, "--peer-port", "slurmd+0", "-o", mapf)
    if rc != 0:
        diag(err)
    return mapf if rc == 0 else None


def register(node, k, pid, job=JOB, nodes=NODES):
    """Register rank k (one a node, dp across the nodes) on its node."""
    reg = {"job_id": job, "step_id": 0, "task": 0, "rank": k, "pid": pid, "uid": 0,
           "node": nodes[k], "coords": coords(k), "gpu": 0, "nic": "mlx5_0",
           "record": "/nonexistent/record",
           "step": {"world": len(nodes),
                    "layout": {"tp": 1, "cp": 1, "ep": 1, "dp": len(nodes), "pp": 1},
                    "nodes": nodes}}
    return node.post("/v1/watch/tasks", reg)[0]


def present(v):
    return sorted((r["rank"], r["node"]) for r in (v or {}).get("ranks", []) if r["present"])


def states(v):
    return {n["name"]: n["state"] for n in (v or {}).get("nodes", [])}


def refusals(m, relay, leader):
    """What a relay (node3) and a leader (node1) refuse."""
    def post(node, path, body, cred=True):
        return peer_call(HOST, node.port, "POST", path, body,
                         m.cred(sha(body)) if cred is True else cred)
    s = summary(NODES[1], [1], seq=10 ** 6)
    st, r = post(relay, "/v1/peer/relay", s)
    ok(st == 409 and "node node2 is not the step's order after this node (node3)" in r,
       "relay: a summary from a node before it is refused (%d: %s)" % (st, r.strip()[:200]))
    s = summary(NODES[3], [3], seq=1, job=JOB + 77)
    st, r = post(relay, "/v1/peer/relay", s)
    ok(st == 409 and "is not registered on this node (yet), so it cannot relay it" in r,
       "relay: a step it does not know is refused, saying to send to the leader (%d: %s)" %
       (st, r.strip()[:200]))
    # node4's own layoutd sends too: a summary of its own boot between the
    # two posts is a restart to the relay, and the second then counts as
    # new.  So the pair is tried again (a fresh seq each time) when that
    # happened; one clean pair must show the refusal.
    for k in range(5):
        seq = 10 ** 6 + 1000 * k
        s = summary(NODES[3], [3], seq=seq, boot=4242 + k)
        st1, _ = post(relay, "/v1/peer/relay", s)
        st2, r = post(relay, "/v1/peer/relay", s)
        if st2 != 200:
            break
        diag("node4's own summary came between the two posts (try %d)" % (k + 1))
    ok(st1 == 200 and st2 == 409 and "is not newer than %d, held to relay" % seq in r,
       "relay: the same summary again is stale (%d, %d: %s)" % (st1, st2, r.strip()[:200]))
    s = summary(NODES[3], [3], world=4, sizes=(1, 1, 1, 4, 1))
    st, r = post(relay, "/v1/peer/relay", s)
    ok(st == 409 and "or layout other than the step registered here" in r,
       "relay: a summary of another shape is refused (%d: %s)" % (st, r.strip()[:200]))
    st, r = post(relay, "/v1/peer/relay", b"\x01junk" * 40)
    ok(st == 422 and "node summary" in r, "relay: garbage is refused: 422 (%s)" % r.strip()[:120])
    good = summary("node-x", [0], seq=1, job=JOB + 99, world=1, sizes=(1, 1, 1, 1, 1))
    b = batch([(0, good)])
    st, r = post(leader, "/v1/peer/batch", b, cred=m.cred(sha(b"other")))
    ok(st == 403 and "payload is not the SHA-256 of the body" in r,
       "batch: a forged credential is refused (%d)" % st)
    st, r = post(leader, "/v1/peer/batch", b, cred=None)
    is_eq(st, 401, "batch: without a credential, 401")
    bad = b[:16] + struct.pack("<I", 7) + b[20:]
    st, r = post(leader, "/v1/peer/batch", bad)
    ok(st == 422 and "summary batch: total_size" in r,
       "batch: a framing that lies is refused whole: 422 (%s)" % r.strip()[:160])
    outside = summary("node-x", [4], seq=50)
    b = batch([(1000, good), (2000, outside)])
    st, r = post(leader, "/v1/peer/batch", b)
    try:
        j = json.loads(r)
    except ValueError:
        j = {}
    ok(st == 200 and j.get("taken") == 1 and j.get("refused") == 1,
       "batch: one item taken, one (a node outside the step) refused on its own (%d: %s)" %
       (st, r.strip()[:200]))
    b = batch([(0, outside)])
    st, r = post(leader, "/v1/peer/batch", b)
    ok(st == 409 and "node node-x is not one of the step's 5 nodes" in r,
       "batch: every item refused: the first refusal answers (%d: %s)" % (st, r.strip()[:200]))
    like(leader.log_text(), "an item of POST /v1/peer/batch: ", "batch: item refusals logged")


def conf_checks(tmp, mapf):
    for line, want in (("peer_fanin = 1", "expected auto (none up to 64 nodes"),
                       ("peer_fanin = 1025", "or a relay width from 2 to 1024"),
                       ("peer_fanin = wide", "expected auto")):
        conf = os.path.join(tmp, "bad.conf")
        with open(conf, "w") as f:
            f.write("map = %s\nhwloc_check = no\nnode_name = node1\n%s\n" % (mapf, line))
        p = subprocess.run([LAYOUTD, "-f", conf, "--check-config"], capture_output=True,
                           text=True, timeout=60)
        ok(p.returncode == 1 and want in p.stderr, "config '%s': refused, saying '%s' (%s)" %
           (line, want, p.stderr.strip()[-200:]))


def main():
    if os.geteuid() != 0:
        skip("layoutd relays", "registrations and munged are root's: run as root")
        return done()
    if not shutil.which("munged") or not shutil.which("munge"):
        skip("layoutd relays", "munged and munge not installed (Debian: munge)")
        return done()
    tmp = tempfile.mkdtemp(prefix="ld-relay.")
    os.chmod(tmp, 0o755)
    m = None
    ns = []
    sleepers = []
    try:
        base = free_ports(len(NODES))
        mapf = peer_map(tmp, base)
        if not ok(mapf is not None, "a map with five nodes' addresses and peer ports"):
            return done()
        conf_checks(tmp, mapf)
        m = Munged(tmp)
        if not ok(m.up and m.p.poll() is None, "a private munged runs"):
            return done()
        wrapper, why_not = checker()
        ns = [Node(tmp, n, mapf, m, base + k, wrapper if k in (0, 2) else ())
              for k, n in enumerate(NODES)]
        lead, n2, relay, member, n5 = ns
        if not ok(all(n.up and n.p.poll() is None for n in ns),
                  "five layoutds listen for peers on %s:%d-%d%s" %
                  (HOST, base, base + 4, " (the leader and the relay under valgrind)"
                   if wrapper else "")):
            for n in ns:
                diag(n.log_text()[-1500:])
            return done()
        sleepers = [subprocess.Popen(["sleep", "600"]) for _ in NODES]

        # --- the member registers before its relay: the leader takes it meanwhile ---
        is_eq(register(member, 3, sleepers[3].pid), 200, "node4 registers its rank first")
        ok(wait_for(lambda: member.sending().get("target") == NODES[0], 10, 0.05),
           "node4's relay (node3) does not know the step yet: node4 sends to the leader")
        like(member.log_text(), "summaries go to the leader node1 (the relay failed)",
             "and says so")
        is_eq([register(ns[k], k, sleepers[k].pid) for k in (0, 1, 2, 4)], [200] * 4,
              "the other four nodes register theirs")
        ok(wait_for(lambda: member.sending().get("target") == NODES[2], 10, 0.05),
           "the relay answers now: node4 sends to it")
        like(member.log_text(), "summaries go to the relay node3 (nodes[2]) again", "and says so")

        # --- the whole step on the leader, node4 through node3 ---
        everyone = [(k, NODES[k]) for k in range(WORLD)]
        v = wait_for(lambda: lead.view() if present(lead.view()) == everyone else None, 20, 0.1)
        is_eq(present(v), everyone, "the leader has every rank, each with its node")
        is_eq(states(v), {NODES[0]: "self", NODES[1]: "ok", NODES[2]: "ok", NODES[3]: "ok",
                          NODES[4]: "ok"}, "every node heard from")
        time.sleep(1.0)
        snd = member.sending()
        links = snd.get("links", [])
        ok(snd.get("target") == NODES[2] and
           [(x["node"], x["path"]) for x in links if x["sent"] > 0 and x["node"] == NODES[2]] ==
           [(NODES[2], "/v1/peer/relay")] and links[0]["fails"] == 0,
           "node4 posts to its relay at /v1/peer/relay: %s" % json.dumps(snd)[:300])
        rs = relay.sending()
        ok(rs.get("target") == NODES[0] and
           [(x["node"], x["path"]) for x in rs.get("links", [])] == [(NODES[0], "/v1/peer/batch")],
           "node3 posts batches to the leader: %s" % json.dumps(rs)[:300])
        ok(relay.peer().get("relayed", 0) >= 3, "node3 counts what it relays (%s)" %
           relay.peer().get("relayed"))
        f5 = n5.sending()
        ok([(x["node"], x["path"]) for x in f5.get("links", [])] == [(NODES[0], "/v1/peer/batch")],
           "node5, a relay with no member, sends its own summary as a batch of one")
        f2 = n2.sending()
        ok([(x["node"], x["path"]) for x in f2.get("links", [])] == [(NODES[0], "/v1/peer/summary")],
           "node2, in the leader's group, posts its summary to the leader")
        st, j = member.get_json("/v1/watch/step?job=%d&step=0" % JOB)
        ok(st == 421 and (j or {}).get("leader") == NODES[2] and (j or {}).get("acting") is False
           and "ask its relay, node3" in str(j),
           "node4 does not lead the step: 421 naming its relay, not as an acting leader (%s)" %
           str(j)[:200])
        st, j = relay.get_json("/v1/watch/step?job=%d&step=0" % JOB)
        ok(st == 421 and (j or {}).get("leader") == NODES[0] and (j or {}).get("acting") is False,
           "the relay names the leader in turn (%s)" % str(j)[:200])
        rc, out, err = run("watch", str(JOB), "--once", "--json", "--socket", member.sock,
                           "--munge-socket", m.sock, "--timeout", "5000")
        try:
            w = json.loads(out) if rc == 0 else {}
        except ValueError:
            w = {}
        ok(w.get("self") == NODES[0] and len(w.get("ranks", [])) == WORLD,
           "layoutctl watch on node4 follows its relay to the leader: the whole step (rc %d %s)" %
           (rc, err.strip()[-200:]))
        pl = lead.peer()
        b1, i1 = pl.get("batches_in", 0), pl.get("batch_items", 0)
        time.sleep(2.0)
        pl = lead.peer()
        db, di = pl.get("batches_in", 0) - b1, pl.get("batch_items", 0) - i1
        ok(db >= 2 * 2.0 * 1000 / INTERVAL_MS * 0.6 and 1.2 * db <= di <= 1.6 * db + 2,
           "the leader takes about 2 batches a round, 3 summaries in each 2 (node3+node4, "
           "node5): %d batches, %d summaries in 2 s" % (db, di))
        st, _, text = http_request(lead.sock, "GET", "/metrics")
        like(text, 'parallel_layout_peer_batches_received_total{what="batches"}',
             "/metrics: the batches counted")
        like(text, "parallel_layout_peer_relayed_total", "/metrics: what this node relays")
        refusals(m, relay, lead)

        # --- the relay stops: its member goes to the leader, and back ---
        t0 = time.monotonic()
        rc = relay.stop()
        if wrapper:
            is_eq(rc, 0, "the relay stopped: valgrind found no errors, no definite leaks")
        ok(wait_for(lambda: member.sending().get("target") == NODES[0], 10, 0.05),
           "the relay stopped: node4 sends to the leader, %.2f s later" % (time.monotonic() - t0))

        def relay_lost():
            v = lead.view()
            s = states(v)
            return v if s.get(NODES[2]) == "lost" and s.get(NODES[3]) == "ok" else None
        v = wait_for(relay_lost, LOST_S + 10, 0.2)
        ok(v is not None, "the leader reports node3 lost and still hears node4: %s" %
           states(lead.view()))
        ok(v and (3, NODES[3]) in present(v) and (2, NODES[2]) not in present(v),
           "node4's rank is present, node3's not")
        ok(relay.start(), "the relay starts again")
        is_eq(register(relay, 2, sleepers[2].pid), 200, "and its rank registers again")
        ok(wait_for(lambda: member.sending().get("target") == NODES[2], 10, 0.05),
           "the relay back: node4 sends to it again")
        ok(wait_for(lambda: present(lead.view()) == everyone, 10, 0.1),
           "the leader has every rank again")

        # --- the leader stops: node2 leads, the relay's batches go there ---
        t0 = time.monotonic()
        rc = lead.stop()
        if wrapper:
            is_eq(rc, 0, "the leader stopped: valgrind found no errors, no definite leaks")

        def acting():
            v = n2.view()
            return v if v and v.get("role") == "acting" and \
                present(v) == everyone[1:] else None
        v = wait_for(acting, 20, 0.1)
        ok(v is not None, "node2 leads in the leader's place with ranks 1-4, node4's through "
           "the relay, %.1f s after the leader stopped: %s" %
           (time.monotonic() - t0, present(n2.view())))
        ok(relay.sending().get("target") == NODES[1], "the relay's batches go to node2")
        for k in range(1, WORLD):
            is_eq(ns[k].stop(), 0, "%s exits 0 after SIGTERM%s" %
                  (NODES[k], " (valgrind: no errors, no definite leaks)"
                   if wrapper and k == 2 else ""))
        if not wrapper:
            skip("valgrind runs", why_not)
        leaders_group(tmp, mapf, m, base)
    finally:
        for s in sleepers:
            s.kill()
            s.wait()
        for n in ns:
            if n.p.poll() is None:
                n.p.kill()
                n.p.wait()
        if m:
            m.stop()
        if os.environ.get("PL_KEEP_TMP"):
            diag("kept " + tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return done()


if __name__ == "__main__":
    sys.exit(main())
