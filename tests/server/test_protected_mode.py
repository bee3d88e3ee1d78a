"""Protected mode and protected configs, against Redis 8.2.3 with the same inputs.

The servers run inside a network namespace of the test's own (tests/helpers/netns.py)
and listen on its veth address and on its loopback; a client from this side of
the veth pair is not local to them.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import tempfile
import time

import pytest

from rillet import errors
from tests.helpers import netns, servers
from tests.helpers.wire import Wire

pytestmark = pytest.mark.skipif(netns.available() is not None, reason=str(netns.available()))

DENIED = b"-" + errors.PROTECTED_MODE_DENIED.encode() + b"\r\n"


@pytest.fixture(scope="module")
def ns():
    with netns.namespace("pm") as space:
        yield space


def _start(ns: netns.Namespace, kind: str, *extra: str) -> tuple[subprocess.Popen, int]:
    port = servers.free_port()
    workdir = tempfile.mkdtemp(prefix=f"{kind}-pm-")
    bind = f"{ns.inside} 127.0.0.1"
    if kind == "rillet":
        argv = [sys.executable, "-m", "rillet", "server"]
    else:
        argv = [servers.redis8_binary(), "--daemonize", "no", "--logfile", f"{workdir}/log"]
    argv += ["--port", str(port), "--bind", bind, "--save", "", "--dir", workdir, *extra]
    proc = subprocess.Popen([*ns.prefix(), *argv], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, cwd=workdir)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            socket.create_connection((ns.inside, port), timeout=0.5).close()
        except OSError:
            time.sleep(0.05)
            continue
        # Accepting is not ready: a server still loading (even an empty dataset, on a
        # loaded machine) answers -LOADING. A loopback client asks until it is done.
        if not _from_inside(ns, port, "PING").startswith("LOADING"):
            return proc, port
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError(f"{kind} did not start in the namespace")


def _from_outside(ns: netns.Namespace, port: int, payload: bytes = b"") -> bytes:
    """Send `payload` from this side of the veth pair; the first reply, or all until EOF."""
    with socket.create_connection((ns.inside, port), timeout=2) as sock:
        # A denied client is told at accept, before it sends anything: sending
        # first would make the server's close a reset that can eat the message.
        if payload:
            sock.sendall(payload)
        out = b""
        while chunk := sock.recv(65536):
            out += chunk
            if payload and out.endswith(b"\r\n"):
                break
        return out


def _from_inside(ns: netns.Namespace, port: int, *args: str) -> str:
    done = subprocess.run([*ns.prefix(), "redis-cli", "-p", str(port), *args],
                          capture_output=True, text=True, timeout=20)
    return done.stdout.strip()


KINDS = ["rillet"] + (["redis8"] if servers.redis8_binary() else [])


@pytest.mark.parametrize("kind", KINDS)
def test_remote_client_is_denied_without_password(ns, kind):
    proc, port = _start(ns, kind)
    try:
        assert _from_outside(ns, port) == DENIED
        # A loopback client inside the namespace is served, and can lift the protection.
        assert _from_inside(ns, port, "PING") == "PONG"
        assert _from_inside(ns, port, "CONFIG", "SET", "protected-mode", "no") == "OK"
        assert _from_outside(ns, port, b"PING\r\n") == b"+PONG\r\n"
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize("kind", KINDS)
def test_remote_client_is_served_with_password_or_protection_off(ns, kind):
    for extra, expected in (
        (("--requirepass", "pw"), b"-NOAUTH Authentication required.\r\n"),
        (("--protected-mode", "no"), b"+PONG\r\n"),
    ):
        proc, port = _start(ns, kind, *extra)
        try:
            assert _from_outside(ns, port, b"PING\r\n") == expected
        finally:
            proc.kill()
            proc.wait()


def test_protected_configs_local_setting(ns):
    """enable-protected-configs local: loopback may set dir, a remote client may not."""
    proc, port = _start(ns, "rillet", "--enable-protected-configs", "local", "--protected-mode", "no")
    try:
        assert _from_inside(ns, port, "CONFIG", "SET", "dir", "/tmp") == "OK"
        reply = _from_outside(ns, port, b"CONFIG SET dbfilename x.rdb\r\n")
        assert reply == (b"-ERR CONFIG SET failed (possibly related to argument 'dbfilename')"
                         b" - can't set protected config\r\n")
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize("args", [
    ("dir", "/tmp"), ("dbfilename", "/tmp/x.rdb"), ("dbfilename", "../escape.txt"),
    ("timeout", "5", "dir", "/"), ("enable-protected-configs", "yes"),
    ("enable-debug-command", "yes"),
])
def test_protected_configs_refused_by_default(pair8, args):
    pair8.check("CONFIG", "SET", *args)
    pair8.check("CONFIG", "GET", "dir", normalise=lambda raw: raw[:raw.index(b"dir") + 5])
    pair8.check("CONFIG", "GET", "dbfilename")
    pair8.check("CONFIG", "GET", "timeout")


def test_debug_refused_by_default(pair8):
    pair8.check("DEBUG", "SLEEP", "0")


def test_save_cannot_escape_dir(rillet_server):
    with Wire(rillet_server.port) as conn:
        assert b"protected config" in conn.call("CONFIG", "SET", "dbfilename", "/tmp/escape.rdb")
        assert b"protected config" in conn.call("CONFIG", "SET", "dir", "/")
