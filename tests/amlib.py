# SPDX-License-Identifier: GPL-2.0-or-later
"""A real Alertmanager (Debian's prometheus-alertmanager) for the tests:
loopback only, no gossip, its own config and storage under a temporary
directory, started and stopped by the test.  And a webhook receiver: a
small HTTP server in a thread that keeps every JSON body it is sent."""
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
import urllib.request

ALERTMANAGER = os.environ.get("ALERTMANAGER", shutil.which("prometheus-alertmanager") or
                              shutil.which("alertmanager") or "")

# Everything to one receiver that sends nowhere: the test reads the API.
# Fast grouping, so an alert shows at once.
CONFIG = """route:
  receiver: "null"
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: "null"
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Alertmanager:
    """Start with .start(); .url is http://127.0.0.1:PORT; .alerts() lists
    what GET /api/v2/alerts gives (active ones unless told otherwise)."""

    def __init__(self, port=None, extra=""):
        """extra: more of alertmanager.yml (e.g. inhibit_rules)."""
        self.port = port or free_port()
        self.extra = extra
        self.url = "http://127.0.0.1:%d" % self.port
        self.dir = tempfile.mkdtemp(prefix="pl-am-")
        self.proc = None
        self.log = os.path.join(self.dir, "alertmanager.log")

    def start(self, timeout=20):
        if not ALERTMANAGER:
            raise RuntimeError("no prometheus-alertmanager (apt-get install prometheus-alertmanager)")
        conf = os.path.join(self.dir, "alertmanager.yml")
        with open(conf, "w") as f:
            f.write(CONFIG + self.extra)
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [ALERTMANAGER, "--config.file=" + conf,
                 "--storage.path=" + os.path.join(self.dir, "data"),
                 "--web.listen-address=127.0.0.1:%d" % self.port,
                 "--cluster.listen-address="],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise RuntimeError("alertmanager exited with %d: %s" % (self.proc.returncode, self.log_text()[-2000:]))
            try:
                with urllib.request.urlopen(self.url + "/-/ready", timeout=1) as r:
                    if r.status == 200:
                        return self
            except OSError:
                pass
            time.sleep(0.1)
        raise RuntimeError("alertmanager not ready on %s after %ds" % (self.url, timeout))

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def cleanup(self):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def log_text(self):
        try:
            with open(self.log, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def alerts(self, active=True, resolved=False):
        """The alerts Alertmanager holds: [{labels, annotations, startsAt,
        endsAt, status: {state}}...]; [] when it does not answer."""
        q = "?active=%s&silenced=true&inhibited=true&unprocessed=true" % ("true" if active else "false")
        try:
            with urllib.request.urlopen(self.url + "/api/v2/alerts" + q, timeout=5) as r:
                got = json.loads(r.read().decode())
        except (OSError, ValueError):
            return []
        if resolved:
            return got
        now = time.time()
        return [a for a in got if _ends(a) > now]

    def wait_alerts(self, pred, timeout):
        """Poll until pred(alerts) is true: (seconds waited, alerts), or
        (None, the last alerts) at the deadline."""
        t0 = time.monotonic()
        got = []
        while time.monotonic() - t0 < timeout:
            got = self.alerts()
            if pred(got):
                return time.monotonic() - t0, got
            time.sleep(0.1)
        return None, got


def _ends(a):
    """endsAt as seconds since the epoch (0 when absent or unreadable)."""
    import datetime
    s = a.get("endsAt") or ""
    try:
        s = s.replace("Z", "+00:00")
        if "." in s:
            head, tail = s.split(".", 1)
            frac = "".join(c for c in tail if c.isdigit())
            zone = tail[len(frac):]
            s = head + "." + frac[:6] + zone
        return datetime.datetime.fromisoformat(s).timestamp()
    except ValueError:
        return 0


class Webhook:
    """A local receiver: POSTs to http://127.0.0.1:PORT/ are kept in
    .bodies (parsed JSON, or {"_raw": text}) with their arrival time.
    While .fail holds bytes, each POST is answered 500 with them."""

    def __init__(self):
        self.bodies = []
        self.fail = None
        self.lock = threading.Lock()
        hook = self

        class H(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n).decode("utf-8", "replace")
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = {"_raw": raw}
                with hook.lock:
                    hook.bodies.append((time.monotonic(), body))
                    out = hook.fail
                self.send_response(500 if out is not None else 200)
                self.send_header("Content-Length", str(len(out or b"")))
                self.end_headers()
                if out:
                    self.wfile.write(out)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.port = self.server.server_address[1]
        self.url = "http://127.0.0.1:%d/" % self.port
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def start(self):
        self.thread.start()
        return self

    def stop(self):
        self.server.shutdown()
        self.server.server_close()

    def got(self):
        with self.lock:
            return [b for _, b in self.bodies]
