# cython: boundscheck=False, wraparound=False, cdivision=True
"""Compiled forms of engine/hyperloglog.py's hot loops (the Python originals are the
reference; tests/engine/test_hll_geo.py holds these to them on random inputs).

MurmurHash64A and the register pattern (every PFADD element), the dense register
unpacking, histogram and merge (PFCOUNT, PFMERGE: 16384 registers each), the
packing of raw registers, and the sparse opcode scan (every sparse PFADD element
walks the opcodes up to its register).
"""

from libc.stdint cimport uint8_t, uint64_t

DEF HDR_SIZE = 16
DEF REGISTERS = 16384
DEF DENSE_BYTES = 12288
DEF P = 14
DEF Q = 50
DEF SEED = 0xadc83b19


cdef inline uint64_t _murmur(const uint8_t[:] data, uint64_t seed) nogil:
    cdef uint64_t m = 0xc6a4a7935bd1e995ULL
    cdef Py_ssize_t n = data.shape[0]
    cdef uint64_t h = seed ^ (<uint64_t>n * m)
    cdef Py_ssize_t end = n - (n & 7)
    cdef Py_ssize_t i, j
    cdef uint64_t k
    i = 0
    while i < end:
        k = 0
        for j in range(8):
            k |= (<uint64_t>data[i + j]) << (8 * j)
        k *= m
        k ^= k >> 47
        k *= m
        h ^= k
        h *= m
        i += 8
    cdef Py_ssize_t tail = n & 7
    if tail:
        k = 0
        for j in range(tail):
            k |= (<uint64_t>data[end + j]) << (8 * j)
        h ^= k
        h *= m
    h ^= h >> 47
    h *= m
    h ^= h >> 47
    return h


def murmurhash64a(data, seed=SEED):
    return _murmur(data, <uint64_t>seed)


def pattern(element):
    cdef uint64_t h = _murmur(element, SEED)
    cdef uint64_t index = h & (REGISTERS - 1)
    h >>= P
    h |= (<uint64_t>1) << Q
    cdef int count = 1
    while not (h & 1):
        h >>= 1
        count += 1
    return index, count


def dense_registers(buf):
    cdef const uint8_t[:] b = buf
    cdef list out = [0] * REGISTERS
    cdef Py_ssize_t i, r = 0
    cdef unsigned int word
    for i in range(HDR_SIZE, HDR_SIZE + DENSE_BYTES, 3):
        word = b[i] | (b[i + 1] << 8) | (b[i + 2] << 16)
        out[r] = word & 63
        out[r + 1] = (word >> 6) & 63
        out[r + 2] = (word >> 12) & 63
        out[r + 3] = word >> 18
        r += 4
    return out


def dense_histogram(buf):
    cdef const uint8_t[:] b = buf
    cdef long hist[64]
    cdef Py_ssize_t i
    cdef unsigned int word
    for i in range(64):
        hist[i] = 0
    for i in range(HDR_SIZE, HDR_SIZE + DENSE_BYTES, 3):
        word = b[i] | (b[i + 1] << 8) | (b[i + 2] << 16)
        hist[word & 63] += 1
        hist[(word >> 6) & 63] += 1
        hist[(word >> 12) & 63] += 1
        hist[word >> 18] += 1
    return [hist[i] for i in range(64)]


def dense_merge(bytearray registers, buf):
    cdef uint8_t[:] regs = registers
    cdef const uint8_t[:] b = buf
    cdef Py_ssize_t i, r = 0
    cdef unsigned int word, v
    for i in range(HDR_SIZE, HDR_SIZE + DENSE_BYTES, 3):
        word = b[i] | (b[i + 1] << 8) | (b[i + 2] << 16)
        v = word & 63
        if v > regs[r]:
            regs[r] = v
        v = (word >> 6) & 63
        if v > regs[r + 1]:
            regs[r + 1] = v
        v = (word >> 12) & 63
        if v > regs[r + 2]:
            regs[r + 2] = v
        v = word >> 18
        if v > regs[r + 3]:
            regs[r + 3] = v
        r += 4


def raw_histogram(registers):
    cdef const uint8_t[:] regs = registers
    cdef long hist[64]
    cdef Py_ssize_t i
    for i in range(64):
        hist[i] = 0
    for i in range(regs.shape[0]):
        hist[regs[i] & 63] += 1
    return [hist[i] for i in range(64)]


def nonzero_registers(registers):
    cdef const uint8_t[:] regs = registers
    cdef list out = []
    cdef Py_ssize_t i
    for i in range(regs.shape[0]):
        if regs[i]:
            out.append(i)
    return out


def pack_registers(registers):
    cdef const uint8_t[:] regs
    if isinstance(registers, list):
        registers = bytearray(registers)
    regs = registers
    cdef Py_ssize_t n = regs.shape[0]
    cdef bytearray out = bytearray(n * 3 // 4)
    cdef uint8_t[:] o = out
    cdef Py_ssize_t i, j = 0
    cdef unsigned int word
    for i in range(0, n, 4):
        word = regs[i] | (regs[i + 1] << 6) | (regs[i + 2] << 12) | (regs[i + 3] << 18)
        o[j] = word & 0xFF
        o[j + 1] = (word >> 8) & 0xFF
        o[j + 2] = word >> 16
        j += 3
    return bytes(out)


def sparse_scan(buf, long index, Py_ssize_t p, long first, Py_ssize_t prev, list marks):
    cdef const uint8_t[:] b = buf
    cdef Py_ssize_t end = b.shape[0]
    cdef long span = 0
    cdef Py_ssize_t oplen
    cdef uint8_t op
    while p < end:
        op = b[p]
        oplen = 1
        if not (op & 0xC0):
            span = (op & 0x3F) + 1
        elif op & 0x80:
            span = (op & 3) + 1
        else:
            span = (((op & 0x3F) << 8) | (b[p + 1] if p + 1 < end else 0)) + 1
            oplen = 2
        if index <= first + span - 1:
            break
        prev = p
        p += oplen
        first += span
        if marks is not None:
            marks.append((p, first))
    return p, first, span, prev


def sparse_registers(buf):
    cdef const uint8_t[:] b = buf
    cdef Py_ssize_t end = b.shape[0]
    cdef Py_ssize_t p = HDR_SIZE
    cdef long idx = 0, runlen, i
    cdef unsigned int value, op
    cdef bytearray registers = bytearray(REGISTERS)
    cdef uint8_t[:] regs = registers
    while p < end:
        op = b[p]
        if op & 0x80:
            value = ((op >> 2) & 0x1F) + 1
            runlen = (op & 3) + 1
            p += 1
        elif op & 0x40:
            value = 0
            runlen = (((op & 0x3F) << 8) | (b[p + 1] if p + 1 < end else 0)) + 1
            p += 2
        else:
            value = 0
            runlen = (op & 0x3F) + 1
            p += 1
        if idx + runlen > REGISTERS:
            return None
        if value:
            for i in range(idx, idx + runlen):
                regs[i] = value
        idx += runlen
    if idx != REGISTERS:
        return None
    return registers


def max_into(bytearray registers, other):
    cdef uint8_t[:] regs = registers
    cdef const uint8_t[:] o = other
    cdef Py_ssize_t i
    for i in range(o.shape[0]):
        if o[i] > regs[i]:
            regs[i] = o[i]


cdef inline uint8_t _val(int value, long length):
    return 0x80 | ((value - 1) << 2) | (length - 1)


cdef inline int _zeros(uint8_t *seq, int n, long length):
    if length > 64:
        seq[n] = 0x40 | ((length - 1) >> 8)
        seq[n + 1] = (length - 1) & 0xFF
        return n + 2
    seq[n] = length - 1
    return n + 1


def sparse_update(bytearray buf, Py_ssize_t p, long first, long span, Py_ssize_t prev, long index,
                  int count, long long max_bytes):
    cdef uint8_t op = buf[p]
    cdef bint is_xzero = (op & 0xC0) == 0x40
    cdef bint is_val = (op & 0x80) != 0
    cdef bint is_zero = not is_xzero and not is_val
    cdef bint updated = False
    cdef int current, v1, v2, oldlen, delta
    cdef uint8_t seq[5]
    cdef uint8_t nxt
    cdef int n = 0
    cdef long last, length
    cdef Py_ssize_t end, q
    cdef int scan
    if is_val:
        if ((op >> 2) & 0x1F) + 1 >= count:
            return 0
        if span == 1:
            buf[p] = _val(count, 1)
            updated = True
    if not updated and is_zero and span == 1:
        buf[p] = _val(count, 1)
        updated = True
    if not updated:
        last = first + span - 1
        if is_val:
            current = ((op >> 2) & 0x1F) + 1
            if index != first:
                seq[n] = _val(current, index - first)
                n += 1
            seq[n] = _val(count, 1)
            n += 1
            if index != last:
                seq[n] = _val(current, last - index)
                n += 1
        else:
            if index != first:
                n = _zeros(seq, n, index - first)
            seq[n] = _val(count, 1)
            n += 1
            if index != last:
                n = _zeros(seq, n, last - index)
        oldlen = 2 if is_xzero else 1
        delta = n - oldlen
        if delta > 0 and <long long>len(buf) + delta > max_bytes:
            return 2
        buf[p:p + oldlen] = (<char *>seq)[:n]
    end = len(buf)
    q = prev if prev >= 0 else HDR_SIZE
    scan = 5
    while q < end and scan:
        scan -= 1
        op = buf[q]
        if (op & 0xC0) == 0x40:
            q += 2
            continue
        if not (op & 0xC0):
            q += 1
            continue
        if q + 1 < end and buf[q + 1] & 0x80:
            nxt = buf[q + 1]
            v1 = ((op >> 2) & 0x1F) + 1
            v2 = ((nxt >> 2) & 0x1F) + 1
            if v1 == v2:
                length = (op & 3) + 1 + (nxt & 3) + 1
                if length <= 4:
                    buf[q + 1] = _val(v1, length)
                    del buf[q]
                    end -= 1
                    continue
        q += 1
    buf[15] |= 0x80
    return 1
