"""HyperLogLog in Redis's exact string representation (the Python reference).

An HLL is a string value: a 16-byte header ("HYLL", the encoding byte, three
unused bytes, the cached cardinality little endian with bit 63 meaning "stale")
and then either the dense registers (16384 six-bit counters, LSB first, 12288
bytes) or the sparse run-length opcodes:

    ZERO   00xxxxxx           1-64 registers at 0
    XZERO  01xxxxxx yyyyyyyy  1-16384 registers at 0
    VAL    1vvvvvxx           1-4 registers at value 1-32

Every operation follows Redis's hyperloglog.c step by step (the opcode split
and the merge window of five opcodes after an update, the promotion to dense
past `hll-sparse-max-bytes` or for a value above 32, MurmurHash64A with
Redis's seed, Ertl's estimator), so a key's bytes (GET, DUMP) are Redis's.
Buffers are bytearrays here; the commands store them back as bytes. A sparse
representation that does not cover exactly 16384 registers is corrupt:
functions answer None (or -1) for it, as Redis answers INVALIDOBJ.
"""

from __future__ import annotations

import math

from rillet.compiled import compiled

P = 14
REGISTERS = 1 << P  # 16384
P_MASK = REGISTERS - 1
Q = 64 - P  # 50
HDR_SIZE = 16
DENSE_SIZE = HDR_SIZE + (REGISTERS * 6 + 7) // 8  # 12304
DENSE = 0
SPARSE = 1
MAGIC = b"HYLL"
VAL_MAX_VALUE = 32
VAL_MAX_LEN = 4
ZERO_MAX_LEN = 64
XZERO_MAX_LEN = 16384
ALPHA_INF = 0.721347520444481703680  # 0.5 / ln(2)
SEED = 0xADC83B19
_M64 = (1 << 64) - 1
_MURMUR_M = 0xC6A4A7935BD1E995


# --- hashing -------------------------------------------------------------------------------

def murmurhash64a(data: bytes, seed: int = SEED) -> int:
    """MurmurHash2, 64-bit (Redis's endian-neutral MurmurHash64A)."""
    m = _MURMUR_M
    n = len(data)
    h = (seed ^ (n * m)) & _M64
    end = n - (n & 7)
    for i in range(0, end, 8):
        k = int.from_bytes(data[i:i + 8], "little")
        k = (k * m) & _M64
        k ^= k >> 47
        k = (k * m) & _M64
        h ^= k
        h = (h * m) & _M64
    tail = n & 7
    if tail:
        h ^= int.from_bytes(data[end:], "little")
        h = (h * m) & _M64
    h ^= h >> 47
    h = (h * m) & _M64
    h ^= h >> 47
    return h


def pattern(element: bytes) -> tuple[int, int]:
    """hllPatLen: (register index, length of the 000..1 run) for an element."""
    h = murmurhash64a(element)
    index = h & P_MASK
    h >>= P
    h |= 1 << Q
    return index, ((h & -h).bit_length())  # 1 + trailing zeros


# --- the header -----------------------------------------------------------------------------

def is_hll(value: bytes) -> bool:
    """isHLLObjectOrReply's checks: magic, a known encoding, the exact dense size."""
    if len(value) < HDR_SIZE or value[:4] != MAGIC or value[4] > SPARSE:
        return False
    return value[4] != DENSE or len(value) == DENSE_SIZE


def new_sparse() -> bytearray:
    """createHLLObject: an empty sparse HLL (one XZERO of 16384)."""
    buf = bytearray(HDR_SIZE + 2)
    buf[:4] = MAGIC
    buf[4] = SPARSE
    buf[16] = 0x40 | ((XZERO_MAX_LEN - 1) >> 8)
    buf[17] = (XZERO_MAX_LEN - 1) & 0xFF
    return buf


def cache_valid(buf: bytes | bytearray) -> bool:
    return not buf[15] & 0x80


def invalidate_cache(buf: bytearray) -> None:
    buf[15] |= 0x80


def cached_card(buf: bytes | bytearray) -> int:
    return int.from_bytes(buf[8:16], "little")


def store_card(buf: bytearray, card: int) -> None:
    buf[8:16] = card.to_bytes(8, "little")


# --- dense registers -------------------------------------------------------------------------

def dense_get(buf: bytearray | bytes, regnum: int) -> int:
    byte = HDR_SIZE + regnum * 6 // 8
    fb = regnum * 6 & 7
    b0 = buf[byte]
    b1 = buf[byte + 1] if byte + 1 < len(buf) else 0  # the sds terminator
    return ((b0 >> fb) | (b1 << (8 - fb))) & 63


def dense_set(buf: bytearray, regnum: int, value: int) -> None:
    byte = HDR_SIZE + regnum * 6 // 8
    fb = regnum * 6 & 7
    buf[byte] = (buf[byte] & ~(63 << fb) & 0xFF) | ((value << fb) & 0xFF)
    if byte + 1 < len(buf):
        fb8 = 8 - fb
        buf[byte + 1] = (buf[byte + 1] & ~(63 >> fb8) & 0xFF) | (value >> fb8)


def dense_registers(buf: bytes | bytearray) -> list[int]:
    """All 16384 dense registers, 4 per 3 bytes."""
    out: list[int] = []
    append = out.append
    data = bytes(buf[HDR_SIZE:DENSE_SIZE])
    for i in range(0, len(data), 3):
        word = data[i] | (data[i + 1] << 8) | (data[i + 2] << 16)
        append(word & 63)
        append((word >> 6) & 63)
        append((word >> 12) & 63)
        append(word >> 18)
    return out


def pack_registers(registers: list[int] | bytearray) -> bytes:
    """16384 register values (0-63) packed 6 bits each, LSB first: the dense body."""
    out = bytearray(len(registers) * 3 // 4)
    j = 0
    for i in range(0, len(registers), 4):
        word = registers[i] | (registers[i + 1] << 6) | (registers[i + 2] << 12) | (registers[i + 3] << 18)
        out[j] = word & 0xFF
        out[j + 1] = (word >> 8) & 0xFF
        out[j + 2] = word >> 16
        j += 3
    return bytes(out)


def dense_from_registers(header: bytes | bytearray, registers: list[int] | bytearray) -> bytearray:
    """A dense HLL with `header`'s first 16 bytes (encoding set to dense) and these registers."""
    buf = bytearray(header[:HDR_SIZE])
    buf[4] = DENSE
    buf += pack_registers(registers)
    return buf


def dense_histogram(buf: bytes | bytearray) -> list[int]:
    hist = [0] * 64
    for value in dense_registers(buf):
        hist[value] += 1
    return hist


def dense_merge(registers: bytearray, buf: bytes | bytearray) -> None:
    """registers[i] = max(registers[i], dense register i)."""
    for i, value in enumerate(dense_registers(buf)):
        if value > registers[i]:
            registers[i] = value


# --- sparse opcodes ----------------------------------------------------------------------------

def sparse_runs(buf: bytes | bytearray) -> list[tuple[int, int]] | None:
    """The sparse opcodes as (value, run length); None if they do not cover exactly 16384
    registers (the checks of hllSparseToDense / hllSparseRegHisto / hllMerge)."""
    runs = []
    idx = 0
    p = HDR_SIZE
    end = len(buf)
    while p < end:
        op = buf[p]
        if op & 0x80:
            value, runlen = ((op >> 2) & 0x1F) + 1, (op & 3) + 1
            p += 1
        elif op & 0x40:
            if p + 1 >= end:
                # XZERO's second byte would be the sds terminator (0).
                value, runlen = 0, ((op & 0x3F) << 8) + 1
            else:
                value, runlen = 0, (((op & 0x3F) << 8) | buf[p + 1]) + 1
            p += 2
        else:
            value, runlen = 0, (op & 0x3F) + 1
            p += 1
        if idx + runlen > REGISTERS:
            return None
        idx += runlen
        runs.append((value, runlen))
    return runs if idx == REGISTERS else None


def sparse_registers(buf: bytes | bytearray) -> bytearray | None:
    """The 16384 registers of a sparse HLL, one byte each; None if it is corrupt."""
    runs = sparse_runs(buf)
    if runs is None:
        return None
    registers = bytearray(REGISTERS)
    idx = 0
    for value, runlen in runs:
        if value:
            registers[idx:idx + runlen] = bytes([value]) * runlen
        idx += runlen
    return registers


def sparse_to_dense(buf: bytes | bytearray) -> bytearray | None:
    """hllSparseToDense: the dense form keeping the header (magic, cached cardinality)."""
    registers = sparse_registers(buf)
    if registers is None:
        return None
    return dense_from_registers(buf, registers)


def max_into(registers: bytearray, other: bytearray) -> None:
    """registers[i] = max(registers[i], other[i])."""
    for i, value in enumerate(other):
        if value > registers[i]:
            registers[i] = value


def _val(value: int, length: int) -> int:
    return 0x80 | ((value - 1) << 2) | (length - 1)


def _zeros(length: int) -> bytes:
    if length > ZERO_MAX_LEN:
        n = length - 1
        return bytes((0x40 | (n >> 8), n & 0xFF))
    return bytes((length - 1,))


class Cursor:
    """The opcode boundaries (position, first register) from the start up to the last
    opcode scanned, for a run of sparse_set calls on ascending registers (PFMERGE):
    an update edits nothing before its previous opcode, so the boundaries up to
    that one stay true and the next scan starts there instead of at the start."""

    __slots__ = ("marks",)

    def __init__(self) -> None:
        self.marks = [(HDR_SIZE, 0)]


def sparse_set(buf: bytearray, index: int, count: int, max_bytes: int,
               cursor: Cursor | None = None) -> tuple[int, bytearray]:
    """hllSparseSet: raise register `index` to `count` in a sparse HLL.

    Returns (1 changed | 0 unchanged | -1 corrupt, the buffer), the buffer being
    a new dense one when the update promotes it (a value above 32, or the
    string growing past `max_bytes`). `buf` is changed in place otherwise.
    """
    if count > VAL_MAX_VALUE:
        return _promote(buf, index, count)
    # Step 1: find the opcode covering `index` (and the one before it).
    if cursor is None:
        p, first, span, prev = sparse_scan(buf, index, HDR_SIZE, 0, -1, None)
    else:
        marks = cursor.marks
        p, first = marks[-1]
        prev = marks[-2][0] if len(marks) > 1 else -1
        p, first, span, prev = sparse_scan(buf, index, p, first, prev, marks)
    if span == 0 or p >= len(buf):
        return -1, buf
    result = sparse_update(buf, p, first, span, prev, index, count, max_bytes)
    if result == 2:
        return _promote(buf, index, count)
    if cursor is not None and result == 1:
        marks = cursor.marks
        del marks[-1]  # the target opcode changed; its previous one still starts where it did
        if not marks:
            marks.append((HDR_SIZE, 0))
    return result, buf


def sparse_scan(buf: bytearray, index: int, p: int, first: int, prev: int,
                marks: list[tuple[int, int]] | None) -> tuple[int, int, int, int]:
    """hllSparseSet's step 1 from the opcode at `p` (its first register `first`, the
    opcode before it at `prev`): (position, first register, span, previous opcode) of
    the opcode covering `index`; a position at the end (or span 0) means not found.
    Each boundary passed is appended to `marks` if given."""
    end = len(buf)
    span = 0
    while p < end:
        op = buf[p]
        oplen = 1
        if not op & 0xC0:
            span = (op & 0x3F) + 1
        elif op & 0x80:
            span = (op & 3) + 1
        else:
            span = (((op & 0x3F) << 8) | (buf[p + 1] if p + 1 < end else 0)) + 1
            oplen = 2
        if index <= first + span - 1:
            break
        prev = p
        p += oplen
        first += span
        if marks is not None:
            marks.append((p, first))
    return p, first, span, prev


def sparse_update(buf: bytearray, p: int, first: int, span: int, prev: int, index: int,
                  count: int, max_bytes: int) -> int:
    """hllSparseSet's steps 2-4 on the opcode at `p` (covering `span` registers from `first`,
    `prev` the opcode before it), in place: 0 unchanged, 1 updated, 2 the HLL must be
    promoted to dense (the split would pass `max_bytes`; `buf` is untouched then)."""
    op = buf[p]
    is_xzero = (op & 0xC0) == 0x40
    is_val = bool(op & 0x80)
    is_zero = not is_xzero and not is_val
    runlen = span
    # Step 2: the trivial cases.
    updated = False
    if is_val:
        old = ((op >> 2) & 0x1F) + 1
        if old >= count:
            return 0
        if runlen == 1:
            buf[p] = _val(count, 1)
            updated = True
    if not updated and is_zero and runlen == 1:
        buf[p] = _val(count, 1)
        updated = True
    if not updated:
        # The general case: split the opcode in up to three.
        last = first + span - 1
        seq = bytearray()
        if is_val:
            current = ((op >> 2) & 0x1F) + 1
            if index != first:
                seq.append(_val(current, index - first))
            seq.append(_val(count, 1))
            if index != last:
                seq.append(_val(current, last - index))
        else:
            if index != first:
                seq += _zeros(index - first)
            seq.append(_val(count, 1))
            if index != last:
                seq += _zeros(last - index)
        oldlen = 2 if is_xzero else 1
        delta = len(seq) - oldlen
        if delta > 0 and len(buf) + delta > max_bytes:
            return 2
        buf[p:p + oldlen] = seq
    # Step 4: merge adjacent VALs of the same value, up to five opcodes from prev.
    end = len(buf)
    p = prev if prev >= 0 else HDR_SIZE
    scan = 5
    while p < end and scan:
        scan -= 1
        op = buf[p]
        if (op & 0xC0) == 0x40:
            p += 2
            continue
        if not op & 0xC0:
            p += 1
            continue
        if p + 1 < end and buf[p + 1] & 0x80:
            nxt = buf[p + 1]
            v1 = ((op >> 2) & 0x1F) + 1
            v2 = ((nxt >> 2) & 0x1F) + 1
            if v1 == v2:
                length = (op & 3) + 1 + (nxt & 3) + 1
                if length <= VAL_MAX_LEN:
                    buf[p + 1] = _val(v1, length)
                    del buf[p]
                    end -= 1
                    continue
        p += 1
    invalidate_cache(buf)
    return 1


def _promote(buf: bytearray, index: int, count: int) -> tuple[int, bytearray]:
    dense = sparse_to_dense(buf)
    if dense is None:
        return -1, buf
    dense_set(dense, index, count)
    return 1, dense


# --- adding, merging, counting -----------------------------------------------------------------

def add(buf: bytearray, elements: list[bytes], max_bytes: int) -> tuple[int, bytearray]:
    """PFADD's loop: (registers changed, buffer), or (-1, _) when the HLL is corrupt."""
    updated = 0
    for element in elements:
        index, count = pattern(element)
        if buf[4] == DENSE:
            if count > dense_get(buf, index):
                dense_set(buf, index, count)
                updated += 1
        elif buf[4] == SPARSE:
            result, buf = sparse_set(buf, index, count, max_bytes)
            if result < 0:
                return -1, buf
            updated += result
        else:
            return -1, buf
    return updated, buf


def merge_into(registers: bytearray, buf: bytes | bytearray) -> bool:
    """hllMerge: registers[i] = max(registers[i], the HLL's register i). False if corrupt."""
    if buf[4] == DENSE:
        dense_merge(registers, buf)
        return True
    other = sparse_registers(buf)
    if other is None:
        return False
    max_into(registers, other)
    return True


def histogram(buf: bytes | bytearray) -> list[int] | None:
    """The register histogram (64 counters) of an HLL; None for a corrupt sparse one."""
    if buf[4] == DENSE:
        return dense_histogram(buf)
    registers = sparse_registers(buf)
    return None if registers is None else raw_histogram(registers)


def nonzero_registers(registers: bytearray) -> list[int]:
    """The indexes of the registers above 0, ascending."""
    return [i for i, value in enumerate(registers) if value]


def raw_histogram(registers: bytearray) -> list[int]:
    hist = [0] * 64
    for value in registers:
        hist[value] += 1
    return hist


def _sigma(x: float) -> float:
    if x == 1.0:
        return math.inf
    y = 1.0
    z = x
    while True:
        x *= x
        z_prime = z
        z += x * y
        y += y
        if z_prime == z:
            return z


def _tau(x: float) -> float:
    if x == 0.0 or x == 1.0:
        return 0.0
    y = 1.0
    z = 1 - x
    while True:
        x = math.sqrt(x)
        z_prime = z
        y *= 0.5
        z -= pow(1 - x, 2) * y
        if z_prime == z:
            return z / 3


def estimate(hist: list[int]) -> int:
    """hllCount's estimate from a register histogram (Ertl, arXiv:1702.01284)."""
    m = float(REGISTERS)
    z = m * _tau((m - hist[Q + 1]) / m)
    for j in range(Q, 0, -1):
        z += hist[j]
        z *= 0.5
    z += m * _sigma(hist[0] / m)
    e = ALPHA_INF * m * m / z
    if e != e or e == math.inf:
        return 0 if e != e else 1 << 63  # llroundl's out-of-range result (never from real data)
    whole = math.floor(e)
    return int(whole + 1 if e - whole >= 0.5 else whole)  # llroundl: halves away from zero


def decode_sparse(buf: bytes | bytearray) -> bytes:
    """PFDEBUG DECODE's text: z:N, Z:N and v:VALUE,N opcodes, space separated."""
    parts = []
    p = HDR_SIZE
    end = len(buf)
    while p < end:
        op = buf[p]
        if not op & 0xC0:
            parts.append(b"z:%d" % ((op & 0x3F) + 1))
            p += 1
        elif (op & 0xC0) == 0x40:
            second = buf[p + 1] if p + 1 < end else 0
            parts.append(b"Z:%d" % ((((op & 0x3F) << 8) | second) + 1))
            p += 2
        else:
            parts.append(b"v:%d,%d" % (((op >> 2) & 0x1F) + 1, (op & 3) + 1))
            p += 1
    return b" ".join(parts)


# The Python originals stay reachable: tests/engine/test_hll_geo.py holds the compiled
# forms (engine/_hll.pyx) to them.
py_murmurhash64a, py_pattern, py_dense_registers, py_pack_registers = (
    murmurhash64a, pattern, dense_registers, pack_registers)
py_dense_histogram, py_dense_merge, py_raw_histogram, py_sparse_scan = (
    dense_histogram, dense_merge, raw_histogram, sparse_scan)
py_nonzero_registers, py_sparse_registers, py_max_into = nonzero_registers, sparse_registers, max_into
py_sparse_update = sparse_update
_hll = compiled("rillet.engine._hll")
if _hll is not None:
    murmurhash64a, pattern, dense_registers, pack_registers = (
        _hll.murmurhash64a, _hll.pattern, _hll.dense_registers, _hll.pack_registers)
    dense_histogram, dense_merge, raw_histogram, sparse_scan = (
        _hll.dense_histogram, _hll.dense_merge, _hll.raw_histogram, _hll.sparse_scan)
    nonzero_registers, sparse_registers, max_into = (
        _hll.nonzero_registers, _hll.sparse_registers, _hll.max_into)
    sparse_update = _hll.sparse_update
