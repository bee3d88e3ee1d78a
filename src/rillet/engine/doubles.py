"""C's strtod for Redis's score parsing, without a C library.

Redis parses scores two ways: getDoubleFromObject (the whole string, no
leading space, no overflow or underflow to zero, no NaN) and zslParseRange
(strtod's prefix must be the whole string; overflow gives ±inf; leading
space and even an empty string are accepted). `strtod` returns the value
and how many bytes it consumed.
"""

from __future__ import annotations

import re

_SPACE = b" \t\n\v\f\r"
_NUMBER = re.compile(
    rb"[+-]?(?:(?P<hex>0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?\d+)?)"
    rb"|(?P<inf>[iI][nN][fF](?:[iI][nN][iI][tT][yY])?)"
    rb"|(?P<nan>[nN][aA][nN](?:\([0-9A-Za-z_]*\))?)"
    rb"|(?P<dec>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?))"
)


def strtod(raw: bytes) -> tuple[float, int]:
    """(value, bytes consumed); (0.0, 0) when no number starts the string."""
    i = 0
    while i < len(raw) and raw[i] in _SPACE:
        i += 1
    m = _NUMBER.match(raw, i)
    if m is None:
        return 0.0, 0
    text = m.group(0).decode()
    if m.group("hex"):
        body = text.lstrip("+-")
        if "p" not in body.lower():
            body += "p0"
        try:
            value = float.fromhex(body)
        except OverflowError:
            value = float("inf")
        if text.startswith("-"):
            value = -value
    elif m.group("nan"):
        value = float("nan")
    else:
        value = float(text)
    return value, m.end()


def parse_score(raw: bytes) -> float | None:
    """getDoubleFromObject: the value, or None where Redis says 'not a valid float'."""
    if len(raw) < 16 and raw.isdigit():
        return float(raw)  # the common plain integer score: exact below 2**53, no regex
    if not raw or raw[0] in _SPACE:
        return None
    value, used = strtod(raw)
    if used != len(raw) or value != value:
        return None
    if value in (float("inf"), float("-inf")) and b"inf" not in raw.lower():
        return None  # overflow (ERANGE to HUGE_VAL)
    if value == 0 and any(c in b"123456789" for c in raw.lower().split(b"e")[0].split(b"p")[0]):
        return None  # underflow to zero (ERANGE)
    return value


def parse_range_double(raw: bytes) -> float | None:
    """zslParseRange's parse (fast_float in Redis 8): no leading space, no hex, the whole
    string consumed, NaN refused; overflow is ±inf, an empty string is 0."""
    if raw[:1] in (b" ", b"\t", b"\n", b"\v", b"\f", b"\r") or b"x" in raw.lower():
        return None
    value, used = strtod(raw)
    if used != len(raw):
        return None
    if value != value:
        return None
    return value
