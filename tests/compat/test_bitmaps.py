"""Bitmap and bitfield commands against Redis 8.2.3, raw reply bytes.

Explicit cases for every error and edge Redis's bitops.c has (wrong types,
arity, offsets at proto-max-bulk-len, BITFIELD overflow at every width), then
seeded generated sequences over a few shared keys, compared byte for byte
together with the resulting values and OBJECT ENCODING.
"""

from __future__ import annotations

import os
import random

import pytest

BAD_INTS = ["x", "1.5", "", "+1", "01", " 1", "9223372036854775808", "-9223372036854775809"]


def test_setbit_getbit(pair8):
    p = pair8
    for cmd in (
        ("SETBIT", "b", "7", "1"), ("GET", "b"), ("GETBIT", "b", "7"), ("GETBIT", "b", "6"),
        ("GETBIT", "b", "100000"), ("GETBIT", "nokey", "3"), ("SETBIT", "b", "7", "1"),
        ("SETBIT", "b", "7", "0"), ("SETBIT", "b", "100", "1"), ("GET", "b"), ("STRLEN", "b"),
        ("OBJECT", "ENCODING", "b"), ("SET", "e", "abc"), ("OBJECT", "ENCODING", "e"),
        ("SETBIT", "e", "0", "0"), ("OBJECT", "ENCODING", "e"), ("SET", "i", "12345"),
        ("GETBIT", "i", "2"), ("GETBIT", "i", "3"), ("OBJECT", "ENCODING", "i"),
        ("SETBIT", "i", "3", "0"), ("GET", "i"), ("OBJECT", "ENCODING", "i"),
        ("SET", "t", "v", "EX", "100"), ("SETBIT", "t", "20", "1"), ("TTL", "t"),
        ("SETBIT", "b", "-1", "1"), ("SETBIT", "b", "1", "2"), ("SETBIT", "b", "1", "-1"),
        ("SETBIT", "b", "x", "1"), ("SETBIT", "b", "1", "x"), ("SETBIT", "b", "4294967296", "1"),
        ("SETBIT", "b", "x", "x"), ("GETBIT", "b", "-1"), ("GETBIT", "b", "4294967296"),
        ("GETBIT", "b", "#1"), ("SETBIT", "b"), ("SETBIT", "b", "1"), ("GETBIT", "b"),
        ("SETBIT", "b", "1", "1", "1"), ("GETBIT", "b", "1", "1"),
    ):
        p.check(*cmd)
    for bad in BAD_INTS:
        p.check("SETBIT", "b", bad, "1")
        p.check("SETBIT", "b", "1", bad)
        p.check("GETBIT", "b", bad)


def test_bit_wrongtype(pair8):
    p = pair8
    p.check("RPUSH", "l", "a")
    p.check("HSET", "h", "f", "v")
    for cmd in (
        ("SETBIT", "l", "1", "1"), ("GETBIT", "l", "1"), ("BITCOUNT", "l"), ("BITCOUNT", "l", "0", "1"),
        ("BITCOUNT", "l", "0", "1", "BIT"), ("BITPOS", "l", "1"), ("BITPOS", "l", "0", "1", "2"),
        ("BITOP", "AND", "d", "l"), ("BITOP", "OR", "d", "nokey", "h"), ("BITOP", "NOT", "d", "h"),
        ("BITFIELD", "l", "GET", "u8", "0"), ("BITFIELD", "l", "SET", "u8", "0", "1"),
        ("BITFIELD", "l"), ("BITFIELD_RO", "l", "GET", "i8", "0"), ("BITFIELD_RO", "l"),
        ("BITFIELD_RO", "l", "SET", "u8", "0", "1"), ("SETBIT", "l", "-1", "1"),
        ("BITCOUNT", "l", "x", "1"), ("BITCOUNT", "l", "0"), ("BITPOS", "l", "2"),
        ("BITOP", "NOT", "l", "nokey"), ("TYPE", "l"), ("EXISTS", "d"),
    ):
        p.check(*cmd)


def test_bitcount(pair8):
    p = pair8
    p.check("SET", "s", "foobar\x00\xff\x81")
    p.check("SET", "e", "")
    cases = [(), ("0", "0"), ("1", "1"), ("0", "-1"), ("-2", "-1"), ("-1", "-2"), ("5", "30"),
             ("-100", "100"), ("100", "200"), ("0", "-100"), ("-100", "-200"),
             ("9223372036854775807", "-9223372036854775808"), ("-9223372036854775808", "9223372036854775807")]
    for args in cases:
        for key in ("s", "e", "nokey"):
            p.check("BITCOUNT", key, *args)
            if args:
                p.check("BITCOUNT", key, *args, "BIT")
                p.check("BITCOUNT", key, *args, "byte")
    for start, end in [("1", "7"), ("5", "30"), ("7", "8"), ("8", "15"), ("3", "3"), ("-9", "-2"),
                       ("-1", "-1"), ("0", "79"), ("70", "1000"), ("9", "9"), ("13", "12")]:
        p.check("BITCOUNT", "s", start, end, "BIT")
    for bad in (("0",), ("0", "1", "BITS"), ("0", "1", "BIT", "x"), ("x", "1"), ("0", "x"),
                ("x", "1", "FOO"), ("0", "1", ""), *(("0", b) for b in BAD_INTS)):
        p.check("BITCOUNT", "s", *bad)
        p.check("BITCOUNT", "nokey", *bad)
    p.check("BITCOUNT")


def test_bitpos(pair8):
    p = pair8
    p.check("SET", "s", "\xff\xf0\x00\x0f\x00")
    p.check("SET", "ones", "\xff\xff\xff")
    p.check("SET", "zeros", "\x00\x00")
    p.check("SET", "e", "")
    ranges = [(), ("0",), ("1",), ("-1",), ("-2",), ("10",), ("0", "-1"), ("1", "2"), ("2", "1"),
              ("-3", "-1"), ("0", "100"), ("-100", "-50"), ("0", "0"), ("3", "3"),
              ("9223372036854775807",), ("-9223372036854775808", "9223372036854775807")]
    for key in ("s", "ones", "zeros", "e", "nokey"):
        for bit in ("0", "1"):
            for args in ranges:
                p.check("BITPOS", key, bit, *args)
                if len(args) == 2:
                    p.check("BITPOS", key, bit, *args, "BIT")
                    p.check("BITPOS", key, bit, *args, "BYTE")
    for key in ("s", "ones", "zeros"):
        for bit in ("0", "1"):
            for start, end in [("3", "12"), ("12", "19"), ("0", "7"), ("4", "4"), ("7", "9"),
                               ("20", "35"), ("-5", "-1"), ("-20", "-10"), ("15", "16"), ("9", "22")]:
                p.check("BITPOS", key, bit, start, end, "BIT")
    for bad in (("2",), ("-1",), ("x",), ("",), ("1", "x"), ("1", "0", "x"), ("1", "0", "1", "bits"),
                ("1", "0", "1", "BIT", "x"), ("2", "x"), ("1", "x", "1", "FOO"), ("1", "0", "x", "FOO"),
                *(("1", b) for b in BAD_INTS)):
        p.check("BITPOS", "s", *bad)
        p.check("BITPOS", "nokey", *bad)
    p.check("BITPOS", "s")


OPS = ["AND", "OR", "XOR", "NOT", "DIFF", "DIFF1", "ANDOR", "ONE", "and", "Diff1", "one"]


def test_bitop(pair8):
    p = pair8
    p.check("SET", "a", "\x0f\xf0\xaa\x55abc")
    p.check("SET", "b", "\xff\x00\x0f")
    p.check("SET", "c", "12345678901234567890123456789012345678901234567890")
    p.check("SET", "z", "")
    p.check("SET", "d", "old", "EX", "100")
    sources = [("a",), ("a", "b"), ("b", "a", "c"), ("a", "nokey"), ("nokey", "a", "b"), ("z",),
               ("nokey",), ("nokey", "z"), ("a", "a"), ("c", "b", "a", "z")]
    for op in OPS:
        for keys in sources:
            p.check("BITOP", op, "d", *keys)
            p.check("GET", "d")
            p.check("TTL", "d")
            p.check("OBJECT", "ENCODING", "d")
    for bad in (("FOO", "d", "a"), ("", "d", "a"), ("NOT", "d", "a", "b"), ("DIFF", "d", "a"),
                ("diff1", "d", "a"), ("andor", "d", "a"), ("AND", "d"), ("NOT", "d"), ("ONE", "d"),
                ("an", "d", "a"), ("ANDX", "d", "a")):
        p.check("BITOP", *bad)
    p.check("BITOP", "AND", "a", "a", "b")
    p.check("GET", "a")
    p.check("SADD", "set", "x")
    p.check("BITOP", "OR", "set", "b")
    p.check("TYPE", "set")


def test_bitfield_basics(pair8):
    p = pair8
    for cmd in (
        ("BITFIELD", "f", "SET", "i8", "0", "100", "GET", "i8", "0"),
        ("BITFIELD", "f", "INCRBY", "i5", "100", "1", "GET", "u4", "0"),
        ("BITFIELD", "f", "INCRBY", "u2", "100", "1", "OVERFLOW", "SAT", "INCRBY", "u2", "102", "1"),
        ("BITFIELD", "f", "OVERFLOW", "FAIL", "INCRBY", "u2", "102", "10", "GET", "u2", "102"),
        ("BITFIELD", "f", "SET", "u8", "#1", "255", "GET", "u8", "8", "GET", "i16", "#0"),
        ("BITFIELD", "f", "GET", "i64", "0", "GET", "u63", "1", "GET", "i1", "7", "GET", "u1", "7"),
        ("BITFIELD", "f", "SET", "i64", "64", "-9223372036854775808", "INCRBY", "i64", "64", "-1"),
        ("BITFIELD", "f", "OVERFLOW", "SAT", "INCRBY", "i64", "64", "-1", "INCRBY", "i64", "64",
         "9223372036854775807", "INCRBY", "i64", "64", "9223372036854775807"),
        ("BITFIELD", "f", "OVERFLOW", "FAIL", "INCRBY", "i64", "64", "1"),
        ("GET", "f"), ("OBJECT", "ENCODING", "f"), ("STRLEN", "f"),
        ("BITFIELD", "f"), ("BITFIELD", "nokey"), ("BITFIELD", "nokey", "GET", "u8", "0"),
        ("EXISTS", "nokey"), ("BITFIELD_RO", "f", "GET", "u8", "0", "GET", "i3", "#2"),
        ("BITFIELD_RO", "f"), ("BITFIELD_RO", "f", "SET", "u8", "0", "1"),
        ("BITFIELD_RO", "f", "INCRBY", "u8", "0", "1"), ("BITFIELD_RO", "nokey", "GET", "u8", "0"),
        ("BITFIELD_RO", "f", "OVERFLOW", "SAT", "GET", "u8", "0"),
        ("BITFIELD", "new", "OVERFLOW", "FAIL", "SET", "u8", "100", "999"), ("STRLEN", "new"),
        ("GET", "new"), ("OBJECT", "ENCODING", "new"),
        ("SET", "n", "123"), ("BITFIELD", "n", "GET", "u8", "0"), ("OBJECT", "ENCODING", "n"),
        ("SET", "t", "v", "EX", "100"), ("BITFIELD", "t", "SET", "u8", "16", "7"), ("TTL", "t"),
        ("BITFIELD", "f", "get", "u8", "0", "overflow", "wrap", "incrby", "u8", "0", "1"),
    ):
        p.check(*cmd)


@pytest.mark.parametrize("args", [
    ("GET",), ("GET", "u8"), ("SET", "u8", "0"), ("INCRBY", "u8", "0"), ("OVERFLOW",),
    ("OVERFLOW", "X", "GET", "u8", "0"), ("FOO", "u8", "0"), ("GET", "u64", "0"), ("GET", "i65", "0"),
    ("GET", "u0", "0"), ("GET", "i0", "0"), ("GET", "U8", "0"), ("GET", "I8", "0"), ("GET", "8", "0"),
    ("GET", "", "0"), ("GET", "u", "0"), ("GET", "u-1", "0"), ("GET", "u08", "0"), ("GET", "u+8", "0"),
    ("GET", "u8", "-1"), ("GET", "u8", "x"), ("GET", "u8", "#"), ("GET", "u8", "#-1"),
    ("GET", "u8", "##1"), ("GET", "u8", "4294967296"), ("GET", "u8", "4294967295"),
    ("GET", "u8", "#536870912"), ("GET", "u8", "#536870911"), ("GET", "i64", "#67108864"),
    ("GET", "i64", "#288230376151711744"), ("GET", "i64", "#144115188075855872"),
    ("GET", "u8", "#9223372036854775807"), ("SET", "u8", "0", "x"), ("SET", "u8", "0", "1.5"),
    ("INCRBY", "u8", "0", "9223372036854775808"), ("SET", "u8", "x", "y"), ("SET", "x", "0", "y"),
    ("GET", "u8", "0", "SET", "u8", "0"), ("GET", "u8", "0", "OVERFLOW", "FAIL", "FOO"),
    ("SET", "u8", "0", "1", "GET", "u99", "0"), ("OVERFLOW", "WRAP", "OVERFLOW"),
])
def test_bitfield_errors(pair8, args):
    pair8.check("SET", "f", "abc")
    pair8.check("BITFIELD", "f", *args)
    pair8.check("BITFIELD_RO", "f", *args)
    pair8.check("BITFIELD", "nokey", *args)
    pair8.check("GET", "f")
    pair8.check("EXISTS", "nokey")


VALUES = ["0", "1", "-1", "2", "-2", "3", "7", "8", "15", "16", "-16", "-17", "100", "127", "128", "-128",
          "-129", "255", "256", "32767", "-32768", "65535", "4294967295", "2147483647", "-2147483648",
          "9223372036854775807", "-9223372036854775808", "4611686018427387904", "-4611686018427387905"]
TYPES = ["i1", "u1", "i2", "u2", "i3", "u3", "i7", "u7", "i8", "u8", "i15", "u16", "i32", "u32",
         "i63", "u63", "i64"]


@pytest.mark.parametrize("overflow", ["WRAP", "SAT", "FAIL"])
@pytest.mark.parametrize("kind", TYPES)
def test_bitfield_overflow(pair8, overflow, kind):
    p = pair8
    for start in ("0", "-1", "1", "100", "-128"):
        for value in VALUES:
            p.check("BITFIELD", "f", "OVERFLOW", overflow, "SET", kind, "3", start,
                    "INCRBY", kind, "3", value, "GET", kind, "3", "SET", kind, "#1", value,
                    "GET", kind, "#1")
    p.check("GET", "f")


def _one(rng: random.Random) -> list[str]:
    keys = ["b1", "b2", "b3", "l"]
    k = rng.choice(keys)
    small = lambda: str(rng.choice([0, 1, 3, 7, 8, 9, 15, 16, 23, 31, 63, 64, 100, 255]))  # noqa: E731
    idx = lambda: rng.choice(["0", "1", "-1", "2", "-2", "5", "-5", "10", "-100", "100", "x"])  # noqa: E731
    kind = lambda: rng.choice(TYPES + ["u64", "i0", "x8"])  # noqa: E731
    value = lambda: rng.choice(VALUES + ["x"])  # noqa: E731

    def field_op() -> list[str]:
        r = rng.random()
        if r < 0.3:
            return ["GET", kind(), rng.choice([small(), "#" + small()])]
        if r < 0.6:
            return ["SET", kind(), rng.choice([small(), "#" + small()]), value()]
        if r < 0.9:
            return ["INCRBY", kind(), rng.choice([small(), "#" + small()]), value()]
        return ["OVERFLOW", rng.choice(["WRAP", "SAT", "FAIL", "wrap", "x"])]

    choices = [
        lambda: ["SETBIT", k, small(), rng.choice(["0", "1", "1", "2"])],
        lambda: ["GETBIT", k, small()],
        lambda: ["BITCOUNT", k, *rng.choice([[], [idx(), idx()], [idx(), idx(), rng.choice(["BIT", "BYTE"])]])],
        lambda: ["BITPOS", k, rng.choice(["0", "1"]),
                 *rng.choice([[], [idx()], [idx(), idx()], [idx(), idx(), rng.choice(["BIT", "BYTE"])]])],
        lambda: ["BITOP", rng.choice(OPS), rng.choice(keys),
                 *rng.sample(keys + ["nokey"], rng.choice([1, 1, 2, 3]))],
        lambda: ["BITFIELD", k, *[w for _ in range(rng.choice([0, 1, 2, 3])) for w in field_op()]],
        lambda: ["BITFIELD_RO", k, *[w for _ in range(rng.choice([0, 1, 2])) for w in field_op()]],
        lambda: ["SET", k, rng.choice(["", "a", "123", "\xff\x00", "foobar"])],
        lambda: ["APPEND", k, "x"], lambda: ["GET", k], lambda: ["STRLEN", k],
        lambda: ["OBJECT", "ENCODING", k], lambda: ["DEL", k], lambda: ["RPUSH", "l", "a"],
    ]
    return rng.choice(choices)()


@pytest.mark.parametrize("seed", range(int(os.environ.get("RILLET_GEN_SEEDS", "12"))))
def test_generated_bit_commands(pair8, seed):
    rng = random.Random(seed)
    for _ in range(300):
        pair8.check(*_one(rng))
    for key in ("b1", "b2", "b3", "l"):
        pair8.check("GET", key)
        pair8.check("OBJECT", "ENCODING", key)


def test_offset_limit_follows_proto_max_bulk_len(pair8):
    p = pair8
    try:
        p.check("CONFIG", "SET", "proto-max-bulk-len", "1048576")
        for offset in ("8388607", "8388608", "8388615"):
            p.check("SETBIT", "b", offset, "1")
            p.check("GETBIT", "b", offset)
            p.check("BITFIELD", "b", "GET", "u8", offset)
        p.check("BITFIELD", "b", "SET", "u8", "#1048575", "1")
        p.check("BITFIELD", "b", "SET", "u8", "#1048576", "1")
        p.check("STRLEN", "b")
    finally:
        p.check("CONFIG", "SET", "proto-max-bulk-len", "536870912")


def test_bitmap_digest_and_reload(pair8):
    p = pair8
    p.check("SETBIT", "b", "12345", "1")
    p.check("BITFIELD", "f", "SET", "i16", "#3", "-300")
    p.check("BITOP", "XOR", "x", "b", "f")
    for key in ("b", "f", "x"):
        p.check("DEBUG", "DIGEST-VALUE", key)
    p.check("DEBUG", "RELOAD")
    for key in ("b", "f", "x"):
        p.check("GET", key)
        p.check("OBJECT", "ENCODING", key)


def test_large_bitmaps_cross_chunks(pair8):
    """Strings past the 64 KB slices rillet works in: scans, counts and BITOP across them."""
    p = pair8
    size = 200_000
    for bit in (70_000 * 8 + 3, 131_072 * 8, 131_071 * 8 + 7, 199_999 * 8 + 1, 65_536 * 8 - 1):
        p.check("SETBIT", "b", str(bit), "1")
    p.check("SETRANGE", "ones", "0", "\xff" * size)
    p.check("SETBIT", "ones", str(150_000 * 8 + 5), "0")
    p.check("SETRANGE", "z", str(size - 1), "\x00")
    for key in ("b", "ones", "z"):
        for bit in ("0", "1"):
            p.check("BITPOS", key, bit)
            for start, end in (("0", "-1"), ("1000", "65535"), ("65536", "131071"), ("70000", "-1"),
                               ("131072", "199998")):
                p.check("BITPOS", key, bit, start, end)
                p.check("BITPOS", key, bit, str(int(start) * 8 + 5), str(int(end) * 8 + 3 if end != "-1" else -3), "BIT")
                p.check("BITCOUNT", key, start, end)
                p.check("BITCOUNT", key, str(int(start) * 8 + 5), str(int(end) * 8 + 3 if end != "-1" else -3), "BIT")
        p.check("BITCOUNT", key)
    for op in ("AND", "OR", "XOR", "DIFF", "DIFF1", "ANDOR", "ONE"):
        p.check("BITOP", op, "d", "b", "ones", "z")
        p.check("DEBUG", "DIGEST-VALUE", "d")
    p.check("BITOP", "NOT", "d", "ones")
    p.check("DEBUG", "DIGEST-VALUE", "d")
