"""resp/_fpconv.pyx (compiled Grisu2) against resp/fpconv.py (the reference), and both
against Redis's digits where they are known."""

from __future__ import annotations

import math
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rillet.resp import fpconv

compiled = pytest.importorskip("rillet.resp._fpconv")


def _from_bits(bits: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def _from_f32_bits(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", bits))[0]


doubles = st.one_of(
    st.integers(0, 2**64 - 1).map(_from_bits),  # any bit pattern: NaNs, infinities, subnormals
    st.integers(0, 2**32 - 1).map(_from_f32_bits),  # float32 values, where Grisu2 is longest
    st.integers(-(2**63), 2**63).map(float),
    st.integers(0, 2**52 - 1).map(_from_bits),  # subnormals
    st.floats(min_value=-1e-300, max_value=1e-300),
    st.floats(allow_nan=True, allow_infinity=True, width=64),
    st.sampled_from([0.0, -0.0, math.inf, -math.inf, math.nan, -math.nan, 5e-324,
                     2.2250738585072014e-308, 1.7976931348623157e308, 2.0**62, -(2.0**62),
                     2.0**62 + 1024, 2.0**63, 1e23, 0.1, 1 / 3]),
)


@settings(max_examples=3000, deadline=None)
@given(doubles)
def test_compiled_is_the_reference(value):
    assert compiled.dtoa(value) == fpconv.python_dtoa(value)
    assert compiled.redis_double(value) == fpconv.python_redis_double(value)


@settings(max_examples=500, deadline=None)
@given(st.floats(allow_nan=False))
def test_round_trips(value):
    assert float(compiled.dtoa(value)) == value
    assert float(compiled.redis_double(value)) == value


# Replies of redis-server 8.2.3 (ZSCORE, and `redis.call` arguments for dtoa).
@pytest.mark.parametrize("value,d2string,dtoa", [
    (0.08218765258789063, b"0.08218765258789063", b"0.08218765258789063"),  # repr: ...062
    (1e23, b"99999999999999990000000", b"99999999999999990000000"),  # repr: 1e+23
    (5e18, b"5e+18", b"5e+18"),
    (3.0, b"3", b"3"),
    (2.0**62, b"4611686018427387904", b"4611686018427388000"),
    (-0.0, b"-0", b"-0"),
    (-math.nan, b"nan", b"-nan"),
    (-math.inf, b"-inf", b"-inf"),
])
def test_known_texts(value, d2string, dtoa):
    assert compiled.redis_double(value) == d2string
    assert fpconv.python_redis_double(value) == d2string
    assert compiled.dtoa(value) == dtoa
    assert fpconv.python_dtoa(value) == dtoa
