# SPDX-License-Identifier: GPL-2.0-or-later
"""One timed health request to a layoutd unix socket, and the probe loop
layoutd_test runs in a python of its own (`python3 -m healthprobe PATH BOUND
EVERY`): as a thread it shared the interpreter lock with the load it
measures.  The loop prints "GOOD SECONDS" per request and stops when its
stdin closes."""
import errno
import select
import socket
import sys
import time


def connect_unix(path, deadline):
    """A connected unix socket, retrying while the listen queue is full
    (EAGAIN) until the monotonic deadline; None when it never connects."""
    while True:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.setblocking(False)
        try:
            s.connect(path)
            return s
        except OSError as e:
            s.close()
            if e.errno not in (errno.EAGAIN, errno.EWOULDBLOCK) or time.monotonic() > deadline:
                return None
        time.sleep(0.01)


def timed_health(path, bound):
    """(answered 200, seconds) for one health request, given `bound` seconds
    in all, connect included."""
    t0 = time.monotonic()
    s = connect_unix(path, t0 + bound)
    if s is None:
        return False, time.monotonic() - t0
    try:
        s.settimeout(max(0.1, bound - (time.monotonic() - t0)))
        s.sendall(b"GET /v1/health HTTP/1.0\r\n\r\n")
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        return data.startswith(b"HTTP/1.1 200") or data.startswith(b"HTTP/1.0 200"), \
            time.monotonic() - t0
    except OSError:
        return False, time.monotonic() - t0
    finally:
        s.close()


def main(argv):
    path, bound, every = argv[1], float(argv[2]), float(argv[3])
    while True:
        good, secs = timed_health(path, bound)
        print("%d %.6f" % (int(good), secs), flush=True)
        if select.select([sys.stdin], [], [], every)[0]:
            break


if __name__ == "__main__":
    main(sys.argv)
