"""Redis RDB primitives: lengths, string encodings, LZF, CRC-64 (Jones), listpacks.

Everything here works on bytes and knows nothing about rillet's types; the
keyspace reader/writer (rdb.py) and the type codecs (rdb_stream.py) build on it.
Written from Redis's documented format (rdb.h/rdb.c, listpack.c, lzf_c.c/lzf_d.c,
crc64.c); integers are little-endian except the 32/64-bit lengths and the
128-bit stream IDs, which are big-endian as Redis writes them.

The hot functions (CRC-64, LZF, listpack encode/decode) have compiled forms in
_rdbfast.pyx, used when it imports (RILLET_PURE=1 keeps these Python originals,
which are the reference).
"""

from __future__ import annotations

import os
import struct

# --- constants (rdb.h) -------------------------------------------------------------

RDB_VERSION = 12  # what rillet writes: Redis 8.2.3's (checked against its own SAVE), so 8.2 loads it
# The newest version rillet reads: Redis 8.6 writes 13 (streams with IDMP state,
# module key metadata), Redis 8.8 writes 14 (streams with XNACK's NACK zone, arrays).
RDB_READ_VERSION = 14
RDB_MIN_VERSION = 1

RDB_6BITLEN = 0
RDB_14BITLEN = 1
RDB_32BITLEN = 0x80
RDB_64BITLEN = 0x81
RDB_ENCVAL = 3
RDB_ENC_INT8 = 0
RDB_ENC_INT16 = 1
RDB_ENC_INT32 = 2
RDB_ENC_LZF = 3

OP_KEY_META = 243  # RDB 13: module metadata classes before a key
OP_SLOT_INFO = 244
OP_FUNCTION2 = 245
OP_FUNCTION_PRE_GA = 246
OP_MODULE_AUX = 247
OP_IDLE = 248
OP_FREQ = 249
OP_AUX = 250
OP_RESIZEDB = 251
OP_EXPIRETIME_MS = 252
OP_EXPIRETIME = 253
OP_SELECTDB = 254
OP_EOF = 255

TYPE_STRING = 0
TYPE_LIST = 1
TYPE_SET = 2
TYPE_ZSET = 3
TYPE_HASH = 4
TYPE_ZSET_2 = 5
TYPE_HASH_ZIPMAP = 9
TYPE_LIST_ZIPLIST = 10
TYPE_SET_INTSET = 11
TYPE_ZSET_ZIPLIST = 12
TYPE_HASH_ZIPLIST = 13
TYPE_LIST_QUICKLIST = 14
TYPE_HASH_LISTPACK = 16
TYPE_ZSET_LISTPACK = 17
TYPE_LIST_QUICKLIST_2 = 18
TYPE_SET_LISTPACK = 20
TYPE_HASH_METADATA = 24
TYPE_HASH_LISTPACK_EX = 25
TYPE_STREAM_LISTPACKS = 15
TYPE_STREAM_LISTPACKS_2 = 19
TYPE_STREAM_LISTPACKS_3 = 21
TYPE_STREAM_LISTPACKS_4 = 26  # RDB 13 (Redis 8.6): + the IDMP state
TYPE_STREAM_LISTPACKS_5 = 27  # RDB 14 (Redis 8.8): + each group's NACK zone

# Names for the types rillet cannot hold yet (for the refusal message).
TYPE_NAMES = {
    0: "string", 1: "list", 2: "set", 3: "zset", 4: "hash", 5: "zset", 6: "module",
    7: "module", 9: "hash (zipmap)", 10: "list (ziplist)", 11: "set (intset)",
    12: "zset (ziplist)", 13: "hash (ziplist)", 14: "list (quicklist)", 15: "stream",
    16: "hash (listpack)", 17: "zset (listpack)", 18: "list (quicklist)", 19: "stream",
    20: "set (listpack)", 21: "stream", 22: "hash (with field TTLs)",
    23: "hash (listpack with field TTLs)", 24: "hash (with field TTLs)",
    25: "hash (listpack with field TTLs)", 26: "stream", 27: "stream", 28: "array",
}

_I64_MIN = -(1 << 63)
_I64_MAX = (1 << 63) - 1


class RDBError(Exception):
    """The RDB data is invalid; the message names the offset and what was expected."""


# --- CRC-64 (Jones polynomial, reflected, as crc64.c) ----------------------------------

_CRC64_POLY = 0x95AC9329AC4BC9B5  # 0xad93d23594c935a9 bit-reversed


def _crc64_table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ _CRC64_POLY if crc & 1 else crc >> 1
        table.append(crc)
    return table


_CRC64_TABLE = _crc64_table()


def crc64(crc: int, data: bytes | bytearray | memoryview) -> int:
    """Redis's crc64(crc, data): crc64(0, b"123456789") == 0xe9c6d914c4b8d9ca."""
    table = _CRC64_TABLE
    for byte in bytes(data):
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc


# --- LZF (liblzf 3.6 lzf_c.c with Redis's lzfP.h: HLOG 16, VERY_FAST) ---------------------------

_HSIZE_MASK = (1 << 16) - 1
_MAX_LIT = 1 << 5
_MAX_OFF = 1 << 13
_MAX_REF = (1 << 8) + (1 << 3)


def lzf_compress(data: bytes, out_len: int) -> bytes | None:
    """lzf_compress into at most `out_len` bytes; None when it does not fit.

    A port of liblzf 3.6's compressor as Redis builds it, with the hash table
    starting empty. Redis leaves its table uninitialised (stack garbage), so a
    stale slot can occasionally give it a different but equally valid match;
    with a clean table the output is what Redis writes in the usual case.
    """
    in_len = len(data)
    if not in_len or not out_len:
        return None
    htab: dict[int, int] = {}
    out = bytearray(out_len + 8)
    ip = 0
    op = 1  # start a literal run
    lit = 0
    in_end = in_len
    hval = (data[0] << 8) | data[1] if in_len > 1 else 0
    while ip < in_end - 2:
        hval = ((hval << 8) | data[ip + 2]) & 0xFFFFFFFF
        slot = ((hval >> 8) - hval * 5) & _HSIZE_MASK
        ref = htab.get(slot, -1)
        htab[slot] = ip
        off = ip - ref - 1
        if (ref > 0 and off < _MAX_OFF
                and data[ref] == data[ip] and data[ref + 1] == data[ip + 1]
                and data[ref + 2] == data[ip + 2]):
            length = 2
            maxlen = in_end - ip - length
            if maxlen > _MAX_REF:
                maxlen = _MAX_REF
            if op - (not lit) + 3 + 1 >= out_len:
                return None
            out[op - lit - 1] = (lit - 1) & 0xFF  # stop the run (0xff for an empty one)
            op -= not lit  # undo an empty run
            matched = False
            if maxlen > 16:
                for _ in range(16):
                    length += 1
                    if data[ref + length] != data[ip + length]:
                        matched = True
                        break
            if not matched:
                length += 1
                while length < maxlen and data[ref + length] == data[ip + length]:
                    length += 1
            length -= 2
            ip += 1
            if length < 7:
                out[op] = ((off >> 8) + (length << 5)) & 0xFF
                op += 1
            else:
                out[op] = ((off >> 8) + (7 << 5)) & 0xFF
                out[op + 1] = length - 7
                op += 2
            out[op] = off & 0xFF
            op += 2  # and start a new literal run
            lit = 0
            ip += length + 1
            if ip >= in_end - 2:
                break
            ip -= 2
            hval = (data[ip] << 8) | data[ip + 1]
            hval = ((hval << 8) | data[ip + 2]) & 0xFFFFFFFF
            htab[((hval >> 8) - hval * 5) & _HSIZE_MASK] = ip
            ip += 1
            hval = ((hval << 8) | data[ip + 2]) & 0xFFFFFFFF
            htab[((hval >> 8) - hval * 5) & _HSIZE_MASK] = ip
            ip += 1
        else:
            if op >= out_len:
                return None
            lit += 1
            out[op] = data[ip]
            op += 1
            ip += 1
            if lit == _MAX_LIT:
                out[op - lit - 1] = lit - 1
                lit = 0
                op += 1
    if op + 3 > out_len:
        return None
    while ip < in_end:
        lit += 1
        out[op] = data[ip]
        op += 1
        ip += 1
        if lit == _MAX_LIT:
            out[op - lit - 1] = lit - 1
            lit = 0
            op += 1
    out[op - lit - 1] = (lit - 1) & 0xFF
    op -= not lit
    if op > out_len:
        return None
    return bytes(out[:op])


def lzf_decompress(data: bytes | memoryview, out_len: int) -> bytes:
    """Expand LZF data to exactly `out_len` bytes; ValueError if it is damaged."""
    out = bytearray()
    ip = 0
    in_len = len(data)
    while ip < in_len:
        ctrl = data[ip]
        ip += 1
        if ctrl < 32:  # literal run of ctrl + 1 bytes
            n = ctrl + 1
            if ip + n > in_len:
                raise ValueError("LZF literal runs past the input")
            out += data[ip : ip + n]
            ip += n
        else:
            length = ctrl >> 5
            if length == 7:
                if ip >= in_len:
                    raise ValueError("LZF back-reference truncated")
                length += data[ip]
                ip += 1
            if ip >= in_len:
                raise ValueError("LZF back-reference truncated")
            ref = len(out) - ((ctrl & 0x1F) << 8) - data[ip] - 1
            ip += 1
            if ref < 0:
                raise ValueError("LZF back-reference before the start")
            length += 2
            if ref + length <= len(out):
                out += out[ref : ref + length]
            else:  # overlapping copy repeats the pattern
                for k in range(length):
                    out.append(out[ref + k])
        if len(out) > out_len:
            raise ValueError("LZF data expands past its stated length")
    if len(out) != out_len:
        raise ValueError(f"LZF data expands to {len(out)} bytes, not {out_len}")
    return bytes(out)


# --- integers in strings (util.c string2ll) ------------------------------------------------

def string_to_int(value: bytes) -> int | None:
    """The int64 `value` spells in canonical decimal (no '+', spaces, leading zeros, "-0")."""
    n = len(value)
    if not 0 < n < 21:
        return None
    first = value[0]
    if first != 45 and not 48 <= first <= 57:
        return None
    try:
        number = int(value)
    except ValueError:
        return None
    if _I64_MIN <= number <= _I64_MAX and b"%d" % number == value:
        return number
    return None


# --- writing -------------------------------------------------------------------------------

_PACK_BE32 = struct.Struct(">I").pack
_PACK_BE64 = struct.Struct(">Q").pack
_PACK_LE64 = struct.Struct("<Q").pack
_PACK_I16 = struct.Struct("<h").pack
_PACK_I32 = struct.Struct("<i").pack


def encode_len(n: int) -> bytes:
    if n < 1 << 6:
        return bytes((n,))
    if n < 1 << 14:
        return bytes(((n >> 8) | 0x40, n & 0xFF))
    if n <= 0xFFFFFFFF:
        return b"\x80" + _PACK_BE32(n)
    return b"\x81" + _PACK_BE64(n)


def encode_int_string(value: int) -> bytes | None:
    """rdbEncodeInteger: an int-encoded string, or None if it needs more than 32 bits."""
    if -(1 << 7) <= value < 1 << 7:
        return bytes((0xC0, value & 0xFF))
    if -(1 << 15) <= value < 1 << 15:
        return b"\xc1" + _PACK_I16(value)
    if -(1 << 31) <= value < 1 << 31:
        return b"\xc2" + _PACK_I32(value)
    return None


def encode_string(value: bytes, compress: bool) -> bytes:
    """rdbSaveRawString: int encoding for short integers, LZF above 20 bytes, else raw."""
    n = len(value)
    if n <= 11:
        number = string_to_int(value)
        if number is not None:
            encoded = encode_int_string(number)
            if encoded is not None:
                return encoded
    if compress and n > 20:
        packed = lzf_compress(value, n - 4)
        if packed is not None:
            return b"\xc3" + encode_len(len(packed)) + encode_len(n) + packed
    return encode_len(n) + value


def encode_millis(ms: int) -> bytes:
    return _PACK_LE64(ms & 0xFFFFFFFFFFFFFFFF)


def stream_id_bytes(ms: int, seq: int) -> bytes:
    """A stream ID as 16 big-endian bytes (streamEncodeID: rax keys and PEL IDs)."""
    return _PACK_BE64(ms) + _PACK_BE64(seq)


# --- reading -------------------------------------------------------------------------------

_UNPACK_BE32 = struct.Struct(">I").unpack_from
_UNPACK_BE64 = struct.Struct(">Q").unpack_from
_UNPACK_LE32 = struct.Struct("<I").unpack_from
_UNPACK_LE64 = struct.Struct("<Q").unpack_from
_UNPACK_I64 = struct.Struct("<q").unpack_from
_UNPACK_I16 = struct.Struct("<h").unpack_from
_UNPACK_I32 = struct.Struct("<i").unpack_from


class RDBReader:
    """A cursor over RDB bytes (bytes, mmap or memoryview); errors name the offset."""

    __slots__ = ("data", "pos", "end", "name")

    def __init__(self, data, pos: int = 0, end: int | None = None, name: str = "RDB") -> None:
        self.data = data
        self.pos = pos
        self.end = len(data) if end is None else end
        self.name = name

    def fail(self, expected: str, at: int | None = None) -> RDBError:
        return RDBError(f"{self.name}: {expected} at offset {self.pos if at is None else at}")

    def take(self, n: int, what: str = "data") -> bytes:
        pos = self.pos
        if n < 0 or pos + n > self.end:
            raise self.fail(f"unexpected end of file reading {what} ({n} bytes)")
        self.pos = pos + n
        return self.data[pos : pos + n]

    def u8(self, what: str = "a byte") -> int:
        pos = self.pos
        if pos >= self.end:
            raise self.fail(f"unexpected end of file reading {what}")
        self.pos = pos + 1
        return self.data[pos]

    def le32(self) -> int:
        return _UNPACK_LE32(self.take(4, "a 32-bit integer"))[0]

    def le64(self) -> int:
        return _UNPACK_LE64(self.take(8, "a 64-bit integer"))[0]

    def millis(self) -> int:
        return _UNPACK_I64(self.take(8, "a millisecond time"))[0]

    def length_or_encoding(self) -> tuple[int, bool]:
        """rdbLoadLenByRef: (length, False) or (encoding type, True)."""
        first = self.u8("a length")
        kind = first >> 6
        if kind == RDB_6BITLEN:
            return first & 0x3F, False
        if kind == RDB_14BITLEN:
            return ((first & 0x3F) << 8) | self.u8("a length"), False
        if kind == RDB_ENCVAL:
            return first & 0x3F, True
        if first == RDB_32BITLEN:
            return _UNPACK_BE32(self.take(4, "a 32-bit length"))[0], False
        if first == RDB_64BITLEN:
            return _UNPACK_BE64(self.take(8, "a 64-bit length"))[0], False
        raise self.fail(f"a length (got byte {first:#04x})", self.pos - 1)

    def length(self, what: str = "a length") -> int:
        at = self.pos
        value, encoded = self.length_or_encoding()
        if encoded:
            raise self.fail(f"{what}, not an encoded value", at)
        return value

    def string(self, what: str = "a string") -> bytes:
        """rdbGenericLoadStringObject: raw, int-encoded or LZF-compressed."""
        at = self.pos
        if _read_string is not None:
            try:
                value, pos = _read_string(self.data, at, self.end)
            except ValueError as exc:
                raise self.fail(f"{what}: {exc}", at) from None
            if value is not None:
                self.pos = pos
                return value
        value, encoded = self.length_or_encoding()
        if not encoded:
            return bytes(self.take(value, what))
        if value == RDB_ENC_INT8:
            byte = self.u8(what)
            return b"%d" % (byte - 256 if byte > 127 else byte)
        if value == RDB_ENC_INT16:
            return b"%d" % _UNPACK_I16(self.take(2, what))[0]
        if value == RDB_ENC_INT32:
            return b"%d" % _UNPACK_I32(self.take(4, what))[0]
        if value == RDB_ENC_LZF:
            clen = self.length(what)
            length = self.length(what)
            packed = self.take(clen, what)
            try:
                return lzf_decompress(packed, length)
            except ValueError as exc:
                raise self.fail(f"{what}: bad LZF data ({exc})", at) from None
        raise self.fail(f"{what}: unknown string encoding {value}", at)


# --- listpacks (listpack.c) ----------------------------------------------------------------

def _backlen(n: int) -> bytes:
    if n < 128:
        return bytes((n,))
    if n < 16384:
        return bytes((n >> 7, (n & 127) | 128))
    if n < 2097152:
        return bytes((n >> 14, ((n >> 7) & 127) | 128, (n & 127) | 128))
    if n < 268435456:
        return bytes((n >> 21, ((n >> 14) & 127) | 128, ((n >> 7) & 127) | 128, (n & 127) | 128))
    return bytes((n >> 28, ((n >> 21) & 127) | 128, ((n >> 14) & 127) | 128,
                  ((n >> 7) & 127) | 128, (n & 127) | 128))


def lp_int(value: int) -> bytes:
    """One listpack integer element with its back-length."""
    if 0 <= value <= 127:
        return bytes((value, 1))
    if -4096 <= value <= 4095:
        v = value & 0x1FFF
        return bytes(((v >> 8) | 0xC0, v & 0xFF, 2))
    if -32768 <= value <= 32767:
        return b"\xf1" + _PACK_I16(value) + b"\x03"
    if -8388608 <= value <= 8388607:
        return b"\xf2" + (value & 0xFFFFFF).to_bytes(3, "little") + b"\x04"
    if -2147483648 <= value <= 2147483647:
        return b"\xf3" + _PACK_I32(value) + b"\x05"
    return b"\xf4" + (value & 0xFFFFFFFFFFFFFFFF).to_bytes(8, "little") + b"\x09"


def lp_element(value: bytes) -> bytes:
    """One listpack element for `value` (lpAppend: canonical integers as integers)."""
    number = string_to_int(value) if len(value) < 21 else None
    if number is not None:
        return lp_int(number)
    n = len(value)
    if n < 64:
        head = bytes((0x80 | n,))
    elif n < 4096:
        head = bytes(((n >> 8) | 0xE0, n & 0xFF))
    else:
        head = b"\xf0" + n.to_bytes(4, "little")
    size = len(head) + n
    return head + value + _backlen(size)


def lp_finish(body: bytes | bytearray, count: int) -> bytes:
    """Wrap encoded elements into a listpack: total bytes, element count, 0xFF."""
    total = len(body) + 7
    return (total.to_bytes(4, "little") + (count if count < 65535 else 65535).to_bytes(2, "little")
            + bytes(body) + b"\xff")


def lp_decode(lp: bytes | memoryview) -> list:
    """A listpack's elements: bytes for strings, int for integers. ValueError if invalid."""
    size = len(lp)
    if size < 7:
        raise ValueError("listpack shorter than its header")
    total = _UNPACK_LE32(lp, 0)[0]
    if total != size:
        raise ValueError(f"listpack says {total} bytes, has {size}")
    count = lp[4] | (lp[5] << 8)
    out: list = []
    append = out.append
    p = 6
    end = size - 1
    while p < end:
        b = lp[p]
        start = p
        if b < 0x80:
            append(b)
            p += 1
        elif b < 0xC0:
            n = b & 0x3F
            append(bytes(lp[p + 1 : p + 1 + n]))
            p += 1 + n
        elif b < 0xE0:
            v = ((b & 0x1F) << 8) | lp[p + 1]
            append(v - 8192 if v >= 4096 else v)
            p += 2
        elif b < 0xF0:
            n = ((b & 0x0F) << 8) | lp[p + 1]
            append(bytes(lp[p + 2 : p + 2 + n]))
            p += 2 + n
        elif b == 0xF0:
            n = _UNPACK_LE32(lp, p + 1)[0]
            append(bytes(lp[p + 5 : p + 5 + n]))
            p += 5 + n
        elif b == 0xF1:
            append(_UNPACK_I16(lp, p + 1)[0])
            p += 3
        elif b == 0xF2:
            v = lp[p + 1] | (lp[p + 2] << 8) | (lp[p + 3] << 16)
            append(v - (1 << 24) if v >= 1 << 23 else v)
            p += 4
        elif b == 0xF3:
            append(_UNPACK_I32(lp, p + 1)[0])
            p += 5
        elif b == 0xF4:
            append(_UNPACK_I64(lp, p + 1)[0])
            p += 9
        else:
            raise ValueError(f"bad listpack encoding byte {b:#04x} at {p}")
        n = p - start
        p += 1 if n < 128 else 2 if n < 16384 else 3 if n < 2097152 else 4 if n < 268435456 else 5
    if p != end or lp[end] != 0xFF:
        raise ValueError("listpack elements overrun its end")
    if count != 65535 and count != len(out):
        raise ValueError(f"listpack says {count} elements, has {len(out)}")
    return out


# --- ziplists, intsets, zipmaps (the older compact encodings, read only) -------------------

def zl_decode(zl: bytes | memoryview) -> list:
    """A ziplist's elements (ziplist.c): bytes for strings, int for integers. ValueError if invalid."""
    size = len(zl)
    if size < 11:
        raise ValueError("ziplist shorter than its header")
    if _UNPACK_LE32(zl, 0)[0] != size:
        raise ValueError("ziplist size field does not match")
    count = zl[8] | (zl[9] << 8)
    out: list = []
    append = out.append
    p = 10
    end = size - 1
    while p < end:
        p += 1 if zl[p] < 254 else 5  # prevlen
        if p >= end:
            raise ValueError("ziplist entry truncated")
        b = zl[p]
        kind = b >> 6
        if kind == 0:
            n = b & 0x3F
            p += 1
        elif kind == 1:
            n = ((b & 0x3F) << 8) | zl[p + 1]
            p += 2
        elif kind == 2:
            n = _UNPACK_BE32(zl, p + 1)[0]
            p += 5
        else:
            p += 1
            if b == 0xC0:
                append(_UNPACK_I16(zl, p)[0])
                p += 2
            elif b == 0xD0:
                append(_UNPACK_I32(zl, p)[0])
                p += 4
            elif b == 0xE0:
                append(_UNPACK_I64(zl, p)[0])
                p += 8
            elif b == 0xF0:
                v = zl[p] | (zl[p + 1] << 8) | (zl[p + 2] << 16)
                append(v - (1 << 24) if v >= 1 << 23 else v)
                p += 3
            elif b == 0xFE:
                v = zl[p]
                append(v - 256 if v > 127 else v)
                p += 1
            elif 0xF1 <= b <= 0xFD:
                append((b & 0x0F) - 1)
            else:
                raise ValueError(f"bad ziplist encoding byte {b:#04x}")
            continue
        if p + n > end:
            raise ValueError("ziplist string runs past its end")
        append(bytes(zl[p : p + n]))
        p += n
    if p != end or zl[end] != 0xFF:
        raise ValueError("ziplist elements overrun its end")
    if count != 65535 and count != len(out):
        raise ValueError(f"ziplist says {count} elements, has {len(out)}")
    return out


_INTSET_FORMATS = {2: "<%dh", 4: "<%di", 8: "<%dq"}


def intset_decode(blob: bytes | memoryview) -> list[int]:
    """An intset's integers (intset.c: u32 width, u32 count, sorted values LE)."""
    if len(blob) < 8:
        raise ValueError("intset shorter than its header")
    width, count = struct.unpack_from("<II", blob, 0)
    fmt = _INTSET_FORMATS.get(width)
    if fmt is None:
        raise ValueError(f"bad intset encoding {width}")
    if len(blob) != 8 + width * count:
        raise ValueError("intset size does not match its count")
    values = list(struct.unpack_from(fmt % count, blob, 8))
    if any(a >= b for a, b in zip(values, values[1:], strict=False)):
        raise ValueError("intset not sorted")
    return values


def intset_encode(values: list[int]) -> bytes:
    """The intset Redis builds for these integers: the narrowest width, sorted."""
    values = sorted(values)
    low, high = (values[0], values[-1]) if values else (0, 0)
    if -(1 << 15) <= low and high < 1 << 15:
        width = 2
    elif -(1 << 31) <= low and high < 1 << 31:
        width = 4
    else:
        width = 8
    return struct.pack("<II", width, len(values)) + struct.pack(_INTSET_FORMATS[width] % len(values),
                                                                 *values)


def zipmap_decode(zm: bytes | memoryview) -> list[bytes]:
    """A zipmap's fields and values, flattened (zipmap.c, Redis < 2.6)."""
    out: list[bytes] = []
    p = 1
    size = len(zm)

    def length() -> int:
        nonlocal p
        b = zm[p]
        if b < 254:
            p += 1
            return b
        if b == 254:
            p += 5
            return _UNPACK_LE32(zm, p - 4)[0]
        raise ValueError("bad zipmap length")

    try:
        while zm[p] != 255:
            n = length()
            out.append(bytes(zm[p : p + n]))
            p += n
            n = length()
            free = zm[p]
            p += 1
            out.append(bytes(zm[p : p + n]))
            p += n + free
            if p > size:
                raise ValueError("zipmap entry runs past its end")
    except IndexError:
        raise ValueError("zipmap truncated") from None
    if p != size - 1:
        raise ValueError("zipmap has bytes after its end")
    return out


def as_bytes(element) -> bytes:
    """A decoded listpack element as the string Redis would return."""
    return element if element.__class__ is bytes else b"%d" % element


# The Python originals stay reachable (tests compare them with the compiled forms).
py_crc64, py_lp_decode, py_lzf_compress, py_lzf_decompress = (
    crc64, lp_decode, lzf_compress, lzf_decompress)
_read_string = None
if not os.environ.get("RILLET_PURE"):
    try:  # the compiled forms (same behaviour, checked by tests/persistence/test_rdb_format.py)
        import rillet.persistence._rdbfast as _fast
        from rillet.persistence._rdbfast import (  # type: ignore[no-redef]  # noqa: F401
            crc64,
            lp_decode,
            lzf_compress,
            lzf_decompress,
        )
        _read_string = _fast.read_string
    except ImportError:
        pass
