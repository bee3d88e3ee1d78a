"""XXH3 64-bit (seed 0, default secret): the hash Redis 8.4's DIGEST and IF[D]EQ use.

libxxhash's XXH3_64bits through ctypes when the library is installed (Debian's
libxxhash0), else this pure Python port of the reference algorithm (xxhash.h:
the 0-16, 17-128, 129-240 byte and long-input paths). tests/engine/test_xxh3.py
holds the port to the library.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import struct
from collections.abc import Callable

M64 = (1 << 64) - 1
P32_1, P32_2, P32_3 = 0x9E3779B1, 0x85EBCA77, 0xC2B2AE3D
P64_1, P64_2, P64_3 = 0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9
P64_4, P64_5 = 0x85EBCA77C2B2AE63, 0x27D4EB2F165667C5
PMX1, PMX2 = 0x165667919E3779F9, 0x9FB21C651E98DF25

SECRET = bytes.fromhex(
    "b8fe6c3923a44bbe7c01812cf721ad1cded46de9839097db7240a4a4b7b3671f"
    "cb79e64eccc0e578825ad07dccff7221b8084674f743248ee03590e6813a264c"
    "3c2852bb91c300cb88d0658b1b532ea371644897a20df94e3819ef46a9deacd8"
    "a8fa763fe39c343ff9dcbbc7c70b4f1d8a51e04bcdb45931c89f7ec9d9787364"
    "eac5ac8334d3ebc3c581a0fffa1363eb170ddd51b7f0da49d316552629d4689e"
    "2b16be587d47a1fc8ff8b8d17ad031ce45cb3a8f95160428afd7fbcabb4b407e"
)
_Q = struct.Struct("<Q")
_I = struct.Struct("<I")


def _r64(b: bytes, i: int) -> int:
    return _Q.unpack_from(b, i)[0]


def _r32(b: bytes, i: int) -> int:
    return _I.unpack_from(b, i)[0]


def _fold(a: int, b: int) -> int:
    p = a * b
    return (p & M64) ^ (p >> 64)


def _avalanche(h: int) -> int:
    h ^= h >> 37
    h = (h * PMX1) & M64
    return h ^ (h >> 32)


def _xxh64_avalanche(h: int) -> int:
    h ^= h >> 33
    h = (h * P64_2) & M64
    h ^= h >> 29
    h = (h * P64_3) & M64
    return h ^ (h >> 32)


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & M64


def _mix16(data: bytes, i: int, s: int) -> int:
    return _fold(_r64(data, i) ^ _r64(SECRET, s), _r64(data, i + 8) ^ _r64(SECRET, s + 8))


def _swap64(x: int) -> int:
    return int.from_bytes(x.to_bytes(8, "little"), "big")


def xxh3_64_pure(data: bytes) -> int:
    n = len(data)
    if n == 0:
        return _xxh64_avalanche(_r64(SECRET, 56) ^ _r64(SECRET, 64))
    if n <= 3:
        combined = (data[0] << 16) | (data[n >> 1] << 24) | data[n - 1] | (n << 8)
        return _xxh64_avalanche(combined ^ (_r32(SECRET, 0) ^ _r32(SECRET, 4)))
    if n <= 8:
        bitflip = _r64(SECRET, 8) ^ _r64(SECRET, 16)
        keyed = ((_r32(data, n - 4) + (_r32(data, 0) << 32)) & M64) ^ bitflip
        h = keyed ^ _rotl(keyed, 49) ^ _rotl(keyed, 24)
        h = (h * PMX2) & M64
        h ^= (h >> 35) + n
        h = (h * PMX2) & M64
        return h ^ (h >> 28)
    if n <= 16:
        lo = _r64(data, 0) ^ (_r64(SECRET, 24) ^ _r64(SECRET, 32))
        hi = _r64(data, n - 8) ^ (_r64(SECRET, 40) ^ _r64(SECRET, 48))
        return _avalanche((n + _swap64(lo) + hi + _fold(lo, hi)) & M64)
    if n <= 128:
        acc = (n * P64_1) & M64
        if n > 32:
            if n > 64:
                if n > 96:
                    acc += _mix16(data, 48, 96) + _mix16(data, n - 64, 112)
                acc += _mix16(data, 32, 64) + _mix16(data, n - 48, 80)
            acc += _mix16(data, 16, 32) + _mix16(data, n - 32, 48)
        acc += _mix16(data, 0, 0) + _mix16(data, n - 16, 16)
        return _avalanche(acc & M64)
    if n <= 240:
        acc = (n * P64_1) & M64
        for i in range(8):
            acc += _mix16(data, 16 * i, 16 * i)
        acc = _avalanche(acc & M64)
        for i in range(8, n // 16):
            acc += _mix16(data, 16 * i, 16 * (i - 8) + 3)
        acc += _mix16(data, n - 16, 136 - 17)
        return _avalanche(acc & M64)
    return _long(data)


def _acc512(acc: list[int], data: bytes, i: int, s: int) -> None:
    for k in range(8):
        value = _r64(data, i + 8 * k)
        key = value ^ _r64(SECRET, s + 8 * k)
        acc[k ^ 1] = (acc[k ^ 1] + value) & M64
        acc[k] = (acc[k] + (key & 0xFFFFFFFF) * (key >> 32)) & M64


def _long(data: bytes) -> int:
    n = len(data)
    acc = [P32_3, P64_1, P64_2, P64_3, P64_4, P32_2, P64_5, P32_1]
    stripes_per_block = (len(SECRET) - 64) // 8
    block = 64 * stripes_per_block
    blocks = (n - 1) // block
    for b in range(blocks):
        for s in range(stripes_per_block):
            _acc512(acc, data, b * block + 64 * s, 8 * s)
        for k in range(8):
            a = acc[k]
            a ^= a >> 47
            a ^= _r64(SECRET, len(SECRET) - 64 + 8 * k)
            acc[k] = (a * P32_1) & M64
    stripes = ((n - 1) - block * blocks) // 64
    for s in range(stripes):
        _acc512(acc, data, blocks * block + 64 * s, 8 * s)
    _acc512(acc, data, n - 64, len(SECRET) - 64 - 7)
    result = (n * P64_1) & M64
    for k in range(4):
        result += _fold(acc[2 * k] ^ _r64(SECRET, 11 + 16 * k), acc[2 * k + 1] ^ _r64(SECRET, 11 + 16 * k + 8))
    return _avalanche(result & M64)


def _library() -> Callable[[bytes], int] | None:
    name = ctypes.util.find_library("xxhash")
    if name is None:
        return None
    try:
        fn = ctypes.CDLL(name).XXH3_64bits
    except (OSError, AttributeError):
        return None
    fn.restype = ctypes.c_uint64
    fn.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    return lambda data: fn(data, len(data))


LIBRARY = _library()
xxh3_64: Callable[[bytes], int] = LIBRARY or xxh3_64_pure
