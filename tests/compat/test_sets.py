"""Set commands against Redis 8.2.3, raw reply bytes (sorted where Redis's order is a hash's)."""

from __future__ import annotations

import pytest


def sorted_array(raw: bytes) -> bytes:
    """An array reply with its elements sorted (for hashtable-ordered replies)."""
    if not raw.startswith(b"*") or raw.startswith(b"*0") or raw.startswith(b"*-1"):
        return raw
    head, _, body = raw.partition(b"\r\n")
    parts = body.split(b"\r\n")[:-1]
    items = sorted(zip(parts[0::2], parts[1::2], strict=True))
    return head + b"\r\n" + b"".join(a + b"\r\n" + b + b"\r\n" for a, b in items)


def test_set_basics(pair8):
    p = pair8
    for cmd in (
        ("SADD", "s", "a", "b", "a"), ("SADD", "s", "c"), ("SCARD", "s"), ("SCARD", "nokey"),
        ("SISMEMBER", "s", "a"), ("SISMEMBER", "s", "z"), ("SISMEMBER", "nokey", "a"),
        ("SMISMEMBER", "s", "a", "z", "c"), ("SMISMEMBER", "nokey", "a"), ("SMEMBERS", "s"),
        ("SMEMBERS", "nokey"), ("SREM", "s", "a", "z"), ("SREM", "nokey", "a"), ("SMEMBERS", "s"),
        ("SADD", "i", "5", "3", "-1", "10", "007"), ("SMEMBERS", "i"), ("OBJECT", "ENCODING", "i"),
        ("SADD", "j", "5", "3", "-1", "10"), ("SMEMBERS", "j"), ("OBJECT", "ENCODING", "j"),
        ("SREM", "j", "3"), ("SMEMBERS", "j"),
        ("SADD", "s"), ("SREM", "s"), ("SCARD",), ("SMISMEMBER", "s"), ("SISMEMBER", "s"),
        ("SREM", "s", "b", "c"), ("EXISTS", "s"), ("TYPE", "j"),
    ):
        p.check(*cmd)


def test_set_wrongtype(pair8):
    p = pair8
    p.check("SET", "str", "v")
    p.check("SADD", "s", "a")
    for cmd in (
        ("SADD", "str", "a"), ("SREM", "str", "a"), ("SCARD", "str"), ("SISMEMBER", "str", "a"),
        ("SMISMEMBER", "str", "a"), ("SMEMBERS", "str"), ("SPOP", "str"), ("SPOP", "str", "1"),
        ("SRANDMEMBER", "str"), ("SRANDMEMBER", "str", "2"), ("SSCAN", "str", "0"),
        ("SMOVE", "str", "s", "a"), ("SMOVE", "s", "str", "a"), ("SMOVE", "nokey", "str", "a"),
        ("SINTER", "s", "str"), ("SINTER", "nokey", "str"), ("SUNION", "s", "str"),
        ("SDIFF", "s", "str"), ("SINTERSTORE", "d", "s", "str"), ("SUNIONSTORE", "d", "str"),
        ("SDIFFSTORE", "d", "s", "str"), ("SINTERCARD", "2", "s", "str"), ("GET", "s"),
    ):
        p.check(*cmd)


@pytest.mark.parametrize("members,extra", [
    ([str(i) for i in range(100)], ["a"]), ([str(i) for i in range(130)], ["x"]),
    ([str(i) for i in range(513)], []), ([str(i) for i in range(512)], []),
    (["a", "b"], ["x" * 65]), (["a"] * 1, [str(i) for i in range(128)]),
    ([str(i) for i in range(200)], []), (["1"], ["9223372036854775808"]),
])
def test_set_encoding(pair8, members, extra):
    pair8.check("SADD", "s", *members)
    pair8.check("OBJECT", "ENCODING", "s")
    if extra:
        pair8.check("SADD", "s", *extra)
        pair8.check("OBJECT", "ENCODING", "s")


def test_spop_srandmember(pair8):
    p = pair8
    for cmd in (
        ("SPOP", "nokey"), ("SPOP", "nokey", "3"), ("SRANDMEMBER", "nokey"),
        ("SRANDMEMBER", "nokey", "3"), ("SRANDMEMBER", "nokey", "-3"),
        ("SADD", "s", "a"), ("SRANDMEMBER", "s"), ("SRANDMEMBER", "s", "5"),
        ("SRANDMEMBER", "s", "-3"), ("SRANDMEMBER", "s", "0"), ("SPOP", "s", "0"),
        ("SPOP", "s", "-1"), ("SPOP", "s", "x"), ("SPOP", "s", "1", "2"),
        ("SRANDMEMBER", "s", "x"), ("SRANDMEMBER", "s", "-9223372036854775808"),
        ("SRANDMEMBER", "s", "1", "2"), ("SPOP", "s"), ("EXISTS", "s"),
        ("SADD", "s", "1", "2", "3"), ("SPOP", "s", "10"), ("EXISTS", "s"),
    ):
        p.check(*cmd)


def test_smove(pair8):
    p = pair8
    for cmd in (
        ("SADD", "a", "x", "y"), ("SMOVE", "a", "b", "x"), ("SMOVE", "a", "b", "zz"),
        ("SMOVE", "a", "a", "y"), ("SMOVE", "a", "a", "zz"), ("SMEMBERS", "a"),
        ("SMEMBERS", "b"), ("SMOVE", "a", "b", "y"), ("EXISTS", "a"), ("SMEMBERS", "b"),
        ("SMOVE", "nokey", "b", "x"),
    ):
        p.check(*cmd)


def test_algebra(pair8):
    p = pair8
    p.check("SADD", "a", "1", "2", "3", "4")
    p.check("SADD", "b", "3", "4", "5")
    p.check("SADD", "c", "x", "y", "3")
    for name in ("SINTER", "SUNION", "SDIFF"):
        for keys in (("a", "b"), ("a", "b", "c"), ("a", "nokey"), ("nokey", "a"), ("a",), ("c", "a")):
            p.check(name, *keys, normalise=sorted_array)
            p.check(name + "STORE", "d", *keys)
            p.check("SMEMBERS", "d", normalise=sorted_array)
            p.check("OBJECT", "ENCODING", "d")
        p.check(name)
        p.check(name + "STORE", "d")
    p.check("SET", "str", "v")
    p.check("SINTERSTORE", "str", "nokey")
    p.check("EXISTS", "str")
    p.check("SET", "str", "v")
    p.check("SUNIONSTORE", "str", "a")
    p.check("TYPE", "str")


@pytest.mark.parametrize("name", ["SUNIONSTORE", "SDIFFSTORE", "SINTERSTORE"])
def test_store_walks_an_intset_in_order(pair8, name):
    """An intset source is walked in its (sorted) order, so a listpack result holds its
    members in that order (found by the command fuzzer: rillet used insertion order)."""
    p = pair8
    p.check("SADD", "t1", "10", "3", "-5", "100", "1")
    p.check("SADD", "t2", "a", "1", "b", "3")
    for keys in (("t2", "t1"), ("t1", "t2"), ("t1", "nokey"), ("t1",)):
        p.check(name, "d", *keys)
        p.check("SMEMBERS", "d")
        p.check("OBJECT", "ENCODING", "d")

@pytest.mark.parametrize("args", [
    ("2", "a", "b"), ("1", "a"), ("3", "a", "b", "c"), ("2", "a", "nokey"),
    ("2", "a", "b", "LIMIT", "1"), ("2", "a", "b", "LIMIT", "0"), ("2", "a", "b", "limit", "5"),
    ("0", "a"), ("x", "a"), ("-1", "a"), ("3", "a", "b"), ("1", "a", "LIMIT", "-1"),
    ("1", "a", "LIMIT"), ("1", "a", "FOO", "1"), ("1", "a", "LIMIT", "x"), ("1",),
])
def test_sintercard(pair8, args):
    pair8.check("SADD", "a", "1", "2", "3", "4")
    pair8.check("SADD", "b", "3", "4", "5")
    pair8.check("SINTERCARD", *args)


def test_sscan(pair8):
    p = pair8
    p.check("SADD", "s", "a", "b", "c")
    p.check("SSCAN", "s", "0")
    p.check("SSCAN", "s", "0", "MATCH", "a*", "COUNT", "100")
    p.check("SSCAN", "nokey", "0")
    p.check("SADD", "i", "3", "1", "2")
    p.check("SSCAN", "i", "0")
    for bad in (("x",), ("0", "COUNT", "0"), ("0", "NOVALUES"), ("0", "NOSCORES"), ("0", "MATCH")):
        p.check("SSCAN", "s", *bad)
