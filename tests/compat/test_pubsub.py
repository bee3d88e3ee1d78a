"""Pub/sub against Redis 8.2.3, raw bytes: subscribe frames, message order, patterns,
shard channels, RESP2's subscribed-mode rule and RESP3 pushes, PUBSUB introspection."""

from __future__ import annotations

import pytest

from tests.helpers.wire import Wire


def _cmd(*args: str) -> bytes:
    parts = [a.encode() for a in args]
    return b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts)


@pytest.fixture
def ports(pair8, rillet_server, redis8_server):
    return rillet_server.port, redis8_server.port


def _open(ports) -> tuple[Wire, Wire]:
    return Wire(ports[0]), Wire(ports[1])


def _both(conns, *args: str, replies: int = 1) -> bytes:
    results = []
    for conn in conns:
        conn.send_raw(_cmd(*args))
        results.append(b"".join(conn.read_reply() for _ in range(replies)))
    assert results[0] == results[1], f"{args!r}:\n  rillet: {results[0]!r}\n  redis:  {results[1]!r}"
    return results[0]


def _read(conns, replies: int = 1) -> bytes:
    results = [b"".join(conn.read_reply() for _ in range(replies)) for conn in conns]
    assert results[0] == results[1], f"rillet: {results[0]!r}\nredis:  {results[1]!r}"
    return results[0]


def _read_unordered(conns, replies: int) -> None:
    """Frames whose order Redis leaves to its hash tables (several matching patterns)."""
    results = [sorted(conn.read_reply() for _ in range(replies)) for conn in conns]
    assert results[0] == results[1], f"rillet: {results[0]!r}\nredis:  {results[1]!r}"


@pytest.mark.parametrize("protocol", ["2", "3"])
def test_subscribe_publish_and_order(ports, protocol):
    sub, pub = _open(ports), _open(ports)
    if protocol == "3":
        for conn in sub:
            conn.call("HELLO", "3")
    _both(sub, "SUBSCRIBE", "news", "sport", replies=2)
    _both(sub, "PSUBSCRIBE", "n*", "*", replies=2)
    _both(sub, "SSUBSCRIBE", "shard1", replies=1)
    _both(pub, "PUBSUB", "NUMSUB", "news", "sport", "none")
    _both(pub, "PUBSUB", "NUMPAT")
    _both(pub, "PUBSUB", "SHARDNUMSUB", "shard1", "x")
    _both(pub, "PUBSUB", "SHARDCHANNELS")
    _both(pub, "PUBSUB", "SHARDCHANNELS", "sh*")
    _both(pub, "PUBSUB", "CHANNELS", "sp*")
    _both(pub, "PUBLISH", "sport", "goal")
    _read(sub)  # the channel's message first
    _read(sub)  # then the "*" pmessage
    _both(pub, "PUBLISH", "nobody", "x")
    _read_unordered(sub, 2)  # the n* and "*" pmessages
    _both(pub, "SPUBLISH", "shard1", "hello")
    _read(sub)
    for i in range(5):
        _both(pub, "PUBLISH", "sport", f"m{i}")
    _read(sub, replies=10)
    if protocol == "2":
        _both(sub, "GET", "x")
        _both(sub, "PING")
        _both(sub, "PING", "hi")
        _both(sub, "MULTI")
    else:
        _both(sub, "GET", "x")
        _both(sub, "PING")
    _both(sub, "UNSUBSCRIBE", "sport", "nosuch", replies=2)
    _both(sub, "PUNSUBSCRIBE", "n*", "*", replies=2)  # without names: hash order in Redis
    _both(sub, "SUNSUBSCRIBE", replies=1)
    _both(sub, "UNSUBSCRIBE", replies=1)
    _both(sub, "UNSUBSCRIBE", replies=1)
    _both(sub, "PUNSUBSCRIBE", replies=1)
    _both(sub, "PING")
    for conn in (*sub, *pub):
        conn.close()


def test_pubsub_errors_and_reset(ports):
    conns = _open(ports)
    _both(conns, "SUBSCRIBE")
    _both(conns, "PUBLISH", "a")
    _both(conns, "PUBSUB", "bogus")
    _both(conns, "PUBSUB", "NUMPAT", "x")
    _both(conns, "PUBSUB", "NUMSUB")
    _both(conns, "SUBSCRIBE", "a")
    _both(conns, "RESET")
    _both(conns, "GET", "x")
    for conn in conns:
        conn.close()
