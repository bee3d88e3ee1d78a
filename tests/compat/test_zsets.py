"""Sorted set commands against Redis 8.2.3, raw reply bytes."""

from __future__ import annotations

import pytest

from tests.compat.test_lists import _scenario
from tests.compat.test_sets import sorted_array

SCORES = ["1", "1.1", "0.3", "1e20", "1e-5", "123456789012345678", "3.0", "1e21", "1e15", "1e16",
          "-0", "2.5e-7", "12345678.9", "inf", "-inf", "+inf", "-Infinity", "0x10", "1e400",
          "1e-400", "nan", "", " 1", "1 ", "x", "1e-310", "4611686018427387904", "-1.5", ".5", "5."]


@pytest.mark.parametrize("score", SCORES)
def test_score_parsing_and_printing(pair8, score):
    p = pair8
    p.check("ZADD", "z", score, "m")
    p.check("ZSCORE", "z", "m")
    p.check("ZRANGE", "z", "0", "-1", "WITHSCORES")
    p.check("ZINCRBY", "z", score, "m")
    p.check("ZADD", "z", "INCR", "1.5", "m")
    p.check("ZCOUNT", "z", score, "+inf")
    p.check("ZCOUNT", "z", "(" + score, "+inf")
    p.check("ZRANGEBYSCORE", "z", "-inf", score)


def test_zadd_options(pair8):
    p = pair8
    p.check("ZADD", "z", "1", "a", "2", "b", "3", "c")
    for opts in (("NX",), ("XX",), ("GT",), ("LT",), ("CH",), ("INCR",), ("NX", "CH"), ("XX", "CH"),
                 ("GT", "CH"), ("LT", "CH"), ("XX", "GT", "CH"), ("XX", "LT"), ("NX", "XX"),
                 ("GT", "LT"), ("NX", "GT"), ("NX", "LT"), ("INCR", "NX"), ("INCR", "XX"),
                 ("INCR", "GT"), ("INCR", "LT"), ("xx", "incr"), ("CH", "CH")):
        for pairs in (("5", "a"), ("0", "b"), ("9", "new"), ("2", "b", "9", "c"), ("x", "a"), ("1",)):
            p.check("ZADD", "z", *opts, *pairs)
            p.check("ZRANGE", "z", "0", "-1", "WITHSCORES")
    p.check("ZADD", "z")
    p.check("ZADD", "z", "1")
    p.check("ZADD", "z", "FOO", "1", "a")
    p.check("ZADD", "nokey", "XX", "1", "a")
    p.check("ZADD", "nokey", "XX", "INCR", "1", "a")
    p.check("EXISTS", "nokey")
    p.check("ZADD", "z", "INCR", "-inf", "a")
    p.check("ZADD", "z", "INCR", "+inf", "a")
    p.check("ZINCRBY", "z", "inf", "a")
    p.check("ZINCRBY", "z", "x", "a")


def test_zset_reads(pair8):
    p = pair8
    p.check("ZADD", "z", "1", "a", "2", "b", "2", "c", "3", "d")
    for cmd in (
        ("ZCARD", "z"), ("ZCARD", "nokey"), ("ZSCORE", "z", "b"), ("ZSCORE", "z", "zz"),
        ("ZSCORE", "nokey", "a"), ("ZMSCORE", "z", "a", "zz", "d"), ("ZMSCORE", "nokey", "a"),
        ("ZRANK", "z", "c"), ("ZRANK", "z", "zz"), ("ZREVRANK", "z", "a"), ("ZRANK", "z", "a", "WITHSCORE"),
        ("ZREVRANK", "z", "a", "withscore"), ("ZRANK", "z", "zz", "WITHSCORE"), ("ZRANK", "nokey", "a", "WITHSCORE"),
        ("ZRANK", "z", "a", "FOO"), ("ZRANK", "z", "a", "WITHSCORE", "x"),
        ("ZCOUNT", "z", "-inf", "+inf"), ("ZCOUNT", "z", "(1", "3"), ("ZCOUNT", "z", "2", "(2"),
        ("ZCOUNT", "z", "3", "1"), ("ZCOUNT", "z", "x", "1"), ("ZCOUNT", "nokey", "0", "1"),
        ("ZLEXCOUNT", "z", "-", "+"), ("ZLEXCOUNT", "z", "[b", "(d"), ("ZLEXCOUNT", "z", "a", "b"),
        ("ZSCORE", "z"), ("ZMSCORE", "z"),
    ):
        p.check(*cmd)


RANGES = [
    ("0", "-1"), ("1", "2"), ("-2", "-1"), ("-100", "100"), ("3", "1"), ("10", "20"), ("x", "1"),
    ("0", "-1", "WITHSCORES"), ("0", "-1", "REV"), ("0", "1", "REV", "WITHSCORES"),
    ("-inf", "+inf", "BYSCORE"), ("(1", "3", "BYSCORE", "WITHSCORES"), ("2", "2", "BYSCORE"),
    ("(2", "2", "BYSCORE"), ("3", "1", "BYSCORE"), ("3", "1", "BYSCORE", "REV"),
    ("+inf", "-inf", "BYSCORE", "REV", "WITHSCORES"), ("-inf", "+inf", "BYSCORE", "LIMIT", "1", "2"),
    ("-inf", "+inf", "BYSCORE", "LIMIT", "1", "-1"), ("-inf", "+inf", "BYSCORE", "LIMIT", "-1", "2"),
    ("+inf", "-inf", "BYSCORE", "REV", "LIMIT", "1", "2"), ("-inf", "+inf", "BYSCORE", "LIMIT", "0", "0"),
    ("-", "+", "BYLEX"), ("[b", "(d", "BYLEX"), ("+", "-", "BYLEX", "REV"),
    ("(d", "[b", "BYLEX", "REV", "LIMIT", "0", "1"), ("-", "+", "BYLEX", "LIMIT", "2", "10"),
    ("0", "-1", "LIMIT", "0", "1"), ("0", "-1", "BYLEX"), ("0", "-1", "BYSCORE", "BYLEX"),
    ("(1", "2", "BYSCORE", "LIMIT", "0"), ("-", "+", "BYLEX", "WITHSCORES"), ("x", "1", "BYSCORE"),
    ("a", "b", "BYLEX"), ("0", "-1", "REV", "REV"), ("0", "-1", "FOO"), ("-inf", "+inf", "BYSCORE", "LIMIT", "x", "1"),
]


@pytest.mark.parametrize("args", RANGES)
def test_zrange(pair8, args):
    p = pair8
    p.check("ZADD", "z", "1", "a", "2", "b", "2", "c", "3", "d", "4", "e")
    p.check("ZRANGE", "z", *args)
    p.check("ZRANGE", "nokey", *args)
    p.check("ZRANGESTORE", "dst", "z", *args)
    p.check("ZRANGE", "dst", "0", "-1", "WITHSCORES")


@pytest.mark.parametrize("name,args", [
    ("ZREVRANGE", ("0", "-1")), ("ZREVRANGE", ("0", "1", "WITHSCORES")), ("ZREVRANGE", ("0", "1", "BYSCORE")),
    ("ZRANGEBYSCORE", ("-inf", "+inf")), ("ZRANGEBYSCORE", ("(1", "3", "WITHSCORES", "LIMIT", "1", "1")),
    ("ZRANGEBYSCORE", ("1", "3", "REV")), ("ZREVRANGEBYSCORE", ("+inf", "-inf", "WITHSCORES")),
    ("ZREVRANGEBYSCORE", ("3", "(1", "LIMIT", "0", "2")), ("ZRANGEBYLEX", ("-", "+")),
    ("ZRANGEBYLEX", ("[b", "+", "LIMIT", "1", "5")), ("ZRANGEBYLEX", ("-", "+", "WITHSCORES")),
    ("ZREVRANGEBYLEX", ("+", "-")), ("ZREVRANGEBYLEX", ("(e", "[a", "LIMIT", "1", "2")),
    ("ZRANGEBYSCORE", ("x", "1")), ("ZRANGEBYLEX", ("x", "+")), ("ZRANGEBYSCORE", ("-inf", "+inf", "LIMIT", "1")),
])
def test_zrange_variants(pair8, name, args):
    pair8.check("ZADD", "z", "1", "a", "2", "b", "2", "c", "3", "d", "4", "e")
    pair8.check(name, "z", *args)


def test_zrem_family(pair8):
    p = pair8
    for cmd, args in (("ZREMRANGEBYRANK", ("1", "2")), ("ZREMRANGEBYRANK", ("-2", "-1")),
                      ("ZREMRANGEBYRANK", ("5", "1")), ("ZREMRANGEBYRANK", ("x", "1")),
                      ("ZREMRANGEBYSCORE", ("(1", "3")), ("ZREMRANGEBYSCORE", ("-inf", "+inf")),
                      ("ZREMRANGEBYSCORE", ("x", "1")), ("ZREMRANGEBYLEX", ("[b", "[c")),
                      ("ZREMRANGEBYLEX", ("-", "+")), ("ZREMRANGEBYLEX", ("b", "c"))):
        p.check("DEL", "z")
        p.check("ZADD", "z", "1", "a", "2", "b", "2", "c", "3", "d")
        p.check(cmd, "z", *args)
        p.check("ZRANGE", "z", "0", "-1", "WITHSCORES")
        p.check("EXISTS", "z")
        p.check(cmd, "nokey", *args)
    p.check("ZADD", "z", "1", "a", "2", "b")
    p.check("ZREM", "z", "a", "zz")
    p.check("ZREM", "nokey", "a")
    p.check("ZREM", "z", "b")
    p.check("EXISTS", "z")


def test_pops(pair8):
    p = pair8
    p.check("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d")
    for cmd in (
        ("ZPOPMIN", "z"), ("ZPOPMAX", "z"), ("ZPOPMIN", "z", "0"), ("ZPOPMIN", "z", "-1"),
        ("ZPOPMIN", "z", "x"), ("ZPOPMAX", "z", "1", "2"), ("ZPOPMIN", "nokey"), ("ZPOPMIN", "nokey", "2"),
        ("ZPOPMAX", "z", "10"), ("EXISTS", "z"),
        ("ZADD", "z", "1", "a", "2", "b", "3", "c"), ("ZMPOP", "1", "z", "MIN"),
        ("ZMPOP", "2", "nokey", "z", "MAX", "COUNT", "5"), ("ZMPOP", "1", "z", "MIN"),
        ("ZMPOP", "0", "z", "MIN"), ("ZMPOP", "1", "z", "UP"), ("ZMPOP", "1", "z", "MIN", "COUNT", "0"),
        ("ZMPOP", "3", "z", "MIN"), ("ZMPOP", "1", "z", "MIN", "COUNT", "1", "COUNT", "2"),
        ("ZADD", "z", "1", "a"), ("BZPOPMIN", "nokey", "z", "0"), ("BZPOPMAX", "z", "x"),
        ("ZADD", "z", "1", "a"), ("BZMPOP", "0", "1", "z", "MAX", "COUNT", "3"), ("BZMPOP", "0", "0", "z", "MIN"),
        ("MULTI",), ("BZPOPMIN", "z", "0"), ("BZMPOP", "0", "1", "z", "MIN"), ("EXEC",),
    ):
        p.check(*cmd)


def test_zrandmember_shapes(pair8):
    p = pair8
    p.check("ZRANDMEMBER", "nokey")
    p.check("ZRANDMEMBER", "nokey", "3")
    p.check("ZADD", "z", "1.5", "a")
    for args in ((), ("3",), ("-3",), ("-2", "WITHSCORES"), ("0",), ("x",), ("1", "x"),
                 ("-9223372036854775808",), ("-9223372036854775807", "WITHSCORES"), ("1", "WITHSCORES", "x")):
        p.check("ZRANDMEMBER", "z", *args)


ALGEBRA = [
    ("2", "a", "b"), ("2", "a", "b", "WITHSCORES"), ("2", "a", "b", "WEIGHTS", "2", "3", "WITHSCORES"),
    ("2", "a", "b", "AGGREGATE", "MIN", "WITHSCORES"), ("2", "a", "b", "AGGREGATE", "max", "WITHSCORES"),
    ("2", "a", "s", "WITHSCORES"), ("2", "a", "nokey", "WITHSCORES"), ("1", "a", "WEIGHTS", "x"),
    ("1", "a", "WEIGHTS", "1", "2"), ("1", "a", "AGGREGATE", "foo"), ("2", "a"), ("0", "a"), ("-1", "a"),
    ("x", "a"), ("2", "a", "str"), ("2", "inf1", "inf2", "WITHSCORES"), ("2", "inf1", "inf2", "WEIGHTS", "0", "1", "WITHSCORES"),
    ("1", "a", "WITHSCORES", "WITHSCORES"), ("1", "a", "FOO"),
]


@pytest.mark.parametrize("args", ALGEBRA)
@pytest.mark.parametrize("name", ["ZUNION", "ZINTER", "ZDIFF"])
def test_algebra(pair8, name, args):
    p = pair8
    p.check("ZADD", "a", "1", "x", "2", "y", "3", "z")
    p.check("ZADD", "b", "10", "y", "20", "z", "30", "w")
    p.check("SADD", "s", "x", "w", "v")
    p.check("SET", "str", "v")
    p.check("ZADD", "inf1", "inf", "m", "-inf", "n")
    p.check("ZADD", "inf2", "-inf", "m", "-inf", "n")
    p.check(name, *args)
    store_args = [a for a in args if a.upper() != "WITHSCORES"]
    p.check(name + "STORE", "dst", *store_args)
    p.check("ZRANGE", "dst", "0", "-1", "WITHSCORES")
    p.check("OBJECT", "ENCODING", "dst")


@pytest.mark.parametrize("args", [("2", "str", "LIMIT", "01"), ("1", "str", "LIMIT"), ("1", "str", "FOO"),
                                  ("1", "str", "LIMIT", "-1"), ("2", "z", "str", "LIMIT", "x"),
                                  ("1", "z", "LIMIT")])
def test_zintercard_checks_types_before_options(pair8, args):
    """Found by the command fuzzer: rillet parsed LIMIT first."""
    pair8.check("SET", "str", "v")
    pair8.check("ZADD", "z", "1", "a")
    pair8.check("ZINTERCARD", *args)

@pytest.mark.parametrize("aggregate", ["SUM", "MIN", "MAX"])
@pytest.mark.parametrize("weights", [("2", "inf", "-1"), ("inf", "1", "1"), ("1", "-inf", "inf")])
def test_zinter_nan_products(pair8, aggregate, weights):
    """0 * inf is NaN: zeroed for the first input only; after it a SUM turns NaN into 0
    and MIN/MAX keep what they had (found by the command fuzzer)."""
    p = pair8
    p.check("ZADD", "a", "-inf", "x", "0", "y", "1.5", "z")
    p.check("ZADD", "b", "0", "x", "0", "y", "0", "z")
    p.check("ZADD", "c", "inf", "x", "1", "y", "0", "z", "5", "w")
    for keys in (("a", "b", "b"), ("b", "a", "c"), ("c", "b", "a")):
        p.check("ZINTER", "3", *keys, "WEIGHTS", *weights, "AGGREGATE", aggregate, "WITHSCORES")
        p.check("ZUNION", "3", *keys, "WEIGHTS", *weights, "AGGREGATE", aggregate, "WITHSCORES")

@pytest.mark.parametrize("members", [3, 130])
def test_negative_zero_scores(pair8, members):
    """A listpack stores -0 as 0, a skiplist keeps -0; ZADD INCR/ZINCRBY answer the score
    they computed, -0 included (found by the command fuzzer)."""
    p = pair8
    p.check("ZADD", "z", *[x for i in range(members) for x in (str(i + 1), f"m{i}")])
    for cmd in (
        ("ZINCRBY", "z", "-0", "a"), ("ZSCORE", "z", "a"), ("ZADD", "z", "INCR", "-0.0", "b"),
        ("ZADD", "z", "-0", "c", "0", "d", "-0e5", "e"), ("ZMSCORE", "z", "b", "c", "d", "e"),
        ("ZINCRBY", "z", "-0", "c"), ("ZINCRBY", "z", "0", "c"), ("ZADD", "z", "-0", "d"),
        ("ZRANGE", "z", "0", "4", "WITHSCORES"), ("ZRANGEBYSCORE", "z", "-0", "0", "WITHSCORES"),
        ("OBJECT", "ENCODING", "z"), ("ZUNIONSTORE", "d", "1", "z", "WEIGHTS", "-1"),
        ("ZRANGE", "d", "-3", "-1", "WITHSCORES"), ("ZRANGESTORE", "e", "d", "-3", "-1"),
        ("ZRANGE", "e", "0", "-1", "WITHSCORES"), ("ZUNION", "1", "z", "WEIGHTS", "-1", "WITHSCORES"),
    ):
        p.check(*cmd)


@pytest.mark.parametrize("limit", ["2", "3"])
def test_negative_zero_on_the_add_that_converts(pair8, limit):
    """The member whose add makes the set a skiplist keeps its -0: Redis converts first."""
    p = pair8
    p.check("CONFIG", "SET", "zset-max-listpack-entries", limit)
    try:
        p.check("ZADD", "z", "1", "a", "2", "b")
        p.check("ZADD", "z", "-0", "c", "-0", "d")
        p.check("ZRANGE", "z", "0", "-1", "WITHSCORES")
        p.check("OBJECT", "ENCODING", "z")
    finally:
        p.check("CONFIG", "SET", "zset-max-listpack-entries", "128")

@pytest.mark.parametrize("count", ["4611686018427387903", "4611686018427387904", "9223372036854775807",
                                   "-4611686018427387904"])
@pytest.mark.parametrize("name,key,flag", [("ZRANDMEMBER", "z", "WITHSCORES"),
                                           ("HRANDFIELD", "h", "WITHVALUES")])
def test_random_pairs_count_range(pair8, count, name, key, flag):
    """With scores/values the count must fit LONG_MAX/2 in size whatever its sign, checked
    before the key is read (found by the command fuzzer). (A valid negative count that
    large would make both servers build the reply: none is sent.)"""
    pair8.check("ZADD", "z", "1", "a")
    pair8.check("HSET", "h", "a", "1")
    pair8.check(name, key, count, flag, normalise=lambda r: r[:2])
    pair8.check(name, "nokey", count, flag)
    pair8.check(name, key, count, flag, flag)  # the count is read before the syntax
    pair8.check(name, key, "x", "FOO")
    pair8.check(name, key, "-9223372036854775808", "FOO")

@pytest.mark.parametrize("keys", [("big", "small", "big", "small", "small"), ("small", "big", "small"),
                                  ("big", "nokey", "small", "big"), ("small", "set", "big")])
def test_zunion_sums_the_smaller_inputs_first(pair8, keys):
    """Redis sorts the inputs by size before summing: 0.1 + 0.1 + 1 + 1 is not
    1 + 0.1 + 1 + 0.1 in floats (found by the command fuzzer)."""
    p = pair8
    p.check("ZADD", "small", "0.1", "m", "0.2", "n")
    p.check("ZADD", "big", "1", "m", "1", "n", "3", "o", "4", "p")
    p.check("SADD", "set", "m", "n", "q")
    p.check("ZUNION", str(len(keys)), *keys, "WITHSCORES")
    p.check("ZUNION", str(len(keys)), *keys, "WEIGHTS", *["0.3", "1.1", "7", "0.1", "3"][:len(keys)],
            "WITHSCORES")
    p.check("ZINTER", str(len(keys)), *keys, "WITHSCORES")
    p.check("ZUNIONSTORE", "dst", str(len(keys)), *keys)
    p.check("ZRANGE", "dst", "0", "-1", "WITHSCORES")

@pytest.mark.parametrize("args", [
    ("2", "a", "b"), ("1", "a"), ("2", "a", "nokey"), ("2", "a", "b", "LIMIT", "1"), ("2", "a", "s"),
    ("0", "a"), ("3", "a", "b"), ("1", "a", "LIMIT", "-1"), ("1", "a", "LIMIT", "x"), ("2", "a", "str"),
])
def test_zintercard(pair8, args):
    p = pair8
    p.check("ZADD", "a", "1", "x", "2", "y", "3", "z")
    p.check("ZADD", "b", "10", "y", "20", "z", "30", "w")
    p.check("SADD", "s", "x", "w", "v")
    p.check("SET", "str", "v")
    p.check("ZINTERCARD", *args)


def test_zset_wrongtype(pair8):
    p = pair8
    p.check("SET", "s", "v")
    for cmd in (
        ("ZADD", "s", "1", "a"), ("ZINCRBY", "s", "1", "a"), ("ZREM", "s", "a"), ("ZCARD", "s"),
        ("ZSCORE", "s", "a"), ("ZMSCORE", "s", "a"), ("ZRANK", "s", "a"), ("ZCOUNT", "s", "0", "1"),
        ("ZLEXCOUNT", "s", "-", "+"), ("ZRANGE", "s", "0", "1"), ("ZRANGESTORE", "d", "s", "0", "1"),
        ("ZPOPMIN", "s"), ("BZPOPMIN", "s", "0"),
        ("ZMPOP", "1", "s", "MIN"), ("ZRANDMEMBER", "s"), ("ZSCAN", "s", "0"),
        ("ZREMRANGEBYRANK", "s", "0", "1"), ("ZREMRANGEBYSCORE", "s", "0", "1"),
        ("ZRANGESTORE", "s", "nokey", "0", "1"),
    ):
        p.check(*cmd)
    p.check("TYPE", "s")


def test_zscan(pair8):
    p = pair8
    p.check("ZADD", "z", "1.5", "a", "2", "b", "-inf", "c")
    p.check("ZSCAN", "z", "0")
    p.check("ZSCAN", "z", "0", "MATCH", "a*")
    p.check("ZSCAN", "nokey", "0")
    for bad in (("x",), ("0", "COUNT", "0"), ("0", "NOVALUES"), ("0", "NOSCORES"), ("0", "MATCH")):
        p.check("ZSCAN", "z", *bad)



@pytest.mark.parametrize("name", ["ZSCAN", "SSCAN", "HSCAN"])
def test_scan_of_a_missing_key_reads_no_options(pair8, name):
    """The cursor, then the key, then the options, as Redis: a missing key answers an
    empty scan whatever follows its cursor (found by the command fuzzer)."""
    for args in (("0", "COUNT", "-1"), ("0", "COUNT", "x"), ("0", "FOO"), ("0", "MATCH"),
                 ("x", "COUNT", "1"), ("0", "NOVALUES"), ("0", "NOSCORES")):
        pair8.check(name, "nokey", *args)


@pytest.mark.parametrize("limit", [("0", "-1"), ("1", "-1"), ("5", "-1"), ("0", "-2"), ("1", "1"),
                                   ("0", "-1", "LIMIT", "1", "1"), ("1", "1", "LIMIT", "0", "-1")])
def test_zrange_rank_limit_checks_the_count_only(pair8, limit):
    """By rank, `LIMIT <offset> -1` is accepted and ignored; any other count is an error
    (found by the command fuzzer)."""
    pair8.check("ZADD", "z", "1", "a", "2", "b", "3", "c")
    pair8.check("ZRANGE", "z", "0", "-1", "LIMIT", *limit)
    pair8.check("ZRANGESTORE", "d", "z", "0", "-1", "REV", "LIMIT", *limit)
    pair8.check("ZRANGE", "d", "0", "-1")

@pytest.mark.parametrize("n,width", [(3, 1), (128, 1), (129, 1), (3, 64), (3, 65), (200, 1)])
def test_zset_encoding(pair8, n, width):
    p = pair8
    p.check("ZADD", "z", *[x for i in range(n) for x in (str(i), f"m{i}".ljust(width, "x"))])
    p.check("OBJECT", "ENCODING", "z")
    p.check("ZADD", "z2", "1", "a")
    p.check("ZADD", "z2", *[x for i in range(n) for x in (str(i), f"m{i}".ljust(width, "x"))])
    p.check("OBJECT", "ENCODING", "z2")
    p.check("ZRANGESTORE", "z3", "z", "0", "2")
    p.check("OBJECT", "ENCODING", "z3")


BLOCKING = {
    "bzpopmin": ([["BZPOPMIN", "x", "z", "0"], ["BZPOPMAX", "z", "0"]], [["ZADD", "z", "1", "a", "2", "b"]]),
    "bzmpop": ([["BZMPOP", "0", "1", "z", "MAX", "COUNT", "5"]], [["ZADD", "z", "1", "a", "2", "b"]]),
    "timeout": ([["BZPOPMIN", "z", "0.05"], ["BZMPOP", "0.05", "1", "z", "MIN"]], []),
}


@pytest.mark.parametrize("name", sorted(BLOCKING))
def test_blocking_wakeups(rillet_server, redis8_server, name):
    blockers, actions = BLOCKING[name]
    assert _scenario(rillet_server.port, blockers, actions) == _scenario(redis8_server.port, blockers, actions)


__all__ = ["sorted_array"]


def test_large_skiplist_ranges(pair8):
    """A 3000-member set (skiplist, many chunks): ranks, ranges and removals match Redis."""
    import random

    rng = random.Random(11)
    p = pair8
    for start in range(0, 3000, 500):
        args = [x for i in range(start, start + 500) for x in (str(rng.randrange(1000) / 8), f"m{i}")]
        p.check("ZADD", "z", *args)
    for _ in range(40):
        a, b = sorted(rng.sample(range(-3100, 3100), 2))
        lo, hi = sorted(rng.sample(range(0, 130), 2))
        member = f"m{rng.randrange(3100)}"
        for cmd in (("ZRANGE", "z", a, b, "WITHSCORES"), ("ZRANGE", "z", a, b, "REV"),
                    ("ZRANGEBYSCORE", "z", f"({lo}", hi, "LIMIT", rng.randrange(50), rng.randrange(50)),
                    ("ZCOUNT", "z", lo, f"({hi}"), ("ZRANK", "z", member), ("ZREVRANK", "z", member),
                    ("ZSCORE", "z", member), ("ZADD", "z", str(rng.randrange(1000) / 8), member),
                    ("ZREM", "z", f"m{rng.randrange(3100)}"), ("ZCARD", "z")):
            p.check(*cmd)
    p.check("ZREMRANGEBYRANK", "z", "100", "700")
    p.check("ZREMRANGEBYSCORE", "z", "10", "(40")
    p.check("ZPOPMIN", "z", "300")
    p.check("ZPOPMAX", "z", "300")
    p.check("ZRANGE", "z", "0", "-1", "WITHSCORES")
    p.check("OBJECT", "ENCODING", "z")


def test_zadd_skipped_long_member_keeps_listpack(pair8):
    """ZADD XX/NX/GT/LT that skips a member over zset-max-listpack-value while changing
    another keeps the listpack (the skipped member is never inserted). Found by the
    command fuzzer."""
    long = "q" * 65
    for flags in (["XX"], ["NX"], ["GT"], ["LT"], ["XX", "CH"]):
        pair8.check("DEL", "zl")
        pair8.check("ZADD", "zl", "3", "a", "1", "b")
        if flags == ["NX"]:
            pair8.check("ZADD", "zl", "NX", "2", "c", "3", "a")
        pair8.check("ZADD", "zl", *flags, "2", "a", "5", long if flags != ["NX"] else "b")
        pair8.check("OBJECT", "ENCODING", "zl")
        pair8.check("ZADD", "zl", *flags, "0", "b", "1", long)
        pair8.check("OBJECT", "ENCODING", "zl")
        pair8.check("ZRANGE", "zl", "0", "-1", "WITHSCORES")
    pair8.check("DEL", "zl")


def test_score_ranges_are_c_strings(pair8):
    """zslParseRange reads min and max as C strings: what follows a NUL byte is not seen
    ("\\x001" is "", which is 0). Found by the command fuzzer."""
    pair8.check("ZADD", "zr", "0", "a", "1", "b", "2", "c")
    for low, high in (("\x001", "10"), ("(\x00", "2"), ("1\x00x", "+inf"), ("0", "(2\x00z"),
                      ("\x00", "\x00"), ("", "1")):
        pair8.check("ZRANGEBYSCORE", "zr", low, high, "WITHSCORES")
        pair8.check("ZREVRANGEBYSCORE", "zr", high, low)
        pair8.check("ZCOUNT", "zr", low, high)
        pair8.check("ZRANGE", "zr", low, high, "BYSCORE")
    pair8.check("DEL", "zr")
