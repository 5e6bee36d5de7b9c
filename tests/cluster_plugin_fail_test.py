#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""When the plugin fails the tasks of one node, the whole step ends at once.

Every task here waits for all its peers (a TCP rendezvous at MASTER_ADDR:
MASTER_PORT with a 30 s deadline), as a real trainer does: before the fix
the tasks on the healthy nodes sat in the rendezvous until that deadline
and the step took 31 s.  Each failure the plugin can raise on one node is
made on node3 only -- its layoutd down with fallback=fail, a bad map for
the in-process fallback, an answer that does not fit the step -- plus a
steering mismatch (every node), and each step must end, non-zero, within
timeout_ms plus a few seconds, saying why.  Also: the slurmstepd request
is made as root for a job owned by another user (srun --uid)."""
import json
import os
import shutil
import socket
import tempfile
import threading
import time

from clusterlib import Lab, LabError, clean_stderr, skip_all, unavailable
from taplib import ETC, data, diag, done, is_eq, ok, run, wait_for

why = unavailable()
PLUGIN = os.environ.get("PL_PLUGIN", "")
LAYOUTD = os.environ.get("LAYOUTD", "")
if not why and not os.path.exists(PLUGIN):
    why = "the SPANK plugin was not built (no spank.h at configure time)"
if not why and not os.path.exists(LAYOUTD):
    why = "layoutd was not built"
if why:
    skip_all(why)

TIMEOUT_MS = 1000
WAIT_S = 30          # how long each task waits for its peers
BOUND_S = TIMEOUT_MS / 1000.0 + 5.0

# Rank 0 accepts WORLD_SIZE-1 peers; the others connect; everybody gives up
# after WAIT_S.  Exit 0 only when the whole world met.
RENDEZVOUS = r"""
import os, socket, sys, time
rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
addr, port = os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])
deadline = time.monotonic() + %d
if rank == 0:
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("", port))
    s.listen(world)
    peers = []
    while len(peers) < world - 1 and time.monotonic() < deadline:
        s.settimeout(max(0.1, deadline - time.monotonic()))
        try:
            peers.append(s.accept()[0])
        except OSError:
            pass
    sys.exit(0 if len(peers) == world - 1 else 3)
while time.monotonic() < deadline:
    try:
        socket.create_connection((addr, port), timeout=1).close()
        sys.exit(0)
    except OSError:
        time.sleep(0.1)
sys.exit(3)
""" % WAIT_S

tmp = tempfile.mkdtemp(prefix="pl-fail-")
MAP = os.path.join(tmp, "map.json")
BAD_MAP = os.path.join(tmp, "bad.json")
rc, out, err = run("topo", "build", "--name", "lab", "-o", MAP,
                   "--slurm-topology", data("lab-topology.conf"),
                   "--node", os.path.join(ETC, "examples", "h100-node-topo.txt"), "--gpu-mem", "80")
ok(rc == 0, "cluster map built for the lab")
with open(BAD_MAP, "w") as f:
    f.write('{"version": 1, "nodes": [')

lab = Lab(plugin=PLUGIN, layoutd=LAYOUTD, layoutd_map=MAP)
ARGS = "master_addr=127.0.0.1 socket=%s/run/layoutd-%%n.sock timeout_ms=%d" % (lab.dir, TIMEOUT_MS)
SOCK3 = os.path.join(lab.dir, "run", "layoutd-node3.sock")
try:
    lab.up(plugin_args=ARGS + " map=" + MAP)
except LabError as e:
    ok(False, "lab up with the plugin and 4 layoutds")
    diag(e)
    done()
ok(True, "lab up with the plugin and 4 layoutds")
PY = ["/usr/bin/python3", "-c", RENDEZVOUS]


def step(extra=(), timeout=90):
    lab.wait_idle()
    t0 = time.monotonic()
    rc, out, err = lab.srun(["-N4", "-n32", "--parallel-layout=tp8,pp4"] + list(extra) + PY,
                            timeout=timeout)
    return rc, out, err, time.monotonic() - t0


# The rendezvous itself works: with every layoutd up the step meets and exits 0.
rc, out, err, dt = step()
is_eq(rc, 0, "all 32 tasks met at rank 0 (%.2f s)" % dt)
if rc != 0:
    diag(err[-2000:])


def stop_layoutd3():
    return lab.stop_layoutd("node3")


def ends_fast(name, rc, err, dt, needle):
    ok(rc != 0, "%s: the step fails (rc %d)" % (name, rc))
    ok(dt < BOUND_S, "%s: the whole step ended after %.2f s (< %.0f s; the tasks wait %d s for peers)"
       % (name, dt, BOUND_S, WAIT_S))
    ok(needle in err, "%s: srun says why ('%s')" % (name, needle))
    ok("cancelling step" in err, "%s: and that the step is cancelled" % name)
    if needle not in err or dt >= BOUND_S:
        diag(err[-1500:])


# 1. node3's layoutd down, fallback=fail.
ok(stop_layoutd3(), "node3's layoutd stopped (the others run)")
lab.up(plugin_args=ARGS + " map=" + MAP + " fallback=fail", layoutd=LAYOUTD)
ok(stop_layoutd3(), "node3's layoutd still stopped after the plugstack change")
rc, out, err, dt = step()
ends_fast("node3's layoutd down, fallback=fail", rc, err, dt, "layoutd did not answer")
is_eq(lab.bad_nodes(), {}, "no node drained")

# 2. node3 places in-process from a map it cannot read.
lab.up(plugin_args=ARGS + " map=" + BAD_MAP)
ok(stop_layoutd3(), "node3's layoutd stopped again")
rc, out, err, dt = step()
ends_fast("node3 falls back to a bad map", rc, err, dt, "map ")

# 3. node3 gets an answer that does not fit the step (one node of four).
ANSWER = {"spec": "tp8,pp4", "world": 32, "layout": {}, "map": "lab",
          "nodes": [{"name": "node3", "ntasks": 8, "min_rank": 8, "nccl_topo_file": ""}],
          "master_node": 0,
          "tasks": [{"procid": 16 + i, "rank": 8 + i, "node": 0, "local_id": i, "local_rank": i,
                     "tp": i, "cp": 0, "ep": 0, "dp": 0, "pp": 1, "nic": ""} for i in range(8)],
          "cost": {"cross_node_bytes_per_step": 0, "cross_switch_bytes_per_step": 0},
          "baseline_cost": {"cross_node_bytes_per_step": 0, "cross_switch_bytes_per_step": 0},
          "strategy": "fake", "warnings": []}
stop = threading.Event()
asked = []


def read_request(c):
    """One HTTP request from c: its body (bytes)."""
    req = b""
    while b"\r\n\r\n" not in req:
        chunk = c.recv(65536)
        if not chunk:
            return req
        req += chunk
    head, _, rest = req.partition(b"\r\n\r\n")
    n = [int(l.split(b":")[1]) for l in head.split(b"\r\n") if l.lower().startswith(b"content-length")]
    while n and len(rest) < n[0]:
        chunk = c.recv(65536)
        if not chunk:
            break
        rest += chunk
    return rest


def reply(c, status, body=b""):
    c.sendall(b"HTTP/1.0 %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
              % (status.encode(), len(body)) + body)


def serve(path, answer):
    """A fake layoutd at path until stop is set: answer(body) gives the
    (status, body) of each reply."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.listen(16)
    s.settimeout(0.2)
    while not stop.is_set():
        try:
            c = s.accept()[0]
        except OSError:
            continue
        c.settimeout(2)
        try:
            reply(c, *answer(read_request(c)))
        except OSError:
            pass
        c.close()
    s.close()
    os.unlink(path)


def one_node_answer(body):
    asked.append(body)
    return "200 OK", json.dumps(ANSWER).encode()


def fake_daemon():
    serve(SOCK3, one_node_answer)


lab.up(plugin_args=ARGS + " map=" + MAP + " fallback=fail")
ok(stop_layoutd3(), "node3's layoutd replaced by a daemon that answers for one node only")
t = threading.Thread(target=fake_daemon)
t.start()
time.sleep(0.3)
rc, out, err, dt = step()
stop.set()
t.join()
ok(len(asked) >= 1, "node3's slurmstepd asked the fake daemon")
ends_fast("an answer listing 1 of the step's 4 nodes", rc, err, dt, "placement lists 1 nodes, the step has 4")

# 4. srun, inside an allocation, gets a hostfile answer without rank_nodes:
# it used to crash (and leave its hostfile behind); now it leaves Slurm's
# placement alone and the nodes place the step (node1's fake daemon sends
# 503 to node views, so node1 places in-process).
SOCK1 = os.path.join(lab.dir, "run", "layoutd-node1.sock")
NO_RANK_NODES = dict(ANSWER, nodes=[{"name": "node%d" % k, "ntasks": 8, "min_rank": 8 * (k - 1),
                                     "nccl_topo_file": ""} for k in range(1, 5)], tasks=[])


def hostfile_answer(body):
    if b'"view":"hostfile"' in body.replace(b" ", b""):
        asked.append("hostfile")
        return "200 OK", json.dumps(NO_RANK_NODES).encode()
    return "503 Service Unavailable", b""


def hostfile_daemon():
    serve(SOCK1, hostfile_answer)


lab.up(plugin_args=ARGS + " map=" + MAP, layoutd=LAYOUTD)
ok(lab.stop_layoutd("node1"), "node1's layoutd replaced by a daemon that answers the hostfile view without rank_nodes")
stop.clear()
del asked[:]
t = threading.Thread(target=hostfile_daemon)
t.start()
time.sleep(0.3)
before = set(f for f in os.listdir("/tmp") if f.startswith("parallel-layout-hostfile."))
script = "#!/bin/bash\nsrun --parallel-layout=tp8,pp4 bash -c 'echo RANK=$RANK'\n"
rc, out, err = lab.sbatch_wait(["-N4", "-n32", "-w", "node[1-4]"], script=script, timeout=120)
stop.set()
t.join()


def new_hostfiles():
    return set(f for f in os.listdir("/tmp") if f.startswith("parallel-layout-hostfile.")) - before


# A hostfile this step left stays; one that another suite's srun holds
# for a moment (distcheck's labs run beside these) goes: give those 10 s.
wait_for(lambda: not new_hostfiles(), 10, 0.2)
after = new_hostfiles()
ok("hostfile" in asked, "srun asked node1's fake daemon for the hostfile view")
ranks = sorted(int(l.split("=")[1]) for l in out.splitlines() if l.startswith("RANK=") and l[5:].isdigit())
ok(rc == 0 and ranks == list(range(32)),
   "a hostfile answer without rank_nodes: srun does not crash, the step runs with its 32 RANKs (rc %s)" % rc)
ok("not steering Slurm's placement: placement has no rank_nodes" in err, "srun says why it did not steer")
if rc != 0 or "rank_nodes" not in err:
    diag(err[-1500:])
is_eq(sorted(after), [], "no hostfile left behind")
lab.up(layoutd=LAYOUTD)

# 5. Steering mismatch (every node fails: srun said it steered, Slurm did not).
lab.up(plugin_args=ARGS + " map=" + MAP)
rc, out, err, dt = step(["--export=ALL,PARALLEL_LAYOUT_STEERED=1"])
ends_fast("a steered step that Slurm placed otherwise", rc, err, dt, "did not place step")
is_eq(lab.bad_nodes(), {}, "no node drained by the failed steps")

# 6. The request is made as root even when the job belongs to another user:
# init_post_opt runs before slurmstepd drops to the user's euid (user_init).
# Slurm 24.11's srun has no --uid/--gid: there srun itself runs as the user.
_, help_out, _ = lab.run(["srun", "--help"], timeout=15)
AS_USER = ["--uid=65534", "--gid=65534"] if "--uid" in help_out else []
for attempt in range(3):
    lab.wait_idle()
    argv = AS_USER + ["-N4", "-n32", "--parallel-layout=tp8,pp4", "--parallel-layout-verbose",
                      "/bin/sh", "-c", "echo RANK=$RANK id=$(id -u)"]
    if AS_USER:
        rc, out, err = lab.srun(argv, timeout=60)
    else:
        rc, out, err = lab.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                                "srun", "--job-name=" + lab._job_name()] + argv, timeout=60)
        err = clean_stderr(err)
    # srun --uid becomes the user right after the allocation; now and then
    # slurmctld then loses srun and kills the job before the step starts
    # ("Killing interactive JobId=N: Communication connection failure").
    ctld = lab.log_tail("slurmctld.log", 15)
    if rc == 0 or "Communication connection failure" not in ctld:
        break
    diag("srun --uid: slurmctld lost srun before the step started; again")
rows = [l for l in out.splitlines() if l.startswith("RANK=")]
ok(rc == 0 and len(rows) == 32 and all(l.endswith("id=65534") for l in rows),
   "srun --uid=65534: 32 tasks ran as uid 65534 with their RANK")
if rc != 0:
    diag(err[-1500:])
logs = "".join(lab.log_tail("slurmd.node%d.log" % k, 400) for k in range(1, 5))
asked_as = [l for l in logs.splitlines() if "asked as uid" in l]
ok(len(asked_as) >= 4 and all("asked as uid 0 for job owner 65534" in l for l in asked_as[-4:]),
   "each node asked its layoutd as uid 0 (root), sending the job owner's uid 65534")
if not asked_as:
    diag(logs[-1500:])

lab.down()
ok(not lab.leftovers(), "nothing of the lab is left running")
shutil.rmtree(tmp, ignore_errors=True)
done()
