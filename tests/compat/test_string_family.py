"""The rest of the string family and the key commands against Redis 8.2.3, raw reply bytes."""

from __future__ import annotations

import pytest


def test_setex_psetex_getex_getset(pair8):
    p = pair8
    for cmd in (
        ("SETEX", "k", "100", "v"), ("TTL", "k"), ("PSETEX", "k", "100000", "v"), ("TTL", "k"),
        ("SETEX", "k", "0", "v"), ("SETEX", "k", "-1", "v"), ("SETEX", "k", "x", "v"),
        ("PSETEX", "k", "0", "v"), ("SETEX", "k", "9223372036854775", "v"), ("SETEX", "k", "9223372036854775807", "v"),
        ("PSETEX", "k", "9223372036854775807", "v"), ("SETEX", "k", "10"),
        ("GETEX", "nokey", "EX", "10"), ("SET", "k", "hello"), ("GETEX", "k"), ("TTL", "k"),
        ("GETEX", "k", "EX", "100"), ("TTL", "k"), ("GETEX", "k", "PERSIST"), ("TTL", "k"),
        ("GETEX", "k", "PX", "100000"), ("GETEX", "k", "EXAT", "4000000000"), ("TTL", "k"),
        ("GETEX", "k", "PXAT", "4000000000000"), ("GETEX", "k", "EX", "0"), ("GETEX", "k", "PX", "-1"),
        ("GETEX", "k", "EX", "10", "PX", "10"), ("GETEX", "k", "PERSIST", "EX", "10"),
        ("GETEX", "k", "FOO"), ("GETEX", "k", "EX"), ("GETEX", "k", "EX", "x"),
        ("GETEX", "k", "EXAT", "1"), ("EXISTS", "k"), ("HSET", "h", "f", "v"), ("GETEX", "h"),
        ("GETSET", "k", "v1"), ("GETSET", "k", "v2"), ("GETSET", "h", "x"), ("GET", "k"),
    ):
        p.check(*cmd)



def test_getex_reads_the_key_before_the_time(pair8):
    """A missing key answers nil and another type WRONGTYPE whatever the time says; only
    the syntax comes first, and an option may repeat (found by the command fuzzer)."""
    p = pair8
    p.check("HSET", "h", "f", "v")
    for cmd in (
        ("GETEX", "h", "EX", "x"), ("GETEX", "h", "PX", "-1"), ("GETEX", "nokey", "EX", "x"),
        ("GETEX", "nokey", "EXAT", "0"), ("GETEX", "h", "EX", "1", "PX", "2"),
        ("GETEX", "nokey", "PERSIST", "PERSIST"), ("GETEX", "h", "PXAT", "9223372036854775807"),
        ("SET", "k", "v"), ("GETEX", "k", "EX", "100", "EX", "200"), ("TTL", "k"),
        ("GETEX", "k", "PX", "1", "PX", "x"), ("GETEX", "k", "EX", "100", "EX"),
        ("GETEX", "k", "EX", "100", "PX", "100"), ("GETEX", "k", "PERSIST", "PERSIST"), ("TTL", "k"),
        ("GETEX", "k", "PERSIST", "EX", "1"),
    ):
        p.check(*cmd)

@pytest.mark.parametrize("start,end", [
    ("0", "-1"), ("-100", "100"), ("3", "1"), ("1", "2"), ("-2", "-1"), ("-1", "-2"), ("5", "10"),
    ("0", "-9223372036854775808"), ("x", "1"), ("0", "0"), ("-5", "0"),
])
def test_getrange(pair8, start, end):
    pair8.check("SET", "k", "hello")
    pair8.check("SET", "e", "")
    for name in ("GETRANGE", "SUBSTR"):
        pair8.check(name, "k", start, end)
        pair8.check(name, "e", start, end)
        pair8.check(name, "nokey", start, end)


def test_setrange(pair8):
    p = pair8
    for cmd in (
        ("SET", "k", "hello"), ("SETRANGE", "k", "1", "EY"), ("GET", "k"), ("SETRANGE", "k", "10", "x"),
        ("GET", "k"), ("SETRANGE", "k", "-1", "x"), ("SETRANGE", "k", "x", "x"),
        ("SETRANGE", "k", "536870912", "x"), ("SETRANGE", "k", "536870911", ""),
        ("SETRANGE", "nokey", "0", ""), ("EXISTS", "nokey"), ("SETRANGE", "nokey", "3", "ab"),
        ("GET", "nokey"), ("HSET", "h", "f", "v"), ("SETRANGE", "h", "0", "x"), ("SETRANGE", "h", "0", ""),
        ("SET", "t", "v", "EX", "100"), ("SETRANGE", "t", "0", "w"), ("TTL", "t"),
    ):
        p.check(*cmd)


def test_msetnx(pair8):
    p = pair8
    for cmd in (("MSETNX", "a", "1", "b", "2"), ("MSETNX", "a", "1", "c", "3"), ("MGET", "a", "b", "c"),
                ("MSETNX", "a"), ("MSETNX", "a", "1", "b"), ("HSET", "h", "f", "v"), ("MSETNX", "h", "1")):
        p.check(*cmd)


@pytest.mark.parametrize("start", [None, "10.5", "5.0e3", "-1", "x", "1e308", "inf", " 1", "1 ", "0x10"])
@pytest.mark.parametrize("delta", ["0.1", "-10.5", "2.0e2", "3", "1.7e308", "inf", "nan", "x", "", "1e-320", "-0"])
def test_incrbyfloat(pair8, start, delta):
    if start is not None:
        pair8.check("SET", "f", start, "EX", "100")
    pair8.check("INCRBYFLOAT", "f", delta)
    pair8.check("GET", "f")
    pair8.check("TTL", "f")


@pytest.mark.parametrize("a,b", [("ohmytext", "mynewtext"), ("", "abc"), ("abc", "abc"), ("abcdef", "xyz"),
                                 ("aXbXcXd", "abcd"), ("rillet", "redis-server")])
@pytest.mark.parametrize("opts", [(), ("LEN",), ("IDX",), ("IDX", "WITHMATCHLEN"), ("IDX", "MINMATCHLEN", "2"),
                                  ("IDX", "MINMATCHLEN", "4", "WITHMATCHLEN"), ("LEN", "IDX"), ("FOO",),
                                  ("MINMATCHLEN", "x"), ("MINMATCHLEN",), ("IDX", "MINMATCHLEN", "-5")])
def test_lcs(pair8, a, b, opts):
    pair8.check("SET", "a", a)
    pair8.check("SET", "b", b)
    pair8.check("LCS", "a", "b", *opts)
    pair8.check("LCS", "a", "nokey", *opts)


def test_lcs_wrongtype(pair8):
    pair8.check("HSET", "h", "f", "v")
    pair8.check("SET", "a", "x")
    pair8.check("LCS", "a", "h")
    pair8.check("LCS", "h", "nokey")


def test_copy_move_swapdb_touch(pair8):
    p = pair8
    for cmd in (
        ("SET", "a", "100", "EX", "1000"), ("HSET", "h", "f", "v"), ("RPUSH", "l", "x", "y"),
        ("ZADD", "z", "1", "m"), ("SADD", "s", "1", "2"),
        ("COPY", "a", "a"), ("COPY", "a", "c", "DB", "99"), ("COPY", "a", "c", "DB", "x"),
        ("COPY", "a", "c", "FOO"), ("COPY", "a", "h"), ("COPY", "a", "h", "REPLACE"), ("TYPE", "h"),
        ("TTL", "h"), ("COPY", "nokey", "x"), ("COPY", "l", "l2"), ("RPUSH", "l2", "z"),
        ("LRANGE", "l", "0", "-1"), ("LRANGE", "l2", "0", "-1"), ("COPY", "z", "z2"), ("COPY", "s", "s2", "DB", "3"),
        ("COPY", "a", "a", "DB", "3"), ("SELECT", "3"), ("SMEMBERS", "s2"), ("TTL", "a"), ("SELECT", "0"),
        ("OBJECT", "ENCODING", "s2"), ("MOVE", "a", "0"), ("MOVE", "a", "99"), ("MOVE", "a", "x"),
        ("MOVE", "nokey", "1"), ("MOVE", "a", "3"), ("MOVE", "z", "3"), ("EXISTS", "z"),
        ("SELECT", "3"), ("ZRANGE", "z", "0", "-1"), ("SELECT", "0"),
        ("SWAPDB", "0", "x"), ("SWAPDB", "x", "0"), ("SWAPDB", "0", "99"), ("SWAPDB", "0", "0"),
        ("DBSIZE",), ("SWAPDB", "0", "3"), ("DBSIZE",), ("ZRANGE", "z", "0", "-1"), ("TTL", "a"),
        ("TOUCH", "a", "z", "nokey"), ("TOUCH",),
        ("OBJECT", "FREQ", "a"), ("OBJECT", "FREQ", "nokey"), ("OBJECT", "IDLETIME", "nokey"),
        ("OBJECT", "REFCOUNT", "a"), ("OBJECT", "REFCOUNT", "nokey"), ("OBJECT", "HELP"),
    ):
        p.check(*cmd)


@pytest.mark.parametrize("kind", ["string", "list", "set", "zset", "hash", "stream", "none", "foo"])
def test_scan_type(pair8, kind):
    p = pair8
    p.check("SET", "str", "v")
    p.check("RPUSH", "lst", "a")
    p.check("SADD", "st", "a")
    p.check("ZADD", "zs", "1", "a")
    p.check("HSET", "hs", "f", "v")
    p.check("XADD", "sm", "1-1", "f", "v")
    p.check("SCAN", "0", "TYPE", kind, "COUNT", "100")
    for key in ("str", "lst", "st", "zs", "hs", "sm"):
        p.check("TYPE", key)
