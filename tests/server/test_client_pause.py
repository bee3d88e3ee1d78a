"""CLIENT PAUSE WRITE|ALL and CLIENT UNPAUSE: paused commands wait, in order, and run
when the pause ends (by UNPAUSE or by its timeout); error texts as Redis 8.2.3."""

from __future__ import annotations

import socket

from tests.helpers.wire import Wire


def _pending(wire: Wire) -> bool:
    """True if no reply is waiting on the socket (the command is parked)."""
    wire.sock.settimeout(0.3)
    try:
        wire.sock.recv(1, socket.MSG_PEEK)
        return False
    except TimeoutError:
        return True
    finally:
        wire.sock.settimeout(10)


def test_pause_write_then_unpause(rillet_server):
    admin, client = Wire(rillet_server.port), Wire(rillet_server.port)
    try:
        client.call("SET", "k", "old")
        assert admin.call("CLIENT", "PAUSE", "100000", "WRITE") == b"+OK\r\n"
        assert client.call("GET", "k") == b"$3\r\nold\r\n"  # reads go on
        client.send_raw(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\nnew\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n")
        assert _pending(client)
        assert admin.call("GET", "k") == b"$3\r\nold\r\n"
        assert admin.call("CLIENT", "UNPAUSE") == b"+OK\r\n"
        assert client.read_reply() == b"+OK\r\n"
        assert client.read_reply() == b"$3\r\nnew\r\n"  # the read queued behind waited too
    finally:
        admin.call("CLIENT", "UNPAUSE")
        admin.close()
        client.close()


def test_pause_all_ends_by_itself(rillet_server):
    admin, client = Wire(rillet_server.port), Wire(rillet_server.port)
    try:
        assert admin.call("CLIENT", "PAUSE", "500", "ALL") == b"+OK\r\n"
        client.send_raw(b"*1\r\n$4\r\nPING\r\n")
        assert _pending(client)
        assert client.read_reply() == b"+PONG\r\n"  # once the 500 ms are over
    finally:
        admin.close()
        client.close()


def test_pause_errors(pair8):
    pair8.check("CLIENT", "PAUSE", "abc")
    pair8.check("CLIENT", "PAUSE", "-1")
    pair8.check("CLIENT", "PAUSE", "10", "bogus")
    pair8.check("CLIENT", "UNPAUSE", "x")
    pair8.check("CLIENT", "PAUSE", "0", "WRITE")
    pair8.check("CLIENT", "UNPAUSE")
