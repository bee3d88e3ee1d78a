"""A subscriber that does not read is disconnected at client-output-buffer-limit pubsub;
redis-py's pubsub() works as its users use it."""

from __future__ import annotations

import socket
import time

from tests.helpers.transport import FakeTransport, TurnLoop
from tests.helpers.wire import Wire


def test_slow_subscriber_is_disconnected(rillet_server):
    with Wire(rillet_server.port) as admin:
        old = admin.call("CONFIG", "GET", "client-output-buffer-limit")
        assert admin.call("CONFIG", "SET", "client-output-buffer-limit",
                          "normal 0 0 0 slave 268435456 67108864 60 pubsub 1mb 0 0") == b"+OK\r\n"
        try:
            slow = socket.create_connection(("127.0.0.1", rillet_server.port))
            slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            slow.sendall(b"*2\r\n$9\r\nSUBSCRIBE\r\n$1\r\nc\r\n")
            time.sleep(0.2)
            payload = "x" * 100_000
            for _ in range(300):  # 30 MB at most, far past 1mb plus the kernel's buffers
                if admin.call("PUBLISH", "c", payload) == b":0\r\n":
                    break
            assert admin.call("PUBSUB", "NUMSUB", "c") == b"*2\r\n$1\r\nc\r\n:0\r\n"
            slow.close()
        finally:
            value = old.split(b"\r\n")[4].decode()
            admin.call("CONFIG", "SET", "client-output-buffer-limit", value)


def test_redis_py_pubsub(rillet_server):
    client = rillet_server.client()
    pubsub = client.pubsub()
    pubsub.subscribe("events")
    pubsub.psubscribe("ev*")
    assert pubsub.get_message(timeout=2)["type"] == "subscribe"
    assert pubsub.get_message(timeout=2)["type"] == "psubscribe"
    assert client.publish("events", "hello") == 2
    first = pubsub.get_message(timeout=2)
    second = pubsub.get_message(timeout=2)
    assert (first["type"], first["data"]) == ("message", b"hello")
    assert (second["type"], second["pattern"], second["data"]) == ("pmessage", b"ev*", b"hello")
    pubsub.unsubscribe()
    pubsub.punsubscribe()
    pubsub.close()
    client.close()


def test_frames_leave_once_per_turn_and_never_after_the_subscribers_reply():
    from rillet.server.connection import ClientConnection
    from rillet.server.server import Server
    from tests.helpers.wire import encode_command as cmd

    server = Server()
    conns = []
    for _ in range(3):
        conn = ClientConnection(server)
        conn.connection_made(FakeTransport())
        conns.append(conn)
    pub, sub2, sub3 = conns
    sub2.data_received(cmd("SUBSCRIBE", "ch"))
    sub3.data_received(cmd("HELLO", "3") + cmd("SUBSCRIBE", "ch"))
    for conn in conns:
        conn.transport.writes.clear()
    server.loop = loop = TurnLoop()
    # Two publishers' reads in one turn: the subscribers' frames wait for its end.
    pub.data_received(cmd("PUBLISH", "ch", "m1") + cmd("PUBLISH", "ch", "m2"))
    pub.data_received(cmd("PUBLISH", "ch", "m3"))
    assert pub.transport.writes == [b":2\r\n:2\r\n", b":2\r\n"]
    assert sub2.transport.writes == sub3.transport.writes == []
    # A subscriber's command in the same turn: what was sent to it goes first.
    sub2.data_received(cmd("UNSUBSCRIBE", "ch"))
    message = b"*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\n%s\r\n"
    assert sub2.transport.writes == [
        b"".join(message % m for m in (b"m1", b"m2", b"m3")),
        b"*3\r\n$11\r\nunsubscribe\r\n$2\r\nch\r\n:0\r\n",
    ]
    assert sub3.transport.writes == [b"".join(b">" + (message % m)[1:] for m in (b"m1", b"m2", b"m3"))]
    pub.data_received(cmd("PUBLISH", "ch", "m4"))
    assert pub.transport.writes[-1] == b":1\r\n"
    loop.end_turn()
    assert sub3.transport.writes[-1] == b">" + (message % b"m4")[1:]
    assert len(sub2.transport.writes) == 2
    server.loop = None


def test_pattern_matches_follow_subscription_changes(monkeypatch):
    """The channel -> matching patterns memo: dropped when patterns change, bounded in size."""
    from rillet import pubsub as pubsub_module
    from rillet.server.connection import ClientConnection
    from rillet.server.server import Server
    from tests.helpers.wire import encode_command as cmd

    monkeypatch.setattr(pubsub_module, "MATCH_CACHE_SIZE", 4)
    server = Server()
    sub, pub = ClientConnection(server), ClientConnection(server)
    sub.connection_made(FakeTransport())
    pub.connection_made(FakeTransport())
    sub.data_received(cmd("PSUBSCRIBE", "a*"))
    for channel in ("ab", "ac", "ad", "ae", "af", "ab"):
        pub.data_received(cmd("PUBLISH", channel, "m"))
    assert len(server.state.pubsub._matched) <= 4
    sub.data_received(cmd("PSUBSCRIBE", "*b"))
    pub.data_received(cmd("PUBLISH", "ab", "m") + cmd("PUBLISH", "xb", "m"))
    sub.data_received(cmd("PUNSUBSCRIBE", "a*"))
    pub.data_received(cmd("PUBLISH", "ab", "m"))
    assert pub.transport.writes == [b":1\r\n"] * 6 + [b":2\r\n:1\r\n", b":1\r\n"]
    pmessage = b"*4\r\n$8\r\npmessage\r\n$2\r\n%s\r\n$2\r\n%s\r\n$1\r\nm\r\n"
    assert b"".join(sub.transport.writes).endswith(
        pmessage % (b"a*", b"ab") + pmessage % (b"*b", b"ab") + pmessage % (b"*b", b"xb")
        + b"*3\r\n$12\r\npunsubscribe\r\n$2\r\na*\r\n:1\r\n" + pmessage % (b"*b", b"ab"))
