"""Output buffers: client-output-buffer-limit as Redis, big pipelines served in turns.

A client that pipelines many big replies has its later commands run in later
loop turns (other clients are served between), is not served while it reads
nothing, and is disconnected once over its class's limit. bench/slow_reader.py
measures the other clients' latency meanwhile; tests never assert on time.
"""

from __future__ import annotations

import socket
import time

import pytest

from tests.helpers import servers
from tests.helpers.wire import Wire, encode_command

DEFAULT = "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"


@pytest.fixture
def obuf(pair8):
    yield pair8
    for wire in (pair8.ours, pair8.ref):
        assert wire.call("CONFIG", "SET", "client-output-buffer-limit", DEFAULT) == b"+OK\r\n"


@pytest.mark.parametrize("value", [
    "garbage", "normal 1 2", "foo 1 2 3", "master 1 2 3", "normal -1 0 0", "normal 1 2 x",
    "normal 1mb 512kb 10", "NORMAL 1 2 3", "replica 1 2 3", "slave 10mb 5mb 30 pubsub 1 2 3",
    "normal 1.5mb 0 0", "", "normal 1 2 3 normal 4 5 6", "pubsub 1gb 1kb 0 foo 1 2 3",
])
def test_config_set_and_get(obuf, value):
    obuf.check("CONFIG", "SET", "client-output-buffer-limit", value)
    obuf.check("CONFIG", "GET", "client-output-buffer-limit")


def _load(wire: Wire, entries: int) -> None:
    value = "x" * 80
    for start in range(0, entries, 1000):
        wire.send_raw(b"".join(encode_command("XADD", "big", f"1-{n + 1}", "f", value)
                               for n in range(start, min(entries, start + 1000))))
        for _ in range(min(1000, entries - start)):
            wire.read_reply()


def _stats(wire: Wire) -> dict[str, str]:
    text = wire.call("INFO", "stats").decode()
    return dict(line.split(":", 1) for line in text.split("\r\n") if ":" in line)


def test_slow_reader_is_cut_at_its_hard_limit_and_others_are_served():
    server = servers.start_rillet("--client-output-buffer-limit", "normal 8mb 4mb 60")
    try:
        with Wire(server.port, timeout=5) as admin:
            _load(admin, 5_000)  # each XRANGE - + is ~0.5 MB
            slow = socket.create_connection(("127.0.0.1", server.port))
            slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            slow.sendall(encode_command("XRANGE", "big", "-", "+") * 100)
            deadline = time.monotonic() + 60
            while _stats(admin)["client_output_buffer_limit_disconnections"] == "0":
                # Every PING is answered (a 5 s timeout is the watchdog) while it runs.
                assert admin.call("PING") == b"+PONG\r\n"
                assert time.monotonic() < deadline, "the slow client was never disconnected"
                time.sleep(0.01)
            assert b"cmd=xrange" not in admin.call("CLIENT", "LIST")
            slow.close()
        server.stop()
        with open(f"{server.dir}/server.log", encoding="utf-8", errors="replace") as log:
            assert "scheduled to be closed ASAP for overcoming of output buffer limits" in log.read()
    finally:
        server.stop(sig_kill=True)


def test_soft_limit_cuts_after_its_seconds_even_when_nothing_more_is_sent():
    server = servers.start_rillet("--client-output-buffer-limit", "normal 0 1mb 1")
    try:
        with Wire(server.port, timeout=5) as admin:
            _load(admin, 5_000)
            slow = socket.create_connection(("127.0.0.1", server.port))
            slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            slow.sendall(encode_command("XRANGE", "big", "-", "+") * 40)
            deadline = time.monotonic() + 30
            while _stats(admin)["client_output_buffer_limit_disconnections"] == "0":
                assert time.monotonic() < deadline, "the soft limit never cut the client"
                time.sleep(0.1)
            slow.close()
    finally:
        server.stop(sig_kill=True)


def test_without_a_limit_an_unread_client_waits_and_shows_its_omem(rillet_server):
    with Wire(rillet_server.port, timeout=5) as admin:
        admin.call("SELECT", 7)
        admin.call("FLUSHDB")
        _load(admin, 5_000)
        slow = socket.create_connection(("127.0.0.1", rillet_server.port))
        slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        slow.sendall(encode_command("SELECT", "7") + encode_command("XRANGE", "big", "-", "+") * 100)
        # Bounded wait for the server to reach the pipeline (a fixed 0.5 s sleep found
        # omem=0, or no xrange client yet, on a loaded machine).
        deadline = time.monotonic() + 30
        while True:
            lines = [x for x in admin.call("CLIENT", "LIST").split(b"\n") if b"cmd=xrange" in x]
            omem = int(lines[0].split(b" omem=")[1].split(b" ")[0]) if lines else 0
            if omem > 0:
                break
            assert time.monotonic() < deadline, "the unread client never showed its omem"
            time.sleep(0.05)
        # Served up to the high-water mark, then paused: not 100 replies' worth (50 MB).
        assert omem < 16 * 1024 * 1024
        assert admin.call("PING") == b"+PONG\r\n"
        slow.close()
        admin.call("FLUSHDB")


def test_deferred_replies_arrive_whole_and_in_order(pair8):
    """A pipeline past the per-turn reply budget, read slowly: the same bytes as Redis."""
    _load(pair8.ours, 3_000)
    _load(pair8.ref, 3_000)
    payload = (encode_command("XRANGE", "big", "-", "+") * 20 + encode_command("PING")
               + encode_command("XLEN", "big"))
    replies = []
    for port in (pair8.ours.sock.getpeername()[1], pair8.ref.sock.getpeername()[1]):
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(payload)
            received = b""
            while not received.endswith(b"+PONG\r\n:3000\r\n"):
                chunk = sock.recv(65536)
                assert chunk
                received += chunk
                time.sleep(0.001)
            replies.append(received)
    assert replies[0] == replies[1]
