"""Redis 8.6-8.8 additions that no reference server here has (Redis 8.2.3 lacks them),
tested against their documented semantics: redis.io's command pages and the cases of
Redis's own tests (tests/unit/type/increx.tcl, zset.tcl's AGGREGATE COUNT), in process
with a ManualClock so expiries and effects are exact. docs/compat.md lists them."""

from __future__ import annotations

import pytest

import rillet.commands  # noqa: F401  (registers the commands)
from rillet.clock import ManualClock
from rillet.errors import ReplyError
from rillet.resp.types import OK
from rillet.server.server import Server
from rillet.state import effect_argv
from tests.helpers.replies import plain

T0 = 1_700_000_000_000
LLONG_MAX = 2**63 - 1
LLONG_MIN = -(2**63)


class Env:
    def __init__(self) -> None:
        self.clock = ManualClock(T0)
        self.server = Server(clock=self.clock)
        self.client = self.server.state.new_client(None)
        self.effects: list[list[bytes]] = []
        self.server.state.effect_sinks.append(
            lambda effects: self.effects.extend(effect_argv(argv) for _, argv in effects))

    def __call__(self, *args):
        argv = [a if isinstance(a, bytes) else str(a).encode() for a in args]
        reply = plain(self.server.dispatcher.execute(self.client, argv))
        if isinstance(reply, ReplyError):
            raise reply
        return reply

    def error(self, *args) -> str:
        with pytest.raises(ReplyError) as info:
            self(*args)
        return str(info.value)

    def take(self) -> list[list[bytes]]:
        out, self.effects = self.effects, []
        return [e for e in out if e[:1] not in ([b"MULTI"], [b"EXEC"], [b"SELECT"])]


@pytest.fixture
def env() -> Env:
    return Env()


# --- INCREX ----------------------------------------------------------------------------

def test_increx_defaults_and_byint(env):
    assert env("INCREX", "k") == [1, 1]
    assert env("INCREX", "k") == [2, 1]
    env("SET", "k", 100)
    assert env("INCREX", "k", "BYINT", 5) == [105, 5]
    assert env("INCREX", "k", "BYINT", -10) == [95, -10]
    assert env("INCREX", "k", "byint", 0) == [95, 0]
    assert env("OBJECT", "ENCODING", "k") == b"int"


def test_increx_bounds_reject_or_saturate(env):
    env("SET", "k", 99)
    assert env("INCREX", "k", "BYINT", 5, "UBOUND", 100) == [99, 0]
    assert env("GET", "k") == b"99"
    assert env("INCREX", "k", "BYINT", 5, "UBOUND", 100, "SATURATE") == [100, 1]
    env("SET", "k", 10)
    assert env("INCREX", "k", "BYINT", -100, "LBOUND", 0, "SATURATE") == [0, -10]
    env("SET", "k", 50)
    # already outside: the default leaves it, SATURATE moves it to the bound
    assert env("INCREX", "k", "BYINT", 5, "UBOUND", 30) == [50, 0]
    assert env("INCREX", "k", "BYINT", 5, "UBOUND", 30, "SATURATE") == [30, -20]
    env("SET", "k", 50)
    assert env("INCREX", "k", "BYINT", -25, "UBOUND", 30) == [25, -25]
    env("SET", "k", 5)
    assert env("INCREX", "k", "LBOUND", 0, "BYINT", 100, "UBOUND", 10, "SATURATE") == [10, 5]


def test_increx_type_limits(env):
    env("SET", "k", 9223372036854775800)
    assert env("INCREX", "k", "BYINT", 9223372036854775800) == [9223372036854775800, 0]
    assert env("INCREX", "k", "BYINT", 9223372036854775800, "SATURATE") == [LLONG_MAX, 7]
    env("SET", "k", -9223372036854775800)
    assert env("INCREX", "k", "BYINT", -9223372036854775800, "SATURATE") == [LLONG_MIN, -8]
    env("SET", "k", 9223372036854775800)
    assert env.error("INCREX", "k", "BYINT", 1, "SATURATE", "UBOUND", LLONG_MIN) == \
        "ERR applied increment would overflow"


def test_increx_missing_key_out_of_bounds_is_not_created(env):
    assert env("INCREX", "k", "BYINT", 5, "LBOUND", 10) == [0, 0]
    assert env("EXISTS", "k") == 0
    assert env("INCREX", "k", "BYFLOAT", "-0.5", "UBOUND", "-1.5") == [b"0", b"0"]
    assert env("EXISTS", "k") == 0
    assert env("INCREX", "k", "UBOUND", 0, "SATURATE") == [0, 0]
    assert env("GET", "k") == b"0"
    assert env.take() == [[b"SET", b"k", b"0", b"KEEPTTL"]]


def test_increx_byfloat(env):
    env("SET", "k", "1.5")
    assert env("INCREX", "k", "BYFLOAT", "0.25") == [b"1.75", b"0.25"]
    assert env("OBJECT", "ENCODING", "k") == b"embstr"
    env("SET", "k", 10)
    assert env("INCREX", "k", "BYFLOAT", 100, "UBOUND", "42.5", "SATURATE") == [b"42.5", b"32.5"]
    env("SET", "k", 10)
    assert env("INCREX", "k", "BYFLOAT", "1.0", "UBOUND", "inf") == [b"11", b"1"]
    env("SET", "k", 10)
    assert env("INCREX", "k", "BYFLOAT", "1.0", "LBOUND", "-inf", "UBOUND", "-inf") == [b"10", b"0"]
    assert env.error("INCREX", "k", "BYFLOAT", "1.0", "LBOUND", "inf", "UBOUND", "inf",
                     "SATURATE") == "ERR applied increment would be Infinity"
    assert env.error("INCREX", "k", "BYFLOAT", "+inf") == "ERR BYFLOAT increment cannot be Infinity"
    env("SET", "k", "inf")
    assert env.error("INCREX", "k", "BYFLOAT", 1) == "ERR value cannot be Infinity"
    env("SET", "k", "hello")
    assert env.error("INCREX", "k", "BYFLOAT", "1.5") == "ERR value is not a valid float"
    assert env.error("INCREX", "k", "BYINT", 1) == "ERR value is not an integer or out of range"
    env("RPUSH", "l", "a")
    assert env.error("INCREX", "l").startswith("WRONGTYPE")


def test_increx_expiry(env):
    env("SET", "k", 10)
    assert env("INCREX", "k", "BYINT", 100, "UBOUND", 15, "EX", 100) == [10, 0]
    assert env("TTL", "k") == -1
    env.take()
    assert env("INCREX", "k", "EX", 100) == [11, 1]
    assert env("PTTL", "k") == 100_000
    assert env("INCREX", "k", "PX", 5000, "ENX") == [12, 1]
    assert env("PTTL", "k") == 100_000  # ENX: the TTL it had stays
    assert env("INCREX", "k", "PERSIST") == [13, 1]
    assert env("TTL", "k") == -1
    assert env("INCREX", "k", "PXAT", T0 + 7000, "ENX") == [14, 1]
    assert env("PTTL", "k") == 7000
    assert env.take() == [
        [b"SET", b"k", b"11", b"PXAT", b"%d" % (T0 + 100_000)],
        [b"SET", b"k", b"12", b"KEEPTTL"],
        [b"SET", b"k", b"13"],
        [b"SET", b"k", b"14", b"PXAT", b"%d" % (T0 + 7000)]]
    assert env("INCREX", "k", "EXAT", 1) == [15, 1]
    assert env("EXISTS", "k") == 0
    env("SET", "k", 10, "EX", 500)
    assert env("INCREX", "k", "EXAT", 1, "ENX") == [11, 1]
    assert env("TTL", "k") == 500
    assert env.take()[0] == [b"DEL", b"k"]


@pytest.mark.parametrize(("args", "error"), [
    (("FOO",), "ERR syntax error"),
    (("BYINT", 1, "FOO"), "ERR syntax error"),
    (("BYINT", 1, "BYFLOAT", "1.5"), "ERR syntax error"),
    (("BYINT", 1, "BYINT", 2), "ERR syntax error"),
    (("EX", 10, "PX", 5000), "ERR syntax error"),
    (("EX", 10, "PERSIST"), "ERR syntax error"),
    (("PERSIST", "EX", 10), "ERR syntax error"),
    (("PERSIST", "ENX"), "ERR syntax error"),
    (("ENX", "PERSIST"), "ERR syntax error"),
    (("SATURATE", "SATURATE"), "ERR syntax error"),
    (("EX", 10, "EX", 20), "ERR syntax error"),
    (("LBOUND",), "ERR syntax error"),
    (("ENX",), "ERR ENX flag requires an expiration"),
    (("BYINT", "abc"), "ERR Increment is not an integer or out of range"),
    (("BYINT", "1.5"), "ERR Increment is not an integer or out of range"),
    (("BYFLOAT", "abc"), "ERR Increment is not a valid float"),
    (("UBOUND", "12.5"), "ERR UBOUND is not an integer or out of range"),
    (("LBOUND", "inf"), "ERR LBOUND is not an integer or out of range"),
    (("BYFLOAT", 1, "UBOUND", "abc"), "ERR UBOUND is not a valid float"),
    (("BYINT", 1, "LBOUND", 10, "UBOUND", 5), "ERR LBOUND can't be greater than UBOUND"),
    (("BYFLOAT", 1, "LBOUND", "inf"), "ERR LBOUND can't be greater than UBOUND"),
    (("EX", 0), "ERR invalid expire time in 'increx' command"),
    (("PX", -1), "ERR invalid expire time in 'increx' command"),
])
def test_increx_argument_errors(env, args, error):
    assert env.error("INCREX", "k", *args) == error
    assert env("EXISTS", "k") == 0


# --- AGGREGATE COUNT (ZUNION, ZINTER, ZUNIONSTORE, ZINTERSTORE) -------------------------

def _count_setup(env):
    env("ZADD", "s1", 1, "foo", 1, "bar")
    env("ZADD", "s2", 2, "foo", 2, "bar")
    env("ZADD", "s3", 3, "foo")
    env("SADD", "plain", "foo", "baz")


def test_aggregate_count_union_and_store(env):
    _count_setup(env)
    # redis#14892's example: the scores are ignored, each set counts once
    assert env("ZUNIONSTORE", "out", 3, "s1", "s2", "s3", "AGGREGATE", "COUNT") == 2
    assert env("ZRANGE", "out", 0, -1, "WITHSCORES") == [b"bar", 2.0, b"foo", 3.0]
    assert env("ZUNION", 3, "s1", "s2", "s3", "aggregate", "count", "WITHSCORES") == \
        [b"bar", 2.0, b"foo", 3.0]
    # with WEIGHTS each set adds its weight; plain sets count too
    assert env("ZUNION", 3, "s1", "s3", "plain", "WEIGHTS", 2, 10, "0.5", "AGGREGATE", "COUNT",
               "WITHSCORES") == [b"baz", 0.5, b"bar", 2.0, b"foo", 12.5]
    assert env("ZUNION", 2, "s1", "s3", "AGGREGATE", "COUNT") == [b"bar", b"foo"]


def test_aggregate_count_inter_and_store(env):
    _count_setup(env)
    assert env("ZINTER", 3, "s1", "s2", "s3", "AGGREGATE", "COUNT", "WITHSCORES") == [b"foo", 3.0]
    assert env("ZINTERSTORE", "out", 2, "s1", "s2", "WEIGHTS", 1, -3, "AGGREGATE", "COUNT") == 2
    assert env("ZRANGE", "out", 0, -1, "WITHSCORES") == [b"bar", -2.0, b"foo", -2.0]
    assert env.error("ZINTER", 2, "s1", "s2", "AGGREGATE", "AVG") == "ERR syntax error"
    assert env.error("ZUNIONSTORE", "o", 1, "s1", "AGGREGATE", "COUNT", "WITHSCORES") == \
        "ERR syntax error"


def test_aggregate_count_in_command_docs(env):
    for name in ("zunion", "zinter", "zunionstore", "zinterstore"):
        [(_, doc)] = env("COMMAND", "DOCS", name).items
        fields = dict(doc.items)
        assert [b"8.8.0", b"Added `COUNT` aggregate option."] in fields[b"history"].items
        tokens = str(fields[b"arguments"])
        assert "b'count'" in tokens.lower(), name


# --- subkey notifications (S, T, I, V) ---------------------------------------------------

def _messages(pubsub, count: int) -> list[tuple[bytes, bytes]]:
    out = []
    for _ in range(count):
        message = pubsub.get_message(timeout=5)
        while message is not None and message["type"] != "pmessage":
            message = pubsub.get_message(timeout=5)
        assert message is not None, out
        out.append((message["channel"], message["data"]))
    return out


def test_subkey_channels_for_hash_fields(r):
    """redis.io's "Redis subkey notifications" page: its channels and payloads, with
    notify.c's <len>:<subkey> encoding (the page's example miscounts the lengths)."""
    r.config_set("notify-keyspace-events", "STIVh")
    assert r.config_get("notify-keyspace-events") == {"notify-keyspace-events": "hSTIV"}
    pubsub = r.pubsub()
    pubsub.psubscribe("__subkey*")
    r.hset("myhash", mapping={"field1": "val1", "f2": "v"})
    assert _messages(pubsub, 5) == [
        (b"__subkeyspace@0__:myhash", b"hset|6:field1,2:f2"),
        (b"__subkeyevent@0__:hset", b"6:myhash|6:field1,2:f2"),
        (b"__subkeyspaceitem@0__:myhash\nfield1", b"hset"),
        (b"__subkeyspaceitem@0__:myhash\nf2", b"hset"),
        (b"__subkeyspaceevent@0__:hset|myhash", b"6:field1,2:f2"),
    ]
    r.config_set("notify-keyspace-events", "Th")
    r.hdel("myhash", "nope", "f2")
    r.hincrby("myhash", "n", 2)
    r.execute_command("HEXPIRE", "myhash", 100, "FIELDS", 2, "n", "nope")
    r.execute_command("HPERSIST", "myhash", "FIELDS", 1, "n")
    r.hsetnx("myhash", "n", "x")  # not set: no event
    r.delete("myhash")  # a key event only: no subkey message
    r.hset("a\nb", "f", "v")
    assert _messages(pubsub, 5) == [
        (b"__subkeyevent@0__:hdel", b"6:myhash|2:f2"),
        (b"__subkeyevent@0__:hincrby", b"6:myhash|1:n"),
        (b"__subkeyevent@0__:hexpire", b"6:myhash|1:n"),
        (b"__subkeyevent@0__:hpersist", b"6:myhash|1:n"),
        (b"__subkeyevent@0__:hset", b"3:a\nb|1:f"),
    ]
    # without the hash class, or without a subkey channel flag, nothing
    r.config_set("notify-keyspace-events", "KEA")
    r.config_set("notify-keyspace-events", "STIV")
    r.hset("myhash", "f", "v")
    assert pubsub.get_message(timeout=0.2) is None
    pubsub.close()
    r.config_set("notify-keyspace-events", "")


# --- XIDMPRECORD's refusals ----------------------------------------------------------------

def test_xidmprecord_argument_errors(env):
    # IDs of now: an iid ages from its entry ID's time (IDMP-DURATION)
    A, B, C = f"{T0}-1", f"{T0 + 1}-1", f"{T0}-2"
    assert env.error("XIDMPRECORD", "s", "p", "i", A) == "ERR no such key"
    env("SET", "str", "v")
    assert env.error("XIDMPRECORD", "str", "p", "i", A).startswith("WRONGTYPE")
    env("XADD", "s", A, "f", "v")
    env("XADD", "s", B, "f", "v")
    assert env.error("XIDMPRECORD", "s", "", "i", A) == \
        "ERR IDMP requires a non-empty producer ID"
    assert env.error("XIDMPRECORD", "s", "p", "", A) == \
        "ERR IDMP requires a non-empty idempotent ID"
    assert env.error("XIDMPRECORD", "s", "p", "i", "bad") == \
        "ERR Invalid stream ID specified as stream command argument"
    assert env.error("XIDMPRECORD", "s", "p", "i", C) == \
        "ERR The specified stream ID was deleted or doesn't exist"
    env.take()
    assert env("XIDMPRECORD", "s", "p", "i", A) == b"OK"
    assert env("XIDMPRECORD", "s", "p", "i", A) == b"OK"  # the same again: nothing new
    assert env.take() == [[b"XIDMPRECORD", b"s", b"p", b"i", A.encode()]]
    assert env.error("XIDMPRECORD", "s", "p", "i", B) == \
        "ERR The specified IDMP producer-id/idempotent-id pair maps to a different stream ID"
    env("XDEL", "s", B)
    assert env.error("XIDMPRECORD", "s", "p", "j", B) == \
        "ERR The specified stream ID was deleted or doesn't exist"
    assert env.error("XIDMPRECORD", "s", "p", "i") == \
        "ERR wrong number of arguments for 'xidmprecord' command"
    # an AOF rewrite keeps the records of deleted entries: loading takes them back
    from rillet.commands.streams import xidmprecord

    env.server.state.loading = True
    assert xidmprecord(env.client, [b"XIDMPRECORD", b"s", b"p", b"j", B.encode()]) == OK


# --- HOTKEYS ---------------------------------------------------------------------------------

def _report(env) -> dict:
    reply = env("HOTKEYS", "GET")
    assert isinstance(reply, list) and len(reply) == 1  # one node's map, for aggregation
    return dict(reply[0].items)


def test_hotkeys_session(env):
    assert env("HOTKEYS", "GET") is None
    assert env("HOTKEYS", "STOP") is None
    assert env("HOTKEYS", "START", "METRICS", 2, "CPU", "NET", "COUNT", 2) == b"OK"
    for _ in range(5):
        env("SET", "hot", "v")
    env("SET", "warm", "v")
    env("MSET", "warm", "v", "cold", "v")
    env("EVAL", "redis.call('set', KEYS[1], 1)", 1, "hot")
    env("PING")  # no keys: not counted
    report = _report(env)
    assert list(report) == [
        b"tracking-active", b"sample-ratio", b"selected-slots", b"all-commands-all-slots-us",
        b"net-bytes-all-commands-all-slots", b"collection-start-time-unix-ms",
        b"collection-duration-ms", b"total-cpu-time-user-ms", b"total-cpu-time-sys-ms",
        b"total-net-bytes", b"by-cpu-time-us", b"by-net-bytes"]
    assert report[b"tracking-active"] == 1 and report[b"sample-ratio"] == 1
    assert report[b"selected-slots"] == [[0, 16383]] and report[b"collection-start-time-unix-ms"] == T0
    by_net = report[b"by-net-bytes"]
    assert by_net[0::2] == [b"hot", b"warm"]  # COUNT 2, the biggest first
    # the requests' RESP bytes; the script's own SET counts as EVAL's
    set_hot = len(b"*3\r\n$3\r\nSET\r\n$3\r\nhot\r\n$1\r\nv\r\n")
    eval_hot = len(b"*4\r\n$4\r\nEVAL\r\n$29\r\nredis.call('set', KEYS[1], 1)\r\n"
                   b"$1\r\n1\r\n$3\r\nhot\r\n")
    assert by_net[1] == 5 * set_hot + eval_hot
    assert len(report[b"by-cpu-time-us"]) <= 4
    assert report[b"net-bytes-all-commands-all-slots"] == report[b"total-net-bytes"]
    assert env.error("HOTKEYS", "START", "METRICS", 1, "CPU") == \
        "ERR hotkey tracking session already in progress"
    assert env.error("HOTKEYS", "RESET") == \
        "ERR hotkey tracking session in progress, stop tracking first"
    env.clock.advance(1500)
    assert env("HOTKEYS", "STOP") == b"OK"
    report = _report(env)
    assert report[b"tracking-active"] == 0 and report[b"collection-duration-ms"] == 1500
    env("SET", "hot", "v")  # stopped: not counted
    assert _report(env)[b"by-net-bytes"] == by_net
    assert env("HOTKEYS", "RESET") == b"OK"
    assert env("HOTKEYS", "GET") is None


def test_hotkeys_metrics_and_duration(env):
    env("HOTKEYS", "START", "METRICS", 1, "NET", "DURATION", 2, "SAMPLE", 5)
    report = _report(env)
    assert b"total-cpu-time-user-ms" not in report and b"by-cpu-time-us" not in report
    assert report[b"sample-ratio"] == 5
    env.clock.advance(2500)
    report = _report(env)
    assert report[b"tracking-active"] == 0 and report[b"collection-duration-ms"] == 2000
    env("HOTKEYS", "RESET")
    # an unknown metric is skipped when a known one is there (forward compatibility)
    assert env("HOTKEYS", "START", "METRICS", 2, "GPU", "CPU") == b"OK"
    report = _report(env)
    assert b"by-cpu-time-us" in report and b"by-net-bytes" not in report


def test_hotkeys_on_a_server(r):
    """Over the wire: the compiled fast path is gated off while a session runs."""
    assert r.execute_command("HOTKEYS", "START", "METRICS", 1, "NET") == b"OK"
    other = r.connection_pool.make_connection()  # a client that connects meanwhile
    other.connect()
    for _ in range(3):
        r.set("x", "v")
        other.send_command("GET", "y")
        other.read_response()
    assert r.execute_command("HOTKEYS", "STOP") == b"OK"
    [report] = r.execute_command("HOTKEYS", "GET")
    fields = report if isinstance(report, dict) else dict(zip(report[0::2], report[1::2], strict=True))
    assert fields[b"by-net-bytes"][0::2] == [b"x", b"y"]
    assert r.execute_command("HOTKEYS", "RESET") == b"OK"
    other.disconnect()


@pytest.mark.parametrize(("args", "error"), [
    ((), "ERR METRICS parameter is required"),
    (("METRICS",), "ERR METRICS parameter is required"),
    (("COUNT", 1), "ERR METRICS parameter is required"),
    (("METRICS", 0), "ERR METRICS count must be > 0 and <= 2"),
    (("METRICS", 3, "CPU", "NET"), "ERR METRICS count must be > 0 and <= 2"),
    (("METRICS", "x"), "ERR METRICS count must be > 0 and <= 2"),
    (("METRICS", 2, "CPU"), "ERR METRICS count does not match number of metric types provided"),
    (("METRICS", 1, "CPU", "NET"), "ERR syntax error"),
    (("METRICS", 1, "GPU"), "ERR METRICS no valid metrics passed. Supported: CPU|NET"),
    (("METRICS", 2, "CPU", "cpu"), "ERR METRICS CPU defined more than once!"),
    (("METRICS", 2, "NET", "NET"), "ERR METRICS NET defined more than once!"),
    (("METRICS", 1, "CPU", "COUNT", 0), "ERR COUNT must be between 1 and 64"),
    (("METRICS", 1, "CPU", "COUNT", 100), "ERR COUNT must be between 1 and 64"),
    (("METRICS", 1, "CPU", "DURATION", 0), "ERR DURATION must be between 1 and 1000000"),
    (("METRICS", 1, "CPU", "SAMPLE", 0), "ERR SAMPLE ratio must be positive"),
    (("METRICS", 1, "CPU", "SLOTS", 2, 0, 5),
     "ERR SLOTS parameter cannot be used in non-cluster mode"),
    (("METRICS", 1, "CPU", "COUNT"), "ERR syntax error"),
])
def test_hotkeys_start_errors(env, args, error):
    assert env.error("HOTKEYS", "START", *args) == error
    assert env("HOTKEYS", "GET") is None


def test_hotkeys_subcommand_errors(env):
    assert env.error("HOTKEYS") == "ERR wrong number of arguments for 'hotkeys' command"
    assert env.error("HOTKEYS", "GET", "x") == \
        "ERR wrong number of arguments for 'hotkeys|get' command"
    assert env.error("HOTKEYS", "NOPE").startswith("ERR unknown subcommand 'NOPE'.")


# --- volatile-lrm / allkeys-lrm (Redis 8.6) ----------------------------------------------

def _later(env, ms: int) -> None:
    env.clock.advance(ms)
    env.server.state.memory.tick()  # the cron's LRU clock


def test_lrm_clock_moves_on_writes_only(env):
    """redis.io's key eviction page: LRM evicts the least recently modified keys, so a
    key that is only read ages, one that is written does not."""
    env("CONFIG", "SET", "maxmemory-policy", "allkeys-lrm")
    assert env("CONFIG", "GET", "maxmemory-policy").items == [(b"maxmemory-policy", b"allkeys-lrm")]
    env("SET", "read", "v")
    env("RPUSH", "written", "a")
    env("SET", "n", 1)
    _later(env, 100_000)
    for _ in range(3):
        env("GET", "read")
        env("RPUSH", "written", "b")
        env("INCR", "n")
    assert env("OBJECT", "IDLETIME", "read") == 100
    assert env("OBJECT", "IDLETIME", "written") == 0
    assert env("OBJECT", "IDLETIME", "n") == 0
    env("CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
    env("GET", "read")
    assert env("OBJECT", "IDLETIME", "read") == 0


def test_lrm_evicts_the_least_recently_modified(env):
    env("CONFIG", "SET", "maxmemory-policy", "volatile-lrm")
    env("CONFIG", "SET", "maxmemory-samples", 64)
    for i in range(20):
        env("SET", f"k{i}", "x" * 1000, "EX", 1000)
    env("SET", "persistent", "x" * 1000)
    _later(env, 50_000)
    for i in range(10, 20):
        env("SETRANGE", f"k{i}", 0, "y")  # modified: young again
    for i in range(10):
        env("GET", f"k{i}")  # only read: they stay old
    used = env.server.state.memory.used()
    env("CONFIG", "SET", "maxmemory", used - 3000)
    env("SET", "trigger", "v")
    gone = [i for i in range(20) if not env("EXISTS", f"k{i}")]
    assert gone and all(i < 10 for i in gone)
    assert env("EXISTS", "persistent") == 1


# --- the table: arity errors in Redis's generic form, COMMAND INFO/DOCS entries ----------

@pytest.mark.parametrize(("name", "argv"), [("increx", ["INCREX"])])
def test_arity_errors_are_redis_generic_form(env, name, argv):
    assert env.error(*argv) == f"ERR wrong number of arguments for '{name}' command"


@pytest.mark.parametrize(("name", "since"), [("increx", b"8.8.0"), ("hotkeys", b"8.6.0"),
                                             ("hotkeys|start", b"8.6.0")])
def test_command_info_and_docs_exist(env, name, since):
    [info] = env("COMMAND", "INFO", name)
    assert info[0] == name.encode()
    [(entry, doc)] = env("COMMAND", "DOCS", name).items
    assert entry == name.encode()
    fields = dict(doc.items)
    assert fields[b"since"] == since and fields[b"summary"]
    assert b"arguments" in fields or b"subcommands" in fields
