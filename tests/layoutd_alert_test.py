#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""layoutd's alerts, end to end with real parts: a real Alertmanager
(Debian's prometheus-alertmanager, on loopback, no gossip, a temporary
config and storage), a small webhook receiver (http.server in a thread),
a fake scontrol (a script in the test's directory that records its
arguments) and the real layoutd (under valgrind when it can) leading a
step of real nccl_driver ranks, registered as slurmstepd registers them
(the node's first task brings the step, whose node list starts with this
node, so this layoutd is its leader and judges it).

A rank that stops entering its collectives becomes a ParallelLayoutHang
alert in Alertmanager with the exact labels (alertname, severity, job_id,
step, user, cluster, group, comm, node, rank) and annotations naming the
rank's node, GPU, NIC and coordinates; the webhook gets it firing, again
while it fires, and resolved, each with a one-line `text`; it resolves in
Alertmanager when the step ends.  The first hang drains the node through
the fake scontrol with the right arguments, the second is not drained
(drain_max_per_hour 1).  With Alertmanager stopped, the alert is retried
and arrives when it is back; with the queue full, a message is dropped,
counted and logged.  GET /metrics passes `promtool check metrics`, the
shipped alerting rules pass `promtool check rules` and a `promtool test
rules` run, and every metric the Grafana dashboard asks for is one layoutd
exports.  The expectations come from the faults injected and the layout,
not from the daemon's code.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request

import watchlib
from amlib import ALERTMANAGER, Alertmanager, Webhook, free_port
from taplib import ETC, LAYOUTD, diag, done, is_eq, like, ok, skip, wait_for
from watchlib import DRIVER, HOOK

CTL = os.environ.get("LAYOUTCTL", "layoutctl")
TP, DP = 2, 2
WORLD = TP * DP
THRESHOLD = 5
RESEND = 3
PROMTOOL = shutil.which("promtool")


def am_alerts(am, **labels):
    """Alertmanager's active alerts whose labels include these."""
    return [a for a in am.alerts() if all(a["labels"].get(k) == v for k, v in labels.items())]


class Hook(Webhook):
    """The webhook receiver, its bodies filtered."""

    def __init__(self):
        super().__init__()
        self.start()

    def select(self, pred=lambda b: True):
        return [b for b in self.got() if isinstance(b, dict) and pred(b)]


class World(watchlib.World):
    """WORLD nccl_driver ranks of job `job` (tp2 dp2, one node)."""
    tp, dp = TP, DP


def metric(text, name, **labels):
    """The value of the sample name{labels...} (those labels at least), or None."""
    for line in text.splitlines():
        if not line.startswith(name + "{") and not line.startswith(name + " "):
            continue
        m = re.match(r"([a-z_:]+)(?:\{(.*)\})? (\S+)$", line)
        if not m or m.group(1) != name:
            continue
        got = dict(re.findall(r'([a-z_]+)="((?:[^"\\]|\\.)*)"', m.group(2) or ""))
        if all(got.get(k) == v for k, v in labels.items()):
            return float(m.group(3))
    return None


def families(text):
    return set(re.findall(r"^# TYPE (\S+) ", text, re.M))


PROMQL_WORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "and", "or",
                "unless", "offset", "bool", "inf", "nan",
                # aggregation operators, which may take their grouping first
                "sum", "min", "max", "avg", "group", "stddev", "stdvar", "count",
                "count_values", "bottomk", "topk", "quantile"}


def promql_metrics(expr):
    """The metric names a PromQL expression reads: strings, label matchers,
    ranges, grouping lists and function names taken out."""
    e = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    e = re.sub(r"\{[^}]*\}", "", e)
    e = re.sub(r"\[[^\]]*\]", "", e)
    e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", r"\1", e)
    names = set()
    for m in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", e):
        word = m.group(0)
        rest = e[m.end():].lstrip()
        if word.lower() in PROMQL_WORDS or rest.startswith("("):
            continue
        if re.fullmatch(r"\d+[smhdwy]", word):
            continue
        names.add(word)
    return names


def dashboard_exprs(dash):
    out = []

    def walk(o):
        if isinstance(o, dict):
            for k, v in o.items():
                if k == "expr" and isinstance(v, str):
                    out.append(v)
                elif k == "query" and isinstance(v, dict) and isinstance(v.get("query"), str):
                    out.append(re.sub(r"^label_values\(([^,)]+).*$", r"\1", v["query"]))
                else:
                    walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)
    walk(dash)
    return out


def check_inhibit():
    """The shipped inhibit rules in a real Alertmanager: while munged is
    down on a node (Prometheus' ParallelLayoutMungeDown), the leaders'
    node-lost alerts for that node are held back, another node's are not."""
    with open(os.path.join(ETC, "alertmanager", "parallel-layout.inhibit.yml")) as f:
        extra = f.read()
    am = Alertmanager(extra=extra)
    try:
        am.start()
    except RuntimeError as e:
        ok(False, "Alertmanager starts with the shipped inhibit rules: %s" % e)
        return
    try:
        now = time.time()

        def alert(name, node, job=None):
            a = {"labels": {"alertname": name, "node": node, "severity": "critical"},
                 "startsAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now - 5)),
                 "endsAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now + 300))}
            if job:
                a["labels"]["job_id"] = job
            return a
        body = json.dumps([alert("ParallelLayoutMungeDown", "gpu004"),
                           alert("ParallelLayoutNodeLost", "gpu004", "7"),
                           alert("ParallelLayoutNodeLost", "gpu004", "8"),
                           alert("ParallelLayoutNodeLost", "gpu002", "9")]).encode()
        req = urllib.request.Request(am.url + "/api/v2/alerts", data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            ok(r.status == 200, "inhibit: four alerts posted to Alertmanager")

        want = {("ParallelLayoutMungeDown", "gpu004", None): "active",
                ("ParallelLayoutNodeLost", "gpu004", "7"): "suppressed",
                ("ParallelLayoutNodeLost", "gpu004", "8"): "suppressed",
                ("ParallelLayoutNodeLost", "gpu002", "9"): "active"}
        seen = {}

        def states():
            # Alertmanager marks the inhibited ones as it processes them:
            # all active at first, suppressed a moment later
            seen.clear()
            seen.update({(a["labels"]["alertname"], a["labels"]["node"],
                          a["labels"].get("job_id")): a["status"]["state"] for a in am.alerts()})
            return seen == want
        wait_for(states, 15, 0.2)
        is_eq(seen, want,
              "inhibit: with the shipped rules, munged down on gpu004 holds back its node-lost "
              "alerts (one a step), not gpu002's")
    finally:
        am.stop()


def check_etc(tmp, metrics_text):
    """The shipped rules and dashboard against what layoutd exports."""
    rules = os.path.join(ETC, "prometheus", "parallel-layout.rules.yml")
    dash_path = os.path.join(ETC, "grafana", "parallel-layout.json")
    fams = families(metrics_text)
    if PROMTOOL:
        p = subprocess.run([PROMTOOL, "check", "rules", rules], capture_output=True, text=True,
                           timeout=60)
        ok(p.returncode == 0 and "SUCCESS" in p.stdout,
           "promtool check rules: the shipped alerting rules: %s" % p.stdout.strip()[-200:])
        # The rules fire on series that call for them.  promtool compares
        # the annotations too: a copy without them is tested, so the test
        # does not repeat their text.
        bare = os.path.join(tmp, "rules_bare.yml")
        with open(rules) as f, open(bare, "w") as out:
            skip_to = None
            for line in f:
                ind = len(line) - len(line.lstrip())
                if skip_to is not None and (not line.strip() or ind > skip_to):
                    continue
                skip_to = None
                if line.strip() == "annotations:":
                    skip_to = ind
                    continue
                out.write(line)
        test = os.path.join(tmp, "rules_test.yml")
        with open(test, "w") as f:
            f.write("""rule_files: [%s]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'parallel_layout_alert_notifications_total{instance="n1",receiver="alertmanager",result="dropped"}'
        values: '0 0 3 3 3'
      - series: 'parallel_layout_alert_notifications_total{instance="n1",receiver="webhook",result="dropped"}'
        values: '0 0 0 0 0'
      - series: 'parallel_layout_rank_lag_seconds{instance="n1",job_id="7",step="0",rank="0"}'
        values: '1 1 1 1 1'
      - series: 'parallel_layout_rank_lag_seconds{instance="n2",job_id="7",step="0",rank="5"}'
        values: '100 160 220 280 340'
      - series: 'up{job="parallel-layout",instance="n3"}'
        values: '1 0 0 0 0'
      - series: 'parallel_layout_munge_up{instance="n4",node="gpu004"}'
        values: '1 1 0 0 0'
      - series: 'parallel_layout_munge_up{instance="n1",node="gpu001"}'
        values: '1 1 1 1 1'
    alert_rule_test:
      - eval_time: 3m
        alertname: ParallelLayoutAlertsLost
        exp_alerts:
          - exp_labels: {severity: critical, instance: n1, receiver: alertmanager, result: dropped}
      - eval_time: 4m
        alertname: ParallelLayoutRankLagging
        exp_alerts:
          - exp_labels: {severity: warning, instance: n2, job_id: "7", step: "0", rank: "5"}
      - eval_time: 4m
        alertname: ParallelLayoutDaemonDown
        exp_alerts:
          - exp_labels: {severity: warning, job: parallel-layout, instance: n3}
      - eval_time: 2m
        alertname: ParallelLayoutMungeDown
        exp_alerts: []
      - eval_time: 3m
        alertname: ParallelLayoutMungeDown
        exp_alerts:
          - exp_labels: {severity: critical, instance: n4, node: gpu004}
""" % json.dumps(bare))
        p = subprocess.run([PROMTOOL, "test", "rules", test], capture_output=True, text=True,
                           timeout=60)
        ok(p.returncode == 0 and "SUCCESS" in p.stdout,
           "promtool test rules: alerts lost, a lagging rank, a daemon down and munged down fire "
           "on series "
           "that call for them: %s" % (p.stdout + p.stderr).strip()[-600:])
    else:
        skip("promtool check rules", "promtool not installed (Debian: prometheus)")
        skip("promtool test rules", "promtool not installed (Debian: prometheus)")
    with open(rules) as f:
        exprs = re.findall(r"expr:\s*(?:>-\s*\n)?((?:.*\n)*?)\s*(?:for|labels):", f.read())
    used = set()
    for e in exprs:
        used |= promql_metrics(" ".join(e.split()))
    used.discard("up")      # Prometheus' own
    is_eq(sorted(used - fams), [], "every metric the rules read (%d) is one layoutd exports" %
          len(used))
    try:
        with open(dash_path) as f:
            dash = json.load(f)
    except ValueError as e:
        ok(False, "the Grafana dashboard is JSON: %s" % e)
        return
    exprs = dashboard_exprs(dash)
    used = set()
    for e in exprs:
        used |= promql_metrics(e)
    ok(len(exprs) >= 15 and all(promql_metrics(e) for e in exprs),
       "the Grafana dashboard is JSON with %d queries, each reading a metric" % len(exprs))
    is_eq(sorted(used - fams), [], "every metric the dashboard reads (%d) is one layoutd exports"
          % len(used))


def conf_checks(tmp, mapf):
    for line, want in (("alertmanager_url = 127.0.0.1:9093",
                        "alertmanager_url = 127.0.0.1:9093: '127.0.0.1:9093' is not an http:// "
                        "or https:// URL with a host"),
                       ("webhook_url = http://a/x,,http://b/y", "an empty URL in the list"),
                       ("drain = maybe", "drain = maybe: expected yes"),
                       ("alert_queue_max = 0", "alert_queue_max = 0: expected a whole number "
                        "from 1 to 65536"),
                       ("scontrol = scontrol", "expected the absolute path of scontrol")):
        conf = os.path.join(tmp, "bad.conf")
        with open(conf, "w") as f:
            f.write("map = %s\nhwloc_check = no\nnode_name = node1\n%s\n" % (mapf, line))
        p = subprocess.run([LAYOUTD, "-f", conf, "--check-config"], capture_output=True,
                           text=True, timeout=60)
        ok(p.returncode == 1 and want in p.stderr, "config '%s': refused, saying '%s' (%s)" %
           (line, want, p.stderr.strip()[-200:]))


def am_start(am):
    try:
        am.start()
        return True
    except RuntimeError as e:
        diag(str(e))
        return False


def fingerprints(bodies):
    return {b.get("fingerprint") for b in bodies}


def main():
    if not DRIVER or not HOOK or not os.path.exists(HOOK):
        skip("layoutd alerts", "NCCL_DRIVER / PL_NCCL_HOOK not set")
        return done()
    if os.geteuid() != 0:
        skip("layoutd alerts", "registrations are root's: run as root")
        return done()
    if not ALERTMANAGER:
        skip("layoutd alerts", "prometheus-alertmanager not installed (Debian: "
             "prometheus-alertmanager)")
        return done()
    tmp = tempfile.mkdtemp(prefix="ld-alert.")
    os.chmod(tmp, 0o755)
    hook = Hook()
    am = Alertmanager(free_port())
    worlds = []
    d = None
    try:
        mapf = watchlib.lab_map(tmp)
        if not mapf:
            return done()
        conf_checks(tmp, mapf)
        if not ok(am_start(am), "Alertmanager starts on 127.0.0.1:%d" % am.port):
            diag(am.log_text()[-2000:])
            return done()
        scontrol = os.path.join(tmp, "scontrol")
        calls = os.path.join(tmp, "scontrol-calls")
        os.mkdir(calls)
        # The stand-in for scontrol: `-o show nodes` prints the nodes file
        # (Slurm's one line a node) and is counted; an update writes its
        # arguments, one per line, into a call file (whole: written beside
        # and moved in, so the test never reads one half written).
        nodes_txt = os.path.join(tmp, "nodes.txt")
        shows = os.path.join(tmp, "scontrol-shows")
        with open(scontrol, "w") as f:
            f.write("#!/bin/sh\n"
                    "if [ \"$1\" = -o ]; then echo \"$@\" >> %s; cat %s 2>/dev/null; exit 0; fi\n"
                    "printf '%%s\\n' \"$@\" > %s/.call.$$ && mv %s/.call.$$ %s/call.$$\n"
                    "echo \"fake scontrol: $1 $2\"\n"
                    % (shows, nodes_txt, tmp, tmp, calls))
        os.chmod(scontrol, 0o755)
        # The site's health check: its node argument logged, its exit code
        # from a file (1: the node is sick, as NHC says it).
        verify = os.path.join(tmp, "nhc")
        verify_rc = os.path.join(tmp, "nhc.rc")
        verify_log = os.path.join(tmp, "nhc.log")
        with open(verify, "w") as f:
            f.write("#!/bin/sh\necho \"$@\" >> %s\necho \"fake nhc: checked $1\"\n"
                    "exit $(cat %s)\n" % (verify_log, verify_rc))
        os.chmod(verify, 0o755)
        with open(verify_rc, "w") as f:
            f.write("1\n")

        def node_line(name, state, reason):
            return ("NodeName=%s Arch=x86_64 CoresPerSocket=1 CPUAlloc=0 State=%s "
                    "ThreadsPerCore=1 Reason=%s [root@2026-12-04T00:00:00]\n" % (name, state, reason))
        sock = os.path.join(tmp, "ld.sock")
        conf = os.path.join(tmp, "ld.conf")
        wd = os.path.join(tmp, "watchdir")
        os.mkdir(wd, 0o755)
        base_conf = ("map = %s\nsocket = %s\nsocket_mode = 0666\nnode_name = node1\n"
                     "hwloc_check = no\nwatch_interval_ms = 200\nhang_threshold_s = %d\n"
                     "watch_dir = %s\nalertmanager_url = http://127.0.0.1:%d\n"
                     "webhook_url = http://127.0.0.1:%d/hook\nalert_resend_s = %d\n"
                     "alert_retries = 6\nalert_timeout_ms = 2000\n"
                     "drain = yes\ndrain_max_per_hour = 1\nscontrol = %s\n"
                     "drain_max_nodes = 2\ndrain_verify = %s\nstate_dir = %s\n"
                     "user_hang_min_s = 6\n" %
                     (mapf, sock, THRESHOLD, wd, am.port, hook.port, RESEND, scontrol, verify,
                      os.path.join(tmp, "state")))
        with open(conf, "w") as f:
            f.write(base_conf)
        d = watchlib.start_checked(conf, os.path.join(tmp, "ld.log"), sock)
        if not d.ok:
            return done()
        a0 = d.alerts()
        ok(a0.get("open") == [] and a0.get("recent") == [] and
           [t["url"] for t in a0.get("targets", [])] ==
           ["http://127.0.0.1:%d/api/v2/alerts" % am.port, "http://127.0.0.1:%d/hook" % hook.port]
           and a0.get("drain", {}).get("enabled") is True,
           "GET /v1/alerts: nothing open, the Alertmanager's API URL and the webhook, drain on")

        # --- a hang: rank 2 stops entering its collectives at step 3 ---
        job = 4201
        w = World(tmp, job, ["--steps", "100000", "--compute-us", "1000", "--fault=stop:2:3"])
        worlds.append(w)
        is_eq(w.register(d), [200] * WORLD, "hang: every rank registered, the step led here")
        t0 = time.monotonic()
        got = wait_for(lambda: am_alerts(am, alertname="ParallelLayoutHang", job_id=str(job)),
                       THRESHOLD + 40, 0.25)
        took = time.monotonic() - t0
        diag("the hang reached Alertmanager %.1f s after the registration (threshold %d s)" %
             (took, THRESHOLD))
        want = {"tp": {"group": "TP group 1"}, "dp": {"group": "DP group 0"}}
        base = {"alertname": "ParallelLayoutHang", "severity": "critical", "job_id": str(job),
                "step": "0", "user": "root", "cluster": "lab", "node": "node1", "rank": "2"}
        # one per communicator whose peers wait on rank 2 (TP, and DP
        # where its DP peer reached that collective first)
        open_hangs = [x for x in d.alerts().get("open", []) if x["job_id"] == job and
                      x["alertname"] == "ParallelLayoutHang"]
        got = wait_for(lambda: len(am_alerts(am, alertname="ParallelLayoutHang",
                                             job_id=str(job))) >= len(open_hangs) and
                       am_alerts(am, alertname="ParallelLayoutHang", job_id=str(job)), 10, 0.2) \
            or got
        labels = [a["labels"] for a in got]
        ok(len(got) == len(open_hangs) and any(l.get("comm") == "tp" for l in labels),
           "hang: Alertmanager holds every hang alert layoutd has open (%d), the TP one among "
           "them" % len(open_hangs))
        ok(got and all(l.get("comm") in want and
                       l == dict(base, comm=l["comm"], **want[l["comm"]]) for l in labels),
           "hang: in Alertmanager with exactly the labels alertname, severity, job_id, step, "
           "user, cluster, group, comm, node, rank=2: %s" % json.dumps(labels))
        ann = got[0]["annotations"] if got else {}
        ok("rank 2" in ann.get("summary", "") and
           "rank 2 on node1 GPU 2 NIC mlx5_2 (tp 0 cp 0 ep 0 dp 1 pp 0)" in
           ann.get("description", ""),
           "hang: the annotations: the finding's line, and the rank's node, GPU, NIC and "
           "coordinates: %s" % json.dumps(ann)[:600])
        like(ann.get("description", ""), "Since 20", "hang: the description says since when (UTC)")
        ok(got and got[0].get("endsAt", "") > got[0].get("startsAt", "") and
           got[0].get("status", {}).get("state") == "active",
           "hang: active, with endsAt after startsAt (%s .. %s)" %
           (got[0].get("startsAt") if got else None, got[0].get("endsAt") if got else None))
        fired = hook.select(lambda b: b.get("status") == "firing" and
                         b.get("labels", {}).get("job_id") == str(job))
        ok(fired and all(b["text"].startswith("[FIRING] ParallelLayoutHang critical, job %d.0 "
                                                "(root, cluster lab): " % job) and
                         "\n" not in b["text"] for b in fired),
           "hang: the webhook got it firing, with a one-line text: %s" %
           (fired[0]["text"] if fired else None))
        ok(fired and fired[0].get("alertname") == "ParallelLayoutHang" and
           fired[0].get("culprits", [{}])[0].get("nic") == "mlx5_2" and fired[0].get("startsAt"),
           "hang: and the alert's fields beside it (alertname, culprits, startsAt)")
        # re-sent while it fires
        fp = fired[0]["fingerprint"] if fired else None
        n0 = len(hook.select(lambda b: b.get("fingerprint") == fp))
        wait_for(lambda: len(hook.select(lambda b: b.get("fingerprint") == fp)) >= n0 + 2,
                 4 * RESEND + 10, 0.25)
        again = hook.select(lambda b: b.get("fingerprint") == fp)
        ok(len(again) >= n0 + 2 and all(b["status"] == "firing" for b in again) and
           again[-1]["endsAt"] > again[0]["endsAt"] and
           again[-1]["startsAt"] == again[0]["startsAt"],
           "hang: re-sent every alert_resend_s (%d s) while it fires, endsAt moving on, "
           "startsAt kept (%d messages)" % (RESEND, len(again)))
        diag("the webhook's messages: %s" % [(b["status"], b["startsAt"], b["endsAt"])
                                             for b in again])
        # a hang is the rank's own code (or a pause): never a drain
        ok(wait_for(lambda: "drain: job %d.0 not-entered: not drained, a rank that enters no "
                    "collective is held by its own code (not a sign of the node)" % job
                    in d.log_text(), 20, 0.2),
           "drain on: a hang does not drain its node, and the log says why")
        is_eq(os.listdir(calls), [], "drain on: scontrol never called for the hang")
        # GET /v1/alerts, layoutctl alerts
        a1 = d.alerts()
        op = [x for x in a1.get("open", []) if x["job_id"] == job]
        ok(op and op[0]["status"] == "firing" and op[0]["culprits"][0]["gpu"] == 2 and
           op[0]["labels"]["rank"] == "2" and op[0]["sends"] >= 2,
           "GET /v1/alerts: open, its culprit's GPU, labels and sends: %s" %
           json.dumps(op[:1])[:500])
        p = subprocess.run([CTL, "alerts", "--socket", sock], capture_output=True, text=True,
                           timeout=60)
        ok(p.returncode == 0 and "ParallelLayoutHang" in p.stdout and "%d.0" % job in p.stdout
           and re.search(r"open alerts: [12]\n", p.stdout),
           "layoutctl alerts: the open hang in the table:\n%s" % p.stdout[:1200])
        p = subprocess.run([CTL, "alerts", "%d.0" % job, "--json", "--socket", sock],
                           capture_output=True, text=True, timeout=60)
        try:
            j = json.loads(p.stdout)
        except ValueError:
            j = {}
        ok(p.returncode == 0 and j.get("open") and all(x["job_id"] == job for x in j["open"]),
           "layoutctl alerts JOB.STEP --json: the job's alerts as the daemon's JSON")
        p = subprocess.run([CTL, "alerts", "1x", "--socket", sock], capture_output=True,
                           text=True, timeout=60)
        ok(p.returncode == 2 and "expected JOBID or JOBID.STEP" in p.stderr,
           "layoutctl alerts of a malformed job: usage error saying what is accepted")
        # /metrics
        st, ctype, text = d.metrics()
        ok(st == 200 and ctype == "text/plain; version=0.0.4; charset=utf-8",
           "GET /metrics: 200, text/plain; version=0.0.4")
        if PROMTOOL:
            p = subprocess.run([PROMTOOL, "check", "metrics"], input=text, capture_output=True,
                               text=True, timeout=60)
            ok(p.returncode == 0, "promtool check metrics: no error, no lint (%d lines): %s" %
               (len(text.splitlines()), (p.stdout + p.stderr).strip()[:600]))
        else:
            skip("promtool check metrics", "promtool not installed (Debian: prometheus)")
        nhang = len([x for x in d.alerts().get("open", [])
                     if x["alertname"] == "ParallelLayoutHang"])
        ok(nhang >= 1 and metric(text, "parallel_layout_alerts_open",
                                 alertname="ParallelLayoutHang") == nhang,
           "metrics: the open hang alerts (%d)" % nhang)
        ok((metric(text, "parallel_layout_alert_notifications_total", receiver="alertmanager",
                   result="sent") or 0) >= 1 and
           (metric(text, "parallel_layout_alert_notifications_total", receiver="webhook",
                   result="sent") or 0) >= 3,
           "metrics: messages sent to Alertmanager and the webhook counted")
        ok(metric(text, "parallel_layout_drains_total", result="ok") == 0 and
           metric(text, "parallel_layout_drains_total", result="skipped") >= 1,
           "metrics: no drain, the hang's counted as skipped")
        ok(metric(text, "parallel_layout_rank_lag_seconds", job_id=str(job), rank="2") >
           metric(text, "parallel_layout_rank_lag_seconds", job_id=str(job), rank="3") and
           (metric(text, "parallel_layout_rank_collectives_entered_total", job_id=str(job),
                   rank="3", comm="tp") or 0) > 0,
           "metrics: rank 2 lags its TP peer; collectives entered per rank and communicator")
        ok(metric(text, "parallel_layout_led_step_ranks", job_id=str(job)) == WORLD and
           metric(text, "parallel_layout_led_step_lag_max_seconds", job_id=str(job)) >= THRESHOLD,
           "metrics: the led step's ranks and its longest lag")
        check_etc(tmp, text)
        check_inhibit()

        # --- resolved when the step ends ---
        w.close(d)

        def resolved_msgs():
            return hook.select(lambda b: b.get("status") == "resolved" and
                               b.get("alertname") == "ParallelLayoutHang" and
                               b.get("labels", {}).get("job_id") == str(job))
        wait_for(lambda: fingerprints(fired) <= fingerprints(resolved_msgs()), 30, 0.1)
        t_res = time.monotonic()
        # The resolve reaches Alertmanager with the webhook's (endsAt now,
        # while a firing alert's is 3 x alert_resend_s ahead).
        gone = wait_for(lambda: not am_alerts(am, alertname="ParallelLayoutHang",
                                              job_id=str(job)), 2 * RESEND + 10, 0.1)
        ok(gone and time.monotonic() - t_res < RESEND,
           "resolved: the hang leaves Alertmanager's active alerts as soon as it is resolved "
           "(%.1f s after the webhook heard; a firing alert's endsAt is %d s ahead)" %
           (time.monotonic() - t_res, 3 * RESEND))
        res = resolved_msgs()
        ok(res and all(b["text"].startswith("[RESOLVED] ParallelLayoutHang") for b in res) and
           all(b["startsAt"] < b["endsAt"] for b in res) and
           fingerprints(fired) <= fingerprints(res) and
           len(res) == len(fingerprints(res)),
           "resolved: the webhook got each alert resolved once more, the same fingerprint: %s" %
           (res[0]["text"] if res else None))
        a2 = d.alerts()
        ok(not [x for x in a2.get("open", []) if x["job_id"] == job and
                x["alertname"] == "ParallelLayoutHang"] and
           [x for x in a2.get("recent", []) if x["job_id"] == job and x["status"] == "resolved"
            and x["resolved_at"] and x["alertname"] == "ParallelLayoutHang"],
           "GET /v1/alerts: no longer open, among the recently resolved")
        like(d.log_text(), "alert resolved: ParallelLayoutHang job %d.0" % job,
             "resolved: logged")
        # the ranks killed at the step's end are exits, and no reason to drain
        ok(wait_for(lambda: "drain: job %d.0 exited: not drained, the rank ended with signal 9, "
                    "as Slurm ends a step" % job in d.log_text(), 10, 0.2) or
           "alert fired: ParallelLayoutRankExited critical job %d.0" % job not in d.log_text(),
           "drain: a rank killed by SIGKILL (as a cancelled step's are) is not drained for")

        # --- Alertmanager down: retried, delivered once it is back ---
        am.stop()
        job2 = 4202
        w2 = World(tmp, job2, ["--steps", "100000", "--compute-us", "1000", "--fault=stop:1:3"])
        worlds.append(w2)
        is_eq(w2.register(d), [200] * WORLD, "down: the second step registered")
        wait_for(lambda: "alert fired: ParallelLayoutHang critical job %d.0" % job2 in
                 d.log_text(), THRESHOLD + 40, 0.25)
        ok(wait_for(lambda: re.search(r"alertmanager http://127\.0\.0\.1:%d: "
                                      r"alert \w+ \(firing\) not delivered \(try \d+ of 7\): .*"
                                      r"trying again in \d+ s" % am.port, d.log_text()), 30, 0.25),
           "down: the failed delivery is logged, with the next try")
        time.sleep(4)
        st, _, text = d.metrics()
        ok((metric(text, "parallel_layout_alert_notification_retries_total",
                   receiver="alertmanager") or 0) >= 2,
           "down: retried (%s so far)" % metric(text, "parallel_layout_alert_notification_retries_total",
                                                 receiver="alertmanager"))
        ok(am_start(am), "down: Alertmanager back on the same port")
        t1 = time.monotonic()
        back = wait_for(lambda: am_alerts(am, alertname="ParallelLayoutHang", job_id=str(job2)), 90,
                        0.25)
        ok(back and all(x["labels"]["rank"] == "1" and x["labels"]["node"] == "node1"
                        for x in back),
           "down: the alert arrives once Alertmanager is back (%.1f s later), rank 1 on node1"
           % (time.monotonic() - t1))
        wait_for(lambda: "delivered after" in d.log_text(), 20, 0.25)
        like(d.log_text(), "delivered after", "down: the late delivery is logged")
        w2.close(d)

        def settled(j):
            a = d.alerts()
            return not [x for x in a.get("open", []) if x["job_id"] == j] and \
                a.get("queue", {}).get("length") == 0
        ok(wait_for(lambda: settled(job2), 60, 0.25), "down: the second step ended, its alerts "
           "resolved and delivered (the queue empty)")

        # --- the user's own settings: hang=8s (the site's is 5) and
        #     slow=off, as srun --parallel-layout-watch=hang=8s,slow=off
        #     registers them; and hang=1s, held to user_hang_min_s (6) ---
        class Own(World):
            watch = {"hang_s": 8, "slow": False}
        job7 = 4208
        w7 = Own(tmp, job7, ["--steps", "100000", "--compute-us", "1000", "--fault=stop:1:3"])
        worlds.append(w7)
        is_eq(w7.register(d), [200] * WORLD, "own settings: the step registered with hang 8 s")
        t0 = time.monotonic()
        early = wait_for(lambda: am_alerts(am, alertname="ParallelLayoutHang", job_id=str(job7)),
                         THRESHOLD + 1.5, 0.2)
        ok(not early, "own settings: no hang at the site's %d s" % THRESHOLD)
        got = wait_for(lambda: am_alerts(am, alertname="ParallelLayoutHang", job_id=str(job7)),
                       THRESHOLD + 40, 0.2)
        took = time.monotonic() - t0
        v7 = d.view(job7) or {}
        ne = [f for f in v7.get("findings", []) if f.get("kind") == "not-entered"]
        ok(got and ne and ne[0]["for_s"] >= 8 and
           v7.get("judged_by") == {"hang_threshold_s": 8.0, "busy_threshold_s": 1800.0,
                                  "slow": False},
           "own settings: the hang named past its own 8 s (%.1f s after the registration, its "
           "peers waiting %.1f s); the step judged by %s" %
           (took, ne[0]["for_s"] if ne else -1, v7.get("judged_by")))
        w7.close(d)
        ok(wait_for(lambda: settled(job7), 60, 0.25), "own settings: the step ended")
        mark = len(d.log_text())

        class Low(World):
            watch = {"hang_s": 1}
        w8 = Low(tmp, 4209, ["--steps", "100000", "--compute-us", "1000"])
        worlds.append(w8)
        is_eq(w8.register(d), [200] * WORLD, "own settings: a step asking for hang 1 s")
        ok(wait_for(lambda: (d.view(4209) or {}).get("judged_by", {}).get("hang_threshold_s")
                    == 6.0, 20, 0.2) and
           "the user's watch settings (hang 1 s, busy 0 s, slow -) held to the site's bounds: "
           "hang 6 s" in d.log_text()[mark:],
           "own settings: hang 1 s held to user_hang_min_s (6 s), and said: %s" %
           (d.view(4209) or {}).get("judged_by"))
        w8.close(d)
        ok(wait_for(lambda: settled(4209), 60, 0.25), "own settings: that step ended too")

        # --- busy outside NCCL: rank 2 spins most of a core and writes
        #     about 50 MB/s for 12 s at step 3 (as a checkpoint does), then
        #     goes on: a
        #     RankBusy warning saying what it does, never a hang, and the
        #     step ends well ---
        job6 = 4207
        w6 = World(tmp, job6, ["--steps", "40", "--compute-us", "1000",
                               "--fault=busy:2:3:12"])
        worlds.append(w6)
        mark = len(d.log_text())
        is_eq(w6.register(d), [200] * WORLD, "busy: the step registered")
        t0 = time.monotonic()
        seen_alerts = []

        def busy_seen():
            al = am_alerts(am, job_id=str(job6))
            seen_alerts.extend(al)
            return [a for a in al if a["labels"].get("alertname") == "ParallelLayoutRankBusy"]
        busy = wait_for(busy_seen, THRESHOLD + 20, 0.2)
        took = time.monotonic() - t0
        said = busy and re.search(r"rank 2 on node1 GPU 2 busy outside NCCL for [\d.]+ s: "
                                  r"([\d.]+) cores, writing ([\d.]+) MB/s",
                                  busy[0]["annotations"].get("summary", ""))
        ok(busy and busy[0]["labels"].get("severity") == "warning" and
           busy[0]["labels"].get("rank") == "2" and said and float(said.group(1)) >= 0.1 and
           float(said.group(2)) >= 5,
           "busy: ParallelLayoutRankBusy, a warning naming rank 2 and what it does, %.1f s "
           "after the registration: %s" % (took, busy and busy[0]["annotations"].get("summary")))
        end = time.monotonic() + 90
        while time.monotonic() < end and any(p.poll() is None for p in w6.procs):
            busy_seen()
            time.sleep(0.2)
        rcs = [p.poll() for p in w6.procs]
        is_eq(rcs, [0] * WORLD, "busy: the step goes on after the pause and every rank exits 0")
        kinds = sorted({(a["labels"]["alertname"], a["labels"]["severity"]) for a in seen_alerts})
        if not is_eq(kinds, [("ParallelLayoutRankBusy", "warning")],
                     "busy: nothing else reached Alertmanager for the step (no hang, no stuck "
                     "kernel)"):
            for t in sorted({(a["labels"]["alertname"], a["labels"].get("rank", ""),
                              a["annotations"].get("summary", "")) for a in seen_alerts}):
                diag("  seen: %s rank %s: %s" % t)
        crit = re.findall(r"[^\n]*alert fired: \w+ critical job %d\.0[^\n]*" % job6,
                          d.log_text()[mark:])
        if not ok(not crit, "busy: no critical alert fired for it"):
            for ln in crit[:8]:
                diag("  " + ln)
        w6.close(d)
        ok(wait_for(lambda: settled(job6), 60, 0.25), "busy: its alert resolved")

        # --- a divergent code path: in a TP group of 4 (tp4 alone: the
        #     world), rank 1 calls AllGather at step 3 where its 3 peers
        #     call AllReduce, and the group hangs: one CollectiveMismatch
        #     naming rank 1, both calls and the position, within the
        #     threshold and 2 s; nothing else critical, and no drain (it
        #     is the code's) ---
        class Tp4(World):
            tp, dp = 4, 1
        job7 = 4210
        w7 = Tp4(tmp, job7, ["--steps", "100000", "--compute-us", "1000",
                             "--fault=mismatch:1:3"])
        worlds.append(w7)
        mark = len(d.log_text())
        is_eq(w7.register(d), [200] * WORLD, "mismatch: the step registered")
        t0 = time.monotonic()
        seen_alerts = []

        def mismatch_seen():
            al = am_alerts(am, job_id=str(job7))
            seen_alerts.extend(al)
            return [a for a in al
                    if a["labels"].get("alertname") == "ParallelLayoutCollectiveMismatch"]
        mm = wait_for(mismatch_seen, THRESHOLD + 30, 0.1)
        took = time.monotonic() - t0
        summ = mm[0]["annotations"].get("summary", "") if mm else ""
        ok(mm and len(mm) == 1 and mm[0]["labels"].get("severity") == "critical" and
           mm[0]["labels"].get("rank") == "1" and
           mm[0]["annotations"].get("evidence") == "observed" and
           re.search(r"world: collective mismatch at collective \d+: rank 1 on node1 GPU 1 "
                     r"called AllGather \(2097152 x ncclInt8\) where 3 peers called AllReduce "
                     r"\(1048576 x ncclBfloat16\)", summ),
           "mismatch: CollectiveMismatch critical, rank 1 alone, observed, both calls: %s" % summ)
        ok(mm and took <= THRESHOLD + 2 + 1,
           "mismatch: named %.1f s after the registration (the hang starts within a second "
           "of it; threshold %d s + 2)" % (took, THRESHOLD))
        time.sleep(RESEND + 1)
        mismatch_seen()
        kinds = sorted({(a["labels"]["alertname"], a["labels"]["severity"], a["labels"]["rank"])
                        for a in seen_alerts})
        is_eq(kinds, [("ParallelLayoutCollectiveMismatch", "critical", "1")],
              "mismatch: nothing else reached Alertmanager for the step (no hang, no stuck "
              "kernel of the waiting peers)")
        ok(wait_for(lambda: "drain: job %d.0 mismatch: not drained, ranks that call different "
                    "collectives took another code path" % job7 in d.log_text()[mark:], 20, 0.2),
           "mismatch: not drained, and the log says why")
        st = d.view(job7) or {}
        fj = [f for f in st.get("findings", []) if f.get("kind") == "mismatch"]
        ok(fj and fj[0].get("signature", {}).get("func") == "AllGather" and
           fj[0].get("peers_signature", {}).get("func") == "AllReduce" and
           fj[0].get("peers_signature", {}).get("count") == 1048576 and
           fj[0].get("peers_alike") == 3 and fj[0].get("culprits") == [1],
           "mismatch: GET /v1/watch/step gives both signatures and the culprit: %s" % fj[:1])
        sv = (d.step(job7) or {}).get("verdicts", [])
        ok([(v["kind"], v["rank"], v["func"], v.get("peers_signature", {}).get("func"))
            for v in sv] == [("mismatch", 1, "AllGather", "AllReduce")],
           "mismatch: the node view names rank 1 alone the same way: %s" % sv)
        w7.close(d)
        ok(wait_for(lambda: settled(job7), 60, 0.25), "mismatch: the step ended, its alert "
           "resolved")

        # --- a forged record: in a TP group of 4, rank 1 writes into its
        #     own record, at step 3, a collective in flight since boot with
        #     its kernels stuck (a wait of the machine's uptime), then stops.
        #     The record is refused for its times, saying which; rank 1 is
        #     named, inferred (a warning: the only member not seen waiting),
        #     not its peers' stuck kernels; nothing critical, no drain ---
        job9 = 4212
        w10 = Tp4(tmp, job9, ["--steps", "100000", "--compute-us", "1000", "--timeout", "30",
                              "--fault=forge:1:3"])
        worlds.append(w10)
        mark = len(d.log_text())
        is_eq(w10.register(d), [200] * WORLD, "forged: the step registered")
        t0 = time.monotonic()
        seen_alerts = []

        def forged_seen():
            al = am_alerts(am, job_id=str(job9))
            seen_alerts.extend(al)
            return [a for a in al if a["labels"].get("alertname") == "ParallelLayoutHang"]
        hg = wait_for(forged_seen, THRESHOLD + 30, 0.2)
        took = time.monotonic() - t0
        summ = hg[0]["annotations"].get("summary", "") if hg else ""
        ok(hg and len(hg) == 1 and hg[0]["labels"].get("rank") == "1" and
           hg[0]["labels"].get("severity") == "warning" and
           hg[0]["annotations"].get("evidence") == "inferred" and
           "rank 1 on node1 GPU 1 unwatched" in summ and "3 peers have waited" in summ,
           "forged: ParallelLayoutHang names rank 1, a warning, inferred, %.1f s after the "
           "registration: %s" % (took, summ))
        tasks = {t["rank"]: t for t in (d.step(job9) or {}).get("tasks", [])}
        ref = (tasks.get(1) or {}).get("refused") or ""
        ok((tasks.get(1) or {}).get("record_state") == "refused" and
           "launch.enqueue_ns is" in ref and "before the record began" in ref,
           "forged: the node view shows rank 1's record refused for its times: %s" % ref)
        ok(all((tasks.get(r) or {}).get("record_state") == "ok" for r in (0, 2, 3)),
           "forged: its peers' records are read as before")
        time.sleep(RESEND + 1)
        forged_seen()
        is_eq(sorted({(a["labels"]["alertname"], a["labels"]["severity"], a["labels"]["rank"])
                      for a in seen_alerts}), [("ParallelLayoutHang", "warning", "1")],
              "forged: nothing else reached Alertmanager (no stuck kernel of the waiting peers, "
              "nothing critical)")
        ok(wait_for(lambda: "drain: job %d.0 not-entered: not drained, a rank that enters "
                    "no collective" % job9 in d.log_text()[mark:], 20, 0.2) and
           "rank 1: record refused" in d.log_text()[mark:],
           "forged: the log says the record was refused and why nothing was drained")
        w10.close(d)
        ok(wait_for(lambda: settled(job9), 60, 0.25), "forged: the step ended, its alert "
           "resolved")

        # --- pp2 alone, rank 1 stops outside NCCL at step 3: rank 0's send
        #     to it waits on the GPU, and rank 1's record shows it never
        #     posted the receive.  The Hang names rank 1 (observed), not the
        #     waiting rank 0 (the never-silent rule named rank 0 before) ---
        class Pp2(World):
            tp, dp, pp = 1, 1, 2
        job8 = 4211
        w9 = Pp2(tmp, job8, ["--steps", "100000", "--compute-us", "1000", "--timeout", "30",
                             "--fault=stop:1:3"])
        worlds.append(w9)
        is_eq(w9.register(d), [200] * 2, "unposted: the pp2 step registered")
        seen_alerts = []

        def hang_seen():
            al = am_alerts(am, job_id=str(job8))
            seen_alerts.extend(al)
            return [a for a in al if a["labels"].get("alertname") == "ParallelLayoutHang"]
        hg = wait_for(hang_seen, THRESHOLD + 30, 0.2)
        summ = hg[0]["annotations"].get("summary", "") if hg else ""
        ok(hg and len(hg) == 1 and hg[0]["labels"].get("rank") == "1" and
           hg[0]["labels"].get("severity") == "critical" and
           hg[0]["annotations"].get("evidence") == "observed" and
           "rank 1 on node1 GPU 1 never posted the Recv that rank 0 waits for in its Send" in summ,
           "unposted: ParallelLayoutHang names rank 1, which never posted its receive, observed: %s"
           % summ)
        time.sleep(RESEND + 1)
        hang_seen()
        is_eq(sorted({(a["labels"]["alertname"], a["labels"]["rank"]) for a in seen_alerts}),
              [("ParallelLayoutHang", "1")],
              "unposted: nothing names rank 0, whose send only waits")
        w9.close(d)
        ok(wait_for(lambda: settled(job8), 60, 0.25), "unposted: the step ended, its alert "
           "resolved")

        # --- a kernel that runs where its peers' completed: observed, and
        #     what points at the GPU: drained; the second one within the
        #     hour is not (drain_max_per_hour 1) ---
        # one node drained for parallel-layout already, one for another
        # reason, one of ours resumed: 1 of drain_max_nodes 2
        with open(nodes_txt, "w") as f:
            f.write(node_line("node7", "IDLE+DRAIN", "parallel-layout: job 1.0 rank 3 gpu-stuck") +
                    node_line("node8", "DRAINED", "Kill task failed") +
                    node_line("node9", "IDLE", "parallel-layout: job 2.0 rank 0 gpu-stuck"))
        job4 = 4204
        w4 = World(tmp, job4, ["--steps", "100000", "--compute-us", "1000",
                               "--fault=wedge:1:3", "--fault=wedge:2:3"])
        worlds.append(w4)
        is_eq(w4.register(d), [200] * WORLD, "wedge: the step registered")
        stuck = wait_for(lambda: [a for a in am_alerts(am, alertname="ParallelLayoutGpuStuck",
                                                      job_id=str(job4))
                                  if a["labels"].get("severity") == "critical"], THRESHOLD + 40,
                         0.25)
        ok(stuck and {a["labels"]["rank"] for a in stuck} <= {"1", "2"} and
           all(a["annotations"].get("evidence") == "observed" and
               "where 1 of its peers completed it" in a["annotations"].get("summary", "")
               for a in stuck),
           "wedge: GpuStuck critical in Alertmanager, rank 1 or 2 alone, observed: %s" %
           [(a["labels"].get("rank"), a["annotations"].get("summary")) for a in stuck])
        wait_for(lambda: os.listdir(calls), 4 * RESEND + 20, 0.2)
        cl = sorted(os.listdir(calls))
        args = open(os.path.join(calls, cl[0])).read().splitlines() if cl else []
        ok(len(args) == 4 and args[:3] == ["update", "nodename=node1", "state=drain"] and
           re.match(r"reason=parallel-layout: job %d\.0 rank [12] gpu-stuck$" % job4, args[3]),
           "drain: scontrol update nodename=node1 state=drain reason=\"parallel-layout: job "
           "%d.0 rank R gpu-stuck\" (%s)" % (job4, args))
        wait_for(lambda: "drain: node node1 drained" in d.log_text(), 20, 0.2)
        like(d.log_text(), "drain: node node1 drained (parallel-layout: job %d.0 rank " % job4,
             "drain: logged with what scontrol said")
        ok(open(shows).read().startswith("-o show nodes\n") if os.path.exists(shows) else False,
           "drain: it counted the nodes drained already first (scontrol -o show nodes)")
        ok(os.path.exists(verify_log) and "node1" in open(verify_log).read().split() and
           "drain: node node1: its health check %s failed (exit code 1): fake nhc: "
           "checked node1" % verify in d.log_text(),
           "drain: and asked the site's health check, which failed, before draining")
        wait_for(lambda: "drain_max_per_hour 1" in d.log_text(), 4 * RESEND + 20, 0.2)
        is_eq(len(os.listdir(calls)), 1, "drain: the second stuck kernel within the hour is not "
              "drained")
        ok(re.search(r"drain: node node1 not drained (for job %d\.0 gpu-stuck|\(parallel-layout: "
                     r"job %d\.0 rank [12] gpu-stuck\)): 1 drains in the last hour "
                     r"\(drain_max_per_hour 1\)" % (job4, job4), d.log_text()),
           "drain: and says so")
        _, _, text = d.metrics()
        is_eq(metric(text, "parallel_layout_drains_total", result="ok"), 1.0,
              "metrics: one drain")
        w4.close(d)
        ok(wait_for(lambda: settled(job4), 60, 0.25), "wedge: the step ended, its alerts resolved")

        # --- drain_max_nodes reached cluster-wide, then a health check that
        #     passes: neither drains (drain_max_per_hour raised) ---
        with open(conf, "w") as f:
            f.write(base_conf.replace("drain_max_per_hour = 1", "drain_max_per_hour = 100"))
        reloads = d.log_text().count("reload")
        d.p.send_signal(signal.SIGHUP)
        wait_for(lambda: d.log_text().count("reload") > reloads, 20, 0.2)
        with open(nodes_txt, "a") as f:
            f.write(node_line("node1", "IDLE+DRAIN", "parallel-layout: job %d.0 rank 1 gpu-stuck"
                              % job4))
        for job5, why, log_want in (
                (4205, "capped", "drain: node node1 not drained (parallel-layout: job 4205.0 "
                 "rank 1 gpu-stuck): 2 nodes are drained for parallel-layout already "
                 "(drain_max_nodes 2)"),
                (4206, "healthy", "drain: node node1 not drained (parallel-layout: job 4206.0 "
                 "rank 1 gpu-stuck): its health check %s passed: fake nhc: checked node1"
                 % verify)):
            if why == "healthy":
                with open(nodes_txt, "w") as f:
                    f.write(node_line("node7", "IDLE+DRAIN", "parallel-layout: job 1.0 rank 3 "
                                      "gpu-stuck"))
                with open(verify_rc, "w") as f:
                    f.write("0\n")
            w5 = World(tmp, job5, ["--steps", "100000", "--compute-us", "1000",
                                   "--fault=wedge:1:3"])
            worlds.append(w5)
            is_eq(w5.register(d), [200] * WORLD, "%s: the step registered" % why)
            ok(wait_for(lambda: log_want in d.log_text(), THRESHOLD + 4 * RESEND + 30, 0.25),
               "drain: not drained, %s: %s" % (why, log_want))
            is_eq(len(os.listdir(calls)), 1, "%s: scontrol update not called" % why)
            w5.close(d)
            ok(wait_for(lambda: settled(job5), 60, 0.25), "%s: the step ended" % why)
        _, _, text = d.metrics()
        ok(metric(text, "parallel_layout_drains_total", result="capped") == 1 and
           metric(text, "parallel_layout_drains_total", result="healthy") == 1,
           "metrics: one drain capped by drain_max_nodes, one refused by the health check")

        # --- a full queue: a message dropped, counted and logged ---
        with open(conf, "w") as f:
            f.write(base_conf + "alert_queue_max = 1\n")
        am.stop()
        reloads = d.log_text().count("reload")
        d.p.send_signal(signal.SIGHUP)
        wait_for(lambda: d.log_text().count("reload") > reloads, 20, 0.2)
        _, _, before = d.metrics()
        drop0 = metric(before, "parallel_layout_alert_notifications_total", receiver="webhook",
                       result="dropped")
        mark = len(d.log_text())
        job3 = 4203
        w3 = World(tmp, job3, ["--steps", "100000", "--compute-us", "1000",
                               "--fault=exit:3:3:9"])
        worlds.append(w3)
        is_eq(w3.register(d), [200] * WORLD, "full: the third step registered")
        # slurmstepd reports the exit (and reaps the task, so no zombie
        # stands for it)
        is_eq(w3.procs[3].wait(30), 9, "full: the driver's rank 3 exits 9")
        is_eq(d.post("/v1/watch/exit", {"job_id": job3, "step_id": 0, "task": 3,
                                        "status": 9 << 8})[0], 200, "full: its exit reported")
        fired3 = wait_for(lambda: re.search(r"alert fired: ParallelLayoutRankExited critical job "
                                            r"%d\.0 \((\w+)\)" % job3, d.log_text()[mark:]),
                          THRESHOLD + 40, 0.25)
        if not ok(fired3, "full: rank 3's exit fires"):
            diag(d.log_text()[mark:][-3000:])
        fp3 = fired3.group(1) if fired3 else "?"
        ok(wait_for(lambda: "alerts: alert %s (firing) to webhook http://127.0.0.1:%d "
                    "dropped: the queue is full (alert_queue_max)" % (fp3, hook.port)
                    in d.log_text()[mark:], 10, 0.25),
           "full: with Alertmanager down and alert_queue_max 1 (its message waiting), the "
           "webhook's message is dropped and logged")
        _, _, text = d.metrics()
        ok(metric(text, "parallel_layout_alert_notifications_total", receiver="webhook",
                  result="dropped") > drop0,
           "full: counted in parallel_layout_alert_notifications_total{result=\"dropped\"}")
        ok(not hook.select(lambda b: b.get("fingerprint") == fp3),
           "full: and the webhook never got it")
        a3 = d.alerts()
        ok([x for x in a3.get("open", []) + a3.get("recent", []) if x["fingerprint"] == fp3 and
            x["labels"]["rank"] == "3"],
           "full: the alert itself is kept here all the same (rank 3 exited)")
        w3.close(d)
        ok(d.p.poll() is None, "the daemon is alive and serving")
    finally:
        for w in worlds:
            for p in w.procs:
                if p.poll() is None:
                    p.kill()
                    p.wait()
        if d and d.p.poll() is None:
            d.p.send_signal(signal.SIGTERM)
            try:
                rc = d.p.wait(120)
            except subprocess.TimeoutExpired:
                d.p.kill()
                rc = d.p.wait()
            ok(rc == 0, "layoutd exits 0 after SIGTERM%s (rc %d)" %
               (", valgrind found no error and no definite leak" if d.up else "", rc))
            if rc != 0:
                diag(d.log_text()[-4000:])
        am.cleanup()
        hook.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return done()


if __name__ == "__main__":
    main()
