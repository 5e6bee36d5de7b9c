#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The watch against its own users, end to end with real parts: a real
Alertmanager, a webhook receiver (http.server in a thread) and the real
layoutd (under valgrind when it can) leading a step of real nccl_driver
ranks, registered as slurmstepd registers them.

 - The alert targets' URLs are secrets (an Alertmanager behind basic auth,
   a webhook whose path or query is its token): GET /v1/alerts shows them
   whole to root only, their scheme, host and port to any other local
   user, and layoutd's log never shows more than that.
 - A user writes into alerts: a communicator's name is the user's to
   choose (PyTorch passes its process group's), and here every rank's
   starts with "<!channel>&", which Slack takes as a page to a whole
   channel.  The hang of one rank reaches Alertmanager and the webhook
   with the name carried as text (\\x3c!channel\\x3e\\x26) and no <, > or &
   anywhere in what the user's process wrote.
 - GET /metrics has every job's series with metrics_jobs = all and none
   with none (a reload away).
 - A webhook that answers 500 with a body of several lines: the log line
   saying so shows the body's new lines escaped once (\\x0a), not garbled
   by an escape written over its own input.
"""
import json
import os
import re
import shutil
import signal
import tempfile

import watchlib
from amlib import Alertmanager, Webhook, free_port
from taplib import as_user, diag, done, http_request, is_eq, like, ok, skip, wait_for

NOBODY = 65534
THRESHOLD = 5
PREFIX = "<!channel>&"
AM_SECRET = "s3cret-am-pass"
HOOK_SECRET = "t0ken-in-query"


class World(watchlib.World):
    """4 nccl_driver ranks, tp2 dp2, on node1."""
    tp, dp = 2, 2


def main():
    why = watchlib.missing(alertmanager=True)
    if why:
        skip("the watch against its users", why)
        return done()
    tmp = tempfile.mkdtemp(prefix="ld-attack.")
    os.chmod(tmp, 0o755)            # the socket (0666) is reached by nobody too
    hook = Webhook().start()
    am = Alertmanager(free_port())
    worlds = []
    d = None
    try:
        mapf = watchlib.lab_map(tmp)
        if not mapf:
            return done()
        try:
            am.start()
        except RuntimeError as e:
            ok(False, "Alertmanager starts on 127.0.0.1:%d (%s)" % (am.port, e))
            return done()
        sock = os.path.join(tmp, "ld.sock")
        conf = os.path.join(tmp, "ld.conf")
        wd = os.path.join(tmp, "watchdir")
        os.mkdir(wd, 0o755)
        # Alertmanager ignores the basic auth it is not configured for, so
        # the alerts reach it with the credential in the URL all the same.
        am_url = "http://ops:%s@127.0.0.1:%d" % (AM_SECRET, am.port)
        hook_url = "http://127.0.0.1:%d/hook?token=%s" % (hook.port, HOOK_SECRET)
        with open(conf, "w") as f:
            f.write("map = %s\nsocket = %s\nsocket_mode = 0666\nnode_name = node1\n"
                    "hwloc_check = no\nwatch_interval_ms = 200\nhang_threshold_s = %d\n"
                    "watch_dir = %s\nalertmanager_url = %s\nwebhook_url = %s\n"
                    "alert_resend_s = 3\nalert_retries = 3\nalert_timeout_ms = 2000\n"
                    "stacks = no\nstate_dir = %s\n" %
                    (mapf, sock, THRESHOLD, wd, am_url, hook_url, os.path.join(tmp, "state")))
        d = watchlib.start_checked(conf, os.path.join(tmp, "ld.log"), sock)
        if not d.ok:
            return done()

        # --- the targets: whole to root, scheme://host:port to others ---
        mine = d.alerts()
        is_eq([(t["receiver"], t["url"]) for t in mine.get("targets", [])],
              [("alertmanager", am_url + "/api/v2/alerts"), ("webhook", hook_url)],
              "GET /v1/alerts as root: each target's URL whole")

        def theirs():
            st, _, body = http_request(sock, "GET", "/v1/alerts")
            return [st, body]
        got = as_user(NOBODY, theirs)
        body = got[1] if isinstance(got, list) else json.dumps(got)
        try:
            targets = [(t["receiver"], t["url"]) for t in json.loads(body)["targets"]]
        except (ValueError, KeyError, TypeError):
            targets = body[:300]
        is_eq(targets, [("alertmanager", "http://127.0.0.1:%d" % am.port),
                        ("webhook", "http://127.0.0.1:%d" % hook.port)],
              "GET /v1/alerts as uid %d: each target's scheme, host and port only" % NOBODY)
        ok(AM_SECRET not in body and HOOK_SECRET not in body and "ops" not in body,
           "GET /v1/alerts as uid %d: neither the password nor the token anywhere in it" % NOBODY)

        # --- a user's text in an alert: every rank names its communicators
        # "<!channel>&tp", "<!channel>&dp"; rank 2 stops at step 3 ---
        job = 5101
        w = World(tmp, job, ["--steps", "100000", "--compute-us", "1000",
                             "--comm-prefix", PREFIX, "--fault=stop:2:3"])
        worlds.append(w)
        is_eq(w.register(d), [200] * w.world, "hang: every rank registered, the step led here")

        def am_hang():
            return [a for a in am.alerts() if a["labels"].get("alertname") == "ParallelLayoutHang"
                    and a["labels"].get("job_id") == str(job)]
        got = wait_for(am_hang, THRESHOLD + 40, 0.25)
        if not ok(got, "the hang of rank 2 reached Alertmanager"):
            diag(d.log_text()[-3000:])
        comms = sorted({a["labels"].get("comm", "") for a in got})
        ok(comms and all(c.startswith("\\x3c!channel\\x3e\\x26") for c in comms),
           "the comm label carries the user's name as text: %s" % comms)
        every = json.dumps([(a["labels"], a["annotations"]) for a in got])
        ok("<" not in every and ">" not in every and "&" not in every,
           "no <, > or & in any label or annotation Alertmanager got")
        like(every, "\\\\x3c!channel\\\\x3e", "the annotations name the communicator as text")
        texts = wait_for(lambda: [b for b in hook.got() if b.get("job_id") == job], 20)
        hooks = [json.dumps(t) for t in texts]
        ok(hooks and all("<" not in b and ">" not in b and "&" not in b for b in hooks),
           "the webhook's %d messages: no <, > or & in any of them (Slack pings nobody)"
           % len(hooks))
        ok(texts and all(t.get("text", "").startswith("[FIRING] ParallelLayoutHang") or
                         t.get("text", "").startswith("[RESOLVED]") for t in texts),
           "the webhook's text still says what fired: %s" % [t.get("text", "")[:80]
                                                              for t in texts[:1]])

        # --- /metrics: every job's series with metrics_jobs = all (the
        # default), none of them with none, after a reload ---
        st, _, met = d.metrics()
        ok(st == 200 and 'job_id="%d"' % job in met and
           'comm="\\\\x3c!channel\\\\x3e\\\\x26tp"' in met and "<" not in met,
           "GET /metrics, metrics_jobs = all: the step's series, the comm label as text "
           "(\\x3c!channel\\x3e\\x26tp, its backslashes escaped as the format wants)")
        with open(conf, "a") as f:
            f.write("metrics_jobs = none\n")
        before = d.get_json("/v1/health")[1].get("reloads", 0)
        d.p.send_signal(signal.SIGHUP)
        wait_for(lambda: d.get_json("/v1/health")[1].get("reloads", 0) > before, 20, 0.1)
        st, _, met = d.metrics()
        ok(st == 200 and "job_id=" not in met and "comm=" not in met and
           "\nparallel_layout_watch_samples_total " in met and
           "# TYPE parallel_layout_rank_lag_seconds gauge" in met,
           "after a reload with metrics_jobs = none: no job's series, the node's own and "
           "every family's TYPE still there")

        # --- a webhook that answers 500 with a body of three lines ---
        hook.fail = b"upstream broke\nsecond line\nthird line\n"
        mark = len(d.log_text())
        new = wait_for(lambda: re.search(r"alerts: webhook .*not delivered.*", d.log_text()[mark:]),
                       30, 0.25)
        line = new.group(0) if new else ""
        diag("the log: %s" % line[:400])
        like(line, "HTTP 500: upstream broke\\x0asecond line\\x0athird line\\x0a",
             "the log shows the webhook's 500 and its body, each new line escaped once")
        ok("x0ax0a" not in line and "\n" not in line,
           "the log line is not garbled by an escape over its own input")
        like(line, "webhook http://127.0.0.1:%d: " % hook.port,
             "the log names the webhook by scheme, host and port")
        hook.fail = None
        w.close(d)
        worlds.remove(w)
        wait_for(lambda: not am_hang(), 30, 0.25)

        text = d.log_text()
        ok(AM_SECRET not in text and HOOK_SECRET not in text,
           "layoutd's log holds neither the Alertmanager's password nor the webhook's token")
        rc = d.stop()
        is_eq(rc, 0, "layoutd stops cleanly%s" % (" (valgrind: no errors, no leaks)"
                                                 if d.wrapper else ""))
        if rc != 0:
            diag(d.log_text()[-3000:])
    finally:
        for w in worlds:
            if d:
                w.close(d)
        if d and d.p.poll() is None:
            d.stop()
        am.cleanup()
        hook.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return done()


if __name__ == "__main__":
    raise SystemExit(main())
