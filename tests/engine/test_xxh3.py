"""The pure Python XXH3 port against libxxhash (every length path, random content)."""

from __future__ import annotations

import random

import pytest

from rillet.engine import xxh3


def test_known_value():
    assert xxh3.xxh3_64_pure(b"hello") == 0x9555E8555C62DCFD


@pytest.mark.skipif(xxh3.LIBRARY is None, reason="libxxhash not installed")
def test_pure_matches_the_library():
    rng = random.Random(5)
    for n in [*range(0, 260), 1023, 1024, 1025, 2048, 4096, 5000, 20000]:
        data = bytes(rng.getrandbits(8) for _ in range(n))
        assert xxh3.xxh3_64_pure(data) == xxh3.LIBRARY(data), n
