"""Byte sizes of Redis listpack elements, so our stream nodes close where Redis's do.

Redis closes a stream node when `lpBytes(tail) + sum(len(field/value)) >=
stream-node-max-bytes`, so matching its node boundaries (and therefore what
`~` trimming removes) needs the exact listpack size of each node. We never
build listpacks; we only add up what their encoding would cost (listpack.c:
integers that fit int64 in canonical decimal are stored as integers).
Also holds jemalloc's size classes for Redis-like MEMORY USAGE estimates.
"""

from __future__ import annotations

_I64_MIN = -(1 << 63)
_I64_MAX = (1 << 63) - 1
_U64 = 1 << 64


def int_size(value: int) -> int:
    """Encoded size (with back-length) of an int64 stored by lpAppendInteger."""
    if 0 <= value <= 127:
        return 2
    if -4096 <= value <= 4095:
        return 3
    if -32768 <= value <= 32767:
        return 4
    if -8388608 <= value <= 8388607:
        return 5
    if -2147483648 <= value <= 2147483647:
        return 6
    return 10


def diff_size(a: int, b: int) -> int:
    """Size of `a - b` computed in uint64 and stored as int64, as t_stream.c does."""
    d = (a - b) % _U64
    if d > _I64_MAX:
        d -= _U64
    return int_size(d)


def _backlen_size(n: int) -> int:
    if n < 128:
        return 1
    if n < 16384:
        return 2
    if n < 2097152:
        return 3
    if n < 268435456:
        return 4
    return 5


def string_size(length: int) -> int:
    """Encoded size of a string element of `length` bytes that is not an integer."""
    if length < 64:
        head = 1
    elif length < 4096:
        head = 2
    else:
        head = 5
    n = head + length
    return n + _backlen_size(n)


_NUMERIC_START = frozenset(b"-0123456789")


def element_size(value: bytes) -> int:
    """Encoded size of a field or value appended with lpAppend.

    commands/_writes.pyx has it in C (keep in step; test_fast_bodies compares them).
    """
    length = len(value)
    # lpStringToInt64 refuses 21+ bytes, so only short strings can be integers.
    if 0 < length < 21 and value[0] in _NUMERIC_START:
        try:
            number = int(value)
        except ValueError:
            number = None
        # Only canonical decimal is an integer to Redis: no '+', spaces,
        # underscores, leading zeros or "-0", which int() would accept.
        if number is not None and _I64_MIN <= number <= _I64_MAX and b"%d" % number == value:
            return int_size(number)
    return string_size(length)


class _ElementSizes(dict):
    """value -> encoded size, memoised for short values (ids, counters, prices).

    `sum(map(ELEMENT_SIZES.__getitem__, values))` stays in C for values seen
    before; the cache is bounded and simply cleared when full.
    """

    __slots__ = ()
    LIMIT = 8192

    def __missing__(self, value: bytes) -> int:
        size = element_size(value)
        if len(value) < 21:  # longer values are sized from their length alone
            if len(self) >= self.LIMIT:
                self.clear()
            self[value] = size
        return size


ELEMENT_SIZES = _ElementSizes()

# An empty listpack: 4-byte total length + 2-byte element count + 0xFF terminator.
LISTPACK_EMPTY_SIZE = 7


def jemalloc_size(n: int) -> int:
    """The jemalloc size class serving an `n`-byte allocation (zmalloc_size), as Redis
    builds jemalloc (--with-lg-quantum=3): 8, 16, 24 ... 64, then four classes per doubling."""
    if n <= 8:
        return 8
    spacing = max(8, 1 << ((n - 1).bit_length() - 3))
    return (n + spacing - 1) & -spacing
