"""AUTH, HELLO AUTH and the unauthenticated request limits, on servers started with requirepass.

Dedicated servers (rillet, redis-server 7.0 and 8.2, all `--requirepass s3cret`)
are started once for this module; AUTH without a configured password is checked
on the shared servers.
"""

from __future__ import annotations

import socket

import pytest

from tests.compat.test_core_connection import hello_normalise
from tests.helpers import servers
from tests.helpers.diff import Pair

PASSWORD = "s3cret"


@pytest.fixture(scope="module")
def protected():
    started = {"rillet": servers.start_rillet("--requirepass", PASSWORD)}
    try:
        for kind, finder in (("redis7", servers.redis7_binary), ("redis8", servers.redis8_binary)):
            binary = finder()
            if binary is not None:
                started[kind] = servers.start_redis(binary, "--requirepass", PASSWORD, kind=kind)
        yield started
    finally:
        for handle in started.values():
            handle.stop()


@pytest.fixture(params=["redis7", "redis8"])
def auth_pair(request, protected):
    if request.param not in protected:
        pytest.skip(f"{request.param} not available")
    pair = Pair(protected["rillet"].port, protected[request.param].port)
    yield pair
    pair.close()


def test_commands_before_auth(auth_pair):
    p = auth_pair
    p.check("PING")
    p.check("GET", "k")
    p.check("SELECT", "1")
    p.check("CLIENT", "SETNAME", "x")
    p.check("MULTI")
    p.check("FOO", "bar")  # unknown command is checked before authentication
    p.check("GET")  # and so is arity
    p.check("ECHO", "x")
    p.check("EXEC")  # a rejected EXEC answers EXECABORT
    p.check("EXEC", "x")
    p.check("RESET")


def test_auth_errors_then_success(auth_pair):
    p = auth_pair
    p.check("AUTH")
    p.check("AUTH", "wrong")
    p.check("AUTH", "default", "wrong")
    p.check("AUTH", "nouser", PASSWORD)
    p.check("AUTH", "a", "b", "c")
    p.check("PING")
    p.check("AUTH", PASSWORD)
    p.check("PING")
    p.check("AUTH", "default", PASSWORD)
    p.check("AUTH", "wrong")  # a failed AUTH does not log the client out
    p.check("GET", "k")


def test_reset_logs_out(auth_pair):
    p = auth_pair
    p.check("AUTH", PASSWORD)
    p.check("GET", "k")
    p.check("RESET")
    p.check("GET", "k")


def test_hello_auth(auth_pair, request):
    p = auth_pair
    if "redis7" in request.node.name:
        # 7.0 words this error differently; 8.x is the reference.
        assert p.ours.call("HELLO").startswith(b"-NOAUTH HELLO must be called")
    else:
        p.check("HELLO")
        p.check("HELLO", "3")
    p.check("HELLO", "3", "AUTH", "default", "wrong")
    p.check("HELLO", "3", "AUTH", "nouser", PASSWORD)
    p.check("PING")
    p.check("HELLO", "3", "AUTH", "default", PASSWORD, "SETNAME", "n1", normalise=hello_normalise)
    p.check("CLIENT", "GETNAME")
    p.check("GET", "k")  # RESP3 null
    p.check("RESET")
    p.check("HELLO", "2", "AUTH", "default", PASSWORD, normalise=hello_normalise)
    p.check("GET", "k")


def test_auth_without_requirepass(pair):
    pair.check("AUTH", "anything")
    pair.check("AUTH", "default", "anything")
    pair.check("AUTH", "nouser", "anything")
    pair.check("HELLO", "3", "AUTH", "default", "anything", normalise=hello_normalise)


def _raw(port: int, payload: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(payload)
        received = b""
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                return received
            received += chunk


@pytest.mark.parametrize("payload", [
    b"*11\r\n",
    b"*1\r\n$16385\r\n",
    b"*10\r\n" + b"$1\r\na\r\n" * 10 + b"*2\r\n$4\r\nECHO\r\n$16384\r\n" + b"x" * 16384
    + b"\r\n*12\r\n",
    b"*2\r\n$4\r\nAUTH\r\n$16385\r\n",
])
def test_unauthenticated_request_limits(protected, payload):
    ours = _raw(protected["rillet"].port, payload)
    assert b"-ERR Protocol error: unauthenticated" in ours
    for kind in ("redis7", "redis8"):
        if kind in protected:
            assert ours == _raw(protected[kind].port, payload)


def test_limits_lifted_after_auth(auth_pair):
    auth_pair.check("AUTH", PASSWORD)
    auth_pair.check("ECHO", "v" * 20000)
    auth_pair.check("EXISTS", *[f"k{i}" for i in range(12)])
