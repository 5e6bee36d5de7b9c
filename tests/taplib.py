# SPDX-License-Identifier: GPL-2.0-or-later
"""A small TAP producer and helpers for running layoutctl in tests."""
import http.client
import json
import os
import socket
import subprocess
import sys
import time

_n = 0
_failed = 0

LAYOUTCTL = os.environ.get("LAYOUTCTL", "layoutctl")
LAYOUTD = os.environ.get("LAYOUTD", "layoutd")
DATA = os.environ.get("PL_TEST_DATA", os.path.join(os.path.dirname(__file__), "data"))
ETC = os.environ.get("PL_ETC", os.path.join(os.path.dirname(__file__), "..", "etc"))


def ok(cond, name):
    global _n, _failed
    _n += 1
    print(("ok" if cond else "not ok") + " %d - %s" % (_n, name), flush=True)
    if not cond:
        _failed += 1
    return cond


def skip(name, reason):
    """A test that cannot run here (TAP SKIP): counted, never failed."""
    global _n
    _n += 1
    print("ok %d - %s # SKIP %s" % (_n, name, reason), flush=True)


def diag(msg):
    for line in str(msg).splitlines():
        print("# " + line, flush=True)


def is_eq(got, want, name):
    if not ok(got == want, name):
        diag("got:  %r\nwant: %r" % (got, want))
        return False
    return True


def is_close(got, want, name, rel=1e-9):
    good = isinstance(got, (int, float)) and abs(got - want) <= rel * max(1.0, abs(want))
    if not ok(good, name):
        diag("got:  %r\nwant: %r" % (got, want))


def like(text, needle, name):
    if not ok(needle in (text or ""), name):
        diag("%r does not contain %r" % (text, needle))


def run(*args, timeout=60):
    """Run layoutctl; returns (rc, stdout, stderr)."""
    # LAYOUTCTL_WRAPPER (e.g. valgrind) runs the same tests under a checker;
    # its error exit code 99 fails the test that saw it.
    wrapper = os.environ.get("LAYOUTCTL_WRAPPER", "").split()
    if wrapper:
        timeout *= 20
    p = subprocess.run(wrapper + [LAYOUTCTL] + list(args), capture_output=True, text=True,
                       timeout=timeout)
    if p.returncode == 99:
        ok(False, "checker found errors running layoutctl %s" % " ".join(args))
        diag(p.stderr)
    return p.returncode, p.stdout, p.stderr


def run_json(*args):
    rc, out, err = run(*args, "--json")
    if rc != 0:
        diag("layoutctl %s failed (%d): %s" % (" ".join(args), rc, err))
        return None
    return json.loads(out)


class UnixHTTPConnection(http.client.HTTPConnection):
    """HTTP over a unix socket, as layoutd serves it."""

    def __init__(self, path, timeout=10):
        super().__init__("localhost", timeout=timeout)
        self.unix_path = path

    def connect(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(self.timeout)
        try:
            s.connect(self.unix_path)
        except OSError:
            s.close()
            raise
        self.sock = s


def http_request(where, method, path, body=None, timeout=10):
    """One request to a daemon at a unix socket path or http://HOST:PORT.
    Returns (status, {lower-case header: value}, body text)."""
    if where.startswith("http://"):
        host, port = where[len("http://"):].rsplit(":", 1)
        conn = http.client.HTTPConnection(host, int(port), timeout=timeout)
    else:
        conn = UnixHTTPConnection(where, timeout=timeout)
    try:
        if isinstance(body, str):
            body = body.encode()
        headers = {"Content-Type": "application/json"} if body is not None else {}
        conn.request(method, path, body=body, headers=headers)
        r = conn.getresponse()
        text = r.read().decode("utf-8", "replace")
        return r.status, {k.lower(): v for k, v in r.getheaders()}, text
    finally:
        conn.close()


def wait_for(cond, timeout, step=0.05):
    """Poll cond() until it is true or timeout seconds pass; returns its last value."""
    end = time.monotonic() + timeout
    while True:
        v = cond()
        if v or time.monotonic() > end:
            return v
        time.sleep(step)


def as_user(uid, fn):
    """Run fn() in a child process that has dropped to uid (and gid uid);
    returns what fn returned (JSON-able), or {"error": ...}."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            out = fn()
        except Exception as e:    # anything goes back to the parent as data
            out = {"error": repr(e)}
        os.write(w, json.dumps(out).encode())
        os._exit(0)
    os.close(w)
    data = b""
    while True:
        chunk = os.read(r, 65536)
        if not chunk:
            break
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    try:
        return json.loads(data)
    except ValueError:
        return {"error": data.decode("utf-8", "replace")}


def data(*parts):
    return os.path.join(DATA, *parts)


def done():
    print("1..%d" % _n, flush=True)
    sys.exit(1 if _failed else 0)
