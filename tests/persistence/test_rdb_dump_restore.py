"""DUMP / RESTORE against Redis 8.2.3: the same payload bytes for strings and streams,
payloads move both ways, and RESTORE's errors are Redis's byte for byte."""

from __future__ import annotations

import pytest

from tests.helpers import servers

pytestmark = pytest.mark.skipif(servers.redis8_binary() is None, reason="needs Redis 8.2.3")


def _fill(c, consumers: bool = True) -> None:
    c.set("s", "hello")
    c.set("i", "123456")
    c.set("neg", "-5")
    c.set("long", "x" * 300)
    c.set("bin", bytes(range(256)))
    for i in range(300):
        c.execute_command("XADD", "st", f"{1000 + i}-{i % 3}", "f", f"v{i % 7}", "n", i)
    c.execute_command("XADD", "st", "5000-0", "other", "field")
    c.xdel("st", "1003-0", "1010-1")
    c.xgroup_create("st", "g", id="0")
    if consumers:  # their seen-time is the server's clock: not comparable byte for byte
        c.execute_command("XGROUP", "CREATECONSUMER", "st", "g", "idle")
    c.execute_command("XADD", "edge", f"{2**64 - 1}-{2**64 - 2}", "a", "1")


def test_dump_payloads_equal_redis(rillet_server, redis8_server):
    ours, ref = rillet_server.client(), redis8_server.client()
    for c in (ours, ref):
        c.flushall()
        _fill(c, consumers=False)
    for key in ("s", "i", "neg", "long", "bin", "st", "edge"):
        assert ours.dump(key) == ref.dump(key), key
    assert ours.dump("missing") is None


def test_restore_both_ways(rillet_server, redis8_server):
    ours, ref = rillet_server.client(), redis8_server.client()
    for c in (ours, ref):
        c.flushall()
    _fill(ref)
    ref.xreadgroup("g", "alice", {"st": ">"}, count=5)
    for key in ("s", "long", "bin", "st", "edge"):
        payload = ref.dump(key)
        assert ours.restore(key, 0, payload)
        assert ours.dump(key) == payload
        assert ref.restore(key + "-back", 0, ours.dump(key))
    assert ours.xrange("st") == ref.xrange("st")
    def pending(c):  # delivery counts and owners; idle times move with the clock
        return [(e["message_id"], e["consumer"], e["times_delivered"])
                for e in c.xpending_range("st", "g", "-", "+", 100)]

    assert pending(ours) == pending(ref)


@pytest.mark.parametrize("args", [
    ["k", "0", "PAYLOAD"],
    ["k", "-1", "PAYLOAD"],
    ["k", "abc", "PAYLOAD"],
    ["k", "0", "PAYLOAD", "IDLETIME", "-1"],
    ["k", "0", "PAYLOAD", "FREQ", "256"],
    ["k", "0", "PAYLOAD", "FREQ", "1", "IDLETIME", "1"],
    ["k", "0", "PAYLOAD", "BOGUS"],
    ["k", "0", "PAYLOAD", "IDLETIME"],
    ["exists", "0", "PAYLOAD"],
    ["k", "0", "garbage"],
    ["k", "0", "CORRUPT"],
    ["k", "0", "PAYLOAD", "REPLACE", "ABSTTL", "IDLETIME", "10"],
    ["k", "1", "PAYLOAD", "ABSTTL"],
])
def test_restore_errors_match(rillet_server, redis8_server, args):
    replies = []
    for c in (rillet_server.client(), redis8_server.client()):
        c.flushall()
        c.set("src", "value")
        c.set("exists", "1")
        payload = c.dump("src")
        corrupt = payload[:-1] + bytes([payload[-1] ^ 1])
        argv = [payload if a == "PAYLOAD" else corrupt if a == "CORRUPT" else a for a in args]
        try:
            reply = c.execute_command("RESTORE", *argv)
        except Exception as exc:  # the reply error, compared as text
            reply = f"error: {exc}"
        replies.append((reply, c.exists("k")))
    assert replies[0] == replies[1]
