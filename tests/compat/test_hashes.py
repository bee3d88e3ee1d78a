"""Hash commands against Redis 8.2.3, raw reply bytes (field expiration included)."""

from __future__ import annotations

import pytest

BAD_INTS = ["x", "1.5", "", "+1", "01", "9223372036854775808"]


def test_hash_basics(pair8):
    p = pair8
    for cmd in (
        ("HSET", "h", "a", "1", "b", "2"), ("HSET", "h", "a", "3"), ("HGET", "h", "a"),
        ("HGET", "h", "zz"), ("HGET", "nokey", "a"), ("HMGET", "h", "a", "zz", "b"),
        ("HMGET", "nokey", "a"), ("HLEN", "h"), ("HLEN", "nokey"), ("HSTRLEN", "h", "a"),
        ("HSTRLEN", "h", "zz"), ("HEXISTS", "h", "a"), ("HEXISTS", "h", "zz"),
        ("HKEYS", "h"), ("HVALS", "h"), ("HGETALL", "h"), ("HGETALL", "nokey"),
        ("HSETNX", "h", "a", "9"), ("HSETNX", "h", "c", "9"), ("HMSET", "h", "d", "4"),
        ("HDEL", "h", "a", "zz", "a"), ("HDEL", "nokey", "a"), ("HGETALL", "h"),
        ("HSET", "h"), ("HSET", "h", "a"), ("HSET", "h", "a", "b", "c"), ("HMSET", "h", "a"),
        ("HDEL", "h"), ("HGET", "h"), ("HSETNX", "h", "a"),
        ("HDEL", "h", "b", "c", "d"), ("EXISTS", "h"), ("TYPE", "h"),
    ):
        p.check(*cmd)


def test_hash_wrongtype(pair8):
    p = pair8
    p.check("SET", "s", "v")
    p.check("HSET", "h", "f", "v")
    for cmd in (
        ("HSET", "s", "a", "1"), ("HGET", "s", "a"), ("HMGET", "s", "a"), ("HLEN", "s"),
        ("HDEL", "s", "a"), ("HGETALL", "s"), ("HKEYS", "s"), ("HVALS", "s"),
        ("HINCRBY", "s", "a", "1"), ("HINCRBYFLOAT", "s", "a", "1"), ("HSTRLEN", "s", "a"),
        ("HEXISTS", "s", "a"), ("HRANDFIELD", "s"), ("HSCAN", "s", "0"), ("HSETNX", "s", "a", "b"),
        ("HEXPIRE", "s", "10", "FIELDS", "1", "a"), ("HTTL", "s", "FIELDS", "1", "a"),
        ("HPERSIST", "s", "FIELDS", "1", "a"), ("HGETDEL", "s", "FIELDS", "1", "a"),
        ("HGETEX", "s", "FIELDS", "1", "a"), ("HSETEX", "s", "FIELDS", "1", "a", "b"),
        ("GET", "h"), ("INCR", "h"), ("APPEND", "h", "x"),
    ):
        p.check(*cmd)


@pytest.mark.parametrize("start", [None, "5", "-5", "x", "1.5", "9223372036854775807"])
@pytest.mark.parametrize("delta", ["1", "-1", "9223372036854775807", "-9223372036854775808", *BAD_INTS])
def test_hincrby(pair8, start, delta):
    if start is not None:
        pair8.check("HSET", "h", "f", start)
    pair8.check("HINCRBY", "h", "f", delta)
    pair8.check("HGET", "h", "f")


@pytest.mark.parametrize("start", [None, "10.5", "5.0e3", "-1", "x", "1e308", "inf", " 1"])
@pytest.mark.parametrize("delta", ["0.1", "-10.5", "2.0e2", "3", "1.7e308", "inf", "-inf", "nan",
                                   "x", "", "1_0", " 1", "0x10", "1e-320", "-0"])
def test_hincrbyfloat(pair8, start, delta):
    if start is not None:
        pair8.check("HSET", "h", "f", start)
    pair8.check("HINCRBYFLOAT", "h", "f", delta)
    pair8.check("HGET", "h", "f")


def test_hrandfield_shapes(pair8):
    p = pair8
    p.check("HRANDFIELD", "nokey")
    p.check("HRANDFIELD", "nokey", "3")
    p.check("HRANDFIELD", "nokey", "-3", "WITHVALUES")
    p.check("HSET", "h", "a", "1")
    p.check("HRANDFIELD", "h")
    p.check("HRANDFIELD", "h", "3")
    p.check("HRANDFIELD", "h", "-3")
    p.check("HRANDFIELD", "h", "-2", "WITHVALUES")
    p.check("HRANDFIELD", "h", "0")
    for bad in (("x",), ("1", "x"), ("1", "WITHVALUES", "x"), ("-9223372036854775808",),
                ("-9223372036854775807", "WITHVALUES"), ("-4611686018427387904", "WITHVALUES")):
        p.check("HRANDFIELD", "h", *bad)


def test_hscan(pair8):
    p = pair8
    p.check("HSET", "h", "a", "1", "b", "2", "c", "3")
    p.check("HSCAN", "h", "0")
    p.check("HSCAN", "h", "0", "MATCH", "a*")
    p.check("HSCAN", "h", "0", "NOVALUES")
    p.check("HSCAN", "h", "0", "COUNT", "1")
    p.check("HSCAN", "nokey", "0")
    for bad in (("x",), ("-1",), ("0", "COUNT", "0"), ("0", "COUNT"), ("0", "FOO", "1"), ("0", "MATCH")):
        p.check("HSCAN", "h", *bad)


@pytest.mark.parametrize("n", [3, 600])
def test_hscan_large_covers_everything(pair8, n):
    ours = pair8.ours
    ours.call("HSET", "h", *[x for i in range(n) for x in (f"f{i}", "v")])
    seen = set()
    cursor = b"0"
    for _ in range(1000):
        reply = ours.call("HSCAN", "h", cursor, "NOVALUES")
        parts = reply.split(b"\r\n")
        cursor = parts[1 + 1]
        seen.update(x for x in parts[5::2] if x)
        if cursor == b"0":
            break
    assert len(seen) == n


@pytest.mark.parametrize("n,value", [(3, "v"), (513, "v"), (3, "x" * 65)])
def test_hash_encoding(pair8, n, value):
    pair8.check("HSET", "h", *[x for i in range(n) for x in (f"f{i}", value)])
    pair8.check("OBJECT", "ENCODING", "h")
    pair8.check("HEXPIRE", "h", "100", "FIELDS", "1", "f0")
    pair8.check("OBJECT", "ENCODING", "h")


def test_field_expiration(pair8):
    p = pair8
    p.check("HSET", "h", "a", "1", "b", "2", "c", "3")
    for cmd in (
        ("HEXPIRE", "h", "100", "FIELDS", "3", "a", "b", "zz"),
        ("HEXPIRE", "h", "100", "XX", "FIELDS", "2", "a", "c"),
        ("HEXPIRE", "h", "50", "GT", "FIELDS", "1", "a"),
        ("HEXPIRE", "h", "500", "GT", "FIELDS", "2", "a", "c"),
        ("HEXPIRE", "h", "50", "LT", "FIELDS", "2", "a", "c"),
        ("HEXPIRE", "h", "50", "NX", "FIELDS", "2", "a", "c"),
        ("HTTL", "h", "FIELDS", "4", "a", "b", "c", "zz"),
        ("HPERSIST", "h", "FIELDS", "3", "a", "c", "zz"),
        ("HTTL", "h", "FIELDS", "2", "a", "b"),
        ("HEXPIREAT", "h", "4000000000", "FIELDS", "1", "a"),
        ("HEXPIRETIME", "h", "FIELDS", "1", "a"),
        ("HPEXPIREAT", "h", "4000000000123", "FIELDS", "1", "a"),
        ("HPEXPIRETIME", "h", "FIELDS", "1", "a"),
        ("HEXPIRE", "nokey", "10", "FIELDS", "2", "a", "b"),
        ("HTTL", "nokey", "FIELDS", "1", "a"),
        ("HPERSIST", "nokey", "FIELDS", "1", "a"),
        ("HEXPIRE", "h", "0", "FIELDS", "1", "a"),
        ("HGETALL", "h"),
        ("HPEXPIREAT", "h", "1", "FIELDS", "2", "b", "c"),
        ("EXISTS", "h"),
    ):
        p.check(*cmd)



def test_hgetdel_names_a_field_twice(pair8):
    """The second mention of a field answers nil: it is gone (found by the command fuzzer)."""
    p = pair8
    p.check("HSET", "h", "a", "1", "b", "2", "c", "3")
    p.check("HGETDEL", "h", "FIELDS", "4", "a", "a", "b", "a")
    p.check("HGETDEL", "nokey", "FIELDS", "2", "a", "a")
    p.check("HGETALL", "h")

@pytest.mark.parametrize("numfields", ["2147483647", "2147483648", "4611686018427387904", "0", "3"])
def test_hsetex_numfields_is_an_int(pair8, numfields):
    """Up to INT_MAX, else `invalid number of fields` (found by the command fuzzer)."""
    pair8.check("HSETEX", "h", "FIELDS", numfields, "a", "b")
    pair8.check("HGETEX", "h", "FIELDS", numfields, "a")

def test_hsetex_past_time_converts_to_listpackex(pair8):
    """Found by the command fuzzer: rillet left the hash `listpack`."""
    p = pair8
    p.check("HSET", "h", "a", "1")
    p.check("HSETEX", "h", "FNX", "EXAT", "1", "FIELDS", "1", "b", "2")
    p.check("OBJECT", "ENCODING", "h")
    p.check("HGETALL", "h")
    p.check("HSETEX", "h", "PXAT", "1", "FIELDS", "1", "a", "2")
    p.check("EXISTS", "h")

def test_listpackex_order_of_equal_deadlines(pair8):
    """A field given a deadline goes before the fields due at the same time (found by
    the command fuzzer: rillet put it after them, so HGETALL's order differed)."""
    p = pair8
    p.check("HSET", "h", "f1", "a", "f2", "b", "f3", "c", "f4", "d")
    for cmd in (
        ("HPEXPIREAT", "h", "4102444800000", "FIELDS", "2", "f1", "f2"), ("HKEYS", "h"),
        ("HPEXPIREAT", "h", "4102444700000", "FIELDS", "1", "f3"), ("HKEYS", "h"),
        ("HPEXPIREAT", "h", "4102444800000", "FIELDS", "1", "f4"), ("HKEYS", "h"),
        ("HPEXPIREAT", "h", "4102444800000", "FIELDS", "1", "f1"), ("HKEYS", "h"),
        ("HSETEX", "h", "PXAT", "4102444800000", "FIELDS", "2", "a", "1", "b", "2"),
        ("HGETEX", "h", "PXAT", "4102444700000", "FIELDS", "2", "f4", "a"), ("HGETALL", "h"),
    ):
        p.check(*cmd)

@pytest.mark.parametrize("args", [
    ("10", "FIELDS", "0"), ("10", "FIELDS", "2", "a"), ("10", "a"), ("10", "FIELDS", "1", "a", "b"),
    ("-1", "FIELDS", "1", "a"), ("10", "NX", "XX", "FIELDS", "1", "a"), ("10", "FIELDS"),
    ("10", "FIELDS", "x", "a"), ("10", "FIELDS", "-1", "a"), ("x", "FIELDS", "1", "a"),
    ("99999999999999999", "FIELDS", "1", "a"), ("281474976710", "FIELDS", "1", "a"),
    ("281474976710655", "FIELDS", "1", "a"), ("70368744177663", "FIELDS", "1", "a"),
    ("70368744177664", "FIELDS", "1", "a"), ("70368744177", "FIELDS", "1", "a"), ("10", "fields", "1", "a"),
])
@pytest.mark.parametrize("name", ["HEXPIRE", "HPEXPIRE", "HEXPIREAT", "HPEXPIREAT"])
def test_hexpire_errors(pair8, name, args):
    pair8.check("HSET", "h", "a", "1")
    pair8.check(name, "h", *args)


@pytest.mark.parametrize("args", [
    ("FIELDS", "0"), ("FIELDS", "1"), ("FIELDS", "1", "a", "zz"), ("FIELDS", "x", "a"),
    ("FOO", "1", "a"), ("FIELDS", "2", "a", "zz"),
])
@pytest.mark.parametrize("name", ["HTTL", "HPTTL", "HEXPIRETIME", "HPEXPIRETIME", "HPERSIST",
                                  "HGETDEL", "HGETEX"])
def test_field_list_errors(pair8, name, args):
    pair8.check("HSET", "h", "a", "1")
    pair8.check(name, "h", *args)
    pair8.check("HGETALL", "h")


def test_hgetex_hsetex_hgetdel(pair8):
    p = pair8
    for cmd in (
        ("HSET", "h", "a", "1", "b", "2"),
        ("HGETEX", "h", "FIELDS", "2", "a", "zz"),
        ("HGETEX", "h", "EX", "100", "FIELDS", "2", "a", "zz"),
        ("HTTL", "h", "FIELDS", "1", "a"),
        ("HGETEX", "h", "PERSIST", "FIELDS", "1", "a"),
        ("HTTL", "h", "FIELDS", "1", "a"),
        ("HGETEX", "h", "EX", "10", "PERSIST", "FIELDS", "1", "a"),
        ("HGETEX", "h", "EX", "-1", "FIELDS", "1", "a"),
        ("HGETEX", "h", "PX", "0", "FIELDS", "1", "b"),
        ("HGETALL", "h"),
        ("HGETEX", "nokey", "EX", "10", "FIELDS", "1", "a"),
        ("HSETEX", "h2", "FXX", "FIELDS", "1", "a", "b"),
        ("HSETEX", "h2", "FNX", "EX", "100", "FIELDS", "2", "a", "b", "c", "d"),
        ("HTTL", "h2", "FIELDS", "2", "a", "c"),
        ("HSETEX", "h2", "FNX", "FIELDS", "1", "a", "x"),
        ("HSETEX", "h2", "FXX", "KEEPTTL", "FIELDS", "1", "a", "x"),
        ("HTTL", "h2", "FIELDS", "2", "a", "c"),
        ("HSETEX", "h2", "FIELDS", "1", "a", "y"),
        ("HTTL", "h2", "FIELDS", "2", "a", "c"),
        ("HSETEX", "h2", "FNX", "FXX", "FIELDS", "1", "a", "b"),
        ("HSETEX", "h2", "EX", "10", "PX", "10", "FIELDS", "1", "a", "b"),
        ("HSETEX", "h2", "FIELDS", "1", "a"),
        ("HSETEX", "h2", "FIELDS", "0"),
        ("HSETEX", "h2", "FOO", "FIELDS", "1", "a", "b"),
        ("HSETEX", "h2", "EX", "0", "FIELDS", "1", "a", "b"),
        ("HGETALL", "h2"),
        ("HGETDEL", "h2", "FIELDS", "2", "a", "zz"),
        ("HGETDEL", "h2", "FIELDS", "1", "c"),
        ("EXISTS", "h2"),
        ("HGETDEL", "nokey", "FIELDS", "1", "a"),
    ):
        p.check(*cmd)


def test_hgetex_past_deadline_with_repeated_fields(pair8):
    """HGETEX with a deadline in the past answers and deletes field by field: a field
    named again answers nil. Found by the command fuzzer."""
    for option in (["PXAT", "0"], ["EXAT", "1"], ["PX", "100000"]):
        pair8.check("DEL", "hx")
        pair8.check("HSET", "hx", "f1", "a", "f2", "b", "f3", "c")
        pair8.check("HGETEX", "hx", *option, "FIELDS", "6", "f2", "k1", "f2", "f3", "k1", "f3")
        pair8.check("HGETALL", "hx")
    pair8.check("DEL", "hx")
