"""Stream commands without consumer groups against Redis 7.0 and 8.2.3, raw reply bytes.

Each script runs on rillet and on a reference server and every reply must be
the same bytes. Scripts under `pair` hold for both versions; where 7.0 and 8
differ (8.2's deletion policies, XREAD `+`, newer error texts, XSETID's
max-deleted check, MEMORY USAGE) the script runs on `pair8` only: 8 wins.
rillet's XINFO STREAM carries Redis 8.6's six IDMP fields, which 8.2.3 does
not have; they are removed from rillet's reply before comparing (and checked
on their own in tests/engine/test_stream_commands.py).
"""

from __future__ import annotations

import re
import shlex

import pytest

from tests.helpers.wire import encode_command

_IDMP_BLOCK = re.compile(
    rb"\$13\r\nidmp-duration\r\n:\d+\r\n\$12\r\nidmp-maxsize\r\n:\d+\r\n"
    rb"\$12\r\npids-tracked\r\n:\d+\r\n\$12\r\niids-tracked\r\n:\d+\r\n"
    rb"\$10\r\niids-added\r\n:\d+\r\n\$15\r\niids-duplicates\r\n:\d+\r\n"
)


def strip_idmp(raw: bytes) -> bytes:
    """Drop the 8.6 IDMP fields from an XINFO STREAM reply (RESP2 or RESP3)."""
    stripped, found = _IDMP_BLOCK.subn(b"", raw, count=1)
    if not found:
        return raw
    header, rest = stripped.split(b"\r\n", 1)
    kind, size = header[:1], int(header[1:])
    return kind + b"%d" % (size - (12 if kind == b"*" else 6)) + b"\r\n" + rest


def run(pair, script: str) -> None:
    """One command per line (shlex quoting, Python escapes such as \\x00 allowed)."""
    for line in script.strip().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        args = [word.encode("latin-1").decode("unicode_escape").encode("latin-1")
                for word in shlex.split(line)]
        if args[0].upper() == b"HELLO":
            pair.both(*args)  # the server's own version and client id differ
        elif args[0].upper() == b"XINFO":
            pair.check(*args, normalise=strip_idmp)
        else:
            pair.check(*args)


def fill(pair, key: str, count: int, fields=("f", "v"), start_ms: int = 1, per_ms: int = 1) -> None:
    """XADD `count` entries with explicit IDs to both servers, pipelined."""
    commands = []
    for n in range(count):
        ms = start_ms + n // per_ms
        seq = n % per_ms
        commands.append(encode_command("XADD", key, f"{ms}-{seq}", *fields))
    payload = b"".join(commands)
    for wire in (pair.ours, pair.ref):
        wire.send_raw(payload)
    for _ in range(count):
        ours, ref = pair.ours.read_reply(), pair.ref.read_reply()
        assert ours == ref


ID_REPLY = re.compile(rb"\$\d+\r\n(\d+)-(\d+)\r\n")


# --- XADD ------------------------------------------------------------------------------

def test_xadd_explicit_ids_and_their_errors(pair):
    run(pair, r"""
        XADD s 1-1 f v
        XADD s 1-1 f v
        XADD s 1-0 f v
        XADD s 0-5 f v
        XADD s 1-2 field value other "with space"
        XADD s 2 f v
        XADD s 2 f v
        XADD s 3-* f v
        XADD s 3-* f v
        XADD s 18446744073709551615-18446744073709551614 f v
        XADD s 18446744073709551615-* f v
        XADD s 18446744073709551615-* f v
        XADD s * f v
        XADD s 18446744073709551615-18446744073709551615 f v
        XLEN s
        XADD z 0-0 f v
        XADD z 0 f v
        XADD z 0-* f v
        XADD z 0-* f v
        XADD z 5-18446744073709551615 f v
        XADD z 6-* f v
        XRANGE z - +
        EXISTS nothing
        XADD nothing 0-0 f v
        EXISTS nothing
    """)


@pytest.mark.parametrize("id_arg", [
    "x", "-", "+", "$", "(1", "1-x", "x-1", "1-", "-1", "1--1", "1-2-3", "18446744073709551616",
    "1-18446744073709551616", "*-1", "1-**", " 1", "1 ", "+1", "-0", "-18446744073709551615",
    "0x10", "1.5", "", "\\x001", "1\\x00junk", "*\\x00", "a" * 130,
])
def test_xadd_id_parsing(pair, id_arg):
    pair.check("XADD", "s", "1-1", "f", "v")
    args = ["XADD", "s", id_arg.encode("latin-1").decode("unicode_escape"), "f", "v"]
    if id_arg == "*\\x00":  # read as `*`: the ID is the clock's, compare its form
        replies = pair.both(*args)
        assert all(ID_REPLY.fullmatch(reply) for reply in replies), replies
        pair.check("XLEN", "s")
        return
    reply = pair.check(*args)
    if reply.startswith(b"$"):
        pair.check("XRANGE", "s", "-", "+")


def test_xadd_field_counts_and_binary_data(pair):
    run(pair, r"""
        XADD s 1-1 f
        XADD s 1-1 f v f
        XADD s 1-1
        XADD s 1-1 f v f2 v2 f3 v3
        XADD s 2-1 "" ""
        XADD s 3-1 "\x00\r\n" "\xff\xfe\r\n"
        XADD s 4-1 f v f v f v
        XRANGE s - +
        XADD s * f
        XADD s NOMKSTREAM 5-1 f
        XLEN s
    """)


def test_xadd_auto_id_shape_and_monotonic(pair):
    ours = [pair.ours.call("XADD", "s", "*", "f", "v") for _ in range(20)]
    ref = [pair.ref.call("XADD", "s", "*", "f", "v") for _ in range(20)]
    for replies in (ours, ref):
        ids = [tuple(map(int, ID_REPLY.fullmatch(r).groups())) for r in replies]
        assert ids == sorted(ids) and len(set(ids)) == len(ids)
    pair.check("XLEN", "s")
    # An explicit ID far in the future: `*` then continues from its ms, seq + 1.
    run(pair, """
        XADD t 99999999999999-5 f v
        XADD t * f v
        XADD t * f v
        XADD t 99999999999999-* f v
    """)


def test_xadd_nomkstream(pair):
    run(pair, """
        XADD s NOMKSTREAM * f v
        XADD s NOMKSTREAM 1-1 f v
        EXISTS s
        XADD s nomkstream NOMKSTREAM MAXLEN 5 1-1 f v
        XADD s 1-1 f v
        XADD s NOMKSTREAM 2-1 f v
        XADD s NOMKSTREAM 2-1 f v
        XLEN s
        SET str x
        XADD str NOMKSTREAM 1-1 f v
        XADD s NOMKSTREAM
    """)


def test_xadd_trim_options_parsing(pair):
    run(pair, r"""
        XADD s MAXLEN ~ f v
        XADD s MAXLEN ~ 1 f v
        XADD s MAXLEN x 1-1 f v
        XADD s MAXLEN -1 1-1 f v
        XADD s MAXLEN 9223372036854775808 1-1 f v
        XADD s MAXLEN = 5 MINID 5 1-1 f v
        XADD s MINID 5 MAXLEN 5 1-1 f v
        XADD s MAXLEN 1 MAXLEN 2 1-1 f v
        XADD s LIMIT 5 1-1 f v
        XADD s LIMIT -1 1-1 f v
        XADD s LIMIT x 1-1 f v
        XADD s MAXLEN ~ 5 LIMIT 5 1-1 f v f
        XADD s MAXLEN = 2 LIMIT 5 1-1 f v
        XADD s LIMIT 5 MAXLEN 2 1-1 f v
        XADD s MAXLEN 2 LIMIT 5 LIMIT 6 1-1 f v
        XADD s MINID ~ 1-x 1-1 f v
        XADD s MINID ~ - 1-1 f v
        XADD s MINID (1 1-1 f v
        XADD s MINID 1-* 1-1 f v
        XADD s MAXLEN
        XADD s MAXLEN ~
        XADD s MAXLEN ~ x
        XADD s LIMIT
        XADD s LIMIT 1 f v
        XADD s MAXLEN 1 LIMIT f v
        XADD s MAXLEN 1-1 f v
        XADD s FOO 1-1 f v
        XADD s maxlen = 0 1-1 f v
        XADD s MaxLen 0 2-1 f v
        XLEN s
        EXISTS s
        XADD s LIMIT 5 MAXLEN ~ 2 LIMIT 3 3-1 f v
        XADD s MINID = 4 4-1 f v
        XADD s minid 5-0 5-0 f v
        XRANGE s - +
    """)


@pytest.mark.parametrize("clause", [
    ["MAXLEN", "0"], ["MAXLEN", "=", "0"], ["MAXLEN", "~", "0"], ["MAXLEN", "444"],
    ["MAXLEN", "~", "444"], ["MAXLEN", "~", "444", "LIMIT", "100"],
    ["MAXLEN", "~", "444", "LIMIT", "99"], ["MAXLEN", "~", "444", "LIMIT", "0"],
    ["MAXLEN", "~", "999"], ["MAXLEN", "~", "1000"], ["MAXLEN", "~", "5000"],
    ["MINID", "500"], ["MINID", "~", "500"], ["MINID", "~", "550"],
    ["MINID", "~", "550", "LIMIT", "200"], ["MINID", "=", "2000"], ["MINID", "~", "2000"],
    ["MINID", "0"], ["MINID", "~", "1"],
])
def test_xadd_trims_like_redis(pair, clause):
    fill(pair, "s", 1000)
    pair.check("XADD", "s", *clause, "5000-1", "f", "v")
    run(pair, """
        XLEN s
        XINFO STREAM s
        XRANGE s - + COUNT 3
        XREVRANGE s + - COUNT 3
    """)


def test_xadd_to_wrong_type(pair):
    run(pair, """
        SET str x
        XADD str 1-1 f v
        XADD str * f v
        XADD str MAXLEN 1 * f v
        XADD str 0-0 f v
        XADD str FOO f v
        GET str
    """)


# --- XLEN / XRANGE / XREVRANGE ------------------------------------------------------------

def test_xlen(pair):
    run(pair, """
        XLEN s
        XADD s 1-1 f v
        XADD s 1-2 f v
        XLEN s
        XDEL s 1-1
        XLEN s
        SET str x
        XLEN str
    """)


RANGE_BOUNDS = ["-", "+", "0", "1", "2", "3", "1-1", "1-2", "2-0", "(1-1", "(2-5", "(2",
                "(-", "(+", "(0-0", "(18446744073709551615-18446744073709551615",
                "18446744073709551615", "18446744073709551616", "x", "1-x", "(x", "(", "((1",
                "-1", "18446744073709551615-18446744073709551615"]


@pytest.mark.parametrize("command", ["XRANGE", "XREVRANGE"])
def test_xrange_bounds(pair, command):
    fill(pair, "s", 12, start_ms=1, per_ms=4)
    pair.check("XDEL", "s", "2-1")
    for first in RANGE_BOUNDS:
        for second in ("-", "+", "2", "(2-2", "x", "(0-0"):
            pair.check(command, "s", first, second)
            pair.check(command, "s", second, first)


@pytest.mark.parametrize("command", ["XRANGE", "XREVRANGE"])
def test_xrange_count(pair, command):
    fill(pair, "s", 30)
    low, high = ("-", "+") if command == "XRANGE" else ("+", "-")
    for count in ("0", "1", "5", "30", "31", "-1", "-100", "x", "1.5", "9223372036854775807",
                  "9223372036854775808", ""):
        pair.check(command, "s", low, high, "COUNT", count)
    run(pair, f"""
        {command} s {low} {high} COUNT 2 COUNT 3
        {command} s {low} {high} count 2
        {command} s {low} {high} COUNT
        {command} s {low} {high} LIMIT 2
        {command} s {low} {high} COUNT 2 extra
        {command} nokey {low} {high} COUNT 0
        {command} nokey x {high}
        {command} nokey {low} {high}
        {command} s
        SET str x
        {command} str {low} {high}
        {command} str x {high}
        {command} str {low} {high} COUNT 0
    """)


def test_xrange_over_many_nodes_and_tombstones(pair):
    fill(pair, "s", 1200, per_ms=7)
    for n in range(0, 1200, 3):
        pair.ours.send_raw(encode_command("XDEL", "s", f"{1 + n // 7}-{n % 7}"))
        pair.ref.send_raw(encode_command("XDEL", "s", f"{1 + n // 7}-{n % 7}"))
    for _ in range(0, 1200, 3):
        assert pair.ours.read_reply() == pair.ref.read_reply()
    run(pair, """
        XRANGE s - + COUNT 25
        XRANGE s 100 120
        XRANGE s (100-3 105 COUNT 4
        XREVRANGE s + - COUNT 25
        XREVRANGE s 120 100
        XREVRANGE s (150 (140-2
        XRANGE s 171 +
        XLEN s
        XINFO STREAM s
    """)


# --- XDEL / XTRIM ---------------------------------------------------------------------------

def test_xdel(pair):
    run(pair, """
        XDEL nokey 1-1
        XDEL nokey x
        XADD s 1-1 f v
        XADD s 1-2 f v
        XADD s 2-1 f v
        XDEL s
        XDEL s 1-1 1-1 x
        XDEL s x 1-1
        XDEL s -
        XDEL s +
        XDEL s 1
        XDEL s 1-1 1-1 9-9
        XDEL s 1-1
        XRANGE s - +
        XINFO STREAM s
        XDEL s 1-2 2-1
        XLEN s
        XINFO STREAM s
        XADD s 2-1 f v
        XADD s 3-1 f v
        SET str x
        XDEL str 1-1
        XDEL str x
    """)


def test_xdel_frees_nodes(pair):
    fill(pair, "s", 250)
    ids = " ".join(f"{ms}-0" for ms in range(1, 101))
    run(pair, f"""
        XDEL s {ids}
        XINFO STREAM s
        XDEL s 250-0 249-0
        XINFO STREAM s
        XRANGE s - + COUNT 2
    """)


def test_xtrim_parsing_and_errors(pair):
    fill(pair, "s", 10)
    run(pair, r"""
        XTRIM s
        XTRIM s MAXLEN
        XTRIM s MAXLEN ~
        XTRIM s LIMIT 5
        XTRIM s LIMIT 5 MAXLEN 1
        XTRIM s MAXLEN 1 FOO
        XTRIM s MAXLEN 1 NOMKSTREAM
        XTRIM s FOO 1
        XTRIM s MAXLEN 1 LIMIT
        XTRIM s MAXLEN -1
        XTRIM s MAXLEN x
        XTRIM s MINID x
        XTRIM s MINID -
        XTRIM s MINID +
        XTRIM s MINID (5
        XTRIM s MINID 5-*
        XTRIM s MAXLEN 10 MINID 1
        XTRIM s MINID 1 MAXLEN 10
        XTRIM s MINID 1 LIMIT 5
        XTRIM s MAXLEN = 1 LIMIT 5
        XTRIM s MAXLEN ~ 1 LIMIT -1
        XTRIM s MAXLEN ~ 1 LIMIT 5 LIMIT x
        XTRIM nokey MAXLEN 1
        XTRIM nokey MAXLEN x
        SET str x
        XTRIM str MAXLEN 1
        XTRIM str MAXLEN x
        XLEN s
    """)


@pytest.mark.parametrize("args", [
    ["MAXLEN", "0"], ["MAXLEN", "~", "0"], ["MAXLEN", "444"], ["MAXLEN", "~", "444"],
    ["MAXLEN", "~", "444", "LIMIT", "100"], ["MAXLEN", "~", "444", "LIMIT", "300"],
    ["MAXLEN", "~", "444", "LIMIT", "0"], ["MAXLEN", "~", "0", "LIMIT", "1"],
    ["maxlen", "~", "10", "limit", "1000"], ["MAXLEN", "1000"], ["MAXLEN", "~", "1001"],
    ["MINID", "600"], ["MINID", "~", "600"], ["MINID", "~", "600", "LIMIT", "150"],
    ["MINID", "=", "601-0"], ["MINID", "~", "99999"], ["MINID", "99999"],
])
def test_xtrim_removes_what_redis_removes(pair, args):
    fill(pair, "s", 1000)
    pair.check("XDEL", "s", "300-0", "301-0", "700-0")
    pair.check("XTRIM", "s", *args)
    run(pair, """
        XLEN s
        XINFO STREAM s
        XRANGE s - + COUNT 2
        XTRIM s MAXLEN 0
        XINFO STREAM s
    """)


def test_xtrim_with_small_nodes(pair):
    for wire in (pair.ours, pair.ref):
        assert wire.call("CONFIG", "SET", "stream-node-max-entries", "7") == b"+OK\r\n"
    try:
        fill(pair, "s", 100)
        run(pair, """
            XTRIM s MAXLEN ~ 50
            XINFO STREAM s
            XTRIM s MINID ~ 80 LIMIT 7
            XINFO STREAM s
            XTRIM s MINID ~ 80 LIMIT 6
            XINFO STREAM s
        """)
    finally:
        for wire in (pair.ours, pair.ref):
            wire.call("CONFIG", "SET", "stream-node-max-entries", "100")


def test_node_size_limits_by_bytes(pair):
    for wire in (pair.ours, pair.ref):
        wire.call("CONFIG", "SET", "stream-node-max-bytes", "300")
    try:
        fill(pair, "s", 60, fields=("field", "value-" + "x" * 20))
        run(pair, """
            XINFO STREAM s
            XTRIM s MAXLEN ~ 30
            XINFO STREAM s
        """)
    finally:
        for wire in (pair.ours, pair.ref):
            wire.call("CONFIG", "SET", "stream-node-max-bytes", "4096")


# --- XREAD (not blocking) --------------------------------------------------------------------

def test_xread_reads_after_ids(pair):
    fill(pair, "s", 5)
    fill(pair, "t", 3, start_ms=10)
    run(pair, """
        XREAD STREAMS s 0
        XREAD STREAMS s 2
        XREAD STREAMS s 2-0
        XREAD STREAMS s 5
        XREAD STREAMS s $
        XREAD COUNT 2 STREAMS s t 0 0
        XREAD COUNT 0 STREAMS s 0
        XREAD COUNT -5 STREAMS s 0
        XREAD count 1 COUNT 2 STREAMS s 0
        XREAD STREAMS s t nokey 3 11 0
        XREAD STREAMS nokey 0
        XREAD STREAMS nokey $
        XREAD STREAMS s s 0 4
        XREAD STREAMS s 18446744073709551615-18446744073709551615
        XREAD STREAMS s 18446744073709551615
        XREAD streams s 0
        XREAD BLOCK 0 COUNT 1 STREAMS s 0
        XREAD BLOCK 100 STREAMS s 3
    """)


def test_xread_errors(pair):
    fill(pair, "s", 2)
    run(pair, """
        XREAD STREAMS s
        XREAD COUNT x STREAMS s 0
        XREAD BLOCK -1 STREAMS s 0
        XREAD BLOCK x STREAMS s 0
        XREAD BLOCK 1.5 STREAMS s 0
        XREAD BLOCK 99999999999999999999 STREAMS s 0
        XREAD STREAMS s (1
        XREAD STREAMS s -
        XREAD STREAMS s 1-x
        XREAD STREAMS s 18446744073709551616
        XREAD GROUP g c STREAMS s 0
        XREAD NOACK STREAMS s 0
        XREAD FOO STREAMS s 0
        XREAD STREAMS s >
        XREAD COUNT
        XREAD COUNT 1 STREAMS
        XREAD COUNT 1 s STREAMS
        XREAD CLAIM 5 STREAMS s 0
        XREAD COUNT 1 BLOCK
        SET str x
        XREAD STREAMS str 0
        XREAD STREAMS s str 0 0
        XREAD STREAMS str s x 0
        XREAD STREAMS nokey x
    """)


def test_xread_resp3(pair):
    fill(pair, "s", 3)
    run(pair, """
        HELLO 3
        XREAD STREAMS s nokey 0 0
        XREAD COUNT 1 STREAMS s s 0 1
        XREAD STREAMS nokey 0
        XRANGE s - + COUNT 0
        XRANGE s - +
        XADD nokey NOMKSTREAM * f v
        XINFO STREAM s
        XINFO STREAM s FULL
        XINFO STREAM s FULL COUNT 1
    """)


# --- XSETID ---------------------------------------------------------------------------------

def test_xsetid(pair):
    run(pair, """
        XSETID nokey 1-1
        XSETID nokey x
        XADD s 5-5 f v
        XSETID s 5-4
        XSETID s 5-5
        XSETID s 6
        XSETID s 6-x
        XSETID s -
        XSETID s 7-0 ENTRIESADDED 0
        XSETID s 7-0 ENTRIESADDED -1
        XSETID s 7-0 ENTRIESADDED x
        XSETID s 7-0 ENTRIESADDED 1
        XSETID s 7-0 ENTRIESADDED 5 MAXDELETEDID 8-0
        XSETID s 7-0 ENTRIESADDED 5 MAXDELETEDID 6-0
        XSETID s 7-0 MAXDELETEDID 6-0
        XSETID s 7-0 MAXDELETEDID x
        XSETID s 7-0 FOO 1
        XSETID s 7-0 ENTRIESADDED
        XSETID s 7-0 entriesadded 5 ENTRIESADDED 6
        XINFO STREAM s
        XADD s 7-0 f v
        XADD s 7-1 f v
        XSETID s 7-1 MAXDELETEDID 0-0
        XINFO STREAM s
        SET str x
        XSETID str 1-1
        XSETID str x
        XSETID
    """)


def test_counters_wrap_past_int64_as_redis_long_longs(pair8):
    """Found by the command fuzzer: entries-added, entries-read and lag are C long longs
    in Redis, so XSETID ENTRIESADDED / ENTRIESREAD at INT64_MAX wrap to negatives."""
    run(pair8, """
        XADD s 1-0 f v
        XSETID s 1-0 ENTRIESADDED 9223372036854775807
        XGROUP CREATE s g 0 ENTRIESREAD 9223372036854775806
        XGROUP CREATE s g2 $ ENTRIESREAD 9223372036854775807
        XADD s 2-0 f v
        XINFO GROUPS s
        XADD s 3-0 f v
        XINFO STREAM s
        XREADGROUP GROUP g c COUNT 1 STREAMS s >
        XINFO GROUPS s
        XREADGROUP GROUP g c STREAMS s >
        XREADGROUP GROUP g2 c STREAMS s >
        XINFO GROUPS s
        XDEL s 2-0
        XADD s 4-0 f v
        XINFO GROUPS s
        XGROUP SETID s g 0 ENTRIESREAD 9223372036854775807
        XREADGROUP GROUP g c STREAMS s >
        XINFO GROUPS s
    """)


# --- XINFO STREAM / TYPE / OBJECT ------------------------------------------------------------

def test_xinfo_stream(pair):
    run(pair, """
        XINFO STREAM nokey
        XINFO STREAM nokey FULL
        XINFO STREAM nokey FULL COUNT x
        # found by the command fuzzer: the key is looked up before the options are read
        XINFO STREAM nokey FULL COUNT 1 2
        XINFO STREAM nokey FOO
        SET str v
        XINFO STREAM str FULL COUNT x COUNT
        XADD s 1-1 f v
        XADD s 1-2 a b c d
        XINFO STREAM s
        XINFO STREAM s FULL
        XINFO STREAM s FULL COUNT 1
        XINFO STREAM s FULL COUNT 0
        XINFO STREAM s FULL COUNT -1
        XINFO STREAM s full count 1
        XINFO STREAM s FULL COUNT x
        XINFO STREAM s FULL COUNT
        XINFO STREAM s FULL FOO
        XINFO STREAM s FULL COUNT 1 COUNT 2
        XINFO STREAM s FOO
        XINFO STREAM s COUNT 1
        XINFO stream s foo
        XINFO STREAM
        XINFO
        XINFO FOO
        XDEL s 1-1 1-2
        XINFO STREAM s
        XINFO STREAM s FULL
        SET str x
        XINFO STREAM str
        XINFO HELP extra
        TYPE s
        OBJECT ENCODING s
    """)


def test_xinfo_stream_full_count(pair):
    fill(pair, "s", 25)
    run(pair, """
        XINFO STREAM s FULL
        XINFO STREAM s FULL COUNT 0
        XINFO STREAM s FULL COUNT 3
        XINFO STREAM s FULL COUNT 100
    """)


def test_zero_length_stream_stays(pair):
    run(pair, """
        XADD s MAXLEN 0 1-1 f v
        EXISTS s
        TYPE s
        XLEN s
        XINFO STREAM s
        XRANGE s - +
        XREAD STREAMS s 0
        XADD s 1-1 f v
        XADD s 1-2 f v
        XDEL s 1-2
        XINFO STREAM s
        XTRIM s MAXLEN 0
        XINFO STREAM s
        DEL s
        EXISTS s
    """)


# --- MULTI ------------------------------------------------------------------------------------

def test_stream_commands_in_multi(pair):
    run(pair, """
        MULTI
        XADD s 1-1 f v
        XADD s 1-1 f v
        XADD s MAXLEN x 2-1 f v
        XLEN s
        XREAD BLOCK 0 STREAMS s $
        XREAD BLOCK 0 STREAMS s 0
        XRANGE s - +
        EXEC
        MULTI
        XADD s 2-1 f
        EXEC
    """)


# --- Redis 8 only -----------------------------------------------------------------------------

def test_xadd_xtrim_deletion_policies(pair8):
    run(pair8, """
        XADD s 1-1 f v
        XADD s DELREF 2-1 f v
        XADD s KEEPREF KEEPREF 3-1 f v
        XADD s ACKED KEEPREF 3-1 f v
        XADD s delref MAXLEN 1 4-1 f v
        XADD s MAXLEN 1 DELREF DELREF 5-1 f v
        XADD s MAXLEN 1 ACKED 5-1 f v
        XADD s NOMKSTREAM KEEPREF MAXLEN = 5 6-1 f v
        XTRIM s DELREF
        XTRIM s DELREF KEEPREF
        XTRIM s DELREF DELREF
        XTRIM s KEEPREF NOMKSTREAM
        XTRIM s KEEPREF KEEPREF MAXLEN 1
        XTRIM s MAXLEN 1 DELREF DELREF
        XTRIM s LIMIT 5 DELREF
        XTRIM s DELREF MAXLEN 0
        XTRIM s MAXLEN 0 ACKED
        XINFO STREAM s
    """)


@pytest.mark.parametrize("policy", ["KEEPREF", "DELREF", "ACKED"])
def test_exact_trim_policies_with_groups(pair8, policy):
    # Only `=` trimming: with `~`, 8.2.3 trims nothing under DELREF/ACKED (redis#14623),
    # while rillet trims as the fixed Redis does.
    fill(pair8, "s", 20)
    run(pair8, f"""
        XGROUP CREATE s g 0
        XREADGROUP GROUP g c COUNT 5 STREAMS s >
        XACK s g 2-0 3-0
        XADD s MAXLEN = 12 {policy} 21-0 f v
        XRANGE s - + COUNT 3
        XPENDING s g
        XTRIM s MINID 19 {policy}
        XRANGE s - + COUNT 3
        XPENDING s g
        XLEN s
    """)


def test_xread_plus_reads_the_last_entry(pair8):
    run(pair8, """
        XREAD STREAMS s +
        XADD s 1-1 f v
        XADD s 2-2 f v
        XREAD STREAMS s +
        XREAD COUNT 5 STREAMS s +
        XDEL s 2-2
        XREAD STREAMS s +
        XDEL s 1-1
        XREAD STREAMS s +
        XADD t 5-5 f v
        XREAD STREAMS s t + +
        XREAD STREAMS t s + 0
        HELLO 3
        XREAD STREAMS t +
    """)


def test_redis8_error_texts(pair8):
    run(pair8, """
        XADD s 1-1 f v
        XADD z 5-18446744073709551615 f v
        XADD z 5-* f v
        XREAD STREAMS s t 0
        XREAD BLOCK 9223372036854775807 STREAMS s 0
        XINFO HELP
        XINFO help
    """)


def test_xsetid_max_deleted_checks(pair8):
    run(pair8, """
        XADD s 5-5 f v
        XSETID s 7-0 MAXDELETEDID 6-0
        XSETID s 0-0
        XSETID s 6-9
        XADD z 1-1 f v
        XDEL z 1-1
        XSETID z 0-0
        XSETID z 0-0 ENTRIESADDED 1
        XSETID z 0-1 ENTRIESADDED 1 MAXDELETEDID 0-2
        XSETID z 0-5 ENTRIESADDED 1 MAXDELETEDID 0-2
        XSETID z 1-1 ENTRIESADDED 1 MAXDELETEDID 0-0
        XINFO STREAM z
        XSETID z 2-1 ENTRIESADDED 0
        XINFO STREAM z
    """)


def test_memory_usage(pair8):
    run(pair8, """
        XADD s 1-1 f v
        MEMORY USAGE s
        MEMORY USAGE s SAMPLES 0
        MEMORY USAGE s SAMPLES 1 SAMPLES 2
        MEMORY USAGE s SAMPLES
        MEMORY USAGE s SAMPLES -1
        MEMORY USAGE s SAMPLES x
        MEMORY USAGE s FOO 1
        MEMORY USAGE nokey SAMPLES x
        MEMORY USAGE nokey
        EXPIRE s 1000
        MEMORY USAGE s
    """)
    for length in (2, 5, 6, 13, 14, 31, 32, 35, 36, 44, 60, 108, 300):
        key = "k" * length
        pair8.check("XADD", key, "1-1", "f", "v")
        pair8.check("MEMORY", "USAGE", key)
    fill(pair8, "big", 1000, fields=("sensor-id", "17", "temperature", "21.5"))
    pair8.check("MEMORY", "USAGE", "big")
    pair8.check("MEMORY", "USAGE", "big", "SAMPLES", "0")


def test_memory_usage_of_small_listpacks(pair8):
    # Loaded nodes have no pre-allocation: listpacks under 64 bytes show jemalloc's
    # 8-byte size classes (Redis builds it with lg-quantum 3).
    pair8.check("CONFIG", "SET", "stream-node-max-entries", "3")
    try:
        for n in range(1, 8):
            for i in range(1, n + 1):
                pair8.check("XADD", f"s{n}", f"{i}-1", "f", "v" * i)
        pair8.check("DEBUG", "RELOAD")
        for n in range(1, 8):
            pair8.check("MEMORY", "USAGE", f"s{n}", "SAMPLES", "0")
    finally:
        pair8.check("CONFIG", "SET", "stream-node-max-entries", "100")


@pytest.mark.parametrize("clause", [
    ["MAXLEN", "~", "444"], ["MAXLEN", "444"], ["MAXLEN", "=", "0"], ["maxlen", "~", "2000"],
    ["MaxLen", "~", "0"],
])
def test_xadd_auto_id_with_maxlen(pair, clause):
    """The `XADD key MAXLEN [~|=] n * ...` shortcut trims exactly like the general parser."""
    fill(pair, "s", 1000)
    for wire in (pair.ours, pair.ref):
        assert ID_REPLY.fullmatch(wire.call("XADD", "s", *clause, "*", "f", "v"))
    run(pair, """
        XLEN s
        XRANGE s - + COUNT 2
    """)
    info = [strip_idmp(wire.call("XINFO", "STREAM", "s")) for wire in (pair.ours, pair.ref)]
    assert [raw.split(b"last-generated-id")[0] for raw in info] == [info[1].split(b"last-generated-id")[0]] * 2


def test_xadd_auto_id_with_maxlen_errors(pair):
    run(pair, """
        XADD s MAXLEN ~ 5 * f
        XADD s MAXLEN 5 * f v f
        XADD s MAXLEN x * f v
        XADD s MAXLEN -1 * f v
        XADD s MAXLEN ~ x * f v
        XADD s MAXLEN ~ -1 * f v
        XADD s MAXLEN = 1 * f
        XADD s MAXLEN ~ * f v
        XADD s MAXLEN * f v
        XADD s MAXLEN ~ 5 LIMIT 1 * f v f
        XADD s MAXLEN 01 * f v
        XADD s MAXLEN "" * f v
        EXISTS s
        SET str x
        XADD str MAXLEN ~ 5 * f v
        XADD str MAXLEN 5 * f v
    """)
