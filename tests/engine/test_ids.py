"""Stream ID parsing and formatting, checked against Redis's rules and real servers."""

from __future__ import annotations

import hiredis
import pytest

from rillet.engine.ids import (
    MAX_ID,
    MIN_ID,
    U64_MAX,
    StreamID,
    check_xadd_id_not_zero,
    decr_id,
    format_id,
    incr_id,
    make_id,
    parse_id,
    parse_range_end,
    parse_range_start,
    parse_strict_id,
    parse_xadd_id,
)
from rillet.engine.stream import Stream
from rillet.errors import (
    STREAM_ID_ZERO,
    STREAM_INVALID_END_INTERVAL,
    STREAM_INVALID_ID,
    STREAM_INVALID_START_INTERVAL,
    ReplyError,
)
from tests.helpers import servers
from tests.helpers.wire import Wire

MAX = U64_MAX


def test_streamid_is_a_cheap_ordered_pair():
    a, b = StreamID(1, 5), make_id(2, 0)
    assert a < b and a == (1, 5) and b.ms == 2 and b.seq == 0
    assert isinstance(b, StreamID) and isinstance(b, tuple)
    assert MIN_ID == (0, 0) and MAX_ID == (MAX, MAX)
    assert sorted([StreamID(2, 0), StreamID(1, MAX), StreamID(1, 0)]) == [(1, 0), (1, MAX), (2, 0)]


def test_format_id():
    assert format_id(StreamID(1526919030474, 55)) == b"1526919030474-55"
    assert format_id(MAX_ID) == b"18446744073709551615-18446744073709551615"
    assert format_id((0, 0)) == b"0-0"


def test_incr_decr_wrap_like_redis():
    assert incr_id(StreamID(1, 5)) == (1, 6)
    assert incr_id(StreamID(1, MAX)) == (2, 0)
    assert incr_id(MAX_ID) is None
    assert decr_id(StreamID(1, 0)) == (0, MAX)
    assert decr_id(StreamID(1, 5)) == (1, 4)
    assert decr_id(MIN_ID) is None


@pytest.mark.parametrize(
    "text,expected",
    [
        (b"1-1", (1, 1)),
        (b"1526919030474", (1526919030474, 0)),
        (b"18446744073709551615-18446744073709551615", (MAX, MAX)),
        # Redis's string2ull falls back to strtoull: these are all accepted.
        (b" 1", (1, 0)),
        (b"\t5", (5, 0)),
        (b"+1", (1, 0)),
        (b"01", (1, 0)),
        (b"1-01", (1, 1)),
        (b"1--0", (1, 0)),
        (b"1- 5", (1, 5)),
        (b"1--18446744073709551615", (1, 1)),
        (b"1-9223372036854775808", (1, 9223372036854775808)),
        (b"1\x002", (1, 0)),  # C string: the NUL ends it
    ],
)
def test_strict_parse_accepts(text, expected):
    assert parse_strict_id(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        b"",
        b"-",
        b"+",
        b"1-",
        b"-1",
        b"1--5",
        b"1-2-3",
        b"1.5",
        b"0x1",
        b"1 ",
        b"(1",
        b"abc",
        b"18446744073709551616",
        b"1-18446744073709551616",
        b"1--9223372036854775808",
        b"1-*",
        b"*",
        b"1" * 128,
        b"1-" + b"0" * 126,
    ],
)
def test_strict_parse_rejects(text):
    with pytest.raises(ReplyError) as err:
        parse_strict_id(text)
    assert err.value.message == STREAM_INVALID_ID


def test_missing_seq_and_specials():
    assert parse_id(b"-") == MIN_ID and parse_id(b"+") == MAX_ID
    assert parse_id(b"7", missing_seq=MAX) == (7, MAX)
    assert parse_strict_id(b"7", missing_seq=3) == (7, 3)
    assert parse_strict_id(b"0" * 127) == (0, 0)  # 127 bytes still fit Redis's buffer


def test_xadd_id_forms():
    assert parse_xadd_id(b"*") == (None, None)
    assert parse_xadd_id(b"5-*") == (5, None)
    assert parse_xadd_id(b"5-3") == (5, 3)
    assert parse_xadd_id(b"5") == (5, 0)
    for bad in (b"-", b"+", b"5-**", b"*-5", b"**"):
        with pytest.raises(ReplyError):
            parse_xadd_id(bad)
    with pytest.raises(ReplyError) as err:
        check_xadd_id_not_zero(0, 0)
    assert err.value.message == STREAM_ID_ZERO
    check_xadd_id_not_zero(0, None)  # 0-* is fine: it becomes 0-1
    check_xadd_id_not_zero(None, None)


def test_range_bounds():
    assert parse_range_start(b"-") == MIN_ID
    assert parse_range_start(b"5") == (5, 0)
    assert parse_range_start(b"(5") == (5, 1)
    assert parse_range_start(b"(5-" + str(MAX).encode()) == (6, 0)
    assert parse_range_start(b"(18446744073709551615") == (MAX, 1)
    assert parse_range_end(b"+") == MAX_ID
    assert parse_range_end(b"5") == (5, MAX)
    assert parse_range_end(b"(5") == (5, MAX - 1)
    assert parse_range_end(b"(5-0") == (4, MAX)
    assert parse_range_end(b"(0") == (0, MAX - 1)
    for bad in (b"(-", b"(+", b"((5", b"(", b"(x"):
        with pytest.raises(ReplyError) as err:
            parse_range_start(bad)
        assert err.value.message == STREAM_INVALID_ID
        with pytest.raises(ReplyError):
            parse_range_end(bad)
    with pytest.raises(ReplyError) as err:
        parse_range_start(b"(18446744073709551615-18446744073709551615")
    assert err.value.message == STREAM_INVALID_START_INTERVAL
    with pytest.raises(ReplyError) as err:
        parse_range_end(b"(0-0")
    assert err.value.message == STREAM_INVALID_END_INTERVAL


# --- against real servers ----------------------------------------------------------------

TRICKY = [
    "1-1",
    "1",
    "0",
    "0-0",
    "0-1",
    "0-*",
    "5-*",
    " 1",
    "\t5",
    "+1",
    "01",
    "1-01",
    "1--0",
    "1--5",
    "1- 5",
    "1--18446744073709551615",
    "18446744073709551615-18446744073709551615",
    "18446744073709551615",
    "18446744073709551616",
    "1-18446744073709551616",
    "1.5",
    "",
    "1-",
    "-1",
    "-",
    "+",
    "(1",
    "(",
    "1-2-3",
    "1\x002",
    "0x1",
    "1 ",
    "*",
    "*\x00x",
    "9" * 130,
    "-0",
    "1--9223372036854775808",
    "1--9223372036854775809",
]


@pytest.fixture(scope="module", params=["redis7", "redis8"])
def wire(request):
    binary = servers.redis7_binary() if request.param == "redis7" else servers.redis8_binary()
    if binary is None:
        pytest.skip(f"{request.param} binary not available")
    handle = servers.start_redis(binary, kind=request.param)
    conn = Wire(handle.port)
    yield conn
    conn.close()
    handle.stop()


def _call(conn: Wire, *args):
    reader = hiredis.Reader()
    reader.feed(conn.call(*args))
    reply = reader.gets()
    return ("error", str(reply)) if isinstance(reply, hiredis.ReplyError) else ("ok", reply)


def _ours_xadd(text: bytes):
    try:
        ms, seq = parse_xadd_id(text)
        check_xadd_id_not_zero(ms, seq)
        return ("ok", format_id(Stream().next_id(ms, seq, 1_000)))
    except ReplyError as err:
        return ("error", err.message)


@pytest.mark.needs_redis
@pytest.mark.parametrize("text", TRICKY)
def test_xadd_id_parsing_matches_redis(wire, text):
    raw = text.encode()
    _call(wire, "DEL", "ids")
    ref = _call(wire, "XADD", "ids", raw, "f", "v")
    ours = _ours_xadd(raw)
    if raw.startswith(b"*"):
        assert ref[0] == ours[0] == "ok"  # the time part differs
    else:
        assert ours == ref


def _ours_range(start: bytes, end: bytes, stream: Stream):
    try:
        lo = parse_range_start(start)
        hi = parse_range_end(end)
    except ReplyError as err:
        return ("error", err.message)
    return ("ok", [format_id(sid) for sid, _ in stream.range(lo, hi)])


@pytest.mark.needs_redis
@pytest.mark.parametrize(
    "text", TRICKY + ["(0-0", "(18446744073709551615-18446744073709551615", "(5", "(0-1"]
)
def test_range_bounds_match_redis(wire, text):
    raw = text.encode()
    ids = [(0, 1), (1, 0), (1, 1), (5, 0), (5, 5), (MAX, MAX - 1), (MAX, MAX)]
    stream = Stream()
    _call(wire, "DEL", "rng")
    for sid in ids:
        _call(wire, "XADD", "rng", format_id(sid), "f", "v")
        stream.append(StreamID(*sid), [b"f", b"v"])
    for start, end in ((raw, b"+"), (b"-", raw), (raw, raw)):
        kind, reply = _call(wire, "XRANGE", "rng", start, end)
        ref = (kind, [e[0] for e in reply]) if kind == "ok" else (kind, reply)
        assert _ours_range(start, end, stream) == ref, (start, end)
