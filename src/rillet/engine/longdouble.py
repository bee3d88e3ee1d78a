"""x87 80-bit long double arithmetic, as Redis's INCRBYFLOAT/HINCRBYFLOAT compute it.

Redis parses with strtold, adds in long double and prints with "%.17Lf"
(trailing zeros removed), so 10.5 + 0.1 prints "10.6" and 1e308 + 1.7e308
does not overflow. Values are exact `Fraction`s rounded to a 64-bit
significand (round half to even) after every operation; the x87 exponent
range bounds them (beyond it: infinity). Subnormals are not modelled.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Literal

INF = None  # marker: the result is not finite
_MAX_EXP = 16384  # |value| < 2**16384 for a finite x87 long double
_DECIMAL = re.compile(rb"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\Z")
_INFINITY = re.compile(rb"[+-]?(?:inf|infinity)\Z", re.IGNORECASE)
MAX_CHARS = 5 * 1024  # MAX_LONG_DOUBLE_CHARS


def round64(value: Fraction) -> Fraction | None:
    """`value` rounded to a 64-bit significand; None if it overflows."""
    if value == 0:
        return Fraction(0)
    sign = -1 if value < 0 else 1
    mag = abs(value)
    e = mag.numerator.bit_length() - mag.denominator.bit_length() - 64
    # find e with 2**63 <= mag / 2**e < 2**64
    while mag / Fraction(2) ** e >= 2**64:
        e += 1
    while mag / Fraction(2) ** e < 2**63:
        e -= 1
    scaled = mag / Fraction(2) ** e
    m = round(scaled)  # Fraction rounds half to even
    result = Fraction(m) * Fraction(2) ** e
    if result >= Fraction(2) ** _MAX_EXP:
        return None
    return sign * result


def parse(raw: bytes) -> Fraction | None | Literal[False]:
    """strtold with Redis's string2ld checks: a Fraction, None for ±inf, False if invalid."""
    if not raw or len(raw) >= MAX_CHARS:
        return False
    if _DECIMAL.match(raw):
        if b"e" in raw.lower():
            mant, _, exp = raw.lower().partition(b"e")
            exponent = int(exp)
            if exponent > 10000:
                return None
            if exponent < -10000:
                return Fraction(0)
            value = Fraction(mant.decode()) * Fraction(10) ** exponent
        else:
            value = Fraction(raw.decode())
        return round64(value)
    if _INFINITY.match(raw):
        return None
    if raw[:1] in b"+-" and raw[1:3].lower() == b"0x" or raw[:2].lower() == b"0x":
        try:
            return round64(Fraction(float.fromhex(raw.decode())))
        except (ValueError, OverflowError):
            return False
    return False


def add(a: Fraction, b: Fraction) -> Fraction | None:
    return round64(a + b)


def format_human(value: Fraction) -> bytes:
    """"%.17Lf" with the trailing zeros (and a bare '.') removed, "-0" as "0"."""
    scaled = round(value * 10**17)
    sign = "-" if scaled < 0 or (scaled == 0 and value < 0) else ""
    digits = str(abs(scaled)).rjust(18, "0")
    text = digits[:-17] + "." + digits[-17:]
    text = text.rstrip("0").rstrip(".")
    text = sign + text
    if text == "-0":
        text = "0"
    return text.encode()
