"""SORT and SORT_RO against Redis 8.2.3, raw reply bytes.

Lists, sets (intset and listpack: their iteration order is Redis's) and sorted
sets; BY with string keys, hash fields (`->`) and constants; GET `#` and
patterns; LIMIT at and past the ends; ASC/DESC; ALPHA; STORE (the stored list,
its encoding and TTL); errors in Redis's order. Then seeded generated commands.
Ties between equal ALPHA BY values are kept to lists and small sets, whose load
order is defined (a sorted set is loaded from Redis's hash table, in its order).
"""

from __future__ import annotations

import os
import random

import pytest

from tests.helpers.wire import Wire


def _setup(p) -> None:
    p.check("RPUSH", "l", "3", "1", "10", "2", "-5", "1.5", "2")
    p.check("RPUSH", "al", "b", "a", "C", "c", "", "ab", "a")
    p.check("SADD", "si", "5", "-3", "10", "7")
    p.check("SADD", "sl", "x", "b", "a", "aa", "10")
    p.check("ZADD", "z", "3", "c", "1", "a", "2", "b", "2", "bb")
    p.check("ZADD", "zn", "1", "10", "2", "9", "3", "100")
    p.check("MSET", "w_3", "30", "w_1", "10", "w_10", "-1", "w_2", "x", "w_a", "2", "w_b", "1",
            "n_3", "three", "n_1", "one", "n_10", "ten", "w_5", "5", "w_7", "1e3")
    p.check("HSET", "h_3", "f", "3", "g", "gee3")
    p.check("HSET", "h_1", "f", "-1", "g", "gee1")
    p.check("HSET", "h_10", "f", "2.5")


@pytest.mark.parametrize("key", ["l", "al", "si", "sl", "z", "zn", "nokey"])
@pytest.mark.parametrize("opts", [
    (), ("DESC",), ("ALPHA",), ("ALPHA", "DESC"), ("LIMIT", "0", "2"), ("LIMIT", "1", "3", "DESC"),
    ("LIMIT", "2", "-1"), ("LIMIT", "-3", "2"), ("LIMIT", "5", "100"), ("LIMIT", "100", "1"),
    ("LIMIT", "0", "0"), ("BY", "nosort"), ("BY", "nosort", "DESC"), ("BY", "nosort", "LIMIT", "1", "2"),
    ("BY", "nosort", "DESC", "LIMIT", "1", "2"), ("BY", "nosort", "LIMIT", "9", "2"),
    ("BY", "w_*"), ("BY", "w_*", "DESC"), ("BY", "w_*", "LIMIT", "1", "2"), ("BY", "n_*", "ALPHA"),
    ("BY", "n_*", "ALPHA", "DESC", "LIMIT", "0", "2"), ("BY", "h_*->f"), ("BY", "h_*->g", "ALPHA"),
    ("BY", "h_*->"), ("BY", "h_*->nofield"), ("GET", "#"), ("GET", "w_*"), ("GET", "h_*->g", "GET", "#"),
    ("GET", "nostar"), ("GET", "n_*", "GET", "w_*", "LIMIT", "1", "2", "ALPHA"), ("ALPHA", "BY", "w_*"),
    ("BY", "w_*", "BY", "nosort"), ("BY", "nosort", "BY", "w_*"), ("GET", "#", "ALPHA", "ASC"),
    ("GET", "*"), ("BY", "*"), ("BY", "*", "ALPHA"), ("GET", "h_*->f->g"), ("GET", "*->f"),
])
def test_sort_shapes(pair8, key, opts):
    by = [w for i, w in enumerate(opts) if i and opts[i - 1] == "BY"]
    if key in ("z", "zn") and "ALPHA" in opts and by and by[-1] != "nosort":
        pytest.skip("equal BY values keep the order of Redis's hash table (see the module docstring)")
    _setup(pair8)
    pair8.check("SORT", key, *opts)
    pair8.check("SORT_RO", key, *opts)
    pair8.check("SORT", key, *opts, "STORE", "dst")
    pair8.check("LRANGE", "dst", "0", "-1")
    pair8.check("OBJECT", "ENCODING", "dst")


def test_sort_errors(pair8):
    p = pair8
    _setup(p)
    p.check("SET", "str", "v")
    p.check("XADD", "x", "1-1", "f", "v")
    for cmd in (
        ("SORT", "str"), ("SORT", "x"), ("SORT_RO", "str"), ("SORT", "str", "LIMIT", "x", "1"),
        ("SORT", "str", "FOO"), ("SORT", "l", "FOO"), ("SORT", "l", "LIMIT", "1"), ("SORT", "l", "LIMIT"),
        ("SORT", "l", "LIMIT", "x", "1"), ("SORT", "l", "LIMIT", "1", "x"), ("SORT", "l", "LIMIT", "1", "1.5"),
        ("SORT", "l", "LIMIT", "9223372036854775808", "1"), ("SORT", "l", "BY"), ("SORT", "l", "GET"),
        ("SORT", "l", "STORE"), ("SORT_RO", "l", "STORE", "d"), ("SORT", "al"), ("SORT", "sl"),
        ("SORT", "al", "STORE", "d"), ("EXISTS", "d"), ("SORT", "l", "BY", "n_*"), ("SORT", "l", "LIMIT", "x", "y", "FOO"),
        ("SORT", "l", "FOO", "LIMIT", "x", "1"), ("SORT",), ("SORT_RO",), ("SORT", "l", "ALPHA", "LIMIT", "0"),
        ("SORT", "str", "STORE", "d"), ("SORT", "l", "STORE", "str"), ("TYPE", "str"), ("LRANGE", "str", "0", "-1"),
        ("SORT", "l", "LIMIT", "-9223372036854775808", "9223372036854775807"),
    ):
        p.check(*cmd)


@pytest.mark.parametrize("value", [
    "", "+1", " 1", "1 ", "1e400", "-1e400", "1e-400", "inf", "-inf", "+inf", "nan", "-nan", "0x10",
    "1.5e3", "infinity", "INF", "Infinity", "infin", "1_0", ".5", "5.", "1e", "-", "+", ".", "1e+5",
    "0001", "-0", "1e5x", "1.e5", "-.e5", "++1", "00.5e-0010", "9223372036854775808", "1e0400",
])
def test_sort_numeric_parsing(pair8, value):
    p = pair8
    p.check("RPUSH", "l", value, "0", "2", "-1", "inf")
    p.check("SORT", "l")
    p.check("SORT", "l", "DESC")
    p.check("SET", "w_a", value)
    p.check("RPUSH", "k", "a", "b")
    p.check("SORT", "k", "BY", "w_*")
    p.check("SORT", "k", "BY", "w_*", "DESC")


def test_sort_store_replaces_and_deletes(pair8):
    p = pair8
    _setup(p)
    p.check("SET", "dst", "v", "EX", "100")
    for cmd in (
        ("SORT", "l", "STORE", "dst"), ("TTL", "dst"), ("TYPE", "dst"), ("LRANGE", "dst", "0", "-1"),
        ("SORT", "l", "LIMIT", "0", "0", "STORE", "dst"), ("EXISTS", "dst"),
        ("SORT", "nokey", "STORE", "dst"), ("SORT", "l", "STORE", "dst", "STORE", "dst2"),
        ("EXISTS", "dst"), ("LRANGE", "dst2", "0", "-1"), ("SORT", "l", "GET", "nokey_*", "GET", "#", "STORE", "d3"),
        ("LRANGE", "d3", "0", "-1"), ("SORT", "si", "BY", "nosort", "STORE", "d4"), ("LRANGE", "d4", "0", "-1"),
        ("SORT", "sl", "BY", "nosort", "STORE", "d5"), ("LRANGE", "d5", "0", "-1"),
        ("SORT", "al", "BY", "nosort", "DESC", "STORE", "d6"), ("LRANGE", "d6", "0", "-1"),
        ("SORT", "l", "STORE", "l"), ("LRANGE", "l", "0", "-1"),
    ):
        p.check(*cmd)


def test_sort_store_encoding(pair8):
    p = pair8
    p.check("RPUSH", "big", *[str(i) for i in range(300)])
    p.check("RPUSH", "long", "x" * 9000, "y")
    for key in ("big", "long"):
        p.check("SORT", key, "ALPHA", "STORE", "d")
        p.check("OBJECT", "ENCODING", "d")
        p.check("LLEN", "d")


def test_sort_converts_sorted_sets(pair8):
    p = pair8
    p.check("ZADD", "z", "1", "a", "2", "b")
    p.check("OBJECT", "ENCODING", "z")
    p.check("SORT_RO", "z", "BY", "nosort")
    p.check("OBJECT", "ENCODING", "z")
    p.check("SORT", "nokey")
    p.check("SORT", "z", "ALPHA", "DESC")
    p.check("DUMP", "z")


def test_sort_hash_field_expiry(pair8):
    p = pair8
    p.check("RPUSH", "l", "1", "2")
    p.check("HSET", "h_1", "f", "5", "g", "x")
    p.check("HSET", "h_2", "f", "1")
    p.check("HPEXPIRE", "h_2", "1", "FIELDS", "1", "f")
    import time
    time.sleep(0.05)
    p.check("SORT", "l", "BY", "h_*->f", "GET", "h_*->f")
    p.check("EXISTS", "h_2")


def test_sort_getkeys_and_info(pair8):
    p = pair8
    for argv in (("SORT", "l"), ("SORT", "l", "STORE", "d"), ("SORT", "l", "STORE", "d", "STORE", "e"),
                 ("SORT", "l", "LIMIT", "0", "1", "STORE", "d"), ("SORT", "l", "GET", "STORE", "STORE", "d"),
                 ("SORT", "l", "BY", "STORE", "GET", "#"), ("SORT", "l", "STORE"), ("SORT_RO", "l", "STORE", "d"),
                 ("SORT", "l", "STORE", "limit", "1", "2")):
        p.check("COMMAND", "GETKEYS", *argv)
    for name in ("sort", "sort_ro", "setbit", "getbit", "bitcount", "bitpos", "bitop", "bitfield", "bitfield_ro"):
        p.check("COMMAND", "INFO", name)


def test_sort_acl_needs_every_key(pair8, rillet_server, redis8_server):
    p = pair8
    _setup(p)
    for user in ("ACL SETUSER u1 on nopass +@all ~*", "ACL SETUSER u2 on nopass +@all ~l ~w_*",
                 "ACL SETUSER u3 on nopass +@all %R~*", "ACL SETUSER u4 on nopass +@all %W~* ~l",
                 "ACL SETUSER u5 on nopass +@all ~l (~* +get)", "ACL SETUSER u6 on nopass +@all allkeys"):
        p.check(*user.split())
    for user in ("u1", "u2", "u3", "u4", "u5", "u6"):
        ours, ref = Wire(rillet_server.port), Wire(redis8_server.port)
        try:
            assert ours.call("AUTH", user, "x") == ref.call("AUTH", user, "x")
            for argv in (("SORT", "l"), ("SORT", "l", "BY", "w_*"), ("SORT", "l", "GET", "#"),
                         ("SORT", "l", "GET", "w_*"), ("SORT", "l", "BY", "nosort"),
                         ("SORT_RO", "l", "BY", "w_*"), ("SORT", "l", "LIMIT", "x", "1", "BY", "w_*"),
                         ("SORT", "l", "BY", "w_*", "LIMIT", "x", "1"), ("SORT", "l", "STORE", "dd")):
                assert ours.call(*argv) == ref.call(*argv), (user, argv)
        finally:
            ours.close()
            ref.close()
    for user in ("u1", "u2", "u3", "u4", "u5", "u6"):
        p.check("ACL", "DELUSER", user)


def _one(rng: random.Random) -> list[str]:
    keys = ["k1", "k2", "k3"]
    k = rng.choice(keys)
    member = lambda: rng.choice(["1", "2", "3", "10", "-1", "a", "b", "x1", "2.5", "", "1e3"])  # noqa: E731
    pattern = lambda: rng.choice(["w_*", "h_*->f", "h_*->g", "nosort", "#", "*", "n_*", "w_*x"])  # noqa: E731
    opt = lambda: rng.choice([  # noqa: E731
        ["DESC"], ["ASC"], ["ALPHA"], ["LIMIT", rng.choice(["0", "1", "-1", "3", "x"]), rng.choice(["1", "2", "-1", "0"])],
        ["GET", pattern()], ["BY", pattern()],
    ])

    def sort_argv() -> list[str]:
        out = [rng.choice(["SORT", "SORT_RO"]), k]
        for _ in range(rng.choice([0, 1, 2, 3])):
            out += opt()
        by = [w for i, w in enumerate(out) if i and out[i - 1] == "BY"]
        # Equal ALPHA BY values keep their load order, which only lists define here.
        if "ALPHA" in out and by and by[-1] != "nosort":
            out[1] = "k1"
        return out

    choices = [
        lambda: ["RPUSH", "k1", member(), member()], lambda: ["LPOP", "k1"],
        lambda: ["SADD", "k2", member(), member()], lambda: ["SREM", "k2", member()],
        lambda: ["ZADD", "k3", rng.choice(["1", "2", "0"]), member()],
        lambda: ["SET", rng.choice(["w_", "n_"]) + member(), member()],
        lambda: ["HSET", "h_" + member(), rng.choice(["f", "g"]), member()],
        sort_argv, sort_argv, sort_argv,
        lambda: [*sort_argv(), "STORE", rng.choice(["d", "k1"])] if rng.random() < 0.7 else ["LRANGE", "d", "0", "-1"],
        lambda: ["LRANGE", "d", "0", "-1"], lambda: ["TYPE", k],
    ]
    argv = rng.choice(choices)()
    if argv[0] == "SORT_RO" and "STORE" in argv:
        argv[0] = "SORT"
    return argv


@pytest.mark.parametrize("seed", range(int(os.environ.get("RILLET_GEN_SEEDS", "12"))))
def test_generated_sort(pair8, seed):
    rng = random.Random(seed)
    for _ in range(250):
        pair8.check(*_one(rng))
    for key in ("k1", "k2", "k3", "d"):
        pair8.check("TYPE", key)
        pair8.check("OBJECT", "ENCODING", key)


@pytest.mark.parametrize("n", [5, 7, 8, 30, 41, 120, 300])
def test_sort_ties_with_limit_follow_redis_partial_sort(pair8, n):
    """Equal ALPHA BY values with a LIMIT go through Redis's pqsort: the same order of ties."""
    rng = random.Random(n)
    p = pair8
    p.check("RPUSH", "l", *[f"e{i}" for i in range(n)])
    for i in range(n):
        if rng.random() < 0.6:
            p.check("SET", f"w_e{i}", rng.choice(["a", "b", "c"]))
    for start, count in [(0, 1), (0, 5), (1, 3), (n // 2, 4), (n - 3, 10), (2, n), (0, n - 1)]:
        for extra in ((), ("DESC",)):
            p.check("SORT", "l", "BY", "w_*", "ALPHA", "LIMIT", str(start), str(count), *extra)
            p.check("SORT", "l", "BY", "w_*", "LIMIT", str(start), str(count), *extra)
            p.check("SORT", "l", "BY", "w_*", "ALPHA", *extra)
            p.check("SORT", "l", "BY", "w_*", "ALPHA", "LIMIT", str(start), str(count), "STORE", "d", *extra)
            p.check("LRANGE", "d", "0", "-1")


def test_sort_in_scripts_sorts_sets(pair8):
    p = pair8
    p.check("SADD", "s", "b", "a", "c", "10", "2")
    p.check("SADD", "si", "5", "3", "9")
    for key in ("s", "si"):
        p.check("EVAL", f"return redis.call('SORT', '{key}', 'BY', 'nosort')", "0")
        p.check("EVAL", f"return redis.call('SORT_RO', '{key}', 'BY', 'nosort', 'DESC')", "0")
        p.check("SORT", key, "BY", "nosort")


def test_sort_and_bitfield_resp3(pair8):
    p = pair8
    p.both("HELLO", "3")
    p.check("RPUSH", "l", "2", "1")
    p.check("SORT", "l", "GET", "nokey_*", "GET", "#")
    p.check("BITFIELD", "b", "OVERFLOW", "FAIL", "INCRBY", "u2", "0", "7", "GET", "u2", "0")
    p.check("SORT", "l", "STORE", "d")
    p.check("BITPOS", "b", "1")


def _store_events(port: int) -> list[bytes]:
    from tests.compat.test_notifications import _cmd

    sub, conn = Wire(port), Wire(port)
    try:
        conn.call("FLUSHALL")
        conn.call("RPUSH", "src", "2", "1")
        conn.call("SET", "dst", "x")
        assert conn.call("CONFIG", "SET", "notify-keyspace-events", "KEA") == b"+OK\r\n"
        sub.send_raw(_cmd("PSUBSCRIBE", "__key*__:*", "sentinel"))
        sub.read_reply()
        sub.read_reply()
        for argv in (("SORT", "src", "STORE", "dst"), ("SORT", "src", "LIMIT", "0", "0", "STORE", "dst"),
                     ("SORT", "src", "LIMIT", "0", "0", "STORE", "dst"), ("SORT_RO", "src")):
            conn.call(*argv)
        conn.call("PUBLISH", "sentinel", "-")
        seen = []
        while b"sentinel" not in (frame := sub.read_reply()):
            seen.append(frame)
        return seen
    finally:
        conn.call("CONFIG", "SET", "notify-keyspace-events", "")
        sub.close()
        conn.close()


def test_sort_store_notifications(rillet_server, redis8_server):
    assert _store_events(rillet_server.port) == _store_events(redis8_server.port)
