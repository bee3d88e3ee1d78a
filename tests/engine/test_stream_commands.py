"""Stream commands through the dispatcher with a ManualClock.

What a live server cannot pin down: the exact effects each write hands to
AOF/replicas (XADD `*` -> the chosen ID, `~`/LIMIT -> the exact `=` form,
IDMP -> XADD + XIDMPRECORD), replaying those effects on an empty server,
IDs when the clock goes back, XREAD's Block request and its re-runs, and
Redis 8.6's idempotent production (IDMP/IDMPAUTO, XCFGSET), whose expiry
needs control of time.
"""

from __future__ import annotations

import random
import sys

import pytest

import rillet.commands  # noqa: F401  (registers the commands)
from rillet.clock import ManualClock
from rillet.commands import stream_common
from rillet.commands.stream_common import get_stream
from rillet.errors import ReplyError
from rillet.resp.types import NULL_ARRAY, Map
from rillet.server.server import Server
from rillet.state import KEEP_WAITING, Block, effect_argv
from tests.helpers.replies import plain

T0 = 1_700_000_000_000


class Env:
    """One server with a ManualClock, a client and an effect sink."""

    def __init__(self, sink: bool = True) -> None:
        self.clock = ManualClock(T0)
        self.server = Server(clock=self.clock)
        self.state = self.server.state
        self.client = self.state.new_client(None)
        self.effects: list[list[bytes]] = []
        if sink:
            self.state.effect_sinks.append(self._sink)

    def _sink(self, effects) -> None:
        self.effects.extend(effect_argv(argv) for _, argv in effects)

    def raw(self, *args, client=None):
        argv = [a if isinstance(a, bytes) else str(a).encode() for a in args]
        return plain(self.server.dispatcher.execute(client or self.client, argv))

    def __call__(self, *args, client=None):
        reply = self.raw(*args, client=client)
        if isinstance(reply, ReplyError):
            raise reply
        return reply

    def error(self, *args) -> str:
        reply = self.raw(*args)
        assert isinstance(reply, ReplyError), reply
        return reply.message

    def take(self) -> list[list[bytes]]:
        out, self.effects = self.effects, []
        return out

    def info(self, key: str = "s") -> dict:
        reply = self("XINFO", "STREAM", key)
        assert isinstance(reply, Map)
        return dict(reply.items)

    def stream(self, key: bytes = b"s"):
        return get_stream(self.client, key)


@pytest.fixture
def env() -> Env:
    return Env()


# --- XADD effects --------------------------------------------------------------------------

def test_xadd_star_propagates_the_chosen_id(env):
    assert env("XADD", "s", "*", "f", "v") == b"%d-0" % T0
    assert env("XADD", "s", "*", "f", "v", "g", "w") == b"%d-1" % T0
    assert env.take() == [[b"XADD", b"s", b"%d-0" % T0, b"f", b"v"],
                          [b"XADD", b"s", b"%d-1" % T0, b"f", b"v", b"g", b"w"]]


def test_xadd_explicit_and_partial_ids_propagate_resolved(env):
    env("XADD", "s", "5-*", "f", "v")
    env("XADD", "s", "5-*", "f", "v")
    env("XADD", "s", "7", "f", "v")
    assert [argv[2] for argv in env.take()] == [b"5-0", b"5-1", b"7-0"]


def test_ids_stay_monotonic_when_the_clock_goes_back(env):
    env.clock.set(T0 + 1000)
    assert env("XADD", "s", "*", "f", "v") == b"%d-0" % (T0 + 1000)
    env.clock.set(T0)
    assert env("XADD", "s", "*", "f", "v") == b"%d-1" % (T0 + 1000)
    assert env("XADD", "s", "MAXLEN", "~", "10", "*", "f", "v") == b"%d-2" % (T0 + 1000)
    env.clock.set(T0 + 2000)
    assert env("XADD", "s", "*", "f", "v") == b"%d-0" % (T0 + 2000)


def test_general_path_effect_keeps_options(env):
    env("XADD", "s", "NOMKSTREAM", "*", "f", "v")
    assert env.take() == []
    assert env.stream() is None
    env("XADD", "s", "1-1", "f", "v")
    env("XADD", "s", "nomkstream", "DELREF", "2-1", "f", "v")
    env("XADD", "s", "KEEPREF", "MINID", "2", "*", "f", "v")
    effects = env.take()
    assert effects[1] == [b"XADD", b"s", b"NOMKSTREAM", b"DELREF", b"2-1", b"f", b"v"]
    assert effects[2] == [b"XADD", b"s", b"MINID", b"=", b"2-0", b"%d-0" % T0, b"f", b"v"]


@pytest.mark.parametrize("options, exact", [
    (["MAXLEN", "~", "150"], [b"MAXLEN", b"=", b"201"]),
    (["MAXLEN", "~", "150", "LIMIT", "50"], [b"MAXLEN", b"=", b"301"]),
    (["maxlen", "~", "150", "LIMIT", "100"], [b"MAXLEN", b"=", b"201"]),
    (["MAXLEN", "=", "150"], [b"MAXLEN", b"=", b"150"]),
    (["MAXLEN", "150"], [b"MAXLEN", b"=", b"150"]),
    (["MAXLEN", "~", "1000"], [b"MAXLEN", b"=", b"301"]),
    (["MINID", "~", "150"], [b"MINID", b"=", b"101-0"]),
    (["MINID", "150"], [b"MINID", b"=", b"150-0"]),
])
def test_approximate_trimming_propagates_exactly(env, options, exact):
    for ms in range(1, 301):
        env("XADD", "s", f"{ms}-0", "f", "v")
    env.take()
    sid = env("XADD", "s", *options, "*", "f", "v")
    assert env.take() == [[b"XADD", b"s", *exact, sid, b"f", b"v"]]


def test_xtrim_effects(env):
    for ms in range(1, 301):
        env("XADD", "s", f"{ms}-0", "f", "v")
    env.take()
    assert env("XTRIM", "s", "MAXLEN", "~", "250") == 0
    assert env.take() == []
    assert env("XTRIM", "s", "MAXLEN", "~", "150", "LIMIT", "100") == 100
    assert env.take() == [[b"XTRIM", b"s", b"MAXLEN", b"=", b"200"]]
    assert env("XTRIM", "s", "MINID", "~", "250", "ACKED") == 100
    assert env.take() == [[b"XTRIM", b"s", b"ACKED", b"MINID", b"=", b"201-0"]]
    assert env("XTRIM", "s", "MINID", "260") == 59
    assert env.take() == [[b"XTRIM", b"s", b"MINID", b"=", b"260-0"]]


def test_failed_writes_leave_no_trace(env):
    for args in (["XADD", "s", "0-0", "f", "v"], ["XADD", "s", "x", "f", "v"],
                 ["XADD", "s", "*", "f"], ["XADD", "s", "MAXLEN", "x", "*", "f", "v"],
                 ["XADD", "s", "IDMP", "p", "i", "1-1", "f", "v"],
                 ["XADD", "s", "LIMIT", "5", "*", "f", "v"], ["XTRIM", "s", "MAXLEN", "1"],
                 ["XSETID", "s", "1-1"], ["XDEL", "s", "1-1"], ["XCFGSET", "s", "IDMP-MAXSIZE", "5"]):
        env.raw(*args)
        assert env.stream() is None, args
    assert env.take() == []
    env("XADD", "s", "9-9", "f", "v")
    env.take()
    env.raw("XADD", "s", "9-9", "f", "v")
    env.raw("XDEL", "s", "9-9", "bad")
    env.raw("XSETID", "s", "1-1")
    assert env.take() == []
    assert env("XLEN", "s") == 1


def test_deterministic_commands_propagate_as_given(env):
    env("XADD", "s", "1-1", "f", "v")
    env("XADD", "s", "1-2", "f", "v")
    env("XDEL", "s", "1-1", "5-5")
    env("XDEL", "s", "5-5")
    env("XSETID", "s", "9-9", "ENTRIESADDED", "10")
    assert env.take()[2:] == [[b"XDEL", b"s", b"1-1", b"5-5"],
                              [b"XSETID", b"s", b"9-9", b"ENTRIESADDED", b"10"]]


def _observe(env: Env, key: str = "s"):
    # iids-duplicates counts rejected retries, which change no data and are not
    # propagated (as in Redis), so a replica does not see them.
    info = env.info(key)
    return env("XRANGE", key, "-", "+"), {k: v for k, v in info.items() if k != b"iids-duplicates"}


def test_replaying_effects_rebuilds_the_stream():
    rnd = random.Random(7)
    primary = Env()
    config = primary.state.config
    config.set("stream-node-max-entries", "10")
    for _ in range(600):
        primary.clock.advance(rnd.choice([0, 0, 1, 3]))
        roll = rnd.random()
        if roll < 0.55:
            primary("XADD", "s", "*", "f", str(rnd.randint(0, 9)))
        elif roll < 0.7:
            primary("XADD", "s", "MAXLEN", "~", str(rnd.randint(20, 80)), "*", "f", "v")
        elif roll < 0.78:
            primary("XADD", "s", "MINID", "~", f"{primary.clock.now_ms() - 40}", "*", "f", "v")
        elif roll < 0.88:
            sids = [entry[0] for entry in primary("XRANGE", "s", "-", "+", "COUNT", 30)]
            if sids:
                primary("XDEL", "s", rnd.choice(sids))
        elif roll < 0.95:
            primary("XTRIM", "s", "MAXLEN", "~", str(rnd.randint(10, 60)),
                    "LIMIT", str(rnd.randint(0, 30)))
        else:
            primary("XADD", "s", "IDMPAUTO", "p", "*", "f", str(rnd.randint(0, 5)))
    replica = Env(sink=False)
    replica.state.config.set("stream-node-max-entries", "10")
    for argv in primary.take():
        assert not isinstance(replica.raw(*argv), ReplyError), argv
    assert _observe(replica) == _observe(primary)


# --- XREAD's Block and its re-runs ------------------------------------------------------------

def test_xread_block_request_pins_dollar_not_plus(env):
    env("XADD", "a", "5-1", "f", "v")
    env("XADD", "b", "6-1", "f", "v")
    env("XDEL", "b", "6-1")
    reply = env("XREAD", "COUNT", "2", "BLOCK", "1500", "STREAMS", "a", "b", "c", "$", "+", "$")
    assert isinstance(reply, Block)
    assert reply.keys == [b"a", b"b", b"c"]
    assert reply.timeout_ms == 1500
    assert reply.timeout_reply is NULL_ARRAY
    assert reply.argv == [b"XREAD", b"COUNT", b"2", b"BLOCK", b"1500", b"STREAMS",
                          b"a", b"b", b"c", b"5-1", b"+", b"0-0"]
    assert env("XREAD", "BLOCK", "0", "STREAMS", "a", "$").timeout_ms == 0


def test_xread_rerun_keeps_waiting_or_answers(env):
    env("XADD", "a", "5-1", "f", "v")
    block = env("XREAD", "BLOCK", "0", "STREAMS", "a", "$")
    env.client.blocked_retry = True
    try:
        assert env.raw(*block.argv) is KEEP_WAITING
        env("SET", "a", "string now")
        assert env.raw(*block.argv) is KEEP_WAITING
        env("DEL", "a")
        env("XADD", "a", "6-1", "f", "v")
        assert env.raw(*block.argv) == [[b"a", [[b"6-1", [b"f", b"v"]]]]]
    finally:
        env.client.blocked_retry = False


def test_xread_without_block_answers_nil(env):
    assert env("XREAD", "STREAMS", "a", "$") is NULL_ARRAY
    env.client.resp3 = True
    env("XADD", "a", "1-1", "f", "v")
    reply = env("XREAD", "STREAMS", "a", "b", "0", "0")
    assert isinstance(reply, Map) and reply.items == [(b"a", [[b"1-1", [b"f", b"v"]]])]


def test_xread_block_in_multi_is_nil(env):
    env("MULTI")
    env("XREAD", "BLOCK", "0", "STREAMS", "a", "$")
    assert env("EXEC") == [NULL_ARRAY]


# --- IDMP / IDMPAUTO / XCFGSET (Redis 8.6) ---------------------------------------------------

def test_idmp_duplicate_returns_the_first_id(env):
    first = env("XADD", "s", "IDMP", "p1", "payment-abc", "*", "amount", "100")
    env.clock.advance(5)
    assert env("XADD", "s", "IDMP", "p1", "payment-abc", "*", "amount", "200") == first
    assert env("XADD", "s", "IDMP", "p1", "payment-abc", "MAXLEN", "0", "*", "a", "b") == first
    assert env("XLEN", "s") == 1
    assert env("XRANGE", "s", "-", "+") == [[first, [b"amount", b"100"]]]
    other = env("XADD", "s", "IDMP", "p2", "payment-abc", "*", "amount", "300")
    assert other != first
    info = env.info()
    assert (info[b"pids-tracked"], info[b"iids-tracked"], info[b"iids-added"],
            info[b"iids-duplicates"]) == (2, 2, 2, 2)


def test_idmp_effects_and_replay(env):
    sid = env("XADD", "s", "IDMP", "p1", "i1", "MAXLEN", "~", "100", "*", "f", "v")
    env("XADD", "s", "IDMP", "p1", "i1", "*", "f", "v")
    auto = env("XADD", "s", "IDMPAUTO", "p2", "*", "a", "1", "b", "2")
    effects = env.take()
    iid = stream_common.idmp_auto_iid([b"a", b"1", b"b", b"2"])
    # Two effects for one command: the dispatcher wraps them in MULTI/EXEC.
    assert effects == [
        [b"MULTI"],
        [b"XADD", b"s", b"MAXLEN", b"=", b"1", sid, b"f", b"v"],
        [b"XIDMPRECORD", b"s", b"p1", b"i1", sid],
        [b"EXEC"],
        [b"MULTI"],
        [b"XADD", b"s", auto, b"a", b"1", b"b", b"2"],
        [b"XIDMPRECORD", b"s", b"p2", iid, auto],
        [b"EXEC"],
    ]
    replica = Env(sink=False)
    replica.clock.set(env.clock.now_ms())
    for argv in effects:
        replica(*argv)
    assert replica("XADD", "s", "IDMP", "p1", "i1", "*", "f", "v") == sid
    assert replica("XADD", "s", "IDMPAUTO", "p2", "*", "b", "2", "a", "1") == auto
    assert replica("XLEN", "s") == 2


def test_idmpauto_ignores_pair_order_but_not_content(env):
    first = env("XADD", "s", "IDMPAUTO", "p1", "*", "f1", "a", "f2", "b", "f3", "c")
    assert env("XADD", "s", "IDMPAUTO", "p1", "*", "f2", "b", "f3", "c", "f1", "a") == first
    assert env("XADD", "s", "IDMPAUTO", "p1", "*", "f1", "x", "f2", "b", "f3", "c") != first
    assert env("XADD", "s", "IDMPAUTO", "p1", "*", "f1", "ab", "f2", "", "f3", "c") != first
    assert env("XADD", "s", "IDMPAUTO", "p2", "*", "f1", "a", "f2", "b", "f3", "c") != first
    assert env("XLEN", "s") == 4


def test_idmp_expires_after_the_duration(env):
    first = env("XADD", "s", "IDMP", "p1", "req-1", "*", "f", "v")
    env("XCFGSET", "s", "IDMP-DURATION", "1")
    again = env("XADD", "s", "IDMP", "p1", "req-1", "*", "f", "v")  # XCFGSET cleared history
    assert again != first
    env.clock.advance(999)
    assert env("XADD", "s", "IDMP", "p1", "req-1", "*", "f", "v") == again
    env.clock.advance(1)
    third = env("XADD", "s", "IDMP", "p1", "req-1", "*", "f", "v")
    assert third not in (first, again)
    env.clock.advance(1000)
    info = env.info()
    assert (info[b"pids-tracked"], info[b"iids-tracked"]) == (0, 0)
    assert (info[b"iids-added"], info[b"iids-duplicates"]) == (3, 1)


def test_idmp_maxsize_evicts_the_oldest_per_producer(env):
    env("XADD", "s", "IDMP", "p1", "init", "*", "f", "init")
    env("XCFGSET", "s", "IDMP-MAXSIZE", "3", "IDMP-DURATION", "60")
    ids = {name: env("XADD", "s", "IDMP", "p1", name, "*", "f", name)
           for name in ("req-1", "req-2", "req-3")}
    p2 = env("XADD", "s", "IDMP", "p2", "req-1", "*", "f", "v")
    for name, sid in ids.items():
        assert env("XADD", "s", "IDMP", "p1", name, "*", "f", "dup") == sid
    env("XADD", "s", "IDMP", "p1", "req-4", "*", "f", "v")
    assert env("XADD", "s", "IDMP", "p1", "req-1", "*", "f", "new") != ids["req-1"]
    assert env("XADD", "s", "IDMP", "p1", "req-3", "*", "f", "dup") == ids["req-3"]
    assert env("XADD", "s", "IDMP", "p2", "req-1", "*", "f", "dup") == p2
    assert env("XLEN", "s") == 7
    info = env.info()
    assert (info[b"idmp-duration"], info[b"idmp-maxsize"]) == (60, 3)
    assert (info[b"pids-tracked"], info[b"iids-tracked"], info[b"iids-added"]) == (2, 4, 7)


def test_idmp_wraparound_keeps_the_last_entries(env):
    env("XADD", "s", "IDMP", "p1", "init", "*", "f", "init")
    env("XCFGSET", "s", "IDMP-MAXSIZE", "8", "IDMP-DURATION", "60")
    ids = [env("XADD", "s", "IDMP", "p1", f"req-{n}", "*", "f", "v") for n in range(1, 101)]
    for n in range(93, 101):
        assert env("XADD", "s", "IDMP", "p1", f"req-{n}", "*", "f", "dup") == ids[n - 1]
    for n in range(1, 93):
        assert env("XADD", "s", "IDMP", "p1", f"req-{n}", "*", "f", "new") != ids[n - 1]
    assert env("XLEN", "s") == 193


def test_xcfgset_clears_history_only_on_change(env):
    first = env("XADD", "s", "IDMP", "p1", "req-1", "*", "f", "v")
    env("XADD", "s", "IDMP", "p2", "req-1", "*", "f", "v")
    env("XADD", "s", "IDMP", "p1", "req-1", "*", "f", "dup")
    assert env("XCFGSET", "s", "IDMP-DURATION", "100", "IDMP-MAXSIZE", "100") == b"OK"
    assert env("XADD", "s", "IDMP", "p1", "req-1", "*", "f", "dup") == first
    assert env("XCFGSET", "s", "IDMP-DURATION", "50") == b"OK"
    info = env.info()
    assert (info[b"pids-tracked"], info[b"iids-tracked"], info[b"iids-added"],
            info[b"iids-duplicates"]) == (0, 0, 2, 2)
    assert env("XADD", "s", "IDMP", "p1", "req-1", "*", "f", "new") != first
    assert env.take()[-2] == [b"XIDMPRECORD", b"s", b"p1", b"req-1",
                              env.info()[b"last-generated-id"]]
    env("XCFGSET", "s", "IDMP-MAXSIZE", "7")
    info = env.info()
    assert (info[b"idmp-duration"], info[b"idmp-maxsize"]) == (50, 7)


def test_xinfo_stream_idmp_fields_and_order(env):
    env("XADD", "s", "1-1", "f", "v")
    env.state.config.set("stream-idmp-duration", "300")
    names = [name for name, _ in env("XINFO", "STREAM", "s").items]
    assert names == [b"length", b"radix-tree-keys", b"radix-tree-nodes", b"last-generated-id",
                     b"max-deleted-entry-id", b"entries-added", b"recorded-first-entry-id",
                     b"idmp-duration", b"idmp-maxsize", b"pids-tracked", b"iids-tracked",
                     b"iids-added", b"iids-duplicates", b"groups", b"first-entry", b"last-entry"]
    full = [name for name, _ in env("XINFO", "STREAM", "s", "FULL").items]
    assert full == names[:13] + [b"entries", b"groups"]
    assert env.info()[b"idmp-duration"] == 300


def test_idmp_and_xcfgset_errors(env):
    assert env.error("XADD", "s", "IDMP", "p1", "*", "f", "v") == \
        "ERR Invalid stream ID specified as stream command argument"
    assert env.error("XADD", "s", "IDMP", "p1", "iid1", "1-1", "f", "v") == \
        "ERR IDMP/IDMPAUTO can be used only with auto-generated IDs"
    assert env.error("XADD", "s", "IDMPAUTO", "p1", "5-*", "f", "v") == \
        "ERR IDMP/IDMPAUTO can be used only with auto-generated IDs"
    for args in (["IDMP", "p1", "i1", "IDMP", "p2", "i2"], ["IDMPAUTO", "p1", "IDMP", "p2", "i2"],
                 ["IDMP", "p1", "i1", "IDMPAUTO", "p2"], ["IDMPAUTO", "p1", "IDMPAUTO", "p2"]):
        assert env.error("XADD", "s", *args, "*", "f", "v") == \
            "ERR IDMP/IDMPAUTO specified multiple times"
    assert env.error("XADD", "s", "IDMP", "", "i", "*", "f", "v") == \
        "ERR IDMP requires a non-empty producer ID"
    assert env.error("XADD", "s", "IDMP", "p", "", "*", "f", "v") == \
        "ERR IDMP requires a non-empty idempotent ID"
    assert env.error("XADD", "s", "IDMPAUTO", "", "*", "f", "v") == \
        "ERR IDMPAUTO requires a non-empty producer ID"
    assert env.error("XADD", "s", "IDMP", "p", "i", "*", "f") == \
        "ERR wrong number of arguments for 'xadd' command"
    assert env("XADD", "s", "NOMKSTREAM", "IDMP", "p", "i", "*", "f", "v") is None
    assert env.error("XCFGSET", "s", "IDMP-DURATION", "5") == "ERR no such key"
    env("XADD", "s", "IDMP", "p1", "req-1", "*", "f", "v")
    assert env.error("XCFGSET", "s") == \
        "ERR At least one parameter (IDMP-DURATION or IDMP-MAXSIZE) is required"
    for args in (["IDMP-DURATION"], ["IDMP-MAXSIZE"], ["INVALID"], ["FOO", "5"],
                 ["IDMP-DURATION", "5", "IDMP-MAXSIZE"]):
        assert env.error("XCFGSET", "s", *args) == "ERR syntax error", args
    for value in ("A", "*", "-", "+", "120-5", "3.14", "000000000", "IDMP-DURATION", ""):
        assert env.error("XCFGSET", "s", "IDMP-DURATION", value) == \
            "ERR value is not an integer or out of range"
        assert env.error("XCFGSET", "s", "IDMP-MAXSIZE", value) == \
            "ERR value is not an integer or out of range"
    assert env.error("XCFGSET", "s", "IDMP-DURATION", "INVALID", "IDMP-MAXSIZE") == \
        "ERR value is not an integer or out of range"
    for value in ("0", "-100", "86401"):
        assert env.error("XCFGSET", "s", "IDMP-DURATION", value) == \
            "ERR IDMP-DURATION must be between 1 and 86400 seconds"
    for value in ("0", "-50", "10001"):
        assert env.error("XCFGSET", "s", "IDMP-MAXSIZE", value) == \
            "ERR IDMP-MAXSIZE must be between 1 and 10000 entries"
    assert env("XCFGSET", "s", "idmp-duration", "86400", "idmp-maxsize", "10000") == b"OK"
    env("SET", "str", "x")
    assert env.error("XCFGSET", "str", "IDMP-DURATION", "5").startswith("WRONGTYPE")
    assert env.error("XADD", "str", "IDMP", "p", "i", "*", "f", "v").startswith("WRONGTYPE")
    assert env.error("XIDMPRECORD", "nokey", "p", "i", "1-1") == "ERR no such key"
    assert env.error("XIDMPRECORD", "s", "p", "i", "x") == \
        "ERR Invalid stream ID specified as stream command argument"


def test_idmp_in_multi(env):
    env("MULTI")
    for iid in ("req-1", "req-2", "req-1", "req-3"):
        env("XADD", "s", "IDMP", "p1", iid, "*", "f", "v")
    first, second, dup, third = env("EXEC")
    assert dup == first and len({first, second, third}) == 3
    assert env("XLEN", "s") == 3


def test_idmp_state_follows_rename_and_dies_with_the_key(env):
    first = env("XADD", "s", "IDMP", "p", "i", "*", "f", "v")
    env("RENAME", "s", "t")
    assert env("XADD", "t", "IDMP", "p", "i", "*", "f", "v") == first
    env("DEL", "t")
    env.clock.advance(1)
    assert env("XADD", "t", "IDMP", "p", "i", "*", "f", "v") != first
    # The state lives on the stream object, so it goes with the deleted key.
    assert env.stream(b"t").idmp is not None
    assert env("XADD", "t", "IDMP", "p", "i", "*", "f", "v") == env("XRANGE", "t", "-", "+")[0][0]


# --- MEMORY USAGE -----------------------------------------------------------------------------

def test_memory_usage_adds_redis8_key_overhead(env):
    env("XADD", "ab", "1-1", "f", "v")
    stream = env.stream(b"ab")
    assert env("MEMORY", "USAGE", "ab") == stream.memory_usage(5) + 32
    env("PEXPIRE", "ab", "100000")
    assert env("MEMORY", "USAGE", "ab", "SAMPLES", "0") == stream.memory_usage(0) + 40
    key = "k" * 44
    env("XADD", key, "1-1", "f", "v")
    assert env("MEMORY", "USAGE", key) == env.stream(key.encode()).memory_usage(5) + 88


@pytest.mark.parametrize("prefix", [["*"], ["MAXLEN", "~", "5", "*"], ["NOMKSTREAM", "*"], ["9-9"]])
def test_elements_too_large_leave_no_trace(env, monkeypatch, prefix):
    from rillet.commands import streams

    monkeypatch.setattr(streams, "STREAM_LISTPACK_MAX_SIZE", 10)
    compiled = sys.modules.get("rillet.commands._writes")
    if compiled is not None:  # the compiled XADD body's copy of the limit
        monkeypatch.setattr(compiled, "STREAM_LISTPACK_MAX_SIZE", 10)
    env("XADD", "old", "1-1", "f", "v")
    for key in ("new", "old"):
        if key == "new" and "NOMKSTREAM" in prefix:
            assert env("XADD", key, *prefix, "field", "0123456789") is None  # checked first
            continue
        assert env.error("XADD", key, *prefix, "field", "0123456789") == \
            "ERR Elements are too large to be stored"
        assert env.error("XADD", key, *prefix, "f", "v", "g", "01234567") == \
            "ERR Elements are too large to be stored"
    assert env.stream(b"new") is None
    assert env("XLEN", "old") == 1
    if "NOMKSTREAM" not in prefix:
        assert env("XADD", "new", *prefix[:-1], "5-5", "f", "012345678") == b"5-5"
