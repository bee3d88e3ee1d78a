"""What replicas (and the AOF) receive for a write, and what it counts for the save
rules (`rdb_changes_since_last_save`), against Redis 8.2.3.

The propagated commands are read by a fake replica (tests/helpers/replstream.py)
and compared exactly: names, spelling and SELECTs. Redis rewrites a command only
where replaying it as sent would differ (BLMPOP -> `LPOP key n`, BRPOPLPUSH ->
RPOPLPUSH, GETSET -> SET, a relative expiry -> PXAT, a whole SPOP -> DEL/UNLINK);
everything else goes in the client's own spelling.
"""

from __future__ import annotations

import time

import pytest

from tests.helpers import servers
from tests.helpers.replstream import FakeReplica
from tests.helpers.wire import Wire, encode_command
from tests.replication import support

pytestmark = pytest.mark.skipif(servers.redis8_binary() is None, reason="Redis 8.2.3 not available")

FAR_MS = "99999999999999"  # an absolute deadline far ahead: the same bytes on both


@pytest.fixture(scope="module")
def pair():
    yield from servers.own_pair8()


def _info_int(wire: Wire, section: str, field: str) -> int:
    text = wire.call("INFO", section).decode()
    return int(text.split(field + ":", 1)[1].split("\r\n", 1)[0])


def _block(port: int, wire: Wire, *command: str) -> Wire:
    """`command` sent on a connection of its own, once the server holds it blocked."""
    before = _info_int(wire, "clients", "blocked_clients")
    blocked = Wire(port)
    blocked.send_raw(encode_command(*command))
    deadline = time.monotonic() + 10
    while _info_int(wire, "clients", "blocked_clients") == before:
        assert time.monotonic() < deadline, f"{command} did not block"
        time.sleep(0.01)
    return blocked


def _run(wire: Wire, port: int, steps, dumped: bytes | None = None) -> list[Wire]:
    """Each step a command; ("@block", ...) blocks one on its own connection and
    "@dump" stands for the payload DUMP gave in the setup."""
    blocked = []
    for step in steps:
        if step[0] == "@block":
            blocked.append(_block(port, wire, *step[1:]))
        else:
            wire.call(*(dumped if arg == "@dump" else arg for arg in step))
    for conn in blocked:
        conn.read_reply()  # served by a step above
        conn.close()
    return blocked


def _propagated(handle, setup, steps) -> list[list[bytes]]:
    with Wire(handle.port) as wire:
        wire.call("FLUSHALL")
        dumped = None
        for step in setup:
            reply = wire.call(*step)
            if step[0] == "DUMP":
                dumped = reply.split(b"\r\n", 1)[1][:-2]
        with FakeReplica(handle.port) as replica:
            try:
                _run(wire, handle.port, steps, dumped)
                return replica.commands()
            finally:
                wire.call("CONFIG", "SET", "lazyfree-lazy-server-del", "no")


CASES = {
    # Redis's mpop propagates the count it popped, one included.
    "lmpop": ([("RPUSH", "l", "a", "b", "c", "d")],
              [("LMPOP", "1", "l", "LEFT"), ("BLMPOP", "0", "1", "l", "RIGHT"),
               ("LMPOP", "2", "x", "l", "LEFT", "COUNT", "5")]),
    # A pop goes as sent (its count as given), a blocking one as `LPOP key`.
    "pops": ([("RPUSH", "l", "a", "b", "c", "d", "e", "f")],
             [("lpop", "l"), ("RPOP", "l", "1"), ("rpop", "l", "2"), ("blpop", "x", "l", "0"),
              ("BRPOP", "l", "0"), ("LPOP", "l", "0"), ("LPOP", "l", "9")]),
    "blmpop served": ([], [("@block", "BLMPOP", "0", "2", "x", "l", "LEFT"), ("RPUSH", "l", "a", "b")]),
    "spop whole set": ([("SADD", "s", "a", "b", "c"), ("SADD", "t", "a"), ("SADD", "u", "a")],
                       [("SPOP", "s", "3"), ("SPOP", "t", "9"), ("SPOP", "u")]),
    "spop whole set lazily": ([("SADD", "s", "a", "b", "c")],
                              [("CONFIG", "SET", "lazyfree-lazy-server-del", "yes"), ("SPOP", "s", "3")]),
    "getset": ([], [("GETSET", "g", "1"), ("getset", "g", "2")]),
    "moves": ([("RPUSH", "b", "1", "2", "3", "4", "5")],
              [("BRPOPLPUSH", "b", "c", "0"), ("brpoplpush", "b", "c", "0"), ("rpoplpush", "b", "c"),
               ("LMOVE", "b", "c", "LEFT", "RIGHT"), ("lmove", "c", "b", "left", "Right"),
               ("blmove", "b", "c", "left", "RIGHT", "0")]),
    "moves served": ([], [("@block", "BRPOPLPUSH", "q", "d", "0"), ("RPUSH", "q", "x"),
                          ("@block", "blmove", "q", "d", "right", "Left", "0"), ("RPUSH", "q", "y")]),
    "restore expired": ([("SET", "k", "v"), ("DUMP", "k"), ("SET", "j", "v")],
                        [("CONFIG", "SET", "lazyfree-lazy-server-del", "yes"),
                         ("RESTORE", "k", "1", "@dump", "REPLACE", "ABSTTL"),
                         ("CONFIG", "SET", "lazyfree-lazy-server-del", "no"),
                         ("RESTORE", "j", "1", "@dump", "REPLACE", "ABSTTL")]),
    # MULTI has no db of its own: the SELECT of the first command follows it.
    "multi select": ([], [("SET", "p", "1"),
                          ("MULTI",), ("SELECT", "1"), ("SET", "a", "1"), ("SET", "b", "2"), ("EXEC",),
                          ("SELECT", "2"), ("MULTI",), ("SET", "a", "1"), ("SELECT", "3"), ("SET", "b", "2"),
                          ("EXEC",), ("SELECT", "0")]),
    "script select": ([], [("SET", "p", "1"), ("SELECT", "4"),
                           ("EVAL", "redis.call('set', 'a', '1'); redis.call('set', 'b', '1')", "0"),
                           ("SELECT", "0")]),
    # SET goes as sent unless it must be rewritten (a relative expiry or EXAT -> PXAT;
    # GET dropped when there is no expiry at all).
    "set spelling": ([("SET", "old", "v")],
                     [("set", "plain", "v"), ("SET", "x", "1", "pxat", FAR_MS),
                      ("set", "x", "1", "PxAt", FAR_MS), ("SET", "x", "1", "keepttl"),
                      ("set", "n", "1", "nx"), ("set", "old", "2", "get"), ("SET", "old", "3", "xx", "Get"),
                      ("SET", "old", "4", "GET", "pxat", FAR_MS), ("SET", "e", "1", "exat", "99999999999")]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_propagated_form_matches_redis(pair, case):
    ours, ref = pair
    setup, steps = CASES[case]
    assert _propagated(ours, setup, steps) == _propagated(ref, setup, steps)


DIRTY_CASES = {
    # A move is one change (lmoveGenericCommand), whatever wakes or serves it.
    "blmove": ([("RPUSH", "l", "a", "b")], [("BLMOVE", "l", "m", "LEFT", "RIGHT", "0")]),
    "brpoplpush": ([("RPUSH", "l", "a", "b")], [("BRPOPLPUSH", "l", "m", "0")]),
    "lmove": ([("RPUSH", "l", "a", "b")], [("LMOVE", "l", "m", "LEFT", "RIGHT")]),
    "blmove served": ([], [("@block", "BLMOVE", "bl", "dst", "LEFT", "LEFT", "0"), ("RPUSH", "bl", "a")]),
    "blpop served by a move": ([("RPUSH", "src", "a")],
                               [("@block", "BLPOP", "bl", "0"), ("LMOVE", "src", "bl", "LEFT", "LEFT")]),
    # A pop of several counts each element (listElementsRemoved, spopWithCountCommand).
    "lmpop count": ([("RPUSH", "l", "a", "b", "c")], [("LMPOP", "1", "l", "LEFT", "COUNT", "2")]),
    "lpop count": ([("RPUSH", "l", "a", "b", "c")], [("LPOP", "l", "5")]),
    "spop whole set": ([("SADD", "s", "a", "b", "c")], [("SPOP", "s", "5")]),
}


def _dirty_delta(handle, setup, steps) -> int:
    with Wire(handle.port) as wire:
        wire.call("FLUSHALL")
        for step in setup:
            wire.call(*step)
        before = _info_int(wire, "persistence", "rdb_changes_since_last_save")
        _run(wire, handle.port, steps)
        return _info_int(wire, "persistence", "rdb_changes_since_last_save") - before


@pytest.mark.parametrize("case", list(DIRTY_CASES))
def test_dirty_count_matches_redis(pair, case):
    ours, ref = pair
    setup, steps = DIRTY_CASES[case]
    assert _dirty_delta(ours, setup, steps) == _dirty_delta(ref, setup, steps)


def test_transactions_selecting_inside_replay_into_their_dbs():
    """MULTI now comes before the SELECT: a replica and an AOF reload still put each
    write in its db."""
    master = servers.start_rillet("--appendonly", "yes", "--appendfsync", "always")
    replica = servers.start_rillet("--replicaof", "127.0.0.1", str(master.port))
    try:
        support.wait_synced(master.client(), replica.client())
        with Wire(master.port) as wire:
            for step in [("SET", "p", "0"), ("MULTI",), ("SELECT", "1"), ("SET", "a", "1"), ("SELECT", "2"),
                         ("SET", "b", "2"), ("EXEC",), ("SELECT", "3"),
                         ("EVAL", "redis.call('set', 's', '1'); redis.call('set', 't', '1')", "0")]:
                wire.call(*step)
        support.wait_synced(master.client(), replica.client())
        expected = [[b"p"], [b"a"], [b"b"], [b"s", b"t"]]

        def keys(handle):
            return [sorted(handle.client(db=db).keys()) for db in range(4)]

        assert keys(replica) == expected
        master.stop()
        master = servers.start_rillet("--appendonly", "yes", dir=master.dir)
        assert keys(master) == expected
    finally:
        master.stop()
        replica.stop()
