#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The watch under faults, on the emulated cluster with the real daemons
(slurmctld, a slurmd and a layoutd per node, munge, Alertmanager, a
webhook): a 32-rank step (tp8 pp4, nccl_driver under srun) runs, a fault of
the step (rank 13 stops entering its collectives) makes an alert due, and
a fault of the watch itself is injected meanwhile.  Each row checks that
the alert still arrives, in time, once, and resolves, and measures it:

  leader killed    the leader's layoutd SIGKILLed 1 s after the fault: the
                   next node leads and alerts within threshold +
                   peer_lost_s + 2 s; the old leader back, no second copy
                   fires (one fingerprint, one startsAt at the webhook);
  leader restarted its layoutd stopped and started again while the alert
                   is open: the alert is neither forgotten (it resolves when
                   the step ends) nor fired anew (one startsAt);
  Alertmanager     down across the fault for ALERTMANAGER_DOWN_S: the alert
  down             reaches it after its return with the startsAt of the
                   fault, and resolves after the step;
  webhook 500      meanwhile the webhook answers 500 for HOOK_FAIL_S: the
                   firing message is tried again with growing gaps, counted
                   as retries, and delivered once it answers;
  follower frozen  a follower's layoutd SIGSTOPped for FROZEN_S while a
                   healthy step runs: ParallelLayoutNodeLost for that node
                   and nothing else, resolved after SIGCONT;
  munged stopped   the munged of one follower (its own, with the lab's
                   key) stopped for MUNGE_DOWN_S while a healthy step runs:
                   NodeLost for that node only (no other node blamed), one
                   log line there when munged fails and one when it is
                   back, parallel_layout_munge_up 0 then 1, the alert
                   resolved once munged is back;
  /dev/shm full    the records' filesystem full at the step's start: the
                   hook turns itself off, each node's view says which
                   ranks are unwatched and why, the job runs, no alert.

The table (injected, expected, measured, pass) is printed at the end, and
written as JSON to $CHAOS_TABLE when set.  Under 5 minutes.
"""
import json
import os
import shutil
import signal
import subprocess
import threading
import time

import amlib
from clusterlib import LabError
from taplib import diag, done, http_request, ok

from watchlab import WatchLab, parts, rows_of

PLUGIN, DRIVER, HOOK, LAYOUTD = parts()

THRESH = 5
INTERVAL_MS = 200
LOST_S = 5                  # peer_lost_s auto: max(3 intervals, 5 s)
ALERTMANAGER_DOWN_S = 60
HOOK_FAIL_S = 25            # the webhook answers 500 meanwhile
FROZEN_S = 30
MUNGE_DOWN_S = 20
STEP = ["-N4", "-n32", "--parallel-layout=tp8,pp4"]
DRV = ["--compute-us", "20000"]
HANG = "ParallelLayoutHang"

wl = WatchLab(PLUGIN, HOOK, DRIVER, LAYOUTD, name="chaos", threshold=THRESH,
              interval_ms=INTERVAL_MS, alert_resend_s=3)
lab, am, hook = wl.lab, wl.am, wl.hook
try:
    wl.up()
except (LabError, RuntimeError) as e:
    ok(False, "the lab: 4 nodes, a layoutd on each, Alertmanager and a webhook")
    diag(e)
    wl.down()
    done()
ok(True, "4 nodes, a layoutd on each, Alertmanager at %s, a webhook at %s" % (am.url, hook.url))
EXEC = wl.exec
TABLE = []


def row(name, injected, expected, measured, passed):
    TABLE.append({"fault": name, "injected": injected, "expected": expected,
                  "measured": measured, "pass": bool(passed)})
    ok(passed, "%s: %s (%s)" % (name, expected, measured))


def ours(alerts, job, name=None):
    return [a for a in alerts if a["labels"].get("job_id") == str(job) and
            (name is None or a["labels"].get("alertname") == name)]


def start_missing():
    """Start the layoutds that are not running (the lab starts what is
    missing, with the config they had)."""
    lab.up(layoutd=wl.layoutd, layoutd_map=wl.map, layoutd_conf=wl.conf_path())


def layoutd_pid(node):
    return lab.daemon_pids().get("layoutd.%s.lab" % node)


def node_get(node, path):
    """GET path from node's layoutd: its body, or "" when it does not answer."""
    try:
        return http_request(os.path.join(lab.dir, "run", "layoutd-%s.sock" % node), "GET",
                            path)[2]
    except OSError:
        return ""


def metric(node, series):
    """The value of series (name and labels, as exposed) in node's layoutd
    GET /metrics, or None."""
    for line in node_get(node, "/metrics").splitlines():
        if line.startswith(series + " "):
            return float(line.split()[-1])
    return None


def hook_tries(job, name, since):
    """The monotonic arrival times of the webhook's firing messages for
    job's alert name since index since."""
    with hook.lock:
        got = hook.bodies[since:]
    return [t for t, b in got if b.get("status") == "firing" and
            str(b.get("job_id", "")) == str(job) and b.get("alertname") == name]


def firing(job, name, since):
    """The webhook's firing messages for job's alert name since index since:
    {(fingerprint, startsAt)}."""
    return {(b.get("fingerprint"), b.get("startsAt")) for b in hook.got()[since:]
            if b.get("status") == "firing" and str(b.get("job_id", "")) == str(job)
            and b.get("alertname") == name}


def resolved(job, name, since):
    return [b for b in hook.got()[since:] if b.get("status") == "resolved" and
            str(b.get("job_id", "")) == str(job) and b.get("alertname") == name]


class Step:
    """srun of the step in the background: its job id once known, its
    output once it ended."""

    def __init__(self, extra, timeout=200):
        self.before = wl.last_job_id()
        self.res = {}
        self.t0 = time.time()
        self.th = threading.Thread(target=lambda: self.res.update(r=lab.srun(
            STEP + [EXEC] + DRV + extra, timeout=timeout)))
        self.th.start()
        self.job = None
        end = time.monotonic() + 60
        while self.job is None and time.monotonic() < end and self.th.is_alive():
            j = wl.last_job_id()
            self.job = j if j > self.before else None
            time.sleep(0.1)

    def fault_at(self, timeout=60):
        """Wall time rank 13 stopped (its own last line), or None."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            t = wl.stopped_at(self.job, 13)
            if t:
                return t
            time.sleep(0.05)
        return None

    def wait(self):
        self.th.join()
        return self.res.get("r", (124, "", "no answer"))


def hang_seen(job, timeout):
    """Wall time the Hang alert naming rank 13 is in Alertmanager, or None."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if any(a["labels"].get("rank") == "13" for a in ours(am.alerts(), job, HANG)):
            return time.time()
        time.sleep(0.05)
    return None


def gone(job, name, timeout):
    """Whether job's alert name left Alertmanager within timeout."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if not ours(am.alerts(), job, name):
            return True
        time.sleep(0.2)
    return False


# A healthy step first: the leader is rank 0's node (the placement is the
# same every time).
s = Step(["--steps", "20", "--timeout", "30"])
rc, out, err = s.wait()
rows = rows_of(out)
leader = [r["node"] for r in rows if r["rank"] == "0"]
node13 = [r["node"] for r in rows if r["rank"] == "13"]
if not ok(rc == 0 and len(rows) == 32 and leader and node13 and leader != node13,
          "a healthy step: rank 0 on %s leads, rank 13 on %s" % (leader, node13)):
    diag(err[-2000:])
    wl.down()
    done()
LEADER, N13 = leader[0], node13[0]
FOLLOWER = [n for n in ("node4", "node3", "node2") if n not in (LEADER, N13)][0]

# --- the leader's layoutd killed 1 s after the fault ---
n0 = len(hook.got())
s = Step(["--steps", "100000", "--timeout", "25", "--fault=stop:13:3"])
fault = s.fault_at()
killed = None
if fault:
    time.sleep(max(0.0, fault + 1 - time.time()))
    pid = layoutd_pid(LEADER)
    if pid:
        os.kill(pid, signal.SIGKILL)
        killed = time.time()
seen = hang_seen(s.job, THRESH + LOST_S + 10)
lat = seen - fault if seen and fault else None
try:
    start_missing()
    back = layoutd_pid(LEADER) is not None
except LabError as e:
    back = False
    diag(e)
time.sleep(8)       # the old leader leads again; its alert must be the same one
fp = firing(s.job, HANG, n0)
rc, out, err = s.wait()
res_ok = gone(s.job, HANG, 30)
row("leader killed", "SIGKILL to %s's layoutd (the leader) 1 s after rank 13 stopped; "
    "started again once the alert fired" % LEADER,
    "the Hang alert within %d s of the fault (threshold + peer_lost_s + 2), one copy, "
    "resolved after the step" % (THRESH + LOST_S + 2),
    "alert %s s after the fault; %d firing copies (fingerprint, startsAt) at the webhook; "
    "leader back: %s; resolved: %s" % (lat and round(lat, 1), len(fp), back, res_ok),
    killed and lat is not None and lat <= THRESH + LOST_S + 2 and len(fp) == 1 and back and
    res_ok)

# --- the leader restarted with the alert open ---
n0 = len(hook.got())
s = Step(["--steps", "100000", "--timeout", "30", "--fault=stop:13:3"])
fault = s.fault_at()
seen = hang_seen(s.job, THRESH + 10)
restarted = False
if seen:
    restarted = lab.stop_layoutd(LEADER)
    try:
        start_missing()
    except LabError as e:
        restarted = False
        diag(e)
    restarted = restarted and layoutd_pid(LEADER) is not None
time.sleep(8)
still = bool(ours(am.alerts(), s.job, HANG))
fp = firing(s.job, HANG, n0)
rc, out, err = s.wait()
res_ok = gone(s.job, HANG, 30) and bool(resolved(s.job, HANG, n0))
row("leader restarted", "%s's layoutd (the leader) stopped and started again while the Hang "
    "alert was open" % LEADER,
    "the alert stays open (not forgotten), is not fired anew (one startsAt), and resolves "
    "after the step",
    "restarted: %s; still open 8 s later: %s; %d firing copies; resolved: %s" %
    (restarted, still, len(fp), res_ok),
    seen and restarted and still and len(fp) == 1 and res_ok)

# --- Alertmanager down across the fault, the webhook answering 500 ---
n0 = len(hook.got())
RETRIES = 'parallel_layout_alert_notification_retries_total{receiver="webhook"}'
retried0 = metric(LEADER, RETRIES)
am.stop()
hook.fail = b"chaos: the webhook fails"
s = Step(["--steps", "100000", "--timeout", "%d" % (ALERTMANAGER_DOWN_S + 25),
          "--fault=stop:13:3"])
fault = s.fault_at()
time.sleep(max(0.0, s.t0 + HOOK_FAIL_S - time.time()))
with hook.lock:
    hook.fail = None
    hook_ok_at = time.monotonic()
time.sleep(max(0.0, s.t0 + ALERTMANAGER_DOWN_S - time.time()))
tries = hook_tries(s.job, HANG, n0)
failed_tries = [t for t in tries if t < hook_ok_at]
ok_tries = [t for t in tries if t >= hook_ok_at]
gaps = [round(b - a, 1) for a, b in zip(failed_tries, failed_tries[1:])]
retried = metric(LEADER, RETRIES)
try:
    am.start()
    up = time.time()
except RuntimeError as e:
    up = None
    diag(e)
seen = hang_seen(s.job, 30) if up else None
got = ours(am.alerts(), s.job, HANG)
starts = amlib._ends({"endsAt": got[0].get("startsAt", "")}) if got else 0
hook_fired = firing(s.job, HANG, n0)
rc, out, err = s.wait()
res_ok = gone(s.job, HANG, 30)
row("Alertmanager down", "Alertmanager stopped for %d s across the fault (rank 13 stopped %s s "
    "after srun started)" % (ALERTMANAGER_DOWN_S, fault and round(fault - s.t0, 1)),
    "the Hang alert in Alertmanager soon after its return (alert_resend_s 3), startsAt kept "
    "from the fault, resolved after the step; the webhook got it meanwhile",
    "in Alertmanager %s s after its return, startsAt %s s after the fault (its return "
    "%s s after it); webhook firing copies %d; resolved: %s" %
    (seen and up and round(seen - up, 1), fault and starts and round(starts - fault, 1),
     up and fault and round(up - fault, 1), len(hook_fired), res_ok),
    seen is not None and seen - up <= 3 + 2 and fault and starts and
    0 <= starts - fault + 1 <= THRESH + 3 and len(hook_fired) == 1 and res_ok)
# The webhook's 500s: tried again with growing gaps (1, 2, 4 ... s, at most
# alert_resend_s; a re-send replacing the waiting message keeps its time),
# delivered once it answers again.
row("webhook 500", "the webhook answered 500 until %d s after srun started (the Hang alert "
    "due about %d s in)" % (HOOK_FAIL_S, THRESH + 4),
    "tried again with backoff (gaps of 1, 2 ... s that never shrink, at most alert_resend_s: "
    "a re-send does not make a try immediate), counted as retries, delivered within the "
    "last gap after the webhook answers again, one alert (one fingerprint and startsAt)",
    "%d tries answered 500, gaps %s s; delivered %s s after the webhook answered again; "
    "retries counted %s; firing copies %d" %
    (len(failed_tries), gaps, ok_tries and round(ok_tries[0] - hook_ok_at, 1),
     retried is not None and retried0 is not None and retried - retried0, len(hook_fired)),
    len(failed_tries) >= 3 and all(g >= 0.7 for g in gaps) and
    all(b >= a - 0.3 for a, b in zip(gaps, gaps[1:])) and gaps[-1] > gaps[0] and ok_tries and
    ok_tries[0] - hook_ok_at <= max(gaps) * 2 + 1 and retried is not None and
    retried0 is not None and retried - retried0 >= len(failed_tries) - 1 and
    len(hook_fired) == 1)

# --- a follower frozen while a healthy step runs ---
n0 = len(hook.got())
s = Step(["--steps", "100000", "--timeout", "%d" % (FROZEN_S + 40)])
time.sleep(8)
pid = layoutd_pid(FOLLOWER)
if pid:
    os.kill(pid, signal.SIGSTOP)
stopped = time.time()


end = time.monotonic() + FROZEN_S
first, others = None, set()
while time.monotonic() < end:
    al = ours(am.alerts(), s.job)
    for a in al:
        if a["labels"].get("alertname") == "ParallelLayoutNodeLost" and \
                a["labels"].get("node") == FOLLOWER:
            first = first or time.time()
        else:
            others.add((a["labels"].get("alertname"), a["labels"].get("node")))
    time.sleep(0.2)
if pid:
    os.kill(pid, signal.SIGCONT)
cont = time.time()
cleared = gone(s.job, "ParallelLayoutNodeLost", 20)
cleared_in = time.time() - cont
lab.run(["scancel", str(s.job)], timeout=15)
s.wait()
row("follower frozen", "SIGSTOP to %s's layoutd for %d s while a healthy step runs, then "
    "SIGCONT" % (FOLLOWER, FROZEN_S),
    "ParallelLayoutNodeLost for %s within peer_lost_s + 2 s, resolved after SIGCONT (no "
    "other alert: the next check)" % FOLLOWER,
    "NodeLost %s s after the stop; other alerts %s; resolved %.1f s after SIGCONT: %s" %
    (first and round(first - stopped, 1), sorted(others) or "none", cleared_in, cleared),
    first is not None and first - stopped <= LOST_S + 2 + 1 and cleared)
# Once the leader judged the frozen node's last summary as current and
# raised GpuStuck on a PP transfer between node2 and node4: a node whose
# summary is older than half the threshold is late now, its ranks left out.
ok(not others, "follower frozen: no alert but NodeLost (%s)" % (sorted(others) or "none"))

# --- munged stopped on one node while a healthy step runs ---
class Munged:
    """A munged of the follower's own, with the lab's key."""

    def __init__(self):
        self.dir = os.path.join(wl.tmp, "munge2")
        os.makedirs(os.path.join(self.dir, "key"), mode=0o700, exist_ok=True)
        os.chmod(self.dir, 0o755)
        self.key = os.path.join(self.dir, "key", "munge.key")
        if not os.path.exists(self.key):
            shutil.copy(os.path.join(lab.dir, "munge", "key", "munge.key"), self.key)
            os.chmod(self.key, 0o400)
        self.sock = os.path.join(self.dir, "munge.socket")
        self.p = None

    def start(self):
        for f in (self.sock, self.sock + ".lock"):
            if os.path.exists(f):
                os.unlink(f)
        self.p = subprocess.Popen(
            ["munged", "-F", "--socket=" + self.sock, "--key-file=" + self.key,
             "--pid-file=" + os.path.join(self.dir, "munged.pid"),
             "--log-file=" + os.path.join(self.dir, "munged.log"),
             "--seed-file=" + os.path.join(self.dir, "key", "munged.seed")],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        end = time.monotonic() + 20
        while time.monotonic() < end and self.p.poll() is None and not os.path.exists(self.sock):
            time.sleep(0.05)
        return self.p.poll() is None and os.path.exists(self.sock)

    def stop(self):
        if self.p and self.p.poll() is None:
            self.p.terminate()
            self.p.wait(timeout=20)


def munge_up(node):
    """parallel_layout_munge_up of node's layoutd, or None."""
    return metric(node, 'parallel_layout_munge_up{node="%s"}' % node)


def log_count(node, text):
    try:
        with open(os.path.join(lab.dir, "log", "layoutd.%s.log" % node)) as f:
            return f.read().count(text)
    except OSError:
        return -1


DOWN_LINE = "cannot make or check credentials"
BACK_LINE = "credentials work again"
m2 = Munged()
started = m2.start()
wl.restart_layoutds(per_node={FOLLOWER: {"munge_socket": m2.sock}})
s = Step(["--steps", "100000", "--timeout", "%d" % (MUNGE_DOWN_S + 60)])
time.sleep(6)
up_before = munge_up(FOLLOWER)
m2.stop()
stopped = time.time()
end = time.monotonic() + MUNGE_DOWN_S
first, others, up_during = None, set(), None
while time.monotonic() < end:
    for a in ours(am.alerts(), s.job):
        if a["labels"].get("alertname") == "ParallelLayoutNodeLost" and \
                a["labels"].get("node") == FOLLOWER:
            first = first or time.time()
        else:
            others.add((a["labels"].get("alertname"), a["labels"].get("node")))
    if up_during is None and time.time() - stopped > 3:
        up_during = munge_up(FOLLOWER)
    time.sleep(0.2)
restarted = m2.start()
back = time.time()
cleared = gone(s.job, "ParallelLayoutNodeLost", 20)
cleared_in = time.time() - back
up_after = munge_up(FOLLOWER)
downs, backs = log_count(FOLLOWER, DOWN_LINE), log_count(FOLLOWER, BACK_LINE)
lab.run(["scancel", str(s.job)], timeout=15)
s.wait()
m2.stop()
wl.restart_layoutds()       # every node on the lab's munged again
row("munged stopped", "%s's own munged stopped for %d s while a healthy step runs, then "
    "started again" % (FOLLOWER, MUNGE_DOWN_S),
    "ParallelLayoutNodeLost for %s within peer_lost_s + 2 s and no other alert (no node "
    "blamed for it), one log line there when munged fails and one when it is back, "
    "parallel_layout_munge_up 1, 0, 1; resolved after munged is back" % FOLLOWER,
    "NodeLost %s s after the stop; other alerts %s; log lines %d down, %d back; munge_up "
    "%s, %s, %s; resolved %.1f s after munged's return: %s" %
    (first and round(first - stopped, 1), sorted(others) or "none", downs, backs, up_before,
     up_during, up_after, cleared_in, cleared),
    started and restarted and first is not None and first - stopped <= LOST_S + 2 + 1 and
    not others and downs == 1 and backs == 1 and (up_before, up_during, up_after) == (1, 0, 1)
    and cleared)

# --- the records' filesystem full at the step's start ---
def node_step(node, job):
    """job's step in node's layoutd GET /v1/watch, or None."""
    try:
        for x in json.loads(node_get(node, "/v1/watch")).get("steps", []):
            if x.get("job_id") == job:
                return x
    except ValueError:
        pass
    return None


wdir = os.path.join(lab.dir, "watch")
mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4k,mode=0755", "tmpfs", wdir],
                         capture_output=True).returncode == 0
if mounted:
    with open(os.path.join(wdir, "filler"), "wb") as f:
        f.write(b"\0" * 4096)
try:
    s = Step(["--steps", "40", "--timeout", "60"])
    why, end = {}, time.monotonic() + 60
    while s.th.is_alive() and time.monotonic() < end:
        for n in ("node1", "node2", "node3", "node4"):
            x = node_step(n, s.job) or {}
            for t in x.get("tasks", []):
                if t.get("refused"):
                    why[t.get("rank", t.get("task"))] = t["refused"]
        time.sleep(0.5)
    rc, out, err = s.wait()
finally:
    if mounted:
        subprocess.run(["umount", "-l", wdir], capture_output=True)
rows = rows_of(out)
said = [w for w in why.values() if "full, so the rank's NCCL hook turned itself off" in w]
al = ours(am.alerts(), s.job)
row("/dev/shm full", "the records' filesystem (the lab's watch directory) a tmpfs of one page, "
    "full, at the step's start",
    "the hook turns itself off, every node's view says its ranks are unwatched and why, the job "
    "runs to its end, no alert",
    "tmpfs mounted: %s; step exit %s, %d of 32 ranks done; %d ranks said unwatched for the full "
    "filesystem (%s); alerts %s" %
    (mounted, rc, len(rows), len(said), (said or ["-"])[0][:160],
     sorted(a["labels"].get("alertname") for a in al) or "none"),
    mounted and rc == 0 and len(rows) == 32 and len(said) == 32 and not al)

diag("| fault | injected | expected | measured | pass |")
diag("|---|---|---|---|---|")
for r in TABLE:
    diag("| %s | %s | %s | %s | %s |" % (r["fault"], r["injected"], r["expected"], r["measured"],
                                        "pass" if r["pass"] else "FAIL"))
if os.environ.get("CHAOS_TABLE"):
    with open(os.environ["CHAOS_TABLE"], "w") as f:
        json.dump(TABLE, f, indent=1)
rc, err = wl.down()
ok(rc == 0, "lab down")
done()
