"""BITFIELD's integer arithmetic against a model in unbounded integers (hypothesis).

rillet spells out Redis's C overflow checks on uint64/int64 (bitops.c
checkSignedBitfieldOverflow / checkUnsignedBitfieldOverflow); the model says
what they mean: INCRBY overflows when the exact sum leaves the type's range,
WRAP takes the sum modulo 2^bits, SAT clamps, FAIL writes nothing. Commands run
in-process through the dispatcher, each on a fresh field, and GET reads back
what was written. (Redis's own bytes are compared in tests/compat/test_bitmaps.py.)
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rillet.commands.bitmaps import signed_overflow, unsigned_overflow
from tests.persistence.support import InProcess

INT64 = st.integers(-(2**63), 2**63 - 1)
KINDS = st.one_of(st.tuples(st.just(True), st.integers(1, 64)), st.tuples(st.just(False), st.integers(1, 63)))
OVERFLOW = st.sampled_from(["WRAP", "SAT", "FAIL"])


def _range(signed: bool, bits: int) -> tuple[int, int]:
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)


def _model(signed: bool, bits: int, exact: int, mode: str) -> int | None:
    low, high = _range(signed, bits)
    if low <= exact <= high:
        return exact
    if mode == "FAIL":
        return None
    if mode == "SAT":
        return high if exact > high else low
    return (exact - low) % (1 << bits) + low


@settings(max_examples=200, deadline=None)
@given(kind=KINDS, start=INT64, incr=INT64, mode=OVERFLOW)
def test_incrby_matches_the_model(kind, start, incr, mode):
    signed, bits = kind
    low, high = _range(signed, bits)
    start = low + (start - low) % (high - low + 1)  # a value the field can hold
    t = f"{'i' if signed else 'u'}{bits}"
    server = InProcess()
    assert server.run("BITFIELD", "f", "SET", t, "3", str(start)) == [0]
    expected = _model(signed, bits, start + incr, mode)
    reply = server.run("BITFIELD", "f", "OVERFLOW", mode, "INCRBY", t, "3", str(incr), "GET", t, "3")
    assert reply == [expected, start if expected is None else expected]


@settings(max_examples=200, deadline=None)
@given(kind=KINDS, value=INT64, mode=OVERFLOW)
def test_set_matches_the_model(kind, value, mode):
    signed, bits = kind
    t = f"{'i' if signed else 'u'}{bits}"
    # An unsigned field reads the int64 as a uint64: a negative value is past the top.
    exact = value if signed else value % (1 << 64)
    expected = _model(signed, bits, exact, mode)
    low, high = _range(signed, bits)
    if signed and bits < 64 and mode == "SAT" and high - exact > 2**63 - 1:
        # Redis's check computes max - value in int64, which wraps for values this far
        # below the range, so it sees a positive overflow and saturates at max
        # (Redis 8.2.3: BITFIELD f OVERFLOW SAT SET i1 #1 -9223372036854775808 -> 0).
        expected = high
    server = InProcess()
    reply = server.run("BITFIELD", "f", "OVERFLOW", mode, "SET", t, "#1", str(value), "GET", t, "#1")
    assert reply == [None if expected is None else 0, 0 if expected is None else expected]


@given(bits=st.integers(1, 63), value=st.integers(0, 2**63 - 1), incr=INT64)
def test_overflow_direction(bits, value, incr):
    value %= 1 << bits
    direction, _ = unsigned_overflow(value, incr, bits, 0)
    exact = value + incr
    assert direction == (1 if exact >= 1 << bits else -1 if exact < 0 else 0)
    low, high = _range(True, bits + 1)
    signed_value = low + value
    direction, _ = signed_overflow(signed_value, incr, bits + 1, 0)
    exact = signed_value + incr
    assert direction == (1 if exact > high else -1 if exact < low else 0)
