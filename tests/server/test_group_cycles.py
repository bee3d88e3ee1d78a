"""A stream that leaves the keyspace with pending entries is freed by reference counting.

A pending entry names its owner instead of pointing at the `Consumer` (whose
PEL holds the entry), so a consumer group holds no reference cycle: whichever
way the key goes (DEL, UNLINK, an overwrite, expiry, eviction, a flush, a
moved-then-deleted key), with the cycle collector off nothing of the group
stays alive. With the cycle, each pending entry cost the collector about five
objects, and a deleted stream with millions pending waited for gcpolicy's sweep.
"""

from __future__ import annotations

import gc

import pytest

from rillet.engine.groups import Consumer, ConsumerGroup
from rillet.engine.pel import PendingEntry
from rillet.engine.stream import Stream
from tests.server.test_fast_bodies import Server

PENDING = 1000


def _alive() -> dict[str, int]:
    kinds = {Stream: "streams", ConsumerGroup: "groups", Consumer: "consumers",
             PendingEntry: "entries"}
    counts = dict.fromkeys(kinds.values(), 0)
    for obj in gc.get_objects():
        name = kinds.get(type(obj))
        if name is not None:
            counts[name] += 1
    return counts


def _fill(server: Server, key: bytes) -> None:
    for i in range(PENDING):
        server.run([b"XADD", key, b"%d-1" % (i + 1), b"f", b"v"])
    server.run([b"XGROUP", b"CREATE", key, b"g", b"0"])
    server.run([b"XGROUP", b"CREATE", key, b"h", b"0"])
    for consumer in (b"a", b"b", b"c"):
        server.run([b"XREADGROUP", b"GROUP", b"g", consumer, b"COUNT", b"300",
                    b"STREAMS", key, b">"])
    server.run([b"XREADGROUP", b"GROUP", b"h", b"a", b"STREAMS", key, b">"])
    server.run([b"XNACK", key, b"g", b"FAIL", b"IDS", b"2", b"1-1", b"2-1"])
    server.run([b"XCLAIM", key, b"g", b"b", b"0", b"3-1"])
    stream = server.state.keyspace[0].data[key]
    assert len(stream.groups[b"g"].pel) == 900 and len(stream.groups[b"h"].pel) == PENDING


def _restore_replace(server: Server) -> None:
    dump = server.run([b"DUMP", b"other"])
    payload = dump.split(b"\r\n", 1)[1][:-2]
    assert server.run([b"RESTORE", b"s", b"0", payload, b"REPLACE"]) == b"+OK\r\n"


def _expire(server: Server) -> None:
    server.run([b"PEXPIRE", b"s", b"5"])
    server.clock.advance(10)
    assert server.run([b"EXISTS", b"s"]) == b":0\r\n"


def _evict(server: Server) -> None:
    server.run([b"CONFIG", b"SET", b"maxmemory-policy", b"allkeys-random"])
    server.run([b"CONFIG", b"SET", b"maxmemory", b"1"])
    server.run([b"SET", b"x", b"y"])  # refused or not: eviction ran first
    server.run([b"CONFIG", b"SET", b"maxmemory", b"0"])
    assert server.run([b"EXISTS", b"s"]) == b":0\r\n"


WAYS = {
    "del": lambda s: s.run([b"DEL", b"s"]),
    "unlink": lambda s: s.run([b"UNLINK", b"s"]),
    "set": lambda s: s.run([b"SET", b"s", b"v"]),
    "rename-onto": lambda s: s.run([b"RENAME", b"other", b"s"]),
    "copy-replace": lambda s: s.run([b"COPY", b"other", b"s", b"REPLACE"]),
    "restore-replace": _restore_replace,
    "expiry": _expire,
    "eviction": _evict,
    "flushdb": lambda s: s.run([b"FLUSHDB"]),
    "flushall-async": lambda s: s.run([b"FLUSHALL", b"ASYNC"]),
    "swapdb-flushdb": lambda s: (s.run([b"SWAPDB", b"0", b"1"]), s.run([b"SELECT", b"1"]),
                                 s.run([b"FLUSHDB"])),
    "move-del": lambda s: (s.run([b"MOVE", b"s", b"1"]), s.run([b"SELECT", b"1"]),
                           s.run([b"DEL", b"s"])),
    "xgroup-destroy": lambda s: (s.run([b"XGROUP", b"DESTROY", b"s", b"g"]),
                                 s.run([b"XGROUP", b"DESTROY", b"s", b"h"]),
                                 s.run([b"DEL", b"s"])),
}


@pytest.mark.parametrize("way", list(WAYS))
def test_a_stream_with_pending_entries_leaves_no_cycles(way, no_collector):
    server = Server(sinks=False)
    before = _alive()
    _fill(server, b"s")
    server.run([b"XADD", b"other", b"1-1", b"f", b"v"])
    if way in ("rename-onto", "set", "copy-replace", "restore-replace"):
        server.run([b"SET", b"other", b"plain"])  # what replaces the stream is no stream
    WAYS[way](server)
    server.run([b"FLUSHALL"])  # `other` too: only what cycles hold may remain
    assert _alive() == before


def test_a_deep_copy_shares_entries_between_the_indexes():
    """COPY deep-copies the groups: the copy's consumer PELs hold the copy's entries."""
    server = Server(sinks=False)
    _fill(server, b"s")
    server.run([b"COPY", b"s", b"t"])
    data = server.state.keyspace[0].data
    twin, original = data[b"t"].groups[b"g"], data[b"s"].groups[b"g"]
    twin.check_invariants()
    for consumer in twin.consumers.values():
        for entry in consumer.pel:
            assert twin.pel.get(entry.key) is entry
            assert original.pel.get(entry.key) is not entry
