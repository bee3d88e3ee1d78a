"""Consumer-group commands through the dispatcher, with a ManualClock.

Covers what a live server cannot pin down: idle times, claims at exact
instants, and the exact effects each command hands to AOF/replicas (checked
against what Redis 8.2.3 writes to its AOF for the same sequence), plus a
replay test: applying the effects to an empty replica reproduces the groups.
"""

from __future__ import annotations

import pytest

import rillet.commands  # noqa: F401  (registers the commands)
from rillet.clock import ManualClock
from rillet.commands import groups as group_commands
from rillet.commands.stream_common import get_stream, new_stream
from rillet.engine.ids import StreamID
from rillet.errors import ReplyError
from rillet.resp.types import NULL_ARRAY, Map
from rillet.server.server import Server
from rillet.state import KEEP_WAITING, Block, effect_argv
from tests.helpers.replies import plain

T0 = 1_700_000_000_000


class Env:
    """One server with a ManualClock, a client and an effect sink."""

    def __init__(self) -> None:
        self.clock = ManualClock(T0)
        self.server = Server(clock=self.clock)
        self.state = self.server.state
        self.client = self.state.new_client(None)
        self.effects: list[list[bytes]] = []
        self.state.effect_sinks.append(self._sink)

    def _sink(self, effects) -> None:
        argvs = [effect_argv(argv) for _, argv in effects]
        if len(argvs) > 1:
            # A command with several effects is published as one MULTI/EXEC block.
            assert argvs[0] == [b"MULTI"] and argvs[-1] == [b"EXEC"], argvs
            argvs = argvs[1:-1]
        self.effects.extend(argvs)

    def __call__(self, *args, client=None):
        argv = [a if isinstance(a, bytes) else str(a).encode() for a in args]
        reply = plain(self.server.dispatcher.execute(client or self.client, argv))
        if isinstance(reply, ReplyError):
            raise reply
        return reply

    def take(self) -> list[list[bytes]]:
        out, self.effects = self.effects, []
        return out

    def add(self, key: bytes, ms: int, *fields: bytes) -> None:
        """Append entry ms-0 with the engine (independent of XADD's module)."""
        stream = get_stream(self.client, key) or new_stream(self.client, key)
        stream.append(StreamID(ms, 0), list(fields) or [b"f", b"v"])
        self.client.modified(key)

    def stream(self, key: bytes = b"s"):
        return get_stream(self.client, key)


@pytest.fixture
def env() -> Env:
    return Env()


def B(*items) -> list[bytes]:
    return [i if isinstance(i, bytes) else str(i).encode() for i in items]


def xclaim_effect(consumer, sid, time_ms, count, last, key=b"s", group=b"g"):
    return B("XCLAIM", key, group, consumer, 0, sid, "TIME", time_ms, "RETRYCOUNT", count,
             "FORCE", "JUSTID", "LASTID", last)


def setup_stream(env: Env, n: int = 3, group: bytes = b"g", start: bytes = b"0") -> None:
    for ms in range(1, n + 1):
        env.add(b"s", ms)
    env("XGROUP", "CREATE", "s", group, start)
    env.take()


# --- XREADGROUP effects --------------------------------------------------------------

def test_xreadgroup_new_entries_propagate_as_xclaim_and_setid(env):
    # The shape Redis 8.2.3 writes to its AOF (LASTID = the entry just delivered).
    setup_stream(env)
    reply = env("XREADGROUP", "GROUP", "g", "alice", "COUNT", 2, "STREAMS", "s", ">")
    assert reply == [[b"s", [[b"1-0", [b"f", b"v"]], [b"2-0", [b"f", b"v"]]]]]
    assert env.take() == [
        B("XGROUP", "CREATECONSUMER", "s", "g", "alice"),
        xclaim_effect(b"alice", b"1-0", T0, 1, b"1-0"),
        xclaim_effect(b"alice", b"2-0", T0, 1, b"2-0"),
        B("XGROUP", "SETID", "s", "g", "2-0", "ENTRIESREAD", 2),
    ]
    env.clock.advance(5)
    env("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">")
    assert env.take() == [
        xclaim_effect(b"alice", b"3-0", T0 + 5, 1, b"3-0"),
        B("XGROUP", "SETID", "s", "g", "3-0", "ENTRIESREAD", 3),
    ]


def test_xreadgroup_noack_propagates_consumer_and_setid_only(env):
    setup_stream(env)
    env("XREADGROUP", "GROUP", "g", "dave", "NOACK", "STREAMS", "s", ">")
    assert env.take() == [
        B("XGROUP", "CREATECONSUMER", "s", "g", "dave"),
        B("XGROUP", "SETID", "s", "g", "3-0", "ENTRIESREAD", 3),
    ]
    assert env("XPENDING", "s", "g") == [0, None, None, NULL_ARRAY]


def test_xreadgroup_nothing_new_is_null_and_propagates_only_consumer(env):
    setup_stream(env, start=b"$")
    assert env("XREADGROUP", "GROUP", "g", "carol", "STREAMS", "s", ">") is NULL_ARRAY
    assert env.take() == [B("XGROUP", "CREATECONSUMER", "s", "g", "carol")]
    assert env("XREADGROUP", "GROUP", "g", "carol", "STREAMS", "s", ">") is NULL_ARRAY
    assert env.take() == []


def test_xreadgroup_history_bumps_counts_and_shows_deleted_as_nil(env):
    setup_stream(env)
    env("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">")
    env.take()
    env.clock.advance(100)
    env.stream().delete(StreamID(2, 0))
    reply = env("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "0")
    assert reply == [[b"s", [[b"1-0", [b"f", b"v"]], [b"2-0", NULL_ARRAY], [b"3-0", [b"f", b"v"]]]]]
    # Redis does not propagate history reads; we do, so replicas keep the counts.
    assert env.take() == [
        xclaim_effect(b"alice", b"1-0", T0 + 100, 2, b"3-0"),
        xclaim_effect(b"alice", b"3-0", T0 + 100, 2, b"3-0"),
    ]
    pending = env("XPENDING", "s", "g", "-", "+", 10)
    assert pending == [[b"1-0", b"alice", 0, 2], [b"2-0", b"alice", 100, 1],
                       [b"3-0", b"alice", 0, 2]]
    # COUNT and an exclusive lower bound; another consumer sees an empty history.
    assert env("XREADGROUP", "GROUP", "g", "alice", "COUNT", 1, "STREAMS", "s", "1") == [
        [b"s", [[b"2-0", NULL_ARRAY]]]
    ]
    assert env("XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", "0") == [[b"s", []]]


def test_xreadgroup_resp3_is_a_map(env):
    setup_stream(env, n=1)
    env("HELLO", 3)
    reply = env("XREADGROUP", "GROUP", "g", "a", "STREAMS", "s", ">")
    assert isinstance(reply, Map) and reply.items == [(b"s", [[b"1-0", [b"f", b"v"]]])]


def test_xreadgroup_multiple_streams_serves_only_those_with_data(env):
    setup_stream(env, n=2)
    env.add(b"t", 1)
    env("XGROUP", "CREATE", "t", "g", "$")
    reply = env("XREADGROUP", "GROUP", "g", "a", "STREAMS", "s", "t", ">", ">")
    assert [key for key, _ in reply] == [b"s"]


def test_xreadgroup_max_id_means_new_entries(env):
    # Redis encodes '>' as the maximum ID, so that ID reads new entries too.
    setup_stream(env, n=1)
    reply = env("XREADGROUP", "GROUP", "g", "a", "STREAMS", "s",
                "18446744073709551615-18446744073709551615")
    assert reply == [[b"s", [[b"1-0", [b"f", b"v"]]]]]


# --- XREADGROUP CLAIM (8.4) -------------------------------------------------------

def test_xreadgroup_claim_idle_first_then_new_with_count_across_both(env):
    setup_stream(env, n=5)
    env("XREADGROUP", "GROUP", "g", "alice", "COUNT", 1, "STREAMS", "s", ">")  # 1 at T0
    env.clock.advance(10)
    env("XREADGROUP", "GROUP", "g", "alice", "COUNT", 1, "STREAMS", "s", ">")  # 2 at T0+10
    env.clock.advance(100)
    env.take()
    reply = env("XREADGROUP", "GROUP", "g", "bob", "COUNT", 3, "CLAIM", 100, "NOACK",
                "STREAMS", "s", ">")
    # 1 is idle 110 ms, 2 only 100: both claimable (>=), longest idle first;
    # then one new entry with idle and count 0. NOACK applies to new entries only.
    assert reply == [[b"s", [
        [b"1-0", [b"f", b"v"], 110, 1],
        [b"2-0", [b"f", b"v"], 100, 1],
        [b"3-0", [b"f", b"v"], 0, 0],
    ]]]
    now = T0 + 110
    assert env.take() == [
        B("XGROUP", "CREATECONSUMER", "s", "g", "bob"),
        xclaim_effect(b"bob", b"1-0", now, 2, b"2-0"),
        xclaim_effect(b"bob", b"2-0", now, 2, b"2-0"),
        B("XGROUP", "SETID", "s", "g", "3-0", "ENTRIESREAD", 3),
    ]
    assert env("XPENDING", "s", "g", "-", "+", 10) == [
        [b"1-0", b"bob", 0, 2], [b"2-0", b"bob", 0, 2]]
    # Nothing idle enough: only new entries, still in the 4-element shape.
    reply = env("XREADGROUP", "GROUP", "g", "bob", "CLAIM", 50, "STREAMS", "s", ">")
    assert reply == [[b"s", [[b"4-0", [b"f", b"v"], 0, 0], [b"5-0", [b"f", b"v"], 0, 0]]]]


def test_xreadgroup_claim_with_count_filled_by_claims(env):
    setup_stream(env, n=3)
    env("XREADGROUP", "GROUP", "g", "alice", "COUNT", 2, "STREAMS", "s", ">")
    env.clock.advance(1000)
    reply = env("XREADGROUP", "GROUP", "g", "bob", "COUNT", 1, "CLAIM", 10, "STREAMS", "s", ">")
    assert reply == [[b"s", [[b"1-0", [b"f", b"v"], 1000, 1]]]]
    # Claimable entries alone are served even when nothing new arrived.
    env.clock.advance(20)
    reply = env("XREADGROUP", "GROUP", "g", "carol", "COUNT", 5, "CLAIM", 10, "STREAMS", "s", ">")
    assert [e[0] for e in reply[0][1]] == [b"2-0", b"1-0", b"3-0"]


def test_xreadgroup_claim_ignored_for_history(env):
    setup_stream(env, n=2)
    env("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">")
    env.clock.advance(1000)
    reply = env("XREADGROUP", "GROUP", "g", "alice", "CLAIM", 10, "STREAMS", "s", "0")
    assert reply == [[b"s", [[b"1-0", [b"f", b"v"]], [b"2-0", [b"f", b"v"]]]]]


def test_xreadgroup_claim_errors(env):
    setup_stream(env, n=1)
    with pytest.raises(ReplyError, match="min-idle-time is not an integer or out of range"):
        env("XREADGROUP", "GROUP", "g", "a", "CLAIM", "x", "STREAMS", "s", ">")
    with pytest.raises(ReplyError, match="min-idle-time must be a positive integer"):
        env("XREADGROUP", "GROUP", "g", "a", "CLAIM", -1, "STREAMS", "s", ">")


def test_xreadgroup_claim_drops_deleted_pending_entries_and_propagates_it(env):
    setup_stream(env, n=3)
    env("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">")
    env.clock.advance(1000)
    env.stream().delete(StreamID(1, 0))
    env.take()
    reply = env("XREADGROUP", "GROUP", "g", "bob", "CLAIM", 10, "STREAMS", "s", ">")
    assert [e[0] for e in reply[0][1]] == [b"2-0", b"3-0"]
    effects = env.take()
    assert xclaim_effect(b"alice", b"1-0", T0, 1, b"3-0") in effects
    assert env("XPENDING", "s", "g")[0] == 2


# --- blocking at command level -----------------------------------------------------

def test_xreadgroup_block_returns_block_request_and_retry_semantics(env):
    setup_stream(env, n=1, start=b"$")
    reply = env("XREADGROUP", "GROUP", "g", "a", "BLOCK", 0, "STREAMS", "s", "s", ">", ">")
    assert isinstance(reply, Block)
    assert reply.keys == [b"s"] and reply.timeout_ms == 0 and reply.timeout_reply is NULL_ARRAY
    c = env.client
    c.blocked_retry = True
    try:
        assert env(*reply.argv) is KEEP_WAITING
        env.add(b"s", 2)
        assert env(*reply.argv)[0][1][0][0] == b"2-0"
        env("XGROUP", "DESTROY", "s", "g")
        with pytest.raises(ReplyError, match="^NOGROUP No such key 's' or consumer group 'g' in "
                                             "XREADGROUP with GROUP option$"):
            env(*reply.argv)
    finally:
        c.blocked_retry = False


def test_xreadgroup_block_inside_multi_acts_as_timeout(env):
    setup_stream(env, n=1, start=b"$")
    env("MULTI")
    env("XREADGROUP", "GROUP", "g", "a", "BLOCK", 0, "STREAMS", "s", ">")
    assert env("EXEC") == [NULL_ARRAY]


def test_block_timeout_errors(env):
    setup_stream(env, n=1)
    with pytest.raises(ReplyError, match="^ERR timeout is not an integer or out of range$"):
        env("XREADGROUP", "GROUP", "g", "a", "BLOCK", "1.5", "STREAMS", "s", ">")
    with pytest.raises(ReplyError, match="^ERR timeout is negative$"):
        env("XREADGROUP", "GROUP", "g", "a", "BLOCK", -1, "STREAMS", "s", ">")
    with pytest.raises(ReplyError, match="^ERR timeout is out of range$"):
        env("XREADGROUP", "GROUP", "g", "a", "BLOCK", 2**63 - 1, "STREAMS", "s", ">")


def test_claim_block_wakes_when_an_entry_becomes_claimable(env):
    setup_stream(env, n=1)
    env("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">")  # delivered at T0
    other = env.state.new_client(None)
    env.clock.advance(10)
    reply = env("XREADGROUP", "GROUP", "g", "bob", "CLAIM", 100, "BLOCK", 0, "STREAMS", "s", ">",
                client=other)
    assert isinstance(reply, Block)
    env.state.block(other, reply)
    delivered = []
    env.server._deliver = lambda client, entry, r: delivered.append(r)
    env.clock.advance(50)
    env.state.fire_due_wakeups()
    assert not env.state.ready_keys
    env.clock.advance(40)  # T0 + 100: idle == min-idle-time
    env.state.fire_due_wakeups()
    env.server.serve_ready()
    assert delivered == [[[b"s", [[b"1-0", [b"f", b"v"], 100, 1]]]]]


# --- XCLAIM ------------------------------------------------------------------------

def test_xclaim_options_and_effects(env):
    setup_stream(env, n=3)
    env("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">")
    env.clock.advance(1000)
    env.take()
    # min-idle not reached: nothing claimed, consumer still created.
    assert env("XCLAIM", "s", "g", "bob", 5000, "1-0") == []
    assert env.take() == [B("XGROUP", "CREATECONSUMER", "s", "g", "bob")]
    # IDLE sets the delivery time in the past; JUSTID keeps the counter.
    assert env("XCLAIM", "s", "g", "bob", 500, "1-0", "IDLE", 300, "JUSTID") == [b"1-0"]
    assert env.take() == [xclaim_effect(b"bob", b"1-0", T0 + 700, 1, b"3-0")]
    # TIME and RETRYCOUNT.
    assert env("XCLAIM", "s", "g", "bob", 0, "2-0", "TIME", T0 + 5, "RETRYCOUNT", 9) == [
        [b"2-0", [b"f", b"v"]]]
    assert env.take() == [xclaim_effect(b"bob", b"2-0", T0 + 5, 9, b"3-0")]
    assert env("XPENDING", "s", "g", "-", "+", 10) == [
        [b"1-0", b"bob", 300, 1], [b"2-0", b"bob", 995, 9], [b"3-0", b"alice", 1000, 1]]
    # A bogus time (future or negative) becomes now.
    env("XCLAIM", "s", "g", "bob", 0, "3-0", "TIME", T0 + 10**9, "JUSTID")
    assert env("XPENDING", "s", "g", "3-0", "3-0", 1) == [[b"3-0", b"bob", 0, 1]]


def test_xclaim_lastid_only_raises_and_is_propagated(env):
    # fakeredis gets this wrong: LASTID moves last-delivered-id forward only,
    # leaves entries-read alone, and with no claim is propagated as XGROUP SETID.
    setup_stream(env, n=3)
    env("XREADGROUP", "GROUP", "g", "alice", "COUNT", 1, "STREAMS", "s", ">")
    env.take()
    assert env("XCLAIM", "s", "g", "alice", 0, "9-0", "LASTID", "2-0") == []
    assert env.take() == [B("XGROUP", "SETID", "s", "g", "2-0", "ENTRIESREAD", 1)]
    info = env("XINFO", "GROUPS", "s")[0].items
    assert dict(info)[b"last-delivered-id"] == b"2-0" and dict(info)[b"entries-read"] == 1
    env("XCLAIM", "s", "g", "alice", 0, "1-0", "LASTID", "1-5", "JUSTID")
    assert dict(env("XINFO", "GROUPS", "s")[0].items)[b"last-delivered-id"] == b"2-0"
    assert env.take() == [xclaim_effect(b"alice", b"1-0", T0, 1, b"2-0")]
    # The next '>' read continues after the LASTID.
    assert env("XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", ">")[0][1][0][0] == b"3-0"


def test_xclaim_force_and_deleted_ids(env):
    setup_stream(env, n=3)
    env("XREADGROUP", "GROUP", "g", "alice", "COUNT", 2, "STREAMS", "s", ">")
    env.clock.advance(50)
    env.stream().delete(StreamID(2, 0))
    env.take()
    # 2-0 is gone: removed from the PEL, its removal propagated with the old
    # owner and time (as Redis 8.2.3's AOF shows); 3-0 is created by FORCE.
    reply = env("XCLAIM", "s", "g", "bob", 0, "2-0", "3-0", "9-0", "FORCE")
    assert reply == [[b"3-0", [b"f", b"v"]]]
    assert env.take() == [
        B("XGROUP", "CREATECONSUMER", "s", "g", "bob"),
        xclaim_effect(b"alice", b"2-0", T0, 1, b"2-0"),
        xclaim_effect(b"bob", b"3-0", T0 + 50, 2, b"2-0"),
    ]
    assert env("XPENDING", "s", "g", "-", "+", 10) == [
        [b"1-0", b"alice", 50, 1], [b"3-0", b"bob", 0, 2]]


def test_xclaim_unknown_option_and_id_order(env):
    setup_stream(env, n=1)
    with pytest.raises(ReplyError, match="^ERR Unrecognized XCLAIM option '1-0'$"):
        env("XCLAIM", "s", "g", "a", 0, "JUSTID", "1-0")
    with pytest.raises(ReplyError, match="^ERR Invalid min-idle-time argument for XCLAIM$"):
        env("XCLAIM", "s", "g", "a", "x", "1-0")
    with pytest.raises(ReplyError, match="^NOGROUP No such key 's' or consumer group 'x'$"):
        env("XCLAIM", "s", "x", "a", "x", "1-0")


# --- XAUTOCLAIM ----------------------------------------------------------------------

def test_xautoclaim_scan_limit_cursor_and_deleted(env):
    setup_stream(env, n=30)
    env("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">")  # all at T0
    env.clock.advance(100)
    env("XCLAIM", "s", "g", "alice", 0, *[f"{i}-0" for i in range(1, 26)], "JUSTID")  # young
    env.clock.advance(10)
    env.take()
    # COUNT 2: at most 20 entries examined; 1..20 are young, so nothing claimed.
    assert env("XAUTOCLAIM", "s", "g", "bob", 50, "0", "COUNT", 2) == [b"21-0", [], []]
    reply = env("XAUTOCLAIM", "s", "g", "bob", 50, "21-0", "COUNT", 2, "JUSTID")
    assert reply == [b"28-0", [b"26-0", b"27-0"], []]
    assert env.take() == [
        B("XGROUP", "CREATECONSUMER", "s", "g", "bob"),
        xclaim_effect(b"bob", b"26-0", T0 + 110, 1, b"30-0"),
        xclaim_effect(b"bob", b"27-0", T0 + 110, 1, b"30-0"),
    ]
    env.stream().delete(StreamID(28, 0))
    reply = env("XAUTOCLAIM", "s", "g", "bob", 50, "28-0", "COUNT", 5)
    assert reply == [b"0-0", [[b"29-0", [b"f", b"v"]], [b"30-0", [b"f", b"v"]]], [b"28-0"]]
    assert env.take() == [
        xclaim_effect(b"alice", b"28-0", T0, 1, b"30-0"),
        xclaim_effect(b"bob", b"29-0", T0 + 110, 2, b"30-0"),
        xclaim_effect(b"bob", b"30-0", T0 + 110, 2, b"30-0"),
    ]


def test_xautoclaim_errors_are_checked_before_the_key(env):
    with pytest.raises(ReplyError, match="^ERR COUNT must be > 0$"):
        env("XAUTOCLAIM", "nokey", "g", "a", 0, "0", "COUNT", 0)
    with pytest.raises(ReplyError, match="^ERR Invalid min-idle-time argument for XAUTOCLAIM$"):
        env("XAUTOCLAIM", "nokey", "g", "a", "x", "0")
    with pytest.raises(ReplyError, match="^NOGROUP"):
        env("XAUTOCLAIM", "nokey", "g", "a", 0, "0", "COUNT", 5, "JUSTID")


# --- XGROUP --------------------------------------------------------------------------

def test_xgroup_create_dollar_and_setid_dollar_propagate_explicit_ids(env):
    env.add(b"s", 7)
    env.take()
    env("XGROUP", "CREATE", "s", "g", "$")
    assert env.take() == [B("XGROUP", "CREATE", "s", "g", "7-0", "ENTRIESREAD", -1)]
    env("XGROUP", "CREATE", "new", "g", "$", "ENTRIESREAD", 5, "MKSTREAM")
    assert env.take() == [B("XGROUP", "CREATE", "new", "g", "0-0", "MKSTREAM", "ENTRIESREAD", 0)]
    env("XGROUP", "CREATE", "s", "h", "0")
    assert env.take() == [B("XGROUP", "CREATE", "s", "h", "0")]
    env("XGROUP", "SETID", "s", "g", "$", "ENTRIESREAD", 1)
    assert env.take() == [B("XGROUP", "SETID", "s", "g", "7-0", "ENTRIESREAD", 1)]
    env("XGROUP", "SETID", "s", "g", "0")
    assert env.take() == [B("XGROUP", "SETID", "s", "g", "0")]
    info = dict(env("XINFO", "GROUPS", "new")[0].items)
    assert info[b"entries-read"] == 0  # ENTRIESREAD is capped at entries-added (Redis 8)


def test_xgroup_consumer_lifecycle_and_idle(env):
    setup_stream(env, n=2)
    assert env("XGROUP", "CREATECONSUMER", "s", "g", "a") == 1
    assert env("XGROUP", "CREATECONSUMER", "s", "g", "a") == 0
    env.clock.advance(30)
    env("XREADGROUP", "GROUP", "g", "a", "STREAMS", "s", ">")
    env.clock.advance(20)
    env("XGROUP", "CREATECONSUMER", "s", "g", "b")
    env.clock.advance(5)
    consumers = [dict(m.items) for m in env("XINFO", "CONSUMERS", "s", "g")]
    assert consumers == [
        {b"name": b"a", b"pending": 2, b"idle": 25, b"inactive": 25},
        {b"name": b"b", b"pending": 0, b"idle": 5, b"inactive": -1},
    ]
    assert env("XGROUP", "DELCONSUMER", "s", "g", "a") == 2
    assert env("XPENDING", "s", "g") == [0, None, None, NULL_ARRAY]
    assert env("XGROUP", "DELCONSUMER", "s", "g", "a") == 0


def test_xinfo_groups_lag_and_entries_read(env):
    setup_stream(env, n=4)
    env("XGROUP", "CREATE", "s", "h", "2-0")
    env("XREADGROUP", "GROUP", "g", "a", "COUNT", 1, "STREAMS", "s", ">")
    groups = [dict(m.items) for m in env("XINFO", "GROUPS", "s")]
    assert groups[0] == {b"name": b"g", b"consumers": 1, b"pending": 1,
                         b"last-delivered-id": b"1-0", b"entries-read": 1, b"lag": 3}
    assert groups[1][b"entries-read"] is None and groups[1][b"lag"] is None
    env.stream().delete(StreamID(3, 0))
    assert dict(env("XINFO", "GROUPS", "s")[0].items)[b"lag"] is None


# --- XACK / XPENDING -------------------------------------------------------------------

def test_xack_counts_and_does_not_touch_watch(env):
    setup_stream(env, n=3)
    env("XREADGROUP", "GROUP", "g", "a", "STREAMS", "s", ">")
    env("WATCH", "s")
    other = env.state.new_client(None)
    env.take()
    assert env("XACK", "s", "g", "1-0", "1-0", "3", "9-0", client=other) == 2
    assert env.take() == [B("XACK", "s", "g", "1-0", "1-0", "3", "9-0")]
    assert env("XACK", "s", "g", "1-0", client=other) == 0
    assert env.take() == []
    env("MULTI")
    env("PING")
    assert env("EXEC") == [b"PONG"]  # Redis: XACK does not invalidate WATCH


def test_xpending_idle_filter_and_consumer(env):
    setup_stream(env, n=3)
    env("XREADGROUP", "GROUP", "g", "a", "COUNT", 1, "STREAMS", "s", ">")
    env.clock.advance(100)
    env("XREADGROUP", "GROUP", "g", "b", "STREAMS", "s", ">")
    env.clock.advance(50)
    assert env("XPENDING", "s", "g") == [3, b"1-0", b"3-0", [[b"a", b"1"], [b"b", b"2"]]]
    assert env("XPENDING", "s", "g", "IDLE", 100, "-", "+", 10) == [[b"1-0", b"a", 150, 1]]
    assert env("XPENDING", "s", "g", "-", "+", 10, "b") == [
        [b"2-0", b"b", 50, 1], [b"3-0", b"b", 50, 1]]
    assert env("XPENDING", "s", "g", "(2-0", "+", 10) == [[b"3-0", b"b", 50, 1]]


# --- XNACK (8.8) ----------------------------------------------------------------------

def test_xnack_releases_to_claimers_and_shows_unowned(env):
    setup_stream(env, n=3)
    env("XREADGROUP", "GROUP", "g", "a", "STREAMS", "s", ">")
    env.clock.advance(10)
    env.take()
    assert env("XNACK", "s", "g", "FAIL", "IDS", 2, "3-0", "2-0") == 2
    assert env.take() == [B("XNACK", "s", "g", "FAIL", "IDS", 2, "3-0", "2-0")]
    assert env("XPENDING", "s", "g", "-", "+", 10) == [
        [b"1-0", b"a", 10, 1], [b"2-0", b"", -1, 1], [b"3-0", b"", -1, 1]]
    assert env("XPENDING", "s", "g") == [3, b"1-0", b"3-0", [[b"a", b"1"]]]
    # Released entries come first, in release order, whatever min-idle-time.
    reply = env("XREADGROUP", "GROUP", "g", "b", "CLAIM", 1000, "STREAMS", "s", ">")
    assert reply == [[b"s", [[b"3-0", [b"f", b"v"], T0 + 10, 1],
                             [b"2-0", [b"f", b"v"], T0 + 10, 1]]]]
    assert env("XNACK", "s", "g", "SILENT", "IDS", 1, "3-0") == 1
    assert env("XNACK", "s", "g", "FATAL", "IDS", 1, "2-0", "RETRYCOUNT", 4) == 1
    assert env("XNACK", "s", "g", "FATAL", "IDS", 1, "1-0") == 1
    assert env("XNACK", "s", "g", "FAIL", "IDS", 1, "9-0", "FORCE") == 0
    assert env("XPENDING", "s", "g", "-", "+", 10) == [
        [b"1-0", b"", -1, 2**63 - 1], [b"2-0", b"", -1, 4], [b"3-0", b"", -1, 1]]
    # A claim never pushes the counter past LLONG_MAX.
    env("XCLAIM", "s", "g", "c", 0, "1-0", "JUSTID")
    env("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "0")
    assert env("XPENDING", "s", "g", "1-0", "1-0", 1) == [[b"1-0", b"c", 0, 2**63 - 1]]


def test_xnack_errors(env):
    setup_stream(env, n=1)
    with pytest.raises(ReplyError, match="^NOGROUP No such key 'nokey' or consumer group 'g'$"):
        env("XNACK", "nokey", "g", "FAIL", "IDS", 1, "1-0")
    cases = [
        (("BOGUS", "IDS", 1, "1-0"), "ERR mode must be SILENT, FAIL, or FATAL"),
        (("FAIL", "IDS", 0, "1-0"), "ERR numids must be a positive integer"),
        (("FAIL", "IDS", 2, "1-0"), "ERR number of IDs doesn't match numids"),
        (("FAIL", "IDS", 1, "1-0", "RETRYCOUNT", -1), "ERR Invalid RETRYCOUNT value, must be >= 0"),
        (("FAIL", "IDS", 1, "1-0", "NOPE"), "ERR Unrecognized XNACK option 'NOPE'"),
        (("FAIL", "FORCE", "FORCE", "FORCE"), "ERR syntax error, expected IDS keyword"),
        (("FAIL", "IDS", 1, "bad"), "ERR Invalid stream ID specified as stream command argument"),
    ]
    for args, message in cases:
        with pytest.raises(ReplyError) as info:
            env("XNACK", "s", "g", *args)
        assert info.value.message == message


# --- XINFO STREAM FULL groups (for the streams module) ---------------------------------

def test_xinfo_full_groups_shape(env):
    setup_stream(env, n=2)
    env("XREADGROUP", "GROUP", "g", "alice", "COUNT", 1, "STREAMS", "s", ">")
    env.clock.advance(7)
    env("XGROUP", "CREATECONSUMER", "s", "g", "bob")
    env("XNACK", "s", "g", "FAIL", "IDS", 1, "2-0", "FORCE")
    full = group_commands.xinfo_full_groups(env.stream(), 10, env.clock.now_ms())
    assert len(full) == 1
    assert full[0].items == [
        (b"name", b"g"),
        (b"last-delivered-id", b"1-0"),
        (b"entries-read", 1),
        (b"lag", 1),
        (b"pel-count", 2),
        (b"pending", [[b"1-0", b"alice", T0, 1], [b"2-0", b"", 0, 0]]),
        (b"consumers", [
            Map([(b"name", b"alice"), (b"seen-time", T0), (b"active-time", T0),
                 (b"pel-count", 1), (b"pending", [[b"1-0", T0, 1]])]),
            Map([(b"name", b"bob"), (b"seen-time", T0 + 7), (b"active-time", -1),
                 (b"pel-count", 0), (b"pending", [])]),
        ]),
    ]
    assert group_commands.xinfo_full_groups(env.stream(), 1)[0].items[5][1] == [
        [b"1-0", b"alice", T0, 1]]
    with_nacked = group_commands.xinfo_full_groups(env.stream(), 0, nacked=True)[0].items
    assert with_nacked[5] == (b"nacked-count", 1)


# --- XDELEX / XACKDEL --------------------------------------------------------------------

def test_xackdel_policies(env):
    setup_stream(env, n=4)
    env("XGROUP", "CREATE", "s", "h", "0")
    env("XREADGROUP", "GROUP", "g", "a", "STREAMS", "s", ">")
    env("XREADGROUP", "GROUP", "h", "a", "COUNT", 2, "STREAMS", "s", ">")
    # 1-0 still pending in h: ACKED keeps it; 3-0 never delivered to h: kept too.
    assert env("XACKDEL", "s", "g", "ACKED", "IDS", 3, "1-0", "3-0", "9-0") == [2, 2, -1]
    # DELREF drops the entry from h's PEL as well.
    assert env("XACKDEL", "s", "g", "DELREF", "IDS", 1, "2-0") == [1]
    assert env("XPENDING", "s", "h", "-", "+", 10) == [[b"1-0", b"a", 0, 1]]
    assert env.stream().length == 3
    assert env("XACKDEL", "s", "g", "IDS", 1, "4-0") == [1]
    assert env("XDELEX", "s", "ACKED", "IDS", 2, "1-0", "3-0") == [2, 2]
    assert env("XDELEX", "s", "DELREF", "IDS", 2, "1-0", "2-0") == [1, -1]
    assert env("XPENDING", "s", "h") == [0, None, None, NULL_ARRAY]


# --- replay: effects rebuild the same groups ------------------------------------------

def _group_state(env: Env, key: bytes = b"s"):
    stream = env.stream(key)
    return [m.items for m in group_commands.xinfo_full_groups(stream, 0)]


def test_effects_replayed_on_a_replica_give_the_same_groups(env):
    replica = Env()
    replica.clock = env.clock
    replica.server.state.clock = env.clock

    def add(ms):
        env.add(b"s", ms)
        replica.add(b"s", ms)

    for ms in range(1, 9):
        add(ms)
    env.take()
    steps = [
        ("XGROUP", "CREATE", "s", "g", "0"),
        ("XGROUP", "CREATE", "s", "h", "$"),
        ("XREADGROUP", "GROUP", "g", "alice", "COUNT", 3, "STREAMS", "s", ">"),
        ("XREADGROUP", "GROUP", "g", "bob", "NOACK", "COUNT", 1, "STREAMS", "s", ">"),
        ("XREADGROUP", "GROUP", "g", "carol", "COUNT", 2, "STREAMS", "s", ">"),
        ("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "0"),
        ("XACK", "s", "g", "2-0"),
        ("XCLAIM", "s", "g", "dave", 10, "1-0", "5-0", "IDLE", 5),
        ("XCLAIM", "s", "g", "dave", 0, "9-0", "LASTID", "7-0"),
        ("XAUTOCLAIM", "s", "g", "erin", 20, "0", "COUNT", 1),
        ("XNACK", "s", "g", "FAIL", "IDS", 1, "6-0"),
        ("XREADGROUP", "GROUP", "g", "frank", "CLAIM", 0, "COUNT", 2, "STREAMS", "s", ">"),
        ("XGROUP", "SETID", "s", "h", "0"),
        ("XREADGROUP", "GROUP", "h", "zed", "STREAMS", "s", ">"),
        ("XGROUP", "DELCONSUMER", "s", "h", "zed"),
        ("XGROUP", "CREATECONSUMER", "s", "h", "yan"),
    ]
    for step in steps:
        env.clock.advance(7)
        env(*step)
        if step[0] == "XACK":
            env.stream().delete(StreamID(3, 0))  # an XDEL on both sides
            replica.stream().delete(StreamID(3, 0))
    internal = replica.state.internal_client()
    for argv in env.take():
        reply = replica.server.dispatcher.execute(internal, argv)
        assert not isinstance(reply, ReplyError), (argv, reply)
    ours, theirs = _group_state(env), _group_state(replica)
    # seen-time is not propagated by Redis either (replicas see their own clock).
    def strip(state):
        return [[(k, v) for k, v in g if k != b"consumers"] for g in state]
    assert strip(ours) == strip(theirs)
    for g1, g2 in zip(env.stream().groups.values(), replica.stream().groups.values(), strict=True):
        assert sorted(g1.consumers) == sorted(g2.consumers)
        g2.check_invariants()
