"""Differential tests of the consumer-group commands against Redis 7.0 and 8.2.3.

Every command, option and error those versions share runs on both (`pair`);
where 8.x changed behaviour (or added the command) only 8.2.3 is the
reference (`pair8`). Replies are compared as raw bytes; idle times, which
depend on when each server ran the command, are masked.
"""

from __future__ import annotations

import re
import time

import pytest

from tests.helpers.diff import Pair, mask_integers_after
from tests.helpers.wire import Wire

# The idle field of XPENDING's extended form: [id, consumer, idle, count].
_XPENDING_IDLE = re.compile(rb"(\*4\r\n\$\d+\r\n[0-9]+-[0-9]+\r\n\$\d+\r\n[^\r]*\r\n:)-?\d+")


def mask_idle(raw: bytes) -> bytes:
    raw = _XPENDING_IDLE.sub(rb"\g<1>0", raw)
    return mask_integers_after(b"idle", b"inactive", b"seen-time", b"active-time")(raw)


def is_8x(pair: Pair) -> bool:
    version = getattr(pair, "ref_major", None)
    if version is None:
        info = pair.ref.call("INFO", "server")
        version = pair.ref_major = int(re.search(rb"redis_version:(\d+)", info).group(1))
    return version >= 8


def run(pair: Pair, script: str) -> None:
    """One command per line, words split on spaces; `<empty>` is an empty argument.

    A line starting with "8x " runs only against Redis 8 (its reply changed in 7.2+).
    """
    for line in script.strip().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("8x "):
            if not is_8x(pair):
                continue
            line = line[3:]
        args = [word.replace("<empty>", "") for word in line.split(" ")]
        if args[0] == "HELLO":  # server version and client id differ by design
            pair.both(*args)
            continue
        pair.check(*args, normalise=mask_idle)


def port_of(wire: Wire) -> int:
    return wire.sock.getpeername()[1]


STREAM3 = """
XADD s 1-0 f v
XADD s 2-0 f v
XADD s 3-0 f v
XGROUP CREATE s g 0
"""


# --- XGROUP ------------------------------------------------------------------------

def test_xgroup_create_and_errors(pair):
    run(pair, """
XGROUP CREATE nokey g $
XGROUP CREATE nokey g bad
XGROUP CREATE nokey g $ MKSTREAM
XGROUP CREATE nokey g $ MKSTREAM
XGROUP CREATE nokey g2 bad MKSTREAM
XGROUP CREATE nokey g3 + MKSTREAM
XGROUP CREATE nokey g4 - MKSTREAM
XGROUP CREATE nokey g5 0 FOO
XGROUP CREATE nokey g5 0 ENTRIESREAD
XGROUP CREATE nokey g5 0 ENTRIESREAD x
XGROUP CREATE nokey g5 0 ENTRIESREAD -2
XGROUP CREATE nokey g5 0 ENTRIESREAD -1
XGROUP CREATE nokey g7 0 MKSTREAM MKSTREAM MKSTREAM
XGROUP CREATE nokey g8 0 MKSTREAM MKSTREAM MKSTREAM MKSTREAM
XGROUP CREATE nokey g 0 ENTRIESREAD 1 ENTRIESREAD 2
xgroup create nokey G 0
XGROUP CREATE nokey <empty> 0
XINFO GROUPS nokey
XGROUP CREATE
XGROUP
XGROUP FOO
XGROUP FOO a b c
XGROUP HELP x
SET str x
XGROUP CREATE str g 0
XGROUP CREATE str g 0 MKSTREAM
TYPE nokey
""")


def test_xgroup_setid_destroy_consumers(pair):
    run(pair, STREAM3 + """
XGROUP SETID s g 0 MKSTREAM
XGROUP SETID s nog 0
XGROUP SETID s g bad
XGROUP SETID s g +
XGROUP SETID s g -
XGROUP SETID s g $
XGROUP SETID s g 1 ENTRIESREAD 1
XGROUP SETID s g 1 ENTRIESREAD 1 x
XGROUP SETID s g 1 ENTRIESREAD -5
XINFO GROUPS s
XGROUP SETID other g 0
XGROUP DESTROY other g
XGROUP DESTROY s nog
XGROUP CREATECONSUMER s g alice
XGROUP CREATECONSUMER s g alice
XGROUP CREATECONSUMER s nog alice
XGROUP CREATECONSUMER other g alice
XREADGROUP GROUP g alice STREAMS s >
XGROUP DELCONSUMER s g bob
XGROUP DELCONSUMER s g alice
XGROUP DELCONSUMER s nog alice
XPENDING s g
XINFO GROUPS s
XGROUP DESTROY s g
XGROUP DESTROY s g
XINFO GROUPS s
XGROUP DESTROY s
XGROUP DESTROY s g extra
XGROUP CREATECONSUMER s g
XGROUP DELCONSUMER s g
""")


def test_xgroup_8x_changes(pair8):
    run(pair8, """
XGROUP HELP
XGROUP CREATE nokey g6 0 ENTRIESREAD 5 MKSTREAM
XADD nokey 1-0 f v
XGROUP SETID nokey g6 0 ENTRIESREAD 7
XINFO GROUPS nokey
""")


# --- XREADGROUP ------------------------------------------------------------------------

def test_xreadgroup_reads_and_errors(pair):
    run(pair, """
XADD s 1-0 f v
XADD s 2-0 a 1 b 2
XGROUP CREATE s g 0
XREADGROUP GROUP g c STREAMS s
XREADGROUP GROUP g c STREAMS s $
XREADGROUP COUNT 1 STREAMS s >
XREADGROUP GROUP g c COUNT x STREAMS s >
XREADGROUP GROUP g c BLOCK x STREAMS s >
XREADGROUP GROUP g c BLOCK -1 STREAMS s >
XREADGROUP GROUP g c FOO STREAMS s >
XREADGROUP GROUP g c NOACK NOACK COUNT 1 BLOCK
XREADGROUP GROUP g c STREAMS nokey >
XREADGROUP GROUP nog c STREAMS s >
XREADGROUP GROUP g c STREAMS s bad
XREADGROUP GROUP g c STREAMS s nokey > >
XREADGROUP GROUP g c STREAMS s nokey bad >
XREADGROUP GROUP g c STREAMS s 0
XREADGROUP GROUP g c COUNT 1 STREAMS s >
XREADGROUP GROUP g c COUNT -5 STREAMS s 0
XREADGROUP GROUP g d GROUP g c STREAMS s 0
XREADGROUP GROUP g c STREAMS s >
XREADGROUP GROUP g c STREAMS s >
XADD s 3-0 f v
XDEL s 1-0
XREADGROUP GROUP g c STREAMS s 0
XREADGROUP GROUP g c COUNT 1 STREAMS s 0
XREADGROUP GROUP g c STREAMS s 1
XREADGROUP GROUP g c STREAMS s 2-0
XREADGROUP GROUP g c BLOCK 10 STREAMS s 99
XREADGROUP GROUP g c BLOCK 10 COUNT 5 STREAMS s >
XREADGROUP GROUP g d STREAMS s 0
XREADGROUP GROUP g c STREAMS s 18446744073709551615-18446744073709551615
XREADGROUP GROUP g e NOACK STREAMS s 0
XPENDING s g
XINFO GROUPS s
8x XINFO CONSUMERS s g
SET str x
XREADGROUP GROUP g c STREAMS str >
XREADGROUP GROUP g c STREAMS s str > >
xreadgroup group g c count 1 noack streams s >
""")


def test_xreadgroup_multiple_streams_and_setid_redelivery(pair):
    run(pair, """
XADD a 1-0 f v
XADD b 1-0 f v
XADD b 2-0 f v
XGROUP CREATE a g $
XGROUP CREATE b g 0
XREADGROUP GROUP g c COUNT 1 STREAMS a b > >
XREADGROUP GROUP g c STREAMS a b > >
XREADGROUP GROUP g c STREAMS a b > >
XREADGROUP GROUP g c STREAMS a b 0 0
XREADGROUP GROUP g c STREAMS b a 0 >
XGROUP SETID b g 0
XREADGROUP GROUP g d STREAMS b >
XPENDING b g - + 10
XPENDING b g
XINFO GROUPS b
XADD a 2-0 f v
XREADGROUP GROUP g e NOACK STREAMS a >
XINFO GROUPS a
""")


def test_xreadgroup_8x_errors(pair8):
    run(pair8, """
XADD s 1-0 f v
XGROUP CREATE s g 0
XREADGROUP GROUP g c STREAMS s s2 >
XREADGROUP GROUP g c STREAMS s +
XREADGROUP GROUP g c BLOCK 9223372036854775807 STREAMS s >
""")


def test_xreadgroup_resp3(pair):
    run(pair, STREAM3 + """
HELLO 3
XREADGROUP GROUP g c COUNT 2 STREAMS s >
XDEL s 1-0
XREADGROUP GROUP g c STREAMS s 0
XREADGROUP GROUP g c STREAMS s >
XPENDING s g
XPENDING s g - + 10
XGROUP CREATECONSUMER s g z
8x XINFO CONSUMERS s g
""")


# --- blocking ------------------------------------------------------------------------------

def _blocked_pair(pair: Pair) -> tuple[Wire, Wire]:
    return Wire(port_of(pair.ours)), Wire(port_of(pair.ref))


def _both_send(waiters: tuple[Wire, Wire], *args) -> None:
    from tests.helpers.wire import encode_command

    for wire in waiters:
        wire.send_raw(encode_command(*args))


def _both_read(waiters: tuple[Wire, Wire]) -> tuple[bytes, bytes]:
    return waiters[0].read_reply(), waiters[1].read_reply()


def _wait_parked(pair: Pair, count: int = 1) -> None:
    """Until both servers report `count` blocked clients (INFO clients)."""
    for wire in (pair.ours, pair.ref):
        deadline = time.monotonic() + 10
        while True:
            info = wire.call("INFO", "clients")
            found = re.search(rb"blocked_clients:(\d+)", info)
            if found and int(found.group(1)) >= count:
                break
            assert time.monotonic() < deadline, "client never blocked"
            time.sleep(0.01)


def test_block_woken_by_xadd_and_count_waits(pair):
    run(pair, "XGROUP CREATE s g $ MKSTREAM")
    waiters = _blocked_pair(pair)
    try:
        # BLOCK with COUNT on an empty stream waits; one XADD wakes it.
        _both_send(waiters, "XREADGROUP", "GROUP", "g", "c", "COUNT", "5", "BLOCK", "0",
                   "STREAMS", "s", ">")
        _wait_parked(pair)
        pair.check("XADD", "s", "1-0", "f", "v")
        ours, ref = _both_read(waiters)
        assert ours == ref
        # BLOCK without COUNT while entries wait returns them at once.
        pair.check("XADD", "s", "2-0", "f", "v")
        pair.check("XADD", "s", "3-0", "f", "v")
        _both_send(waiters, "XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">")
        ours, ref = _both_read(waiters)
        assert ours == ref and b"2-0" in ours and b"3-0" in ours
        # A timeout is a null array.
        _both_send(waiters, "XREADGROUP", "GROUP", "g", "c", "BLOCK", "50", "STREAMS", "s", ">")
        ours, ref = _both_read(waiters)
        assert ours == ref == b"*-1\r\n"
        run(pair, "XPENDING s g\nXINFO GROUPS s")
    finally:
        for wire in waiters:
            wire.close()


def test_block_then_history_and_multi(pair):
    run(pair, STREAM3)
    run(pair, """
XREADGROUP GROUP g c BLOCK 0 STREAMS s 0
XREADGROUP GROUP g c BLOCK 0 STREAMS s >
XREADGROUP GROUP g c BLOCK 0 STREAMS s 0
MULTI
XREADGROUP GROUP g c BLOCK 0 STREAMS s >
XREADGROUP GROUP g c BLOCK 0 STREAMS s 0
EXEC
""")


@pytest.mark.parametrize("how", [
    ("XGROUP", "DESTROY", "s", "g"),
    ("DEL", "s"),
    ("SET", "s", "x"),
    ("FLUSHALL",),
])
def test_block_ends_with_error_when_group_or_key_goes(pair8, how):
    # Redis 7.4+: a parked XREADGROUP fails when its group or key disappears.
    run(pair8, "XGROUP CREATE s g $ MKSTREAM")
    waiters = _blocked_pair(pair8)
    try:
        _both_send(waiters, "XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">")
        _wait_parked(pair8)
        pair8.check(*how)
        ours, ref = _both_read(waiters)
        assert ours == ref
        assert ours.startswith((b"-NOGROUP", b"-WRONGTYPE"))
    finally:
        for wire in waiters:
            wire.close()


def test_block_not_woken_by_group_only_changes(pair8):
    run(pair8, STREAM3 + "XGROUP SETID s g $")
    waiters = _blocked_pair(pair8)
    try:
        _both_send(waiters, "XREADGROUP", "GROUP", "g", "c", "BLOCK", "300", "STREAMS", "s", ">")
        _wait_parked(pair8)
        run(pair8, "XGROUP CREATECONSUMER s g other\nXGROUP SETID s g 0\nXACK s g 1-0")
        ours, ref = _both_read(waiters)
        assert ours == ref == b"*-1\r\n"
    finally:
        for wire in waiters:
            wire.close()


# --- XACK / XPENDING -------------------------------------------------------------------------

def test_xack_and_xpending(pair):
    run(pair, STREAM3 + """
XACK nokey g bad
XACK s nog bad
XACK s g bad
XACK s g 1-0 bad
XACK s g -
XACK s g 1
XREADGROUP GROUP g alice COUNT 1 STREAMS s >
XREADGROUP GROUP g bob STREAMS s >
XPENDING s g
XPENDING s g - + 10
XPENDING s g - + 10 bob
XPENDING s g - + 1 bob
XPENDING s g - + 10 nobody
XPENDING s g - + 10 alice extra
XPENDING s g - + 10 alice extra more
XPENDING s g IDLE 0 - + 10
XPENDING s g IDLE -5 - + 10
XPENDING s g IDLE 100000 - + 10
XPENDING s g idle 0 - + 10 alice
XPENDING s g IDLE 0 - + 10 alice extra
XPENDING s g 2 + 10
XPENDING s g - 2 10
XPENDING s g (2-0 + 10
XPENDING s g - (3-0 10
XPENDING s g ( + 10
XPENDING s g - (0-0 10
XPENDING s g (18446744073709551615-18446744073709551615 + 10
XPENDING s g - + -1
XPENDING s g - + 0
XPENDING s g -
XPENDING s g - +
XPENDING s g - + x
XPENDING s g bad + x
XPENDING s g bad + 10
XPENDING s g IDLE
XPENDING s g IDLE 10 - +
XPENDING s g IDLE x - + 10
XPENDING s g a b c d e f g
XPENDING s nog
XPENDING nokey g
XPENDING nokey g - + x
XPENDING nokey g - + 10
XACK s g 1 1 2-0 9-9
XACK s g 2-0
XPENDING s g
XACK s g 3-0
XPENDING s g
XPENDING s g - + 10
SET str x
XACK str g 1
XPENDING str g
""")


# --- XCLAIM ------------------------------------------------------------------------------------

def test_xclaim(pair):
    run(pair, STREAM3 + """
XREADGROUP GROUP g alice STREAMS s >
XCLAIM nokey g bob 0 1-0
XCLAIM s nog bob 0 1-0
XCLAIM s g bob x 1-0
XCLAIM s g bob 0 bad
XCLAIM s g bob 0 1-0 bad
XCLAIM s g bob 0 1-0 IDLE
XCLAIM s g bob 0 1-0 IDLE x
XCLAIM s g bob 0 1-0 TIME x
XCLAIM s g bob 0 1-0 RETRYCOUNT x
XCLAIM s g bob 0 1-0 LASTID x
XCLAIM s g bob 0 1-0 LASTID -
XCLAIM s g bob 0 FORCE
XCLAIM s g bob 0 JUSTID 1-0
XCLAIM s g bob -5 1-0 JUSTID
XCLAIM s g bob 0 1-0 2-0 JUSTID RETRYCOUNT -3
XPENDING s g - + 10
XCLAIM s g bob 0 1-0 JUSTID RETRYCOUNT 7
XCLAIM s g carol 100000 1-0 2-0
XCLAIM s g carol 0 9-0 FORCE
XADD s 4-0 f v
XCLAIM s g carol 0 4-0 FORCE JUSTID
XCLAIM s g carol 0 4-0 FORCE
XPENDING s g - + 10
XCLAIM s g dave 0 3-0 LASTID 10-0 JUSTID
XINFO GROUPS s
XCLAIM s g dave 0 5-0 LASTID 20-0
XINFO GROUPS s
XCLAIM s g dave 0 3-0 LASTID 2-0 JUSTID
XINFO GROUPS s
XDEL s 2-0
XCLAIM s g erin 0 2-0 3-0
XPENDING s g - + 10
XCLAIM s g erin 0 1-0 IDLE 5000 JUSTID
XPENDING s g IDLE 4000 - + 10
XCLAIM s g erin 0 1-0 IDLE -5 JUSTID
XPENDING s g IDLE 4000 - + 10
XCLAIM s g erin 0 1-0 TIME 99999999999999 JUSTID
XPENDING s g IDLE 4000 - + 10
XCLAIM s g bob 0 1-0 1-0 1-0
XCLAIM s g bob 0 1-0 RETRYCOUNT 5 RETRYCOUNT 6 JUSTID
XPENDING s g - + 1
XCLAIM s g bob 0 1-0 JUSTID FORCE JUSTID foo
xclaim s g bob 0 1 idle 0 justid
8x XINFO CONSUMERS s g
SET str x
XCLAIM str g bob 0 1-0
""")


def test_xclaim_lastid_drives_later_reads(pair):
    # LASTID raises last-delivered-id only; '>' then continues after it.
    run(pair, """
XADD s 1-0 f v
XADD s 2-0 f v
XADD s 3-0 f v
XADD s 4-0 f v
XGROUP CREATE s g 0
XREADGROUP GROUP g a COUNT 1 STREAMS s >
XCLAIM s g a 0 1-0 LASTID 3-0 JUSTID
XINFO GROUPS s
XCLAIM s g a 0 1-0 LASTID 2-0 JUSTID
XINFO GROUPS s
XREADGROUP GROUP g b STREAMS s >
XINFO GROUPS s
XCLAIM s g a 0 99-0 LASTID 99-0
XINFO GROUPS s
XREADGROUP GROUP g b STREAMS s >
""")


# --- XAUTOCLAIM --------------------------------------------------------------------------------

def test_xautoclaim(pair):
    run(pair, """
XADD s 1-0 f v
XADD s 2-0 f v
XADD s 3-0 f v
XADD s 4-0 f v
XGROUP CREATE s g 0
XREADGROUP GROUP g alice STREAMS s >
XAUTOCLAIM nokey g bob 0 0
XAUTOCLAIM s nog bob 0 0
XAUTOCLAIM nokey g bob x 0
XAUTOCLAIM nokey g bob 0 bad
XAUTOCLAIM nokey g bob 0 (
XAUTOCLAIM nokey g bob 0 0 COUNT 0
XAUTOCLAIM nokey g bob 0 0 COUNT x
XAUTOCLAIM nokey g bob 0 0 COUNT -1
XAUTOCLAIM nokey g bob 0 0 COUNT 576460752303423488
XAUTOCLAIM nokey g bob 0 0 COUNT
XAUTOCLAIM nokey g bob 0 0 FOO
XAUTOCLAIM nokey g bob 0 (18446744073709551615-18446744073709551615
XAUTOCLAIM s g bob 0 - COUNT 1
XAUTOCLAIM s g bob 0 + COUNT 1
XAUTOCLAIM s g bob 0 (1-0 COUNT 1 JUSTID
XAUTOCLAIM s g bob 0 3 COUNT 1 JUSTID JUSTID
XAUTOCLAIM s g bob 0 4 COUNT 5
XPENDING s g - + 10
XDEL s 2-0 3-0
XAUTOCLAIM s g carol 0 0 COUNT 1
XPENDING s g - + 10
XAUTOCLAIM s g carol 0 0 COUNT 1
XAUTOCLAIM s g carol 100000 0 COUNT 1
XAUTOCLAIM s g carol -5 0 COUNT 1
XPENDING s g - + 10
XAUTOCLAIM s g dave 100000 0
8x XINFO CONSUMERS s g
SET str x
XAUTOCLAIM str g bob 0 0
XAUTOCLAIM str g bob x 0
""")


def test_xautoclaim_scan_limit(pair):
    adds = "\n".join(f"XADD s {i}-0 f v" for i in range(1, 41))
    run(pair, adds + """
XGROUP CREATE s g 0
XREADGROUP GROUP g alice COUNT 5 STREAMS s >
XREADGROUP GROUP g alice STREAMS s >
XCLAIM s g alice 0 6-0 7-0 8-0 9-0 10-0 11-0 12-0 13-0 14-0 15-0 16-0 17-0 18-0 19-0 20-0 21-0 22-0 23-0 24-0 25-0 26-0 27-0 28-0 29-0 30-0 31-0 32-0 33-0 34-0 35-0 36-0 37-0 38-0 39-0 40-0 IDLE 0 JUSTID
XCLAIM s g alice 0 1-0 2-0 3-0 4-0 5-0 IDLE 1000000 JUSTID
XAUTOCLAIM s g bob 500000 0 COUNT 1 JUSTID
XAUTOCLAIM s g bob 500000 0 COUNT 2 JUSTID
XAUTOCLAIM s g bob 500000 0 COUNT 3 JUSTID
XAUTOCLAIM s g bob 500000 0 COUNT 3 JUSTID
XAUTOCLAIM s g bob 500000 26-0 COUNT 1 JUSTID
XAUTOCLAIM s g bob 500000 36-0 COUNT 1
XDEL s 37-0 38-0 39-0
XAUTOCLAIM s g bob 500000 36-0 COUNT 2
XPENDING s g
""")


def test_xautoclaim_reports_deleted_entries_after_xsetid_lowers_maxdeletedid(pair8):
    """Found by the command fuzzer: young pending entries deleted above a MAXDELETEDID
    that XSETID lowered are still reported as deleted (Redis checks existence first)."""
    run(pair8, """
XADD s 1-0 f v
XADD s 2-0 f v
XADD s 3-0 f v
XADD s 4-0 f v
XGROUP CREATE s g 0
XREADGROUP GROUP g alice STREAMS s >
XDEL s 3-0
XSETID s 4-0 MAXDELETEDID 1-0
XAUTOCLAIM s g bob 3600000000 0 JUSTID
XDEL s 2-0
XSETID s 4-0 MAXDELETEDID 0-1
XAUTOCLAIM s g bob 3600000000 0
XPENDING s g
XINFO GROUPS s
""")


# --- XINFO GROUPS / CONSUMERS ---------------------------------------------------------------------

def test_xinfo_groups_and_consumers(pair):
    run(pair, STREAM3 + """
XGROUP CREATE s h $
XGROUP CREATE s i 2-0
XGROUP CREATE s a1 1-0
XINFO GROUPS s
XREADGROUP GROUP g zed COUNT 1 STREAMS s >
XREADGROUP GROUP g amy STREAMS s >
XGROUP CREATECONSUMER s g Bob
XINFO GROUPS s
XDEL s 2-0
XINFO GROUPS s
XADD s 4-0 f v
XINFO GROUPS s
XINFO CONSUMERS s nog
XINFO CONSUMERS nokey g
XINFO GROUPS nokey
XINFO CONSUMERS s
XINFO GROUPS s x
XINFO FOO s
SET str x
XINFO GROUPS str
XINFO CONSUMERS str g
""")


def test_xinfo_consumers_8x(pair8):
    run(pair8, STREAM3 + """
XREADGROUP GROUP g amy COUNT 1 STREAMS s >
XGROUP CREATECONSUMER s g bob
8x XINFO CONSUMERS s g
HELLO 3
8x XINFO CONSUMERS s g
XINFO GROUPS s
""")


# --- XDELEX / XACKDEL (8.2) -------------------------------------------------------------------------

def test_xdelex_and_xackdel(pair8):
    run(pair8, """
XADD s 1-0 f v
XADD s 2-0 f v
XADD s 3-0 f v
XADD s 4-0 f v
XADD s 5-0 f v
XGROUP CREATE s g 0
XGROUP CREATE s g2 0
XREADGROUP GROUP g alice COUNT 3 STREAMS s >
XDELEX nokey IDS 1 1-0
XDELEX nokey IDS 1 bad
XDELEX nokey FOO
XDELEX nokey IDS 0 1-0
XDELEX nokey IDS x 1-0
XDELEX nokey IDS 2 1-0
XDELEX nokey IDS 1 1-0 2-0
XDELEX nokey KEEPREF KEEPREF IDS 1 1-0
XDELEX nokey KEEPREF
XDELEX nokey IDS 1 1-0 IDS 1 2-0
XDELEX nokey IDS 1 1-0 ACKED
XDELEX s IDS 1 bad
XDELEX s ACKED IDS 3 1-0 9-0 5-0
XDELEX s IDS 2 1-0 9-0
XDELEX s DELREF IDS 1 2-0
XPENDING s g - + 10
XACKDEL nokey g IDS 1 1-0
XACKDEL nokey g IDS 1 bad
XACKDEL s nog IDS 1 bad
XACKDEL s g IDS 1 bad
XACKDEL s g FOO
XACKDEL s g
XACKDEL s g IDS 1 3-0
XREADGROUP GROUP g alice STREAMS s >
XACKDEL s g ACKED IDS 2 4-0 9-0
XACKDEL s g2 DELREF IDS 1 5-0
XPENDING s g
XLEN s
XINFO GROUPS s
XDELEX s IDS 18446744073709551615 1-0
XDELEX s IDS 9223372036854775808 1-0
XACKDEL s g IDS -1 1-0
XDELEX s keepref ids 1 4-0
XREADGROUP GROUP g2 bob STREAMS s >
XACKDEL s g2 DELREF IDS 2 4-0 5-0
XINFO GROUPS s
XPENDING s g
SET str x
XDELEX str IDS 1 1-0
XDELEX str FOO
XACKDEL str g FOO
XACKDEL str g IDS 1 1-0
""")


@pytest.mark.parametrize("args", [
    (b"XAUTOCLAIM", b"k\x00ey", b"g", b"c", b"0", b"0"),
    (b"XCLAIM", b"\x00", b"g", b"c", b"0", b"1-0"),
    (b"XCLAIM", b"s", b"g\x00\xff", b"c", b"0", b"1-0"),
    (b"XREADGROUP", b"GROUP", b"g\x00x", b"c", b"STREAMS", b"s", b">"),
    (b"XREADGROUP", b"GROUP", b"g", b"c", b"STREAMS", b"\xfe\x00", b">"),
    (b"XCLAIM", b"s", b"g", b"c", b"0", b"1-0", b"F\x00OO"),
    (b"XCLAIM", b"s", b"g", b"c", b"0", b"1-0", b"\xffbad\r\n"),
    (b"XGROUP", b"CREATECONSUMER", b"s", b"\xffg\x00", b"c"),
    (b"XINFO", b"CONSUMERS", b"s", b"g\xfe"),
])
def test_names_in_errors_are_c_strings(pair, args):
    """Found by the command fuzzer: Redis formats names with "%s", so they stop at a NUL
    byte, and other bytes go out as they are."""
    run(pair, "XADD s 1-0 f v\nXGROUP CREATE s g 0")
    pair.check(*args)


# --- WATCH: group commands do not touch watched keys ---------------------------------------------

@pytest.mark.parametrize("command", [
    "XREADGROUP GROUP g c STREAMS s >",
    "XREADGROUP GROUP g c STREAMS s 0",
    "XCLAIM s g d 0 1-0",
    "XAUTOCLAIM s g e 0 0",
    "XACK s g 1-0",
    "XGROUP CREATECONSUMER s g zz",
    "XGROUP SETID s g 0",
    "XGROUP CREATE s g2 0",
    "XGROUP DESTROY s g",
])
def test_group_commands_leave_watch_alone(pair, command):
    run(pair, "XADD s 1-0 f v\nXGROUP CREATE s g 0\nXREADGROUP GROUP g c STREAMS s >")
    others = (Wire(port_of(pair.ours)), Wire(port_of(pair.ref)))
    try:
        run(pair, "WATCH s\nMULTI\nPING")
        for wire in others:
            wire.call(*command.split(" "))
        pair.check("EXEC")
    finally:
        for wire in others:
            wire.close()


def test_lag_and_entries_read_rules(pair8):
    # Seed 001's lag rules, as Redis 8.2 computes them: nil when the group sits
    # at an arbitrary ID or a deletion lies ahead of it; valid again once the
    # group has read to the end; ENTRIESREAD makes an arbitrary start valid.
    run(pair8, """
XADD s 1-0 f v
XADD s 2-0 f v
XADD s 3-0 f v
XADD s 4-0 f v
XADD s 5-0 f v
XGROUP CREATE s first 0
XGROUP CREATE s mid 3-0
XGROUP CREATE s known 3-0 ENTRIESREAD 3
XGROUP CREATE s last $
XGROUP CREATE s before 0-1
XINFO GROUPS s
XREADGROUP GROUP mid c COUNT 1 STREAMS s >
XINFO GROUPS s
XDEL s 2-0
XINFO GROUPS s
XREADGROUP GROUP first c COUNT 1 STREAMS s >
XINFO GROUPS s
XDEL s 4-0
XINFO GROUPS s
XREADGROUP GROUP first c STREAMS s >
XREADGROUP GROUP mid c STREAMS s >
XINFO GROUPS s
XADD s 6-0 f v
XINFO GROUPS s
XTRIM s MAXLEN 1
XINFO GROUPS s
XGROUP SETID s first 0
XINFO GROUPS s
XDEL s 6-0
XINFO GROUPS s
XGROUP SETID s known 2-0 ENTRIESREAD 1
XINFO GROUPS s
""")
