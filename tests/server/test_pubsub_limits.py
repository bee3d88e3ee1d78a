"""A subscriber that does not read is disconnected at client-output-buffer-limit pubsub;
redis-py's pubsub() works as its users use it."""

from __future__ import annotations

import socket
import time

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
