"""Keyspace commands against Redis: DBSIZE, DEL, UNLINK, EXISTS, TYPE, KEYS, SCAN, RENAME,
FLUSHDB/FLUSHALL, TIME, and key expiry (EXPIRE family, TTL, PERSIST, lazy and active).

Replies are compared byte for byte, except where Redis's order is its hash table's
(KEYS, SCAN): those are compared as sets.
"""

from __future__ import annotations

import re
import time

import hiredis
import pytest

from tests.helpers.wire import Wire


def parse(raw: bytes):
    reader = hiredis.Reader()
    reader.feed(raw)
    return reader.gets()


def both_sorted(pair, *args) -> list:
    ours, ref = pair.both(*args)
    assert ours[:1] == ref[:1] == b"*", (ours[:80], ref[:80])
    assert sorted(parse(ours)) == sorted(parse(ref)), args
    return sorted(parse(ours))


def fill(pair, *pairs: str) -> None:
    for i in range(0, len(pairs), 2):
        pair.check("SET", pairs[i], pairs[i + 1])


def test_dbsize_del_unlink_exists(pair):
    pair.check("DBSIZE")
    fill(pair, "a", "1", "b", "2", "c", "3")
    pair.check("DBSIZE")
    pair.check("EXISTS", "a")
    pair.check("EXISTS", "a", "a", "b", "nope")
    pair.check("DEL", "a", "nope", "a")
    pair.check("UNLINK", "b", "c", "b")
    pair.check("DEL", "nope")
    pair.check("DBSIZE")
    for command in ("DEL", "UNLINK", "EXISTS"):
        pair.check(command)
    pair.check("DBSIZE", "x")


def test_type(pair):
    fill(pair, "s", "v")
    pair.check("TYPE", "s")
    pair.check("TYPE", "missing")
    pair.check("TYPE")
    pair.check("TYPE", "a", "b")


@pytest.mark.parametrize("pattern", [
    "*", "h?llo", "h*llo", "h[ae]llo", "h[^e]llo", "h[a-b]llo", "h[b-a]llo", "h\\*llo",
    "*llo", "hallo", "nomatch*", "[", "h[", "\\", "*[0-9]", "key:*", "KEY:*", "?",
])
def test_keys_patterns(pair, pattern):
    fill(pair, "hello", "1", "hallo", "1", "hxllo", "1", "hllo", "1", "heeeello", "1",
         "h*llo", "1", "key:1", "1", "key:22", "1", "x", "1", "[", "1")
    both_sorted(pair, "KEYS", pattern)


def test_keys_arity(pair):
    pair.check("KEYS")
    pair.check("KEYS", "a", "b")


def _scan_all(wire: Wire, *options: str) -> list[bytes]:
    cursor = b"0"
    found: list[bytes] = []
    for _ in range(10_000):
        reply = parse(wire.call("SCAN", cursor, *options))
        cursor, keys = reply
        found += keys
        if cursor == b"0":
            return found
    raise AssertionError("SCAN did not finish")


@pytest.mark.parametrize("options", [(), ("COUNT", "7"), ("COUNT", "1000"), ("MATCH", "k:1*"),
                                     ("MATCH", "k:1*", "COUNT", "3"), ("TYPE", "string"),
                                     ("TYPE", "stream"), ("type", "STRING", "match", "*5")])
def test_scan_full_iteration(pair, options):
    keys = [f"k:{i}" for i in range(300)]
    for wire in (pair.ours, pair.ref):
        wire.call("MSET", *[x for k in keys for x in (k, "v")])
    ours = _scan_all(pair.ours, *options)
    ref = _scan_all(pair.ref, *options)
    assert len(ours) == len(set(ours)), "a key was returned twice"
    assert set(ours) == set(ref)


def test_scan_keys_present_throughout_are_returned_once(r):
    for i in range(200):
        r.set(f"stable:{i}", i)
    seen = []
    cursor = 0
    step = 0
    while True:
        cursor, keys = r.scan(cursor, count=10)
        seen += keys
        # Churn the keyspace during the scan: add and delete other keys.
        r.set(f"churn:{step}", 1)
        r.delete(f"churn:{step - 3}")
        step += 1
        if cursor == 0:
            break
    stable = [k for k in seen if k.startswith(b"stable:")]
    assert sorted(stable) == sorted(f"stable:{i}".encode() for i in range(200))


def test_scan_errors(pair):
    for args in (("x",), ("-1",), ("18446744073709551616",), ("1.5",), ("0", "COUNT", "0"),
                 ("0", "COUNT", "-1"), ("0", "COUNT", "x"), ("0", "MATCH"), ("0", "FOO", "bar"),
                 ("0", "COUNT"), ("0", "TYPE")):
        if args == ("-1",):
            continue  # 7.0 wraps -1 around; 8.x rejects it (checked below)
        pair.check("SCAN", *args)
    pair.check("SCAN")
    pair.check("SCAN", "0", "TYPE", "nosuchtype")
    pair.check("SCAN", "18446744073709551615")


def test_scan_negative_cursor(pair8):
    pair8.check("SCAN", "-1")


@pytest.mark.parametrize("cursor", [
    b"+0", b" 0", b"\t0", b"00", b"-0", b"-00", b"0\x00x", b" +0", b"\x000", b"+", b"-", b" ",
    b"+-0", b"0 ", b"0x0", b"-18446744073709551616", b"-9223372036854775808",
])
def test_scan_cursor_parsed_as_string2ull(pair8, cursor):
    """Found by the command fuzzer: where string2ll fails, Redis's cursor goes through C's
    strtoull (leading spaces, '+', leading zeros, '-0', the text up to a NUL byte)."""
    pair8.check("SET", "a", "1")
    pair8.check("SCAN", cursor)


def test_rename(pair):
    fill(pair, "a", "1")
    pair.check("EXPIRE", "a", "1000")
    pair.check("RENAME", "a", "b")
    pair.check("GET", "b")
    pair.check("TTL", "b")  # the TTL moves with the key
    pair.check("EXISTS", "a")
    pair.check("RENAME", "a", "c")
    pair.check("RENAME", "b", "b")
    pair.check("GET", "b")
    fill(pair, "c", "3")
    pair.check("RENAME", "b", "c")  # overwrites
    pair.check("GET", "c")
    pair.check("TTL", "c")
    pair.check("RENAME", "missing", "missing")
    pair.check("RENAME", "c")
    pair.check("RENAME", "a", "b", "c")


def test_renamenx(pair):
    fill(pair, "a", "1", "b", "2")
    pair.check("RENAMENX", "a", "b")
    pair.check("RENAMENX", "a", "a")
    pair.check("RENAMENX", "a", "c")
    pair.check("GET", "c")
    pair.check("RENAMENX", "missing", "x")
    pair.check("RENAMENX", "a")


def test_flushdb_flushall(pair):
    fill(pair, "a", "1")
    pair.check("SELECT", "1")
    fill(pair, "b", "2")
    pair.check("FLUSHDB", "ASYNC")
    pair.check("DBSIZE")
    pair.check("SELECT", "0")
    pair.check("DBSIZE")
    for args in (("sync",), ("Async",), ("FOO",), ("ASYNC", "SYNC"), ("SYNC", "x")):
        pair.check("FLUSHDB", *args)
    fill(pair, "a", "1")
    pair.check("SELECT", "2")
    fill(pair, "b", "2")
    pair.check("FLUSHALL", "SYNC")
    pair.check("DBSIZE")
    pair.check("SELECT", "0")
    pair.check("DBSIZE")
    for args in (("ASYNC",), ("x",), ("SYNC", "SYNC")):
        pair.check("FLUSHALL", *args)


def test_time_shape(pair):
    for wire in (pair.ours, pair.ref):
        raw = wire.call("TIME")
        assert re.fullmatch(rb"\*2\r\n\$\d+\r\n\d+\r\n\$\d+\r\n\d+\r\n", raw), raw
        seconds, micros = (int(x) for x in parse(raw))
        assert abs(seconds - time.time()) < 60
        assert 0 <= micros < 1_000_000
    pair.check("TIME", "x")


# --- expiry ---------------------------------------------------------------------------------

def test_expire_and_ttl(pair):
    fill(pair, "e", "v")
    pair.check("TTL", "e")
    pair.check("PTTL", "e")
    pair.check("EXPIRE", "e", "100")
    pair.check("TTL", "e")
    ours, ref = pair.both("PTTL", "e")
    assert abs(int(ours[1:-2]) - int(ref[1:-2])) < 5000
    pair.check("PERSIST", "e")
    pair.check("PERSIST", "e")
    pair.check("TTL", "e")
    pair.check("TTL", "missing")
    pair.check("PTTL", "missing")
    pair.check("PERSIST", "missing")
    pair.check("EXPIRE", "missing", "10")
    pair.check("SET", "e", "v2", "EX", "50")
    pair.check("SET", "e", "v3")  # a plain SET clears the TTL
    pair.check("TTL", "e")


@pytest.mark.parametrize("command,amount", [("EXPIRE", "100"), ("PEXPIRE", "100000"),
                                             ("EXPIREAT", "4102444800"),
                                             ("PEXPIREAT", "4102444800000")])
def test_expire_options(pair, command, amount):
    # Relative times are taken at different moments on each server; equal
    # relative amounts would compare by milliseconds of drift, so steps are big.
    double, quadruple, half = str(int(amount) * 2), str(int(amount) * 4), str(int(amount) // 2)
    fill(pair, "k", "v")
    pair.check(command, "k", amount, "XX")
    pair.check(command, "k", amount, "GT")  # no TTL counts as infinite
    pair.check(command, "k", amount, "LT")
    pair.check(command, "k", amount, "NX")
    pair.check(command, "k", double, "NX")
    pair.check(command, "k", double, "XX")
    pair.check(command, "k", half, "GT")
    pair.check(command, "k", quadruple, "GT")
    if command.endswith("AT"):
        pair.check(command, "k", quadruple, "LT")  # equal is not less
    pair.check(command, "k", double, "LT")
    pair.check(command, "k", half, "lt")
    pair.check("TTL", "k")
    for options in (("NX", "XX"), ("GT", "LT"), ("NX", "GT"), ("XX", "GT", "LT"), ("FOO",),
                    ("XX", "FOO"), ("NX", "NX")):
        pair.check(command, "k", amount, *options)
    pair.check(command, "missing", amount, "NX")


@pytest.mark.parametrize("command", ["EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT"])
def test_expire_bad_values(pair, command):
    fill(pair, "k", "v")
    for amount in ("x", "1.5", "", " 1", "+1", "9223372036854775808",
                   "9223372036854775807", "-9223372036854775808", "9223372036854775"):
        pair.check(command, "k", amount)
    pair.check("EXISTS", "k")
    pair.check(command, "k")
    pair.check(command)


@pytest.mark.parametrize("args", [("EXPIRE", "-1"), ("PEXPIRE", "0"), ("EXPIREAT", "1"),
                                  ("PEXPIREAT", "1000")])
def test_expire_in_the_past_deletes(pair, args):
    fill(pair, "k", "v")
    pair.check(args[0], "k", args[1])
    pair.check("EXISTS", "k")
    pair.check("TTL", "k")


def test_lazy_expiry(pair):
    fill(pair, "gone", "v", "kept", "v")
    pair.check("PEXPIRE", "gone", "30")
    time.sleep(0.15)
    pair.check("GET", "gone")
    pair.check("EXISTS", "gone", "kept")
    pair.check("TTL", "gone")
    pair.check("SET", "gone", "new", "NX")


def test_set_with_expiry_expires(pair):
    pair.check("SET", "a", "v", "PX", "30")
    pair.check("SET", "b", "v", "PXAT", str(int(time.time() * 1000) + 30))
    time.sleep(0.15)
    pair.check("MGET", "a", "b")
    pair.check("KEYS", "*")


def test_active_expiry(rillet_server):
    """Keys nobody reads still go: the server's cron samples keys with a TTL."""
    with Wire(rillet_server.port) as wire:
        wire.call("SELECT", "9")
        wire.call("FLUSHDB")
        for i in range(50):
            wire.call("SET", f"tmp:{i}", "v", "PX", "20")
        wire.call("SET", "keep", "v")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            # DBSIZE counts stored keys without touching (lazily expiring) any.
            if wire.call("DBSIZE") == b":1\r\n":
                break
            time.sleep(0.05)
        assert wire.call("DBSIZE") == b":1\r\n"
        info = parse(wire.call("INFO", "stats")).decode()
        assert int(re.search(r"expired_keys:(\d+)", info).group(1)) >= 50
        wire.call("FLUSHDB")


def test_db_index_errors(pair):
    """MOVE and COPY ... DB read the index as getIntFromObjectOrReply (a C int: "value is
    out of range, value must between..."), SWAPDB answers its own two texts for both
    failures. Found by the command fuzzer."""
    pair.check("SET", "dbk", "v")
    for index in ["9223372036854775807", "2147483648", "-2147483649", "2147483647", "-1",
                  "16", "x", "1.5", "0"]:
        pair.check("SWAPDB", index, "1")
        pair.check("SWAPDB", "1", index)
        pair.check("MOVE", "dbk", index)
        pair.check("COPY", "dbk", "dbk2", "DB", index)
    pair.check("DEL", "dbk")


def test_typed_scan_cursors_as_scan(pair8):
    """SSCAN/HSCAN/ZSCAN read the cursor as SCAN does (Redis 8's string2ull: "-0", "+1",
    " 1", "01" are cursors). Found by the command fuzzer (SSCAN t -0). Small keys: any
    cursor answers the whole key."""
    pair = pair8
    pair.check("SADD", "sc_t", "1", "2")
    pair.check("HSET", "sc_h", "f", "v")
    pair.check("ZADD", "sc_z", "1", "m")
    for cursor in ["-0", "+0", " 0", "00", "-1", "x", "", "0x", "18446744073709551615",
                   "18446744073709551616", "-18446744073709551615", "1 ", "+1", "01"]:
        for cmd, key in (("SSCAN", "sc_t"), ("HSCAN", "sc_h"), ("ZSCAN", "sc_z")):
            pair.check(cmd, key, cursor)
    pair.check("DEL", "sc_t", "sc_h", "sc_z")
