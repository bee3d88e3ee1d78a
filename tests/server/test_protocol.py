"""The wire protocol over real sockets, byte for byte against redis-server 7.0 and 8.2.

Each case sends raw bytes and reads until the server closes the connection.
Well-formed cases half-close the socket after sending, so the server answers
everything and then closes on EOF; malformed cases keep it open, so the close
must come from the server itself after the protocol error, as in Redis.
"""

from __future__ import annotations

import socket
import time

import pytest

from tests.helpers import servers
from tests.helpers.wire import Wire

INLINE_MAX = 64 * 1024


def exchange(port: int, payload: bytes, half_close: bool, timeout: float = 5.0) -> bytes:
    """Send `payload`, return everything received until the server closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(payload)
        if half_close:
            sock.shutdown(socket.SHUT_WR)
        received = b""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                chunk = sock.recv(65536)
            except ConnectionResetError:
                break
            except TimeoutError:
                pytest.fail(f"server kept the connection open after {payload[:60]!r}")
            if not chunk:
                break
            received += chunk
        return received


@pytest.fixture(params=["redis7", "redis8"])
def ports(request, rillet_server):
    finder = servers.redis7_binary if request.param == "redis7" else servers.redis8_binary
    if finder() is None:
        pytest.skip(f"{request.param} not available")
    ref = request.getfixturevalue(f"{request.param}_server")
    return rillet_server.port, ref.port


def check(ports, payload: bytes, half_close: bool) -> bytes:
    ours = exchange(ports[0], payload, half_close)
    ref = exchange(ports[1], payload, half_close)
    assert ours == ref, f"{payload[:80]!r}\n  rillet: {ours[:300]!r}\n  redis:  {ref[:300]!r}"
    return ours


WELL_FORMED = [
    b"*1\r\n$4\r\nPING\r\n",
    b"*-1\r\nPING\r\n",
    b"*0\r\nPING\r\n",
    b"*1\r\n$4\r\nPINGxx\r\nPING\r\n",
    b"*1\rX$4\r\nPING\r\n",
    b"*1\r\n$4\rXPING\r\n",
    b"*2\r\n$4\r\nECHO\r\n$3\r\na\r\nb\r\n",
    b"*2\r\n$4\r\nECHO\r\n$1\r\n*\r\n*3\r\n$4\r\nECHO\r\n$1\r\n+\r\n$1\r\n=\r\n",
    b"$4\r\nPING\r\n",
    b"PING\r\n",
    b"PING\n",
    b"\r\n\r\nPING\r\n",
    b"  PING   x  \r\n",
    b"ECHO \"\"\r\n",
    b'ECHO "a\\x41\\n\\"q"\r\n',
    b"ECHO 'it\\'s'\r\n",
    b"ECHO a\x0bb\r\n",
    b"\x0bECHO ab\r\n",
    b"ECHO \"a\"\x0b\r\n",
    b"ECHO a\rb\r\n",
    b'ECHO a"b c" d\r\n',
    b"FOO bar\r\n",
    b"PING\r\n*1\r\n$4\r\nPING\r\nPING\r\n",
    b"*1\r\n$4\r\nPING\r\n\x00\r\n",
    b"*1\r\n$4\r\nPING\r\n*2000000000\r\n$4\r\nECHO\r\n",  # a huge count is fine; it waits
    b"*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\nb\r\n" * 3 + b"*2\r\n$3\r\nGET\r\n$1\r\na\r\n",
]


@pytest.mark.parametrize("payload", WELL_FORMED)
def test_well_formed_requests(ports, payload):
    check(ports, payload, half_close=True)


PROTOCOL_ERRORS = [
    b"*x\r\n",
    b"*\r\n",
    b"*+1\r\n$4\r\nPING\r\n",
    b"*01\r\n$4\r\nPING\r\n",
    b"*1 \r\n$4\r\nPING\r\n",
    b"*3000000000\r\n",
    b"*99999999999999999999\r\n",
    b"*1\r\n$x\r\n",
    b"*1\r\n$\r\n",
    b"*1\r\n$-1\r\n",
    b"*1\r\n$04\r\nPING\r\n",
    b"*1\r\n$ 4\r\nPING\r\n",
    b"*1\r\n$536870913\r\n",
    b"*1\r\n+PING\r\n",
    b"*1\r\n:1\r\n",
    b"*1\r\n*1\r\n$4\r\nPING\r\n",
    b"*2\r\n$4\r\nECHO\r\n=8\r\ntxt:PING\r\n",
    b"*1\r\n%1\r\n*1\r\n$1\r\na\r\n$1\r\nb\r\n",
    b"*2\r\n$4\r\nECHO\r\n~1\r\n$1\r\na\r\n",
    b"*2\r\n$4\r\nECHO\r\n_\r\n",
    b"*1\r$4\r\nPING\r\n",
    b"*1\r\n$4\r\nPING\r\n*1\r\n$-5\r\n",
    b"*1\r\n$4\r\nPING\r\n*2\r\n:1\r\n",
    b"PING \"a\r\n",
    b"PING 'a\r\n",
    b"PING \"a\"b\r\n",
    b"PING\r\nECHO \"x\r\n",
    b"x" * (INLINE_MAX + 1),
    b"*" + b"1" * (INLINE_MAX + 1),
    b"*1\r\n$" + b"1" * (INLINE_MAX + 1),
    b"PING\x00\r\n" + b"y" * INLINE_MAX,
]


@pytest.mark.parametrize("payload", PROTOCOL_ERRORS, ids=[p[:40] for p in PROTOCOL_ERRORS])
def test_protocol_error_reply_then_close(ports, payload):
    received = check(ports, payload, half_close=False)
    assert b"-ERR Protocol error: " in received


def test_split_at_every_byte(rillet_server):
    """A pipeline dribbled one byte per packet gets the same replies as in one write."""
    payload = (
        b"*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nva\r\nl\r\n"
        b"ECHO 'in line'\r\n"
        b"*2\r\n$4\r\nECHO\r\n$1\r\n*\r\n"
        b"*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n"
        b"*2\r\n$3\r\nDEL\r\n$3\r\nkey\r\n"
    )
    expected = b"+OK\r\n$7\r\nin line\r\n$1\r\n*\r\n$5\r\nva\r\nl\r\n:1\r\n"
    with socket.create_connection(("127.0.0.1", rillet_server.port), timeout=10) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for i in range(len(payload)):
            sock.sendall(payload[i : i + 1])
        received = b""
        while len(received) < len(expected):
            chunk = sock.recv(4096)
            assert chunk, "connection closed"
            received += chunk
    assert received == expected


def test_big_value_in_pieces(rillet_server):
    value = bytes(range(256)) * 4096  # 1 MiB, every byte value
    header = b"*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$%d\r\n" % len(value)
    with socket.create_connection(("127.0.0.1", rillet_server.port), timeout=10) as sock:
        sock.sendall(header)
        for i in range(0, len(value), 65536):
            sock.sendall(value[i : i + 65536])
        sock.sendall(b"\r\n*2\r\n$6\r\nSTRLEN\r\n$3\r\nbig\r\n*2\r\n$3\r\nDEL\r\n$3\r\nbig\r\n")
        received = b""
        while not received.endswith(b":1\r\n") or received.count(b"\r\n") < 3:
            chunk = sock.recv(4096)
            assert chunk
            received += chunk
    assert received == b"+OK\r\n:%d\r\n:1\r\n" % len(value)


def test_other_clients_unaffected_by_a_protocol_error(rillet_server):
    with socket.create_connection(("127.0.0.1", rillet_server.port), timeout=5) as good:
        good.sendall(b"PING\r\n")
        assert good.recv(100) == b"+PONG\r\n"
        assert exchange(rillet_server.port, b"*1\r\n$x\r\n", half_close=False) == (
            b"-ERR Protocol error: invalid bulk length\r\n")
        good.sendall(b"PING\r\n")
        assert good.recv(100) == b"+PONG\r\n"


def _send_big_set(port: int, size: int) -> bytes:
    value = b"x" * size
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        try:
            sock.sendall(b"*3\r\n$3\r\nSET\r\n$7\r\nbig-key\r\n$%d\r\n" % size)
            for i in range(0, size, 65536):
                sock.sendall(value[i : i + 65536])
            sock.sendall(b"\r\n")
            return sock.recv(100)
        except (ConnectionResetError, BrokenPipeError):
            # The server closed mid-upload: a reset, or a pipe broken under our write.
            return b""


def test_client_query_buffer_limit(ports):
    """Past client-query-buffer-limit the connection is closed without a reply."""
    from tests.helpers.wire import Wire

    for port in ports:
        with Wire(port) as admin:
            assert admin.call("CONFIG", "SET", "client-query-buffer-limit", "1mb") == b"+OK\r\n"
            try:
                assert _send_big_set(port, 900_000) == b"+OK\r\n"
                assert _send_big_set(port, 2_000_000) == b""
            finally:
                admin.call("CONFIG", "SET", "client-query-buffer-limit", "1gb")
                admin.call("DEL", "big-key")


def _send_pipeline(port: int, sizes: list[int]) -> bytes:
    """SETs of the given sizes in one write; every reply until the server closes or 5 s."""
    payload = b"".join(
        b"*3\r\n$3\r\nSET\r\n$7\r\nbig-key\r\n$%d\r\n%s\r\n" % (size, b"x" * size) for size in sizes)
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        try:
            sock.sendall(payload)
            received = b""
            while received.count(b"\r\n") < len(sizes):
                chunk = sock.recv(4096)
                if not chunk:
                    break
                received += chunk
            return received
        except (ConnectionResetError, BrokenPipeError):
            return b""


def test_query_buffer_limit_is_per_request_not_per_pipeline(ports):
    """Three 900 kB SETs in one write under a 1 MB limit: all answered, as Redis does."""
    from tests.helpers.wire import Wire

    for port in ports:
        with Wire(port) as admin:
            assert admin.call("CONFIG", "SET", "client-query-buffer-limit", "1mb") == b"+OK\r\n"
            try:
                assert _send_pipeline(port, [900_000] * 3) == b"+OK\r\n" * 3
            finally:
                admin.call("CONFIG", "SET", "client-query-buffer-limit", "1gb")
                admin.call("DEL", "big-key")


def test_query_buffer_limit_is_logged():
    handle = servers.start_rillet("--client-query-buffer-limit", "1mb")
    try:
        assert _send_big_set(handle.port, 2_000_000) == b""
        with Wire(handle.port) as wire:
            assert wire.call("PING") == b"+PONG\r\n"
        handle.stop()
        with open(f"{handle.dir}/server.log", encoding="utf-8", errors="replace") as log:
            assert "Closing client that reached max query buffer length" in log.read()
    finally:
        handle.stop(sig_kill=True)
