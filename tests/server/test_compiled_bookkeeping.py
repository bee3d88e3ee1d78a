"""The compiled SET/GET/XADD bodies (commands/_writes.pyx) keep the bookkeeping of the
general path: tracking invalidation, the key's access time, the memory estimate's
pending mark, and the `new`/`overwritten` events (issue 17's one source of truth)."""

from __future__ import annotations

import time

import redis

from tests.helpers.wire import Wire


def test_plain_set_invalidates_a_tracking_client(rillet_server):
    tracker = Wire(rillet_server.port)
    writer = Wire(rillet_server.port)
    try:
        assert tracker.call("HELLO", "3").startswith(b"%")
        assert tracker.call("CLIENT", "TRACKING", "ON") == b"+OK\r\n"
        writer.call("SET", "tracked", "1")
        tracker.call("GET", "tracked")
        writer.call("SET", "tracked", "2")  # the plain form: the compiled body
        assert tracker.call("PING") == b">2\r\n$10\r\ninvalidate\r\n*1\r\n$7\r\ntracked\r\n"
    finally:
        tracker.close()
        writer.close()


def test_plain_get_set_xadd_record_the_access(rillet_server):
    client = redis.Redis(port=rillet_server.port)
    client.flushall()
    client.set("idle", "v")
    client.xadd("idle-stream", {"f": "v"})
    time.sleep(2.2)
    assert client.object("idletime", "idle") >= 2
    client.get("idle")
    client.xadd("idle-stream", {"f": "v"})
    assert client.object("idletime", "idle") <= 1
    assert client.object("idletime", "idle-stream") <= 1


def test_plain_set_sends_new_and_overwritten(rillet_server):
    client = redis.Redis(port=rillet_server.port)
    client.flushall()
    client.config_set("notify-keyspace-events", "KEno")
    pubsub = client.pubsub()
    try:
        pubsub.psubscribe("__keyevent@0__:*")
        pubsub.get_message(timeout=5)
        client.set("nk", "1")
        client.set("nk", "2")
        events = []
        deadline = time.monotonic() + 10
        while len(events) < 2 and time.monotonic() < deadline:
            message = pubsub.get_message(timeout=1)
            if message and message["type"] == "pmessage":
                events.append(message["channel"])
        assert events == [b"__keyevent@0__:new", b"__keyevent@0__:overwritten"]
    finally:
        client.config_set("notify-keyspace-events", "")
        pubsub.close()
