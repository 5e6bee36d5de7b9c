#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""No node speaks for another (peer_check_origin = yes): five real daemons
on loopback TCP, node K at 127.0.0.K (Linux routes all of 127/8 to lo),
each with a munged of its own sharing one key, whose credentials carry
that address as their origin (munged --origin), as each node's own munged
does on a cluster.  peer_fanin = 2: node3 relays for node4.  Checked: the
step is whole on the leader (every direct summary, relay post and batch is
from its own node), nothing refused; then what a root daemon on one node
can no longer do for another: a summary of node2 with node4's credential
(to the leader, and to a relay), a batch from node3 carrying node5's (a
relay itself) and node2's (no relay) summaries next to its member node4's
(taken) are refused as origin, counted and logged with both addresses.
Then the leader's queue for credentials is shared fairly: one address
cannot hold more than peer_source_max_queued_bytes of it while another's
POST is still taken.
"""
import http.client
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time

from taplib import diag, done, is_eq, like, ok, skip, wait_for
from layoutd_peer_test import Daemon, free_ports, peer_call, sha
from layoutd_relay_test import (JOB, NODES, WORLD, batch, peer_map, present, register,
                                summary)
from watchlib import checker


def addr(k):
    return "127.0.0.%d" % (k + 1)


class Munged:
    """Node k's munged: the shared key, its own socket, origin addr(k)."""

    def __init__(self, tmp, k, key):
        d = os.path.join(tmp, "munge%d" % k)
        os.mkdir(d, 0o700)
        self.sock = os.path.join(d, "munge.socket")
        self.p = subprocess.Popen(
            ["munged", "-F", "-f", "--socket=" + self.sock, "--key-file=" + key,
             "--origin=" + addr(k), "--pid-file=" + os.path.join(d, "munged.pid"),
             "--log-file=" + os.path.join(d, "munged.log"),
             "--seed-file=" + os.path.join(d, "munged.seed")],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        self.up = wait_for(lambda: self.p.poll() is not None or os.path.exists(self.sock), 20)

    def cred(self, payload):
        p = subprocess.run(["munge", "-S", self.sock, "-s", payload, "-t", "60"],
                           capture_output=True, text=True, timeout=20)
        return p.stdout.strip()

    def stop(self):
        if self.p.poll() is None:
            self.p.terminate()
            self.p.wait(timeout=20)


class Node(Daemon):
    """Node k's layoutd, its peer listener at addr(k):port."""

    def __init__(self, tmp, k, mapf, munged, port, wrapper=()):
        self.addr = addr(k)
        super().__init__(tmp, NODES[k], mapf, munged, port, port, wrapper=wrapper,
                         extra="peer_fanin = 2\npeer_check_origin = yes\n"
                         "peer_source_max_queued_bytes = 1M\n")

    def _answers(self):
        listening = "listening on http://%s:%d" % (self.addr, self.port)
        return Daemon.__base__._answers(self) and \
            (self.p.poll() is not None or listening in self.log_text())

    def view(self):
        return super().view(JOB)

    def peer(self):
        return super().peer() or {}


def post_from(src, port, path, body, cred, out):
    """POST body to the leader (127.0.0.1:port) from address src; (status,
    answer) into out."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30, source_address=(src, 0))
    try:
        conn.request("POST", path, body=body, headers={"Content-Type": "application/octet-stream",
                                                         "X-PL-Munge": cred})
        r = conn.getresponse()
        out.append((r.status, r.read().decode("utf-8", "replace")))
    except OSError as e:
        out.append((None, str(e)))
    finally:
        conn.close()


def per_source(lead, m, munged0):
    """peer_source_max_queued_bytes = 1M: the leader's munged stopped (its
    worker waits on it), 127.0.0.2 has a 700 KiB POST waiting; its second
    is answered 503 at once, while one from 127.0.0.3 is taken into the
    queue all the same; munged back, both waiting ones are answered."""
    bodies = [bytes([k]) * (700 << 10) for k in (1, 2, 3)]
    creds = [m.cred(sha(b)) for b in bodies]
    a1, a2, b1 = [], [], []
    munged0.p.send_signal(signal.SIGSTOP)
    try:
        t1 = threading.Thread(target=post_from, args=("127.0.0.2", lead.port, "/v1/peer/batch",
                                                      bodies[0], creds[0], a1))
        t1.start()
        time.sleep(0.5)
        post_from("127.0.0.2", lead.port, "/v1/peer/batch", bodies[1], creds[1], a2)
        ok(a2 and a2[0][0] == 503 and "127.0.0.2 has 1 POSTs of 716800 bytes waiting" in a2[0][1],
           "per source: a second 700 KiB POST from 127.0.0.2 while its first waits: 503 (%s)" %
           (a2[0][1][:240] if a2 else "no answer"))
        t2 = threading.Thread(target=post_from, args=("127.0.0.3", lead.port, "/v1/peer/batch",
                                                      bodies[2], creds[2], b1))
        t2.start()
        time.sleep(0.5)
        ok(not b1 and not a1, "per source: one from 127.0.0.3 waits in the queue too, not "
           "refused (%s)" % b1)
    finally:
        munged0.p.send_signal(signal.SIGCONT)
    t1.join(30)
    t2.join(30)
    ok(a1 and b1 and a1[0][0] not in (None, 503) and b1[0][0] not in (None, 503),
       "per source: munged back, both waiting POSTs answered (%s, %s)" %
       (a1[0][0] if a1 else None, b1[0][0] if b1 else None))


def main():
    if os.geteuid() != 0:
        skip("summaries bound to their nodes", "registrations and munged are root's: run as root")
        return done()
    if not shutil.which("munged") or not shutil.which("munge"):
        skip("summaries bound to their nodes", "munged and munge not installed (Debian: munge)")
        return done()
    tmp = tempfile.mkdtemp(prefix="ld-origin.")
    os.chmod(tmp, 0o755)
    ms, ns, sleepers = [], [], []
    try:
        base = free_ports(len(NODES))
        mapf = peer_map(tmp, base, addr)
        if not ok(mapf is not None, "a map with node K at 127.0.0.K"):
            return done()
        key = os.path.join(tmp, "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o400)
        ms = [Munged(tmp, k, key) for k in range(len(NODES))]
        if not ok(all(m.up and m.p.poll() is None for m in ms),
                  "five munged, one key, each with its node's address as origin"):
            return done()
        wrapper, why_not = checker()
        ns = [Node(tmp, k, mapf, ms[k], base + k, wrapper if k == 0 else ())
              for k in range(len(NODES))]
        lead, n2, relay, member, n5 = ns
        if not ok(all(n.up and n.p.poll() is None for n in ns),
                  "five layoutds listen, node K at 127.0.0.K%s" %
                  (" (the leader under valgrind)" if wrapper else "")):
            for n in ns:
                diag(n.log_text()[-1500:])
            return done()
        sleepers = [subprocess.Popen(["sleep", "600"]) for _ in NODES]
        is_eq([register(ns[k], k, sleepers[k].pid) for k in range(WORLD)], [200] * WORLD,
              "the five nodes register their ranks")

        # --- each node speaks for itself: the step is whole ---
        everyone = [(k, NODES[k]) for k in range(WORLD)]
        v = wait_for(lambda: lead.view() if present(lead.view()) == everyone else None, 30, 0.1)
        is_eq(present(v), everyone, "the leader has every rank, node4's through its relay node3")
        time.sleep(1.0)
        ok(relay.peer().get("relayed", 0) >= 3 and lead.peer().get("batches_in", 0) >= 3,
           "node3 relays node4's summaries in its batches (relayed %s, batches %s)" %
           (relay.peer().get("relayed"), lead.peer().get("batches_in")))
        is_eq([n.refused("origin") or 0 for n in ns], [0] * WORLD,
              "nothing refused for its origin while every node speaks for itself")

        # --- a summary of node2 with node4's credential ---
        s = summary(NODES[1], [1], seq=10 ** 6, boot=77)
        st, r = peer_call(addr(0), lead.port, "POST", "/v1/peer/summary", s, ms[3].cred(sha(s)))
        ok(st == 403 and "its credential comes from 127.0.0.4, not from node node2's address "
           "127.0.0.2" in r, "leader: node2's summary with node4's credential: 403 (%d: %s)" %
           (st, r.strip()[:240]))
        st, r = peer_call(addr(0), lead.port, "POST", "/v1/peer/summary", s, ms[1].cred(sha(s)))
        is_eq(st, 200, "leader: the same with node2's own credential: taken")
        s = summary(NODES[3], [3], seq=10 ** 6, boot=78)
        st, r = peer_call(addr(2), relay.port, "POST", "/v1/peer/relay", s, ms[4].cred(sha(s)))
        ok(st == 403 and "comes from 127.0.0.5, not from node node4's address 127.0.0.4" in r,
           "relay: node4's summary with node5's credential: 403 (%d: %s)" % (st, r.strip()[:240]))
        is_eq(relay.refused("origin"), 1, "relay: counted as origin")

        is_eq(lead.refused("origin"), 1, "leader: counted as origin")
        # --- a batch of node3: its member's summary, and two it has no say for ---
        items = [(0, summary(NODES[3], [3], seq=10 ** 6 + 1, boot=79)),
                 (0, summary(NODES[4], [4], seq=10 ** 6, boot=79)),
                 (0, summary(NODES[1], [1], seq=10 ** 6 + 1, boot=79))]
        b = batch(items)
        st, r = peer_call(addr(0), lead.port, "POST", "/v1/peer/batch", b, ms[2].cred(sha(b)))
        try:
            j = json.loads(r)
        except ValueError:
            j = {}
        ok(st == 200 and j.get("taken") == 1 and j.get("refused") == 2,
           "leader: node3's batch: its member node4's summary taken, node5's and node2's "
           "refused (%d: %s)" % (st, r.strip()[:200]))
        like(lead.log_text(), "refused (origin, 403) from 127.0.0.1:", "leader: the first refusal "
             "logged")
        like(lead.log_text(), "POST /v1/peer/summary: job %d.0 from node node2: its credential "
             "comes from 127.0.0.4" % JOB,
             "leader: the first refusal logged, with both addresses")
        b = batch([(0, summary(NODES[3], [3], seq=10 ** 6 + 2, boot=79))])
        st, r = peer_call(addr(0), lead.port, "POST", "/v1/peer/batch", b, ms[4].cred(sha(b)))
        ok(st == 403 and "from node node4: in a batch not from its relay nodes[2] node3: its "
           "credential comes from 127.0.0.5, not from node node3's address 127.0.0.3" in r,
           "leader: node4's summary in a batch of node5's: 403, not its relay (%d: %s)" %
           (st, r.strip()[:300]))
        b = batch([(0, summary(NODES[1], [1], seq=10 ** 6 + 2, boot=79))])
        st, r = peer_call(addr(0), lead.port, "POST", "/v1/peer/batch", b, ms[2].cred(sha(b)))
        ok(st == 403 and "from node node2: in a relay's batch, but nodes[1] has no relay with "
           "peer_fanin width 2" in r, "leader: node2's summary in a batch of node3's: 403, it "
           "has no relay (%d: %s)" % (st, r.strip()[:300]))
        # each summary refused counts, and a batch none of whose items was taken
        # is a request refused as well
        is_eq(lead.refused("origin"), 7, "leader: the five summaries refused, and the two "
              "batches refused whole, counted as origin")
        st, _, body = lead.get("/metrics")
        like(body, 'parallel_layout_peer_refusals_total{reason="origin"} 7',
             "leader: /metrics counts them by reason")
        v = lead.view() or {}
        is_eq(present(v), everyone, "the step is still whole on the leader")
        per_source(lead, ms[0], ms[0])
        rcs = [n.stop() for n in ns]
        if wrapper:
            is_eq(rcs[0], 0, "valgrind: no errors, no definite leaks in the leader")
        else:
            skip("valgrind run", why_not)
    finally:
        for s in sleepers:
            s.kill()
            s.wait()
        for n in ns:
            if n.p.poll() is None:
                n.p.kill()
                n.p.wait()
        for m in ms:
            m.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return done()


if __name__ == "__main__":
    main()
