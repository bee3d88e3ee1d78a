"""RILLET.XRETENTION and RILLET.XDEADLETTER on an in-process server with a manual clock.

Each trigger of dead-lettering (XREADGROUP history and CLAIM, XCLAIM, XAUTOCLAIM,
with and without JUSTID), retention on a busy stream (XADD) and an idle one (the
cron's cycle), the errors (nothing changes), and the effects: plain Redis commands
that, replayed on a server without the policies, end in the same state.
"""

from __future__ import annotations

import pytest

from rillet.commands.policies import RetentionCycle
from rillet.engine.stream_policy import trim_expired
from rillet.errors import ReplyError
from rillet.resp.types import Map
from tests.helpers.bodies import Server
from tests.helpers.replies import plain

T0 = 1_700_000_000_000


class Node:
    """A server, its effects, and a call that answers plain values (errors as strings)."""

    def __init__(self) -> None:
        self.server = Server()
        self.server.clock.set(T0)
        self.effects = self.server.effects

    @property
    def clock(self):
        return self.server.clock

    @property
    def state(self):
        return self.server.state

    def __call__(self, *args) -> object:
        argv = [a if isinstance(a, bytes) else str(a).encode() for a in args]
        reply = self.server.dispatcher.execute(self.server.client, argv)
        if isinstance(reply, ReplyError):
            return str(reply)
        reply = plain(reply)
        return dict(reply.items) if isinstance(reply, Map) else reply

    def take_effects(self) -> list[list[bytes]]:
        out = [argv for _, argv in self.effects if argv[0] not in (b"MULTI", b"EXEC")]
        self.effects.clear()
        return out


@pytest.fixture
def n() -> Node:
    return Node()


def _ids(reply) -> list[bytes]:
    return [entry[0] for _, entries in reply for entry in entries]


def _queue(n: Node, max_deliveries: int = 2, entries: int = 3) -> None:
    for i in range(entries):
        n("XADD", "q", f"{i + 1}-0", "job", i)
    n("XGROUP", "CREATE", "q", "g", "0")
    assert n("RILLET.XDEADLETTER", "q", "g", max_deliveries, "dead") == b"OK"
    n.take_effects()


def _dead(n: Node) -> list[dict]:
    return [dict(zip(fields[::2], fields[1::2], strict=True)) for _, fields in n("XRANGE", "dead", "-", "+")]


def _replayed(effects: list[list[bytes]], setup: list[list]) -> Node:
    """A server without policies that applied `setup` and then the effects."""
    other = Node()
    for argv in setup:
        other(*argv)
    for argv in effects:
        assert not isinstance(other(*argv), str), argv
    return other


def _group_state(n: Node) -> tuple:
    pending = n("XPENDING", "q", "g", "-", "+", 100)
    return (n("XRANGE", "q", "-", "+"), n("XRANGE", "dead", "-", "+"),
            [(p[0], p[1], p[3]) for p in pending])


# --- the commands -------------------------------------------------------------------------

def test_errors_change_nothing(n):
    n("SET", "str", "x")
    n("XADD", "s", "1-0", "f", "v")
    n("XGROUP", "CREATE", "s", "g", "0")
    n.take_effects()
    assert n("RILLET.XRETENTION", "missing", 10) == "ERR no such key"
    assert n("RILLET.XRETENTION", "str", 10).startswith("WRONGTYPE")
    for bad in ("-1", "abc", "1.5"):
        assert n("RILLET.XRETENTION", "s", bad) == "ERR milliseconds must be a non-negative integer"
    assert n("RILLET.XDEADLETTER", "s", "nog", 3, "d") == \
        "NOGROUP No such consumer group 'nog' for key name 's'"
    for bad in ("0", "-2", "x"):
        assert n("RILLET.XDEADLETTER", "s", "g", bad, "d") == "ERR max-deliveries must be a positive integer"
    assert n("RILLET.XDEADLETTER", "s", "g", 3, "s") == \
        "ERR the dead-letter key must differ from the stream's key"
    assert n("RILLET.XDEADLETTER", "s", "g", 3, "str").startswith("WRONGTYPE")
    assert n("RILLET.XDEADLETTER", "s", "g", "ON") == "ERR syntax error"
    assert n("RILLET.XDEADLETTER", "s", "g", 3, "d", "x") == "ERR syntax error"
    assert n.take_effects() == []
    assert b"retention-ms" not in n("XINFO", "STREAM", "s")
    assert b"max-deliveries" not in dict(n("XINFO", "GROUPS", "s")[0].items)


def test_info_fields_and_off(n):
    n("XADD", "s", "1-0", "f", "v")
    n("XGROUP", "CREATE", "s", "g", "0")
    n.take_effects()
    assert n("RILLET.XRETENTION", "s", 7 * 86_400_000) == b"OK"
    assert n("RILLET.XDEADLETTER", "s", "g", 5, "s:dead") == b"OK"
    assert n.take_effects() == [[b"RILLET.XRETENTION", b"s", b"604800000"],
                                [b"RILLET.XDEADLETTER", b"s", b"g", b"5", b"s:dead"]]
    assert n("XINFO", "STREAM", "s")[b"retention-ms"] == 604_800_000
    group = dict(n("XINFO", "GROUPS", "s")[0].items)
    assert group[b"max-deliveries"] == 5 and group[b"dead-letter-key"] == b"s:dead"
    assert n("RILLET.XRETENTION", "s", 0) == b"OK"
    assert n("RILLET.XDEADLETTER", "s", "g", "off") == b"OK"
    assert b"retention-ms" not in n("XINFO", "STREAM", "s")
    assert b"max-deliveries" not in dict(n("XINFO", "GROUPS", "s")[0].items)


def test_policies_travel_with_the_value(n):
    n("XADD", "s", "1-0", "f", "v")
    n("XGROUP", "CREATE", "s", "g", "0")
    n("RILLET.XRETENTION", "s", 1000)
    n("RILLET.XDEADLETTER", "s", "g", 2, "d")
    n("RENAME", "s", "t")
    n("COPY", "t", "u")
    payload = n("DUMP", "u")
    n("RESTORE", "v", 0, payload)
    for key in ("t", "u", "v"):
        assert n("XINFO", "STREAM", key)[b"retention-ms"] == 1000, key
        assert dict(n("XINFO", "GROUPS", key)[0].items)[b"dead-letter-key"] == b"d", key


# --- retention ------------------------------------------------------------------------------

def test_busy_stream_trims_on_xadd_as_xtrim_minid(n):
    n("CONFIG", "SET", "stream-node-max-entries", "1")  # XADD trims whole nodes only
    for ms in range(5):
        n("XADD", "s", f"{T0 - 5000 + ms * 1000}-0", "n", ms)  # 5 s .. 1 s old
    n("RILLET.XRETENTION", "s", 2500)
    n.take_effects()
    added = n("XADD", "s", "*", "n", "new")  # compiled: its C check finds an aged node
    assert [e[0] for e in n("XRANGE", "s", "-", "+")] == [b"%d-0" % (T0 - 2000), b"%d-0" % (T0 - 1000), added]
    assert n.take_effects() == [[b"XADD", b"s", added, b"n", b"new"],
                                [b"XTRIM", b"s", b"MINID", b"=", b"%d-0" % (T0 - 2000)]]
    n.clock.advance(499)  # the oldest is 2499 ms old: it stays
    n("XADD", "s", "*", "n", "x")
    assert n("XLEN", "s") == 4
    n.clock.advance(1)  # 2500 ms: it goes
    n("XADD", "s", "*", "n", "y")
    assert n("XLEN", "s") == 4
    assert n.state.stats.stream_retention_trimmed == 4


@pytest.mark.parametrize("form", [["*"], ["MAXLEN", "100", "*"], ["{id}"]])
def test_every_xadd_form_trims_after_its_own_effect(n, form):
    n("CONFIG", "SET", "stream-node-max-entries", "1")
    n("XADD", "s", f"{T0 - 5000}-0", "n", 0)
    n("XADD", "s", f"{T0 - 1000}-0", "n", 1)
    n("RILLET.XRETENTION", "s", 2500)
    n.take_effects()
    added = n("XADD", "s", *[a.format(id=f"{T0}-0") for a in form], "n", "new")
    effects = n.take_effects()
    assert effects[0][:2] == [b"XADD", b"s"] and effects[0][-3:] == [added, b"n", b"new"]
    assert effects[1:] == [[b"XTRIM", b"s", b"MINID", b"=", b"%d-0" % (T0 - 1000)]]
    assert n("XLEN", "s") == 2


def test_xadd_to_a_stream_with_retention_is_one_access(n):
    # LFU with log factor 0 counts every access: one XADD is one, policy or not.
    n("CONFIG", "SET", "maxmemory-policy", "allkeys-lfu")
    n("CONFIG", "SET", "lfu-log-factor", "0")
    for key in ("plain", "kept"):
        n("XADD", key, "*", "f", "v")
    n("RILLET.XRETENTION", "kept", 3_600_000)
    before = {key: n("OBJECT", "FREQ", key) for key in ("plain", "kept")}
    for key in ("plain", "kept"):
        n("XADD", key, "*", "f", "v")
    assert {key: n("OBJECT", "FREQ", key) - before[key] for key in before} == {"plain": 1, "kept": 1}


def test_xadd_leaves_a_partly_aged_node_to_the_cycle(n):
    for ms in range(4):
        n("XADD", "s", f"{T0 - 4000 + ms * 1000}-0", "n", ms)  # one node: 4 s .. 1 s old
    n("RILLET.XRETENTION", "s", 2500)
    n("XADD", "s", "*", "n", "new")
    assert n("XLEN", "s") == 5  # its newest entries are young: the node stays for now
    assert RetentionCycle().run(n.state, n.state.keyspace.dbs[0]) == 2
    assert n("XRANGE", "s", "-", "+")[0][0] == b"%d-0" % (T0 - 2000)


def test_idle_stream_trimmed_by_the_cycle(n):
    for ms in range(10):
        n("XADD", "s", "*", "n", ms)
        n.clock.advance(100)
    n("RILLET.XRETENTION", "s", 500)
    n("XADD", "other", "*", "f", "v")  # no policy: untouched
    n.take_effects()
    cycle = RetentionCycle()
    db = n.state.keyspace.dbs[0]
    assert cycle.run(n.state, db) + cycle.run(n.state, db) == 6  # ages 1000..500 ms go
    assert n("XLEN", "s") == 4 and n("XLEN", "other") == 1
    assert n.take_effects() == [[b"XTRIM", b"s", b"MINID", b"=", b"%d-0" % (T0 + 600)]]
    n.clock.advance(10_000)
    assert cycle.run(n.state, db) + cycle.run(n.state, db) == 4
    assert n("XLEN", "s") == 0 and n("EXISTS", "s") == 1  # an empty stream stays, as XTRIM leaves it


def test_cycle_work_is_bounded():
    n = Node()
    n("CONFIG", "SET", "stream-node-max-entries", "10")
    pipe_ids = [f"{T0 - 100_000 + i}-0" for i in range(2000)]
    for sid in pipe_ids:
        n("XADD", "s", sid, "f", "v")
    n("RILLET.XRETENTION", "s", 1)
    stream = n.state.keyspace.dbs[0].get(b"s")
    removed, minid = trim_expired(stream, T0, 500)
    assert 500 <= removed <= 510  # whole nodes up to the budget, then the straddling node
    assert minid == stream.first_entry()[0]
    cycle = RetentionCycle()
    cycle.ENTRIES = 700
    db = n.state.keyspace.dbs[0]
    assert cycle.run(n.state, db) <= 710
    while cycle.run(n.state, db):
        pass
    assert n("XLEN", "s") == 0


def test_cycle_looks_at_a_bounded_number_of_streams_per_tick(n):
    # STREAMS keys at most per tick, going on from where the previous tick stopped.
    count = RetentionCycle.STREAMS + 50
    for i in range(count):
        n("XADD", f"s{i}", f"{T0 - 10_000}-0", "f", "v")
        n("RILLET.XRETENTION", f"s{i}", 1000)
    cycle = RetentionCycle()
    db = n.state.keyspace.dbs[0]
    assert cycle.run(n.state, db) == RetentionCycle.STREAMS
    assert cycle.run(n.state, db) == 50
    assert sum(n("XLEN", f"s{i}") for i in range(count)) == 0


def test_replica_and_loading_do_not_trim(n):
    n("XADD", "s", f"{T0 - 10_000}-0", "f", "v")
    n("RILLET.XRETENTION", "s", 1000)
    db = n.state.keyspace.dbs[0]
    db.expire_mode = 2  # as a replica applying its master's stream
    n("XADD", "s", f"{T0}-0", "f", "v")
    assert RetentionCycle().run(n.state, db) == 0
    assert n("XLEN", "s") == 2


def test_retention_effects_replay_to_the_same_stream(n):
    setup = [["XADD", "s", f"{T0 - 9000}-0", "f", "v"], ["XADD", "s", f"{T0 - 8000}-0", "f", "v"]]
    for argv in setup:
        n(*argv)
    n.take_effects()
    n("RILLET.XRETENTION", "s", 5000)
    for _ in range(3):
        n("XADD", "s", "*", "f", "w")
        n.clock.advance(3000)
    RetentionCycle().run(n.state, n.state.keyspace.dbs[0])
    effects = [e for e in n.take_effects() if not e[0].startswith(b"RILLET.")]
    other = _replayed(effects, setup)
    assert other("XRANGE", "s", "-", "+") == n("XRANGE", "s", "-", "+")
    info = ("length", "last-generated-id", "max-deleted-entry-id", "entries-added",
            "recorded-first-entry-id")
    assert [other("XINFO", "STREAM", "s")[k.encode()] for k in info] == \
        [n("XINFO", "STREAM", "s")[k.encode()] for k in info]


# --- dead letters ---------------------------------------------------------------------------

SETUP = [["XADD", "q", f"{i + 1}-0", "job", i] for i in range(3)] + [["XGROUP", "CREATE", "q", "g", "0"]]


def _check_replay(n: Node, effects: list) -> None:
    assert _group_state(_replayed(effects, SETUP)) == _group_state(n)


def test_xreadgroup_history_dead_letters_past_the_limit(n):
    _queue(n, max_deliveries=2)
    effects = []
    assert _ids(n("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "q", ">")) == [b"1-0", b"2-0", b"3-0"]
    n("XACK", "q", "g", "3-0")
    assert _ids(n("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "q", "0")) == [b"1-0", b"2-0"]
    effects += n.take_effects()
    assert _ids(n("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "q", "0")) == []  # 3rd delivery
    out = n.take_effects()
    effects += out
    assert [e[0] for e in out] == [b"XADD", b"XACK", b"XADD", b"XACK"]
    assert out[1] == [b"XACK", b"q", b"g", b"1-0"] and out[0][1] == b"dead"
    dead = _dead(n)
    assert dead[0] == {b"job": b"0", b"rillet-stream": b"q", b"rillet-id": b"1-0",
                       b"rillet-group": b"g", b"rillet-consumer": b"alice",
                       b"rillet-deliveries": b"2"}
    assert n("XPENDING", "q", "g")[0] == 0
    assert n.state.stats.stream_deadlettered == 2
    assert b"stream_deadlettered:2\r\n" in bytes(n.server.run([b"INFO", b"stats"]))
    _check_replay(n, effects)


def test_xreadgroup_claim_dead_letters_and_fills_count_with_new(n):
    _queue(n, max_deliveries=1)
    n("XREADGROUP", "GROUP", "g", "alice", "COUNT", 2, "STREAMS", "q", ">")
    n.clock.advance(100)
    reply = n("XREADGROUP", "GROUP", "g", "bob", "COUNT", 2, "CLAIM", 50, "STREAMS", "q", ">")
    assert _ids(reply) == [b"3-0"]  # 1-0 and 2-0 were delivered once: dead, not claimed
    assert [d[b"rillet-id"] for d in _dead(n)] == [b"1-0", b"2-0"]
    assert {d[b"rillet-consumer"] for d in _dead(n)} == {b"alice"}
    _check_replay(n, n.take_effects())


@pytest.mark.parametrize("justid", [False, True])
def test_xclaim_dead_letters_and_leaves_it_out(n, justid):
    _queue(n, max_deliveries=2)
    n("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "q", ">")
    extra = ["JUSTID"] if justid else []
    n("XCLAIM", "q", "g", "bob", 0, "1-0", "2-0")  # 2nd delivery of both
    n("XCLAIM", "q", "g", "carol", 0, "1-0", "2-0", "3-0", *extra)  # 3rd for 1 and 2
    reply = n("XCLAIM", "q", "g", "dave", 0, "1-0", "2-0", "3-0", *extra)
    got = reply if justid else [entry[0] for entry in reply]
    # 3-0: alice's read, then carol's claim, which counts only without JUSTID
    assert got == ([b"3-0"] if justid else [])
    assert [d[b"rillet-id"] for d in _dead(n)][:2] == [b"1-0", b"2-0"]
    _check_replay(n, n.take_effects())


def test_xclaim_of_an_id_named_twice_dead_letters_it_once(n):
    _queue(n, max_deliveries=1)
    n("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "q", ">")
    assert n("XCLAIM", "q", "g", "bob", 0, "1-0", "1-0") == []
    assert n("XLEN", "dead") == 1
    _check_replay(n, n.take_effects())


def test_xclaim_counts_exactly(n):
    _queue(n, max_deliveries=3, entries=1)
    n("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "q", ">")  # 1
    assert len(n("XCLAIM", "q", "g", "bob", 0, "1-0")) == 1  # 2
    assert n("XCLAIM", "q", "g", "bob", 0, "1-0", "JUSTID") == [b"1-0"]  # not counted: still 2
    assert len(n("XCLAIM", "q", "g", "carol", 0, "1-0")) == 1  # 3
    assert n("XCLAIM", "q", "g", "dave", 0, "1-0", "JUSTID") == []  # past 3: dead
    assert _dead(n)[0][b"rillet-deliveries"] == b"3"
    assert _dead(n)[0][b"rillet-consumer"] == b"carol"


def test_xclaim_lastid_still_propagates_when_every_claim_is_dead_lettered(n):
    _queue(n, max_deliveries=1)
    n("XREADGROUP", "GROUP", "g", "alice", "COUNT", 1, "STREAMS", "q", ">")
    n.take_effects()
    assert n("XCLAIM", "q", "g", "bob", 0, "1-0", "LASTID", "3-0") == []
    effects = n.take_effects()
    assert [e[:2] for e in effects] == [[b"XGROUP", b"CREATECONSUMER"], [b"XADD", b"dead"],
                                        [b"XACK", b"q"], [b"XGROUP", b"SETID"]]
    assert n("XINFO", "GROUPS", "q")[0].items[3] == (b"last-delivered-id", b"3-0")
    _check_replay(n, [[b"XREADGROUP", b"GROUP", b"g", b"alice", b"COUNT", b"1", b"STREAMS", b"q", b">"],
                      *effects])


@pytest.mark.parametrize("justid", [False, True])
def test_xautoclaim_dead_letters_and_leaves_it_out(n, justid):
    _queue(n, max_deliveries=1)
    n("XREADGROUP", "GROUP", "g", "alice", "COUNT", 2, "STREAMS", "q", ">")
    n.clock.advance(10)
    extra = ["JUSTID"] if justid else []
    reply = n("XAUTOCLAIM", "q", "g", "bob", 5, "0", *extra)
    assert reply[0] == b"0-0" and reply[1] == [] and reply[2] == []
    assert [d[b"rillet-id"] for d in _dead(n)] == [b"1-0", b"2-0"]
    n("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "q", ">")
    assert n("XAUTOCLAIM", "q", "g", "bob", 0, "0", "JUSTID")[1] == []  # JUSTID is a delivery too
    assert [d[b"rillet-id"] for d in _dead(n)] == [b"1-0", b"2-0", b"3-0"]
    _check_replay(n, n.take_effects())


def test_dead_letter_target_of_wrong_type_refuses_before_any_change(n):
    _queue(n, max_deliveries=1)
    n("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "q", ">")
    n("SET", "dead", "x")
    n.take_effects()
    assert n("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "q", "0").startswith("WRONGTYPE")
    assert n("XCLAIM", "q", "g", "bob", 0, "1-0").startswith("WRONGTYPE")
    assert n("XAUTOCLAIM", "q", "g", "bob", 0, "0").startswith("WRONGTYPE")
    assert n.take_effects() == []
    assert n("XPENDING", "q", "g")[0] == 3


def test_new_deliveries_never_dead_letter(n):
    _queue(n, max_deliveries=1)
    n("XGROUP", "SETID", "q", "g", "0")
    for _ in range(3):  # '>' restarts an entry's count at 1
        n("XGROUP", "SETID", "q", "g", "0")
        assert len(_ids(n("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "q", ">"))) == 3
    assert n("EXISTS", "dead") == 0


def test_aof_rewrite_commands_and_snapshot_rebuild_the_policies(n):
    """The AOF rewrite's commands (without an RDB preamble) and the snapshot's AUX field."""
    from rillet.persistence import rdb
    from rillet.persistence.rewrite import keyspace_commands

    for argv in SETUP:
        n(*argv)
    n("XGROUP", "CREATE", "q", "other", "0")
    n("RILLET.XRETENTION", "q", 86_400_000)
    n("RILLET.XDEADLETTER", "q", "g", 4, "dead")
    rebuilt = Node()
    for _, argv in keyspace_commands(n.state):
        assert not isinstance(rebuilt(*argv), str), argv
    loaded = Node()
    chunks: list[bytes] = []
    rdb.write_keyspace(rdb.RDBWriter(chunks.append), n.state)
    rdb.load_keyspace(loaded.state, b"".join(chunks))
    for other in (rebuilt, loaded):
        assert other("XINFO", "STREAM", "q")[b"retention-ms"] == 86_400_000
        groups = {dict(g.items)[b"name"]: dict(g.items) for g in other("XINFO", "GROUPS", "q")}
        assert groups[b"g"][b"max-deliveries"] == 4 and groups[b"g"][b"dead-letter-key"] == b"dead"
        assert b"max-deliveries" not in groups[b"other"]
