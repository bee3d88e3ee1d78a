"""Stream IDs: the `StreamID` value, its wire form, and Redis's ID parsers.

Owns every rule about what text is a valid ID (byte-exact with Redis's
`streamGenericParseIDOrReply`, including its `strtoull` leniency) and the
range-bound forms of XRANGE. Parsers raise `ReplyError` with Redis's text;
nothing here knows about a stream's contents (see `Stream.next_id`).
"""

from __future__ import annotations

from typing import NamedTuple

from rillet.errors import (
    STREAM_ID_ZERO,
    STREAM_INVALID_END_INTERVAL,
    STREAM_INVALID_ID,
    STREAM_INVALID_START_INTERVAL,
    ReplyError,
)

U64_MAX = (1 << 64) - 1
_I64_MIN_MAGNITUDE = 1 << 63


class StreamID(NamedTuple):
    """A stream entry ID; tuple ordering is Redis's ID ordering (the Spark connector's too)."""

    ms: int  # Unix time in milliseconds (unsigned 64-bit)
    seq: int  # sequence number within the millisecond (unsigned 64-bit)

    def __str__(self) -> str:
        return f"{self[0]}-{self[1]}"


MIN_ID = StreamID(0, 0)
MAX_ID = StreamID(U64_MAX, U64_MAX)

# tuple.__new__ skips NamedTuple's Python-level __new__: hot paths build IDs with it.
_tuple_new = tuple.__new__


def make_id(ms: int, seq: int) -> StreamID:
    return _tuple_new(StreamID, (ms, seq))


def format_id(sid: tuple[int, int]) -> bytes:
    """`<ms>-<seq>` as bytes, the form every reply and effect uses."""
    return b"%d-%d" % sid


def incr_id(sid: tuple[int, int]) -> StreamID | None:
    """The next ID, or None if `sid` is MAX_ID (Redis's streamIncrID failing)."""
    ms, seq = sid
    if seq < U64_MAX:
        return _tuple_new(StreamID, (ms, seq + 1))
    if ms < U64_MAX:
        return _tuple_new(StreamID, (ms + 1, 0))
    return None


def decr_id(sid: tuple[int, int]) -> StreamID | None:
    """The previous ID, or None if `sid` is MIN_ID (Redis's streamDecrID failing)."""
    ms, seq = sid
    if seq > 0:
        return _tuple_new(StreamID, (ms, seq - 1))
    if ms > 0:
        return _tuple_new(StreamID, (ms - 1, U64_MAX))
    return None


# --- text -> number, exactly as Redis's string2ull ---------------------------------

_C_SPACE = b" \t\n\v\f\r"


def _string2ll_negative(text: bytes) -> bool:
    """True if Redis's string2ll accepts `text` as a negative number.

    string2ull first tries string2ll and rejects what it parses as negative;
    anything string2ll refuses falls through to strtoull, which wraps "-0" or
    "-18446744073709551615" modulo 2**64 instead of refusing them.
    """
    if len(text) < 2 or len(text) >= 21 or text[0] != 0x2D:  # '-'
        return False
    digits = text[1:]
    if not digits.isdigit() or digits[0] == 0x30:  # leading '0' is not string2ll's
        return False
    return int(digits) <= _I64_MIN_MAGNITUDE


def string2ull(text: bytes) -> int | None:
    """Redis's string2ull: the value, or None where Redis refuses the text."""
    if text.isdigit():
        value = int(text)
        return value if value <= U64_MAX else None
    if _string2ll_negative(text):
        return None
    body = text.lstrip(_C_SPACE)
    negative = False
    if body[:1] in (b"+", b"-"):
        negative = body[:1] == b"-"
        body = body[1:]
    if not body or not body.isdigit():
        return None
    value = int(body)
    if value > U64_MAX:
        return None
    return (-value) & U64_MAX if negative else value


# --- IDs ---------------------------------------------------------------------------

_STAR = object()  # marker for the `ms-*` form while parsing


def _parse(arg: bytes, missing_seq: int, strict: bool, allow_star_seq: bool) -> tuple[int, object]:
    # Redis copies the argument into a 128-byte C buffer: longer is invalid,
    # and an embedded NUL ends the string for every later step.
    if len(arg) > 127:
        raise ReplyError(STREAM_INVALID_ID)
    nul = arg.find(b"\0")
    if nul >= 0:
        arg = arg[:nul]
    if arg == b"-" or arg == b"+":
        if strict:
            raise ReplyError(STREAM_INVALID_ID)
        return (0, 0) if arg == b"-" else (U64_MAX, U64_MAX)
    ms_text, dash, seq_text = arg.partition(b"-")
    ms = string2ull(ms_text)
    if ms is None:
        raise ReplyError(STREAM_INVALID_ID)
    if not dash:
        return ms, missing_seq
    if allow_star_seq and seq_text == b"*":
        return ms, _STAR
    seq = string2ull(seq_text)
    if seq is None:
        raise ReplyError(STREAM_INVALID_ID)
    return ms, seq


def parse_id(arg: bytes, missing_seq: int = 0) -> StreamID:
    """An ID where `-` and `+` mean MIN_ID and MAX_ID (Redis's streamParseID)."""
    ms, seq = _parse(arg, missing_seq, False, False)
    return _tuple_new(StreamID, (ms, seq))


def parse_strict_id(arg: bytes, missing_seq: int = 0) -> StreamID:
    """An explicit ID: `ms-seq` or `ms` (seq = missing_seq); `-`/`+` are errors.

    Used by XSETID, XCLAIM, XACK, XDEL, MINID thresholds, XREAD IDs and more.
    """
    ms, seq = _parse(arg, missing_seq, True, False)
    return _tuple_new(StreamID, (ms, seq))


def parse_xadd_id(arg: bytes) -> tuple[int | None, int | None]:
    """XADD's ID argument as (ms, seq): `*` -> (None, None), `ms-*` -> (ms, None).

    Pair with `check_xadd_id_not_zero` (after the arity check, as Redis orders
    its errors) and `Stream.next_id`, which resolves the Nones.
    """
    if arg[:1] == b"*" and (len(arg) == 1 or arg[1] == 0):
        return None, None
    ms, seq = _parse(arg, 0, True, True)
    return ms, (None if seq is _STAR else seq)  # type: ignore[return-value]  # an int but _STAR


def check_xadd_id_not_zero(ms: int | None, seq: int | None) -> None:
    """Raise Redis's 0-0 error for an explicit `0-0` (or `0`); `0-*` is allowed."""
    if ms == 0 and seq == 0:
        raise ReplyError(STREAM_ID_ZERO)


def _parse_interval(arg: bytes, missing_seq: int) -> tuple[StreamID, bool]:
    if len(arg) > 1 and arg[0] == 0x28:  # '('
        return parse_strict_id(arg[1:], missing_seq), True
    return parse_id(arg, missing_seq), False


def parse_range_start(arg: bytes) -> StreamID:
    """An XRANGE start (XREVRANGE's second bound): `-`, `ms` = `ms-0`, `(id` exclusive."""
    # The common forms first: `-`, and a plain ms below 10**19 (string2ull's value).
    if arg == b"-":
        return MIN_ID
    if len(arg) < 20 and arg.isdigit():
        return _tuple_new(StreamID, (int(arg), 0))
    sid, exclusive = _parse_interval(arg, 0)
    if exclusive:
        nxt = incr_id(sid)
        if nxt is None:
            raise ReplyError(STREAM_INVALID_START_INTERVAL)
        return nxt
    return sid


def parse_range_end(arg: bytes) -> StreamID:
    """An XRANGE end: `+`, `ms` = `ms-18446744073709551615`, `(id` exclusive."""
    if arg == b"+":
        return MAX_ID
    if len(arg) < 20 and arg.isdigit():
        return _tuple_new(StreamID, (int(arg), U64_MAX))
    sid, exclusive = _parse_interval(arg, U64_MAX)
    if exclusive:
        prev = decr_id(sid)
        if prev is None:
            raise ReplyError(STREAM_INVALID_END_INTERVAL)
        return prev
    return sid
