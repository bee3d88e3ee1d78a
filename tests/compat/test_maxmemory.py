"""maxmemory against Redis 8.2.3: OOM refusals, MULTI/EXEC, scripts, eviction, settings.

Each side runs in a server of its own (maxmemory changes would leak into the
session servers); every test starts from FLUSHALL and maxmemory 0. Memory
figures differ between the two (docs/compat.md), so a limit is set either
far below what is used (`1`: every check fails) or relative to each server's
own used_memory; replies are compared byte for byte.
"""

from __future__ import annotations

import contextlib
import re
import time

import pytest

from tests.helpers import servers
from tests.helpers.diff import Pair, with_lrm_policies

pytestmark = pytest.mark.needs_redis

OOM = b"-OOM command not allowed when used memory > 'maxmemory'.\r\n"


@pytest.fixture(scope="module")
def handles():
    yield from servers.own_pair8()


def _reset(pair: Pair) -> None:
    for wire in (pair.ours, pair.ref):
        wire.call("CONFIG", "SET", "maxmemory", "0")
        wire.call("CONFIG", "SET", "maxmemory-policy", "noeviction")
        wire.call("FUNCTION", "FLUSH")
        wire.call("FLUSHALL")
        wire.call("CONFIG", "RESETSTAT")


@pytest.fixture
def pair(handles):
    ours, ref = handles
    pair = Pair(ours.port, ref.port)
    _reset(pair)
    yield pair
    _reset(pair)
    pair.close()


def _limit(pair: Pair, value: str = "1") -> None:
    pair.check("CONFIG", "SET", "maxmemory", value)


def test_noeviction_refuses_denyoom_commands_only(pair):
    pair.check("SET", "k", "v")
    pair.check("RPUSH", "l", "a", "b")
    pair.check("XADD", "s", "1-1", "f", "v")
    _limit(pair)
    for args in (("SET", "k", "v2"), ("SET", "new", "v"), ("XADD", "s", "*", "f", "v"),
                 ("LPUSH", "l", "x"), ("INCR", "n"), ("HSET", "h", "f", "v"), ("SADD", "z", "m"),
                 ("ZADD", "zz", "1", "m"), ("APPEND", "k", "x"), ("SETRANGE", "k", "0", "x"),
                 ("XGROUP", "CREATE", "s", "g", "0")):
        assert pair.check(*args) == OOM, args
    # Reads and commands that cannot grow memory still run.
    pair.check("GET", "k")
    pair.check("XRANGE", "s", "-", "+")
    pair.check("LPOP", "l")
    pair.check("EXPIRE", "k", "100")
    pair.check("XTRIM", "s", "MAXLEN", "0")
    pair.check("DEL", "k")
    pair.check("PING")
    pair.check("INFO", "nosuchsection")
    # An error in arity comes first; an unknown command too.
    pair.check("SET", "k")
    pair.check("NOSUCHCOMMAND", "x")
    # Back under the limit, writes are accepted again.
    pair.check("CONFIG", "SET", "maxmemory", "0")
    pair.check("SET", "k", "v3")


def test_multi_under_oom(pair):
    pair.check("SET", "k", "v")
    _limit(pair)
    pair.check("MULTI")
    # Redis 8 refuses only the DENYOOM commands while queuing; the EXEC is aborted.
    assert pair.check("SET", "k", "v2") == OOM
    pair.check("GET", "k")
    pair.check("EXEC")
    pair.check("MULTI")
    pair.check("GET", "k")
    pair.check("DISCARD")
    pair.check("GET", "k")


def test_exec_holding_a_denyoom_command(pair, handles):
    ours, ref = handles
    other = Pair(ours.port, ref.port)
    try:
        pair.check("MULTI")
        pair.check("SET", "k", "v")
        pair.check("GET", "k")
        other.check("CONFIG", "SET", "maxmemory", "1")
        pair.check("EXEC")  # EXECABORT ... OOM
        pair.check("EXISTS", "k")
        pair.check("MULTI")
        pair.check("DISCARD")
        # An EXEC of reads only runs.
        other.check("CONFIG", "SET", "maxmemory", "0")
        pair.check("MULTI")
        pair.check("GET", "k")
        other.check("CONFIG", "SET", "maxmemory", "1")
        pair.check("EXEC")
    finally:
        other.close()


SET_SCRIPT = "return redis.call('set', KEYS[1], 'v')"
GET_SCRIPT = "return redis.call('get', KEYS[1])"


def test_scripts_under_oom(pair):
    pair.check("SET", "k", "v0")
    pair.check("FUNCTION", "LOAD",
               "#!lua name=lib\n"
               "redis.register_function('w', function(keys) return redis.call('set', keys[1], 'f') end)\n"
               "redis.register_function{function_name='w_oom', callback=function(keys) "
               "return redis.call('set', keys[1], 'f') end, flags={'allow-oom'}}\n"
               "redis.register_function{function_name='r', callback=function(keys) "
               "return redis.call('get', keys[1]) end, flags={'no-writes'}}\n")
    pair.check("SCRIPT", "LOAD", SET_SCRIPT)
    _limit(pair)
    # No shebang: the script runs and its first write gets the OOM error.
    pair.check("EVAL", SET_SCRIPT, "1", "k")
    pair.check("EVAL", "return redis.pcall('set', KEYS[1], 'v')", "1", "k")
    pair.check("EVAL", GET_SCRIPT, "1", "k")
    pair.check("EVAL", "redis.call('del', KEYS[1]); return redis.call('set', KEYS[1], 'v')", "1", "k")
    pair.check("EVAL", "redis.call('get', KEYS[1]); return redis.call('set', KEYS[1], 'v')", "1", "k")
    pair.check("EVALSHA", "a58bc1de7f2fe5d5d7a6aa44b2e80cb0c1ad0a3a", "1", "k")
    # Declared flags: refused up front unless allow-oom or no-writes.
    pair.check("EVAL", "#!lua\n" + GET_SCRIPT, "1", "k")
    pair.check("EVAL", "#!lua flags=no-writes\n" + GET_SCRIPT, "1", "k")
    pair.check("EVAL", "#!lua flags=allow-oom\n" + SET_SCRIPT, "1", "k")
    pair.check("EVAL_RO", GET_SCRIPT, "1", "k")
    pair.check("FCALL", "w", "1", "k")
    pair.check("FCALL", "w_oom", "1", "k")
    pair.check("FCALL", "r", "1", "k")
    pair.check("FCALL_RO", "r", "1", "k")
    pair.check("GET", "k")
    pair.check("MULTI")
    pair.check("EVAL", SET_SCRIPT, "1", "k")
    pair.check("EXEC")


def test_scripts_without_allow_oom_do_not_write_over_maxmemory(pair):
    """Issue 29: whatever else a script declares (allow-stale, no-cluster) or however
    it writes (pcall, a second write after a read, EVALSHA of a flagged script), a
    script without allow-oom does not write over maxmemory, with an eviction policy
    that cannot free enough too."""
    pair.check("SET", "k", "v0")
    flagged = "#!lua flags=allow-stale,no-cluster\n" + SET_SCRIPT
    sha = pair.check("SCRIPT", "LOAD", flagged).split(b"\r\n")[1].decode()
    for policy in ("noeviction", "allkeys-lru", "volatile-ttl"):
        pair.check("CONFIG", "SET", "maxmemory-policy", policy)
        _limit(pair)
        for args in [("EVAL", flagged, "1", "k"),
                     ("EVAL", "#!lua flags=no-cluster\nreturn redis.pcall('incr', 'n')", "0"),
                     ("EVALSHA", sha, "1", "k"),
                     ("EVAL", "redis.call('get', KEYS[1]) return redis.pcall('append', KEYS[1], 'x')", "1", "k"),
                     ("EVAL", "return redis.pcall('lpush', 'l', 'x')", "0")]:
            pair.check(*args)
        pair.check("CONFIG", "SET", "maxmemory", "0")
        pair.check("MGET", "k", "n", "l")


def test_volatile_policy_without_volatile_keys_refuses(pair):
    pair.check("SET", "k", "v")
    for policy in ("volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"):
        pair.check("CONFIG", "SET", "maxmemory-policy", policy)
        _limit(pair)
        assert pair.check("SET", "k2", "v") == OOM
        pair.check("CONFIG", "SET", "maxmemory", "0")
    pair.check("DBSIZE")


def test_object_freq_and_idletime(pair):
    pair.check("SET", "k", "v")
    pair.check("OBJECT", "FREQ", "k")  # the NO_LFU error
    pair.check("OBJECT", "IDLETIME", "k")  # 0 (no time passed)
    pair.check("OBJECT", "FREQ", "missing")
    pair.check("CONFIG", "SET", "maxmemory-policy", "allkeys-lfu")
    pair.check("OBJECT", "IDLETIME", "k")  # the NO_LRU error
    pair.check("SET", "fresh", "v")
    pair.check("OBJECT", "FREQ", "fresh")  # LFU_INIT_VAL
    pair.check("GET", "fresh")
    pair.check("OBJECT", "FREQ", "fresh")  # the first hit always counts
    pair.check("TYPE", "fresh")
    pair.check("EXISTS", "fresh")
    pair.check("TTL", "fresh")
    pair.check("OBJECT", "FREQ", "fresh")  # not touched by TYPE, EXISTS, TTL
    pair.check("CONFIG", "SET", "maxmemory-policy", "volatile-lfu")
    pair.check("OBJECT", "IDLETIME", "fresh")
    pair.check("CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
    pair.check("OBJECT", "FREQ", "fresh")


def test_restore_sets_idletime_or_freq(pair):
    pair.check("SET", "src", "v")
    for wire in (pair.ours, pair.ref):
        payload = wire.call("DUMP", "src").split(b"\r\n", 1)[1][:-2]
        wire.call("RESTORE", "idle", "0", payload, "IDLETIME", "1000")
        wire.call("RESTORE", "both", "0", payload, "FREQ", "42")
    pair.check("OBJECT", "IDLETIME", "idle")
    pair.check("OBJECT", "IDLETIME", "both")
    pair.check("CONFIG", "SET", "maxmemory-policy", "allkeys-lfu")
    for wire in (pair.ours, pair.ref):
        payload = wire.call("DUMP", "src").split(b"\r\n", 1)[1][:-2]
        wire.call("RESTORE", "freq", "0", payload, "FREQ", "42")
        wire.call("RESTORE", "idle2", "0", payload, "IDLETIME", "1000")
    pair.check("OBJECT", "FREQ", "freq")
    pair.check("OBJECT", "FREQ", "idle2")


def test_settings(pair):
    for name in ("maxmemory", "maxmemory-policy", "maxmemory-samples", "maxmemory-eviction-tenacity",
                 "lfu-log-factor", "lfu-decay-time", "replica-ignore-maxmemory",
                 "slave-ignore-maxmemory"):
        pair.check("CONFIG", "GET", name)
    for name, value in (("maxmemory-samples", "0"), ("maxmemory-samples", "65"),
                        ("maxmemory-samples", "64"), ("maxmemory-samples", "x"),
                        ("maxmemory-eviction-tenacity", "101"), ("maxmemory-eviction-tenacity", "100"),
                        ("maxmemory-eviction-tenacity", "-1"), ("lfu-log-factor", "-1"),
                        ("lfu-log-factor", "100"), ("lfu-decay-time", "-1"), ("lfu-decay-time", "7"),
                        ("maxmemory-policy", "lru"), ("maxmemory", "-1"), ("maxmemory", "1kb"),
                        ("replica-ignore-maxmemory", "maybe")):
        pair.check("CONFIG", "SET", name, value, normalise=with_lrm_policies)
        pair.check("CONFIG", "GET", name)
    for name, value in (("maxmemory-samples", "5"), ("maxmemory-eviction-tenacity", "10"),
                        ("lfu-log-factor", "10"), ("lfu-decay-time", "1"), ("maxmemory", "0")):
        pair.check("CONFIG", "SET", name, value)


def _info(wire, section: str) -> dict[str, str]:
    raw = wire.call("INFO", section).decode()
    return dict(line.split(":", 1) for line in raw.splitlines()[1:] if ":" in line)


def test_info_fields(pair):
    _limit(pair, "100mb")
    for wire in (pair.ours, pair.ref):
        memory = _info(wire, "memory")
        for field in ("used_memory", "used_memory_human", "used_memory_rss", "used_memory_peak",
                      "used_memory_startup", "used_memory_dataset", "maxmemory", "maxmemory_human",
                      "maxmemory_policy", "mem_not_counted_for_evict"):
            assert field in memory, field
        assert memory["maxmemory"] == str(100 * 1024 * 1024)
        assert memory["maxmemory_human"] == "100.00M"
        assert memory["maxmemory_policy"] == "noeviction"
        assert 0 < int(memory["used_memory"]) < 100 * 1024 * 1024
        stats = _info(wire, "stats")
        for field in ("evicted_keys", "total_eviction_exceeded_time", "current_eviction_exceeded_time"):
            assert field in stats, field


@pytest.mark.parametrize("policy", ["allkeys-random", "allkeys-lru", "allkeys-lfu",
                                    "volatile-random", "volatile-lru", "volatile-lfu", "volatile-ttl"])
def test_eviction_makes_room(pair, handles, policy):
    """Both servers evict to accept writes; the keys with no TTL stay under volatile-*."""
    big = "x" * 2000
    for wire in (pair.ours, pair.ref):
        for i in range(200):
            wire.call("SET", f"key:{i}", big)
            if i % 2:
                wire.call("PEXPIRE", f"key:{i}", 3_600_000 + i)
        wire.call("SET", "keep", "v")  # no TTL
        wire.call("CONFIG", "SET", "notify-keyspace-events", "Ee")
    subs = Pair(handles[0].port, handles[1].port)
    try:
        subs.check("SUBSCRIBE", "__keyevent@0__:evicted")
        pair.check("CONFIG", "SET", "maxmemory-policy", policy)
        for wire in (pair.ours, pair.ref):
            used = int(_info(wire, "memory")["used_memory"])
            # Some 50 of the 2 kB keys must go (whatever else either server counts).
            wire.call("CONFIG", "SET", "maxmemory", str(used - 100_000))
        pair.check("SET", "newkey", big)
        if policy.startswith("volatile"):
            pair.check("GET", "keep")
        for wire in (pair.ours, pair.ref):
            size = int(wire.call("DBSIZE")[1:-2])
            assert 100 <= size < 200, (policy, size)
            evicted = int(_info(wire, "stats")["evicted_keys"])
            assert evicted >= 202 - size, (wire is pair.ours, policy, evicted, size)
            if policy.startswith("volatile"):
                # Only keys with a TTL go.
                assert wire.call("EXISTS", "key:0", "key:2", "key:198") == b":3\r\n"
        for wire in (subs.ours, subs.ref):
            message = wire.read_reply()
            assert message.startswith(b"*3\r\n$7\r\nmessage\r\n$22\r\n__keyevent@0__:evicted\r\n$")
    finally:
        subs.close()
        for wire in (pair.ours, pair.ref):
            wire.call("CONFIG", "SET", "notify-keyspace-events", "")


@pytest.mark.slow
def test_issue_scenario_stream_under_50mb(handles):
    """Issue 18: maxmemory 50mb, noeviction, 500-byte XADDs: refused at a comparable count."""
    counts = {}
    for handle in handles:
        client = handle.client()
        try:
            client.flushall()
            client.config_set("maxmemory", "50mb")
            value = b"v" * 500
            refused = None
            sent = 0
            deadline = time.monotonic() + 240
            while refused is None and sent < 200_000 and time.monotonic() < deadline:
                pipe = client.pipeline(transaction=False)
                for _ in range(1000):
                    pipe.execute_command("XADD", "s", "*", "f", value)
                for j, reply in enumerate(pipe.execute(raise_on_error=False)):
                    if isinstance(reply, Exception):
                        assert str(reply) == "command not allowed when used memory > 'maxmemory'."
                        refused = sent + j
                        break
                sent += 1000
            counts[handle.kind] = refused
        finally:
            with contextlib.suppress(Exception):
                client.config_set("maxmemory", "0")
                client.flushall()
            client.close()
    assert counts["redis8"] is not None and counts["rillet"] is not None, counts
    assert 0.85 < counts["rillet"] / counts["redis8"] < 1.15, counts


def test_memory_usage_unchanged_by_access(pair):
    """MEMORY USAGE and OBJECT do not count as accesses (no LFU bump)."""
    pair.check("CONFIG", "SET", "maxmemory-policy", "allkeys-lfu")
    pair.check("SET", "k", "v")
    pair.ours.call("MEMORY", "USAGE", "k")
    pair.ref.call("MEMORY", "USAGE", "k")
    pair.check("OBJECT", "ENCODING", "k")
    pair.check("OBJECT", "FREQ", "k")
    assert re.match(rb":\d+\r\n", pair.ours.call("OBJECT", "FREQ", "k"))


def test_no_eviction_while_clients_are_paused(pair, handles):
    """CLIENT PAUSE WRITE pauses eviction too (Redis's PAUSE_ACTION_EVICT, also under
    PAUSE ALL): a limit lowered meanwhile evicts nothing, reads run, and the keys go
    once the pause ends."""
    big = "x" * 2000
    for wire in (pair.ours, pair.ref):
        for i in range(100):
            wire.call("SET", f"key:{i}", big)
    pair.check("CONFIG", "SET", "maxmemory-policy", "allkeys-random")
    pair.check("CLIENT", "PAUSE", "100000", "WRITE")
    try:
        for wire in (pair.ours, pair.ref):
            used = int(_info(wire, "memory")["used_memory"])
            wire.call("CONFIG", "SET", "maxmemory", str(used - 100_000))
        pair.check("GET", "key:1")
        pair.check("DBSIZE")
        time.sleep(0.3)  # the cron's eviction passes too
        for wire in (pair.ours, pair.ref):
            assert _info(wire, "stats")["evicted_keys"] == "0", wire is pair.ours
    finally:
        pair.check("CLIENT", "UNPAUSE")
    pair.check("SET", "after", "v")  # evicts before it runs
    for wire in (pair.ours, pair.ref):
        assert int(_info(wire, "stats")["evicted_keys"]) > 0, wire is pair.ours


def test_tracking_invalidation_of_an_evicted_key_precedes_the_reply(pair, handles):
    """A key evicted before a command runs is invalidated then, so a tracking client
    reads the invalidation before that command's reply (Redis: evictions run in
    processCommand, outside the command); its own write's comes after the reply."""
    for wire in (pair.ours, pair.ref):
        for i in range(100):
            wire.call("SET", f"pad:{i}", "x" * 2000)
    pair.check("SET", "k", "v", "EX", "1000")  # the only key volatile-lru may evict
    pair.check("CONFIG", "SET", "maxmemory-policy", "volatile-lru")
    tracking = Pair(handles[0].port, handles[1].port)
    try:
        for wire in (tracking.ours, tracking.ref):
            wire.call("HELLO", "3")
        tracking.check("CLIENT", "TRACKING", "ON")
        tracking.check("GET", "k")
        tracking.check("GET", "own")
        for wire in (pair.ours, pair.ref):
            used = int(_info(wire, "memory")["used_memory"])
            wire.call("CONFIG", "SET", "maxmemory", str(used - 50_000))
        # k goes first, then SET is refused: the push, then -OOM.
        tracking.check("SET", "own", "v")
        assert tracking.ours.read_reply() == OOM
        assert tracking.ref.read_reply() == OOM
        pair.check("EXISTS", "k")
        pair.check("CONFIG", "SET", "maxmemory", "0")
        assert tracking.check("SET", "own", "v") == b"+OK\r\n"
        # Its own write's invalidation: after the reply.
        assert tracking.check("PING") == b">2\r\n$10\r\ninvalidate\r\n*1\r\n$3\r\nown\r\n"
        assert tracking.ours.read_reply() == tracking.ref.read_reply() == b"+PONG\r\n"
    finally:
        tracking.close()
