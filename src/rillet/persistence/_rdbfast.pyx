# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Compiled forms of rdb_format.py's and rdb_stream.py's hot functions.

Same behaviour as the Python originals (which stay the reference; the pure path
of rillet/compiled.py uses them): CRC-64, LZF, listpack decoding, and a stream listpack's encode and
decode. tests/persistence/test_rdb_format.py compares both forms.
"""

from libc.stdint cimport int16_t, int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memcpy, memset
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.pyport cimport PY_SSIZE_T_MAX

cdef uint64_t CRC_TABLE[8][256]
cdef bint _crc_ready = False


cdef void _crc_init() noexcept:
    """Slicing-by-8 tables for the reflected Jones polynomial (crc64.c's crcspeed idea)."""
    global _crc_ready
    cdef uint64_t crc
    cdef int byte, k
    for byte in range(256):
        crc = byte
        for k in range(8):
            if crc & 1:
                crc = (crc >> 1) ^ 0x95AC9329AC4BC9B5ULL
            else:
                crc = crc >> 1
        CRC_TABLE[0][byte] = crc
    for byte in range(256):
        crc = CRC_TABLE[0][byte]
        for k in range(1, 8):
            crc = (crc >> 8) ^ CRC_TABLE[0][crc & 0xFF]
            CRC_TABLE[k][byte] = crc
    _crc_ready = True


def crc64(uint64_t crc, data):
    cdef const uint8_t[::1] view = memoryview(data).cast("B")
    cdef Py_ssize_t i = 0, n = view.shape[0]
    cdef uint64_t word
    if not _crc_ready:
        _crc_init()
    if n == 0:
        return crc
    cdef const uint8_t *p = &view[0]
    with nogil:
        while i + 8 <= n:
            memcpy(&word, p + i, 8)  # little-endian hosts (x86-64, arm64)
            crc ^= word
            crc = (CRC_TABLE[7][crc & 0xFF] ^ CRC_TABLE[6][(crc >> 8) & 0xFF]
                   ^ CRC_TABLE[5][(crc >> 16) & 0xFF] ^ CRC_TABLE[4][(crc >> 24) & 0xFF]
                   ^ CRC_TABLE[3][(crc >> 32) & 0xFF] ^ CRC_TABLE[2][(crc >> 40) & 0xFF]
                   ^ CRC_TABLE[1][(crc >> 48) & 0xFF] ^ CRC_TABLE[0][crc >> 56])
            i += 8
        while i < n:
            crc = CRC_TABLE[0][(crc ^ p[i]) & 0xFF] ^ (crc >> 8)
            i += 1
    return crc


def read_string(data, Py_ssize_t pos, Py_ssize_t end):
    """One RDB string at `pos` (raw, int-encoded or LZF): (bytes, next pos).

    Raises ValueError("...") naming what was wrong; the caller adds the offset.
    """
    # The buffer protocol directly: a typed memoryview costs microseconds to
    # set up, and a load calls this twice per stream node.
    cdef Py_buffer buffer
    PyObject_GetBuffer(data, &buffer, PyBUF_SIMPLE)
    try:
        return _read_string(<const uint8_t *> buffer.buf, buffer.len, pos, end)
    finally:
        PyBuffer_Release(&buffer)


cdef object _read_string(const uint8_t *p, Py_ssize_t size, Py_ssize_t pos, Py_ssize_t end):
    if end > size:
        end = size
    if pos >= end:
        raise ValueError("unexpected end of file reading a string length")
    cdef uint8_t first = p[pos]
    cdef uint64_t n = 0, clen = 0
    cdef int kind = first >> 6
    pos += 1
    if kind == 0:
        n = first & 0x3F
    elif kind == 1:
        if pos >= end:
            raise ValueError("unexpected end of file reading a string length")
        n = ((first & 0x3F) << 8) | p[pos]
        pos += 1
    elif first == 0x80:
        if pos + 4 > end:
            raise ValueError("unexpected end of file reading a string length")
        n = (<uint64_t> p[pos] << 24) | (p[pos + 1] << 16) | (p[pos + 2] << 8) | p[pos + 3]
        pos += 4
    elif first == 0x81:
        if pos + 8 > end:
            raise ValueError("unexpected end of file reading a string length")
        for k in range(8):
            n = (n << 8) | p[pos + k]
        pos += 8
    elif kind == 3 and (first & 0x3F) == 3:
        clen, pos = _read_len(p, pos, end)
        n, pos = _read_len(p, pos, end)
        if clen > <uint64_t> (end - pos):
            raise ValueError("unexpected end of file reading LZF data")
        if n > <uint64_t> PY_SSIZE_T_MAX:
            raise ValueError(f"LZF data of {n} bytes")
        return (_lzf_decompress(p + pos, <Py_ssize_t> clen, <Py_ssize_t> n),
                pos + <Py_ssize_t> clen)
    else:
        return None, pos - 1  # an int encoding: the Python reader handles it
    if n > <uint64_t> (end - pos):
        raise ValueError(f"unexpected end of file reading a string ({n} bytes)")
    return PyBytes_FromStringAndSize(<const char *> p + pos, n), pos + <Py_ssize_t> n


cdef tuple _read_len(const uint8_t *p, Py_ssize_t pos, Py_ssize_t end):
    if pos >= end:
        raise ValueError("unexpected end of file reading a length")
    cdef uint8_t first = p[pos]
    cdef uint64_t n = 0
    cdef int kind = first >> 6
    pos += 1
    if kind == 0:
        return first & 0x3F, pos
    if kind == 1:
        if pos >= end:
            raise ValueError("unexpected end of file reading a length")
        return ((first & 0x3F) << 8) | p[pos], pos + 1
    if first == 0x80:
        if pos + 4 > end:
            raise ValueError("unexpected end of file reading a length")
        n = (<uint64_t> p[pos] << 24) | (p[pos + 1] << 16) | (p[pos + 2] << 8) | p[pos + 3]
        return n, pos + 4
    if first == 0x81:
        if pos + 8 > end:
            raise ValueError("unexpected end of file reading a length")
        for k in range(8):
            n = (n << 8) | p[pos + k]
        return n, pos + 8
    raise ValueError(f"a length (got byte {first:#04x})")


# --- LZF -------------------------------------------------------------------------

DEF HLOG = 16
DEF HSIZE = 65536
DEF MAX_LIT = 32
DEF MAX_OFF = 8192
DEF MAX_REF = 264


cdef inline uint32_t _idx(uint32_t h) nogil:
    return ((h >> 8) - h * 5) & (HSIZE - 1)


# The hash table lives across calls: clearing 256 KiB for every string (a stream
# node is one) cost more than compressing it. Slots hold `_lzf_base + position`;
# a value at or below the current call's base is an earlier call's, read as
# empty, so every call compresses as with a zeroed table (lzf_c.c's, byte for
# byte). The base moves past each input; the table is zeroed once it would wrap.
cdef uint32_t *_lzf_htab = NULL
cdef uint64_t _lzf_base = 0
cdef bint _lzf_busy = False


cdef int _lzf_table(Py_ssize_t in_len, uint32_t **htab, uint32_t *base) except -1:
    """The table for one compression of `in_len` bytes: 1 when it is the shared one
    (give it back with _lzf_release), 0 when a private zeroed one (free it)."""
    global _lzf_htab, _lzf_base, _lzf_busy
    if not _lzf_busy and in_len < 0x7FFFFFFF:
        if _lzf_htab == NULL:
            _lzf_htab = <uint32_t *> PyMem_Malloc(HSIZE * sizeof(uint32_t))
            if _lzf_htab == NULL:
                raise MemoryError()
            memset(_lzf_htab, 0, HSIZE * sizeof(uint32_t))
            _lzf_base = 0
        if _lzf_base + <uint64_t> in_len + 1 > 0xFFFFFFFFULL:
            memset(_lzf_htab, 0, HSIZE * sizeof(uint32_t))
            _lzf_base = 0
        htab[0] = _lzf_htab
        base[0] = <uint32_t> _lzf_base
        _lzf_base += <uint64_t> in_len + 1
        _lzf_busy = True  # (another thread meanwhile gets a table of its own)
        return 1
    htab[0] = <uint32_t *> PyMem_Malloc(HSIZE * sizeof(uint32_t))
    if htab[0] == NULL:
        raise MemoryError()
    memset(htab[0], 0, HSIZE * sizeof(uint32_t))
    base[0] = 0
    return 0


cdef void _lzf_release(int shared, uint32_t *htab) noexcept:
    global _lzf_busy
    if shared:
        _lzf_busy = False
    else:
        PyMem_Free(htab)


def lzf_compress(data, unsigned int out_len):
    cdef const uint8_t[::1] view = memoryview(data).cast("B")
    cdef Py_ssize_t in_len = view.shape[0], op
    if in_len == 0 or out_len == 0:
        return None
    cdef uint32_t *htab
    cdef uint32_t base
    cdef uint8_t *out = <uint8_t *> PyMem_Malloc(out_len + 16)
    if out == NULL:
        raise MemoryError()
    try:
        shared = _lzf_table(in_len, &htab, &base)
        op = _lzf_into(&view[0], in_len, out, out_len, htab, base)
        _lzf_release(shared, htab)
        return PyBytes_FromStringAndSize(<char *> out, op) if op else None
    finally:
        PyMem_Free(out)


def _lzf_set_base(uint64_t base):
    """Tests: move the shared table's base (near 2**32 to reach the wrap-around)."""
    global _lzf_base
    if _lzf_htab != NULL and base > _lzf_base:
        _lzf_base = base


cdef Py_ssize_t _lzf_into(const uint8_t *src, Py_ssize_t in_len, uint8_t *out,
                          unsigned int out_len, uint32_t *htab, uint32_t base) noexcept:
    """lzf_c.c into `out` (out_len + 16 bytes of room): the compressed size, or 0 when
    it does not fit in out_len."""
    cdef uint32_t stored
    cdef Py_ssize_t ip = 0, op = 1, ref, off, in_end = in_len
    cdef int lit = 0
    cdef uint32_t hval, slot
    cdef unsigned int length, maxlen
    cdef bint fail = False, matched
    cdef int k
    with nogil:
        hval = (src[0] << 8) | src[1] if in_len > 1 else 0
        while ip < in_end - 2:
            hval = (hval << 8) | src[ip + 2]
            slot = _idx(hval)
            stored = htab[slot]
            ref = stored - base if stored > base else 0
            htab[slot] = base + <uint32_t> ip
            off = ip - ref - 1
            if (ref > 0 and ref < ip and off < MAX_OFF and src[ref] == src[ip]
                    and src[ref + 1] == src[ip + 1] and src[ref + 2] == src[ip + 2]):
                length = 2
                maxlen = <unsigned int> (in_end - ip - length)
                if maxlen > MAX_REF:
                    maxlen = MAX_REF
                if op - (1 if lit == 0 else 0) + 3 + 1 >= out_len:
                    fail = True
                    break
                out[op - lit - 1] = <uint8_t> (lit - 1)
                if lit == 0:
                    op -= 1
                matched = False
                if maxlen > 16:
                    for k in range(16):
                        length += 1
                        if src[ref + length] != src[ip + length]:
                            matched = True
                            break
                if not matched:
                    length += 1
                    while length < maxlen and src[ref + length] == src[ip + length]:
                        length += 1
                length -= 2
                ip += 1
                if length < 7:
                    out[op] = <uint8_t> ((off >> 8) + (length << 5))
                    op += 1
                else:
                    out[op] = <uint8_t> ((off >> 8) + (7 << 5))
                    out[op + 1] = <uint8_t> (length - 7)
                    op += 2
                out[op] = <uint8_t> off
                op += 2
                lit = 0
                ip += length + 1
                if ip >= in_end - 2:
                    break
                ip -= 2
                hval = (src[ip] << 8) | src[ip + 1]
                hval = (hval << 8) | src[ip + 2]
                htab[_idx(hval)] = base + <uint32_t> ip
                ip += 1
                hval = (hval << 8) | src[ip + 2]
                htab[_idx(hval)] = base + <uint32_t> ip
                ip += 1
            else:
                if op >= out_len:
                    fail = True
                    break
                lit += 1
                out[op] = src[ip]
                op += 1
                ip += 1
                if lit == MAX_LIT:
                    out[op - lit - 1] = <uint8_t> (lit - 1)
                    lit = 0
                    op += 1
        if not fail:
            if op + 3 > out_len:
                fail = True
            else:
                while ip < in_end:
                    lit += 1
                    out[op] = src[ip]
                    op += 1
                    ip += 1
                    if lit == MAX_LIT:
                        out[op - lit - 1] = <uint8_t> (lit - 1)
                        lit = 0
                        op += 1
                out[op - lit - 1] = <uint8_t> (lit - 1)
                if lit == 0:
                    op -= 1
                if op > out_len:
                    fail = True
    return 0 if fail else op


def lzf_decompress(data, Py_ssize_t out_len):
    cdef Py_buffer buffer
    PyObject_GetBuffer(data, &buffer, PyBUF_SIMPLE)
    try:
        return _lzf_decompress(<const uint8_t *> buffer.buf, buffer.len, out_len)
    finally:
        PyBuffer_Release(&buffer)


cdef object _lzf_decompress(const uint8_t *view, Py_ssize_t in_len, Py_ssize_t out_len):
    cdef Py_ssize_t ip = 0, op = 0, ref, n, k
    cdef unsigned int ctrl, length
    result = PyBytes_FromStringAndSize(NULL, out_len)
    cdef uint8_t *out = <uint8_t *> PyBytes_AS_STRING(result)
    cdef int err = 0
    with nogil:
        while ip < in_len:
            ctrl = view[ip]
            ip += 1
            if ctrl < 32:
                n = ctrl + 1
                if ip + n > in_len:
                    err = 1
                    break
                if op + n > out_len:
                    err = 2
                    break
                if ip + 32 <= in_len and op + 32 <= out_len:
                    # A run is at most 32 bytes: copy 32 in fixed-size moves. The bytes
                    # past the run are written again by what follows (refs read below op).
                    memcpy(out + op, &view[ip], 16)
                    memcpy(out + op + 16, &view[ip + 16], 16)
                else:
                    memcpy(out + op, &view[ip], n)
                ip += n
                op += n
            else:
                length = ctrl >> 5
                if length == 7:
                    if ip >= in_len:
                        err = 1
                        break
                    length += view[ip]
                    ip += 1
                if ip >= in_len:
                    err = 1
                    break
                ref = op - ((ctrl & 0x1F) << 8) - view[ip] - 1
                ip += 1
                if ref < 0:
                    err = 3
                    break
                length += 2
                if op + length > out_len:
                    err = 2
                    break
                if op - ref >= 8 and op + length + 8 <= out_len:
                    # 8 bytes at a time: each move reads bytes already written (the
                    # source is 8 or more behind), so an overlapping reference repeats
                    # its pattern as byte by byte would; the tail past it is rewritten.
                    k = 0
                    while k < length:
                        memcpy(out + op + k, out + ref + k, 8)
                        k += 8
                elif ref + length <= op:  # disjoint: one memcpy (lzf_d.c does the same)
                    memcpy(out + op, out + ref, length)
                else:  # overlapping: byte by byte repeats the pattern, as LZF means
                    for k in range(length):
                        out[op + k] = out[ref + k]
                op += length
    if err == 1:
        raise ValueError("LZF data truncated")
    if err == 2:
        raise ValueError("LZF data expands past its stated length")
    if err == 3:
        raise ValueError("LZF back-reference before the start")
    if op != out_len:
        raise ValueError(f"LZF data expands to {op} bytes, not {out_len}")
    return result


# --- listpacks ---------------------------------------------------------------------

cdef inline Py_ssize_t _backlen_size(Py_ssize_t n) nogil:
    if n < 128:
        return 1
    if n < 16384:
        return 2
    if n < 2097152:
        return 3
    if n < 268435456:
        return 4
    return 5


cdef int _lp_next(const uint8_t *lp, Py_ssize_t p, Py_ssize_t end, int64_t *ival,
                  Py_ssize_t *sstart, Py_ssize_t *slen, Py_ssize_t *nextp) noexcept nogil:
    """Decode the element at p: returns 1 for an int (ival), 2 for a string, 0 on error."""
    cdef uint8_t b = lp[p]
    cdef Py_ssize_t start = p, n
    cdef uint32_t v
    cdef int kind
    if b < 0x80:
        ival[0] = b
        p += 1
        kind = 1
    elif b < 0xC0:
        n = b & 0x3F
        sstart[0] = p + 1
        slen[0] = n
        p += 1 + n
        kind = 2
    elif b < 0xE0:
        if p + 1 >= end:
            return 0
        v = ((b & 0x1F) << 8) | lp[p + 1]
        ival[0] = <int64_t> v - 8192 if v >= 4096 else v
        p += 2
        kind = 1
    elif b < 0xF0:
        if p + 1 >= end:
            return 0
        n = ((b & 0x0F) << 8) | lp[p + 1]
        sstart[0] = p + 2
        slen[0] = n
        p += 2 + n
        kind = 2
    elif b == 0xF0:
        if p + 4 >= end:
            return 0
        n = lp[p + 1] | (lp[p + 2] << 8) | (lp[p + 3] << 16) | (<Py_ssize_t> lp[p + 4] << 24)
        sstart[0] = p + 5
        slen[0] = n
        p += 5 + n
        kind = 2
    elif b == 0xF1:
        if p + 2 >= end:
            return 0
        ival[0] = <int16_t> (lp[p + 1] | (lp[p + 2] << 8))
        p += 3
        kind = 1
    elif b == 0xF2:
        if p + 3 >= end:
            return 0
        v = lp[p + 1] | (lp[p + 2] << 8) | (lp[p + 3] << 16)
        ival[0] = <int64_t> v - (1 << 24) if v >= (1 << 23) else v
        p += 4
        kind = 1
    elif b == 0xF3:
        if p + 4 >= end:
            return 0
        ival[0] = <int32_t> (lp[p + 1] | (lp[p + 2] << 8) | (lp[p + 3] << 16)
                             | (<uint32_t> lp[p + 4] << 24))
        p += 5
        kind = 1
    elif b == 0xF4:
        if p + 8 >= end:
            return 0
        memcpy(ival, lp + p + 1, 8)
        p += 9
        kind = 1
    else:
        return 0
    if p > end:
        return 0
    p += _backlen_size(p - start)
    if p > end:
        return 0
    nextp[0] = p
    return kind


cdef inline int _lp_step(const uint8_t *lp, Py_ssize_t p, Py_ssize_t end, int64_t *ival,
                         Py_ssize_t *sstart, Py_ssize_t *slen, Py_ssize_t *nextp) noexcept nogil:
    """_lp_next, with the encodings a stream node is mostly made of decoded here
    (7-bit and 13-bit integers, strings under 64 bytes: same results, same
    bounds checks, no further call) and the rest handed to _lp_next (not
    `inline`: big, and rarely needed on this path)."""
    cdef uint8_t b = lp[p]
    cdef Py_ssize_t n
    cdef uint32_t v
    if b < 0x80:
        if p + 2 > end:
            return 0
        ival[0] = b
        nextp[0] = p + 2
        return 1
    if b < 0xC0:
        n = b & 0x3F
        if p + 2 + n > end:
            return 0
        sstart[0] = p + 1
        slen[0] = n
        nextp[0] = p + 2 + n
        return 2
    if b < 0xE0:
        if p + 3 > end:
            return 0
        v = ((b & 0x1F) << 8) | lp[p + 1]
        ival[0] = <int64_t> v - 8192 if v >= 4096 else v
        nextp[0] = p + 3
        return 1
    return _lp_next(lp, p, end, ival, sstart, slen, nextp)


def lp_decode(lp):
    cdef const uint8_t[::1] view = memoryview(lp).cast("B")
    cdef Py_ssize_t size = view.shape[0]
    if size < 7:
        raise ValueError("listpack shorter than its header")
    cdef const uint8_t *buf = &view[0]
    cdef uint32_t total = buf[0] | (buf[1] << 8) | (buf[2] << 16) | (<uint32_t> buf[3] << 24)
    if total != size:
        raise ValueError(f"listpack says {total} bytes, has {size}")
    cdef int count = buf[4] | (buf[5] << 8)
    cdef Py_ssize_t p = 6, end = size - 1, sstart = 0, slen = 0, nextp = 0
    cdef int64_t ival = 0
    cdef int kind
    out = []
    while p < end:
        kind = _lp_next(buf, p, end, &ival, &sstart, &slen, &nextp)
        if kind == 0:
            raise ValueError(f"bad listpack element at {p}")
        if kind == 1:
            out.append(ival)
        else:
            out.append(PyBytes_FromStringAndSize(<const char *> buf + sstart, slen))
        p = nextp
    if p != end or buf[end] != 0xFF:
        raise ValueError("listpack elements overrun its end")
    if count != 65535 and count != len(out):
        raise ValueError(f"listpack says {count} elements, has {len(out)}")
    return out


# --- stream listpacks ------------------------------------------------------------------

from array import array as _array
from cpython.mem cimport PyMem_Realloc


cdef struct U64Buf:
    uint64_t *data
    Py_ssize_t n
    Py_ssize_t cap


cdef inline int _u64_push(U64Buf *b, uint64_t v) except -1:
    cdef uint64_t *grown
    if b.n == b.cap:
        b.cap = b.cap * 2 if b.cap else 64
        grown = <uint64_t *> PyMem_Realloc(b.data, b.cap * sizeof(uint64_t))
        if grown == NULL:
            raise MemoryError()
        b.data = grown
    b.data[b.n] = v
    b.n += 1
    return 0


cdef int _u64_reserve(U64Buf *b, Py_ssize_t n) except -1:
    b.data = <uint64_t *> PyMem_Realloc(b.data, (n if n > 1 else 1) * sizeof(uint64_t))
    if b.data == NULL:
        raise MemoryError()
    b.cap = n if n > 1 else 1
    return 0


cdef object _narrow(U64Buf *b):
    """The values as the narrowest unsigned array (B/H/I/Q), like stream_node.compact_array()."""
    cdef uint64_t top = 0
    cdef Py_ssize_t i, n = b.n
    for i in range(n):
        if b.data[i] > top:
            top = b.data[i]
    cdef int width
    if top < 256:
        code, width = "B", 1
    elif top < 65536:
        code, width = "H", 2
    elif top < 4294967296:
        code, width = "I", 4
    else:
        code, width = "Q", 8
    raw = PyBytes_FromStringAndSize(NULL, n * width)
    cdef char *dst = PyBytes_AS_STRING(raw)
    for i in range(n):
        if width == 1:
            (<uint8_t *> dst)[i] = <uint8_t> b.data[i]
        elif width == 2:
            (<unsigned short *> dst)[i] = <unsigned short> b.data[i]
        elif width == 4:
            (<uint32_t *> dst)[i] = <uint32_t> b.data[i]
        else:
            (<uint64_t *> dst)[i] = b.data[i]
    arr = _array(code)
    arr.frombytes(raw)
    return arr


cdef struct ByteBuf:
    char *data
    Py_ssize_t n
    Py_ssize_t cap


cdef inline int _bytes_push(ByteBuf *b, const char *src, Py_ssize_t n) except -1:
    cdef char *grown
    if b.n + n > b.cap:
        b.cap = max(b.cap * 2, b.n + n + 256)
        grown = <char *> PyMem_Realloc(b.data, b.cap)
        if grown == NULL:
            raise MemoryError()
        b.data = grown
    memcpy(b.data + b.n, src, n)
    b.n += n
    return 0


cdef inline Py_ssize_t _fmt_i64(int64_t v, char *out) noexcept nogil:
    cdef char tmp[24]
    cdef Py_ssize_t n = 0, i
    cdef uint64_t u
    cdef bint neg = v < 0
    if neg:
        u = <uint64_t> 0 - <uint64_t> v
    else:
        u = <uint64_t> v
    if u == 0:
        tmp[0] = 48
        n = 1
    while u:
        tmp[n] = <char> (48 + u % 10)
        u //= 10
        n += 1
    i = 0
    if neg:
        out[0] = 45
        i = 1
    while n:
        n -= 1
        out[i] = tmp[n]
        i += 1
    return i


def stream_lp_decode(lp, uint64_t seq0):
    """Decode a stream listpack: (live, ndead, fields, ms, seq, data, offs, estart, same, dead).

    ms holds ms-diff (uint64), seq absolute seqs; data/offs the stored
    elements; estart/same are None when every entry is SAMEFIELDS.
    Raises ValueError when the listpack is not a valid stream node.
    """
    return _stream_lp_of(lp, seq0, True)


def stream_lp_header(lp, uint64_t seq0):
    """stream_lp_decode(lp, seq0)[:3], i.e. (live, ndead, fields), building nothing else.

    One walk with stream_lp_decode (`build` off): the same checks, so a listpack
    this accepts is one stream_lp_decode accepts. The loader checks each node
    with it and keeps the listpack until first read (rdb_stream.LoadedNode).
    """
    return _stream_lp_of(lp, seq0, False)


cdef object _stream_lp_of(lp, uint64_t seq0, bint build):
    cdef Py_buffer buffer
    PyObject_GetBuffer(lp, &buffer, PyBUF_SIMPLE)
    try:
        return _stream_lp(<const uint8_t *> buffer.buf, buffer.len, seq0, build)
    finally:
        PyBuffer_Release(&buffer)


cdef object _stream_lp(const uint8_t *buf, Py_ssize_t size, uint64_t seq0, bint build):
    if size < 7:
        raise ValueError("listpack shorter than its header")
    cdef uint32_t total = buf[0] | (buf[1] << 8) | (buf[2] << 16) | (<uint32_t> buf[3] << 24)
    if total != size or buf[size - 1] != 0xFF:
        raise ValueError(f"listpack says {total} bytes, has {size}")
    cdef Py_ssize_t p = 6, end = size - 1, sstart = 0, slen = 0, nextp = 0
    cdef int64_t ival = 0, live, ndead, k, flags, nf, lp_count, i, j, nvals
    cdef int kind
    cdef char num[24]
    cdef Py_ssize_t numlen
    cdef U64Buf ms_b, seq_b, offs_b, estart_b
    cdef ByteBuf data_b, same_b
    cdef char one = 1, zero = 0
    memset(&same_b, 0, sizeof(ByteBuf))
    memset(&ms_b, 0, sizeof(U64Buf))
    memset(&seq_b, 0, sizeof(U64Buf))
    memset(&offs_b, 0, sizeof(U64Buf))
    memset(&estart_b, 0, sizeof(U64Buf))
    memset(&data_b, 0, sizeof(ByteBuf))
    fields = []
    dead = []
    cdef bint mixed = False
    cdef Py_ssize_t entry = 0, stored = 0, ndead_seen = 0
    # Sized up front from the listpack's element count (a bound on entries and
    # stored elements): a node then needs no reallocation while it is decoded.
    cdef Py_ssize_t header_count = buf[4] | (buf[5] << 8), elements = 0
    cdef Py_ssize_t count = size if header_count == 65535 else header_count
    try:
        if build:
            _u64_reserve(&ms_b, count)
            _u64_reserve(&seq_b, count)
            _u64_reserve(&estart_b, count + 1)
            _u64_reserve(&offs_b, count + 1)
            # Integers grow when written as text: twice the listpack is a good guess.
            data_b.data = <char *> PyMem_Malloc(2 * size)
            if data_b.data == NULL:
                raise MemoryError()
            data_b.cap = 2 * size
        # master entry: count, deleted, num-fields, fields..., 0
        if _lp_next(buf, p, end, &live, &sstart, &slen, &nextp) != 1:
            raise ValueError("stream master count is not an integer")
        p = nextp
        if _lp_next(buf, p, end, &ndead, &sstart, &slen, &nextp) != 1:
            raise ValueError("stream master deleted count is not an integer")
        p = nextp
        if _lp_next(buf, p, end, &k, &sstart, &slen, &nextp) != 1 or k < 0:
            raise ValueError("stream master field count is not an integer")
        p = nextp
        for i in range(k):
            kind = _lp_next(buf, p, end, &ival, &sstart, &slen, &nextp)
            if kind == 0:
                raise ValueError("bad stream master field")
            if kind == 1:
                numlen = _fmt_i64(ival, num)
                fields.append(PyBytes_FromStringAndSize(num, numlen))
            else:
                fields.append(PyBytes_FromStringAndSize(<const char *> buf + sstart, slen))
            p = nextp
        if p >= end or _lp_next(buf, p, end, &ival, &sstart, &slen, &nextp) != 1 or ival != 0:
            raise ValueError("stream master entry not terminated by 0")
        p = nextp
        elements = 4 + k
        if build:
            _u64_push(&offs_b, 0)
        while p < end:
            if _lp_step(buf, p, end, &flags, &sstart, &slen, &nextp) != 1:
                raise ValueError("stream entry flags are not an integer")
            p = nextp
            if p >= end or _lp_step(buf, p, end, &ival, &sstart, &slen, &nextp) != 1:
                raise ValueError("stream ms-diff is not an integer")
            if build:
                _u64_push(&ms_b, <uint64_t> ival)
            p = nextp
            if p >= end or _lp_step(buf, p, end, &ival, &sstart, &slen, &nextp) != 1:
                raise ValueError("stream seq-diff is not an integer")
            p = nextp
            if build:
                _u64_push(&seq_b, seq0 + <uint64_t> ival)
                _u64_push(&estart_b, stored)
            if flags & 2:
                nvals = k
                lp_count = k + 3
                if build:
                    _bytes_push(&same_b, &one, 1)
            else:
                if p >= end or _lp_step(buf, p, end, &nf, &sstart, &slen, &nextp) != 1 or nf < 0:
                    raise ValueError("stream entry field count is not an integer")
                p = nextp
                nvals = 2 * nf
                lp_count = 2 * nf + 4
                if build:
                    _bytes_push(&same_b, &zero, 1)
                mixed = True
            for j in range(nvals):
                if p >= end:
                    raise ValueError("stream entry truncated")
                kind = _lp_step(buf, p, end, &ival, &sstart, &slen, &nextp)
                if kind == 0:
                    raise ValueError("bad stream entry element")
                if build:
                    if kind == 1:
                        numlen = _fmt_i64(ival, num)
                        _bytes_push(&data_b, num, numlen)
                    else:
                        _bytes_push(&data_b, <const char *> buf + sstart, slen)
                    _u64_push(&offs_b, data_b.n)
                stored += 1
                p = nextp
            if p >= end or _lp_step(buf, p, end, &ival, &sstart, &slen, &nextp) != 1 \
                    or ival != lp_count:
                raise ValueError("stream entry with a wrong lp-count")
            p = nextp
            elements += lp_count + 1
            if flags & 1:
                ndead_seen += 1
                if build:
                    dead.append(entry)
            entry += 1
        if p != end:
            raise ValueError("listpack elements overrun its end")
        if header_count != 65535 and header_count != elements:
            raise ValueError(f"listpack says {header_count} elements, has {elements}")
        if ndead_seen != ndead or entry - ndead != live:
            raise ValueError("stream listpack counts disagree with its entries")
        if not build:
            return live, ndead, fields
        _u64_push(&estart_b, stored)
        data = PyBytes_FromStringAndSize(data_b.data, data_b.n) if data_b.n else b""
        return (live, ndead, fields, _narrow(&ms_b), _narrow(&seq_b), data, _narrow(&offs_b),
                _narrow(&estart_b) if mixed else None,
                PyBytes_FromStringAndSize(same_b.data, same_b.n) if mixed else None, dead)
    finally:
        PyMem_Free(ms_b.data)
        PyMem_Free(seq_b.data)
        PyMem_Free(offs_b.data)
        PyMem_Free(estart_b.data)
        PyMem_Free(data_b.data)
        PyMem_Free(same_b.data)


# --- stream listpack encoding --------------------------------------------------------------

# Writers into a buffer sized for the whole node beforehand (stream_lp_encode's
# bound): each takes the cursor and returns it past what it wrote.

cdef inline char *_w_backlen(char *o, Py_ssize_t n) noexcept nogil:
    if n < 128:
        o[0] = <char> n
        return o + 1
    if n < 16384:
        o[0] = <char> (n >> 7)
        o[1] = <char> ((n & 127) | 128)
        return o + 2
    if n < 2097152:
        o[0] = <char> (n >> 14)
        o[1] = <char> (((n >> 7) & 127) | 128)
        o[2] = <char> ((n & 127) | 128)
        return o + 3
    if n < 268435456:
        o[0] = <char> (n >> 21)
        o[1] = <char> (((n >> 14) & 127) | 128)
        o[2] = <char> (((n >> 7) & 127) | 128)
        o[3] = <char> ((n & 127) | 128)
        return o + 4
    o[0] = <char> (n >> 28)
    o[1] = <char> (((n >> 21) & 127) | 128)
    o[2] = <char> (((n >> 14) & 127) | 128)
    o[3] = <char> (((n >> 7) & 127) | 128)
    o[4] = <char> ((n & 127) | 128)
    return o + 5


cdef inline char *_w_int(char *o, int64_t v) noexcept nogil:
    """An integer element (at most 10 bytes), as lpEncodeIntegerGetType picks it."""
    cdef uint64_t u = <uint64_t> v
    if 0 <= v <= 127:
        o[0] = <char> v
        o[1] = 1
        return o + 2
    if -4096 <= v <= 4095:
        u = u & 0x1FFF
        o[0] = <char> ((u >> 8) | 0xC0)
        o[1] = <char> (u & 0xFF)
        o[2] = 2
        return o + 3
    if -32768 <= v <= 32767:
        o[0] = <char> 0xF1
        o[1] = <char> (u & 0xFF)
        o[2] = <char> ((u >> 8) & 0xFF)
        o[3] = 3
        return o + 4
    if -8388608 <= v <= 8388607:
        o[0] = <char> 0xF2
        o[1] = <char> (u & 0xFF)
        o[2] = <char> ((u >> 8) & 0xFF)
        o[3] = <char> ((u >> 16) & 0xFF)
        o[4] = 4
        return o + 5
    if -2147483648 <= v <= 2147483647:
        o[0] = <char> 0xF3
        o[1] = <char> (u & 0xFF)
        o[2] = <char> ((u >> 8) & 0xFF)
        o[3] = <char> ((u >> 16) & 0xFF)
        o[4] = <char> ((u >> 24) & 0xFF)
        o[5] = 5
        return o + 6
    o[0] = <char> 0xF4
    memcpy(o + 1, &u, 8)  # little-endian hosts (x86-64, arm64)
    o[9] = 9
    return o + 10


cdef inline bint _as_int(const char *s, Py_ssize_t n, int64_t *out) noexcept nogil:
    """lpStringToInt64: canonical decimal int64 only (no '+', spaces, leading zeros, "-0")."""
    cdef Py_ssize_t i = 0
    cdef uint64_t v = 0, limit
    cdef bint neg = False
    if n == 0 or n > 20:
        return False
    if n == 1 and s[0] == 48:
        out[0] = 0
        return True
    if s[0] == 45:
        neg = True
        i = 1
        if n == 1:
            return False
    if s[i] < 49 or s[i] > 57:
        return False
    while i < n:
        if s[i] < 48 or s[i] > 57:
            return False
        if v > 1844674407370955161ULL:
            return False
        v = v * 10
        if v > 18446744073709551615ULL - <uint64_t> (s[i] - 48):
            return False
        v += s[i] - 48
        i += 1
    if neg:
        limit = 9223372036854775808ULL
        if v > limit:
            return False
        out[0] = <int64_t> (0 - v)
    else:
        if v > 9223372036854775807ULL:
            return False
        out[0] = <int64_t> v
    return True


cdef inline char *_w_element(char *o, const char *s, Py_ssize_t n) noexcept nogil:
    """A string element (at most 10 bytes more than `n`), or an integer when it reads as one."""
    cdef int64_t v
    cdef Py_ssize_t h
    if n < 21 and _as_int(s, n, &v):
        return _w_int(o, v)
    if n < 64:
        o[0] = <char> (0x80 | n)
        h = 1
    elif n < 4096:
        o[0] = <char> ((n >> 8) | 0xE0)
        o[1] = <char> (n & 0xFF)
        h = 2
    else:
        o[0] = <char> 0xF0
        o[1] = <char> (n & 0xFF)
        o[2] = <char> ((n >> 8) & 0xFF)
        o[3] = <char> ((n >> 16) & 0xFF)
        o[4] = <char> ((n >> 24) & 0xFF)
        h = 5
    memcpy(o + h, s, n)
    return _w_backlen(o + h + n, h + n)


cdef struct UArr:
    # An unsigned integer array (array.array "B"/"H"/"I"/"L"/"Q") read in place.
    const uint8_t *p
    Py_ssize_t n
    int width


cdef inline uint64_t _uget(UArr *a, Py_ssize_t i) noexcept nogil:
    if a.width == 1:
        return a.p[i]
    if a.width == 2:
        return (<const unsigned short *> a.p)[i]
    if a.width == 4:
        return (<const uint32_t *> a.p)[i]
    return (<const uint64_t *> a.p)[i]


cdef object _uarr(object values, Py_buffer *buffer, UArr *out):
    """Borrow `values` (a StreamNode array, or a list while the node is open) as a UArr;
    returns what must stay alive (the buffer is released by the caller)."""
    if values.__class__ is not _array or values.typecode not in "BHILQ":
        values = _array("Q", values)
    PyObject_GetBuffer(values, buffer, PyBUF_SIMPLE)
    out.width = values.itemsize
    out.p = <const uint8_t *> buffer.buf
    out.n = buffer.len // out.width
    return values


def stream_lp_encode(int64_t live, int64_t ndead, list mf, ms, seq, uint64_t seq0,
                     bytes data, offs, estart, same, dead):
    """The listpack Redis holds for a stream node (rdb_stream.node_listpack's body).

    The node's arrays are read in place, whatever their width (compact_array's).
    """
    return _lp_encode(live, ndead, mf, ms, seq, seq0, data, len(data), offs, estart, same, dead)


cdef bytes _lp_encode(int64_t live, int64_t ndead, list mf, ms, seq, uint64_t seq0,
                      const char *src, Py_ssize_t src_len, offs, estart, same, dead):
    cdef Py_buffer ms_buf, seq_buf, offs_buf, est_buf
    cdef UArr ms_a, seq_a, offs_a, est_a
    cdef const uint8_t[::1] same_v
    cdef bint mixed = estart is not None
    cdef int held = 0
    cdef Py_ssize_t k = len(mf), n, i, a, e, nelem
    cdef char *buf = NULL
    cdef char *o
    cdef Py_ssize_t cap, size
    cdef int64_t count = 4 + k, flags, nf = 0
    cdef bint is_same
    cdef bint has_dead = dead is not None and len(dead) > 0
    try:
        keep_ms = _uarr(ms, &ms_buf, &ms_a)
        held = 1
        keep_seq = _uarr(seq, &seq_buf, &seq_a)
        held = 2
        keep_offs = _uarr(offs, &offs_buf, &offs_a)
        held = 3
        if mixed:
            keep_est = _uarr(estart, &est_buf, &est_a)
            held = 4
            same_v = same
        n = ms_a.n
        # Room for the whole node up front: the text, plus at most 15 bytes of
        # header and backlen per element and 50 per entry (five integers).
        cap = src_len + 15 * (offs_a.n + k) + 50 * n + 128
        for field in mf:
            cap += len(<bytes> field)
        buf = <char *> PyMem_Malloc(cap)
        if buf == NULL:
            raise MemoryError()
        o = buf + 6
        o = _w_int(o, live)
        o = _w_int(o, ndead)
        o = _w_int(o, k)
        for field in mf:
            o = _w_element(o, <const char *> field, len(<bytes> field))
        o = _w_int(o, 0)
        for i in range(n):
            if mixed:
                a = _uget(&est_a, i)
                e = _uget(&est_a, i + 1)
                is_same = same_v[i] != 0
            else:
                a = i * k
                e = a + k
                is_same = True
            flags = 2 if is_same else 0
            if has_dead and i in dead:
                flags |= 1
            o = _w_int(o, flags)
            o = _w_int(o, <int64_t> _uget(&ms_a, i))
            o = _w_int(o, <int64_t> (_uget(&seq_a, i) - seq0))
            nelem = e - a
            if not is_same:
                nf = nelem >> 1
                o = _w_int(o, nf)
            while a < e:
                o = _w_element(o, src + _uget(&offs_a, a),
                               <Py_ssize_t> (_uget(&offs_a, a + 1) - _uget(&offs_a, a)))
                a += 1
            if is_same:
                o = _w_int(o, k + 3)
                count += 4 + k
            else:
                o = _w_int(o, 2 * nf + 4)
                count += 5 + 2 * nf
        o[0] = <char> 0xFF
        size = o + 1 - buf
        buf[0] = <char> (size & 0xFF)
        buf[1] = <char> ((size >> 8) & 0xFF)
        buf[2] = <char> ((size >> 16) & 0xFF)
        buf[3] = <char> ((size >> 24) & 0xFF)
        if count > 65535:
            count = 65535
        buf[4] = <char> (count & 0xFF)
        buf[5] = <char> ((count >> 8) & 0xFF)
        return PyBytes_FromStringAndSize(buf, size)
    finally:
        PyMem_Free(buf)
        if held >= 4:
            PyBuffer_Release(&est_buf)
        if held >= 3:
            PyBuffer_Release(&offs_buf)
        if held >= 2:
            PyBuffer_Release(&seq_buf)
        if held >= 1:
            PyBuffer_Release(&ms_buf)


# --- a stream's nodes as RDB strings -------------------------------------------------------

cdef inline char *_w_rdb_len(char *o, uint64_t n) noexcept:
    """rdbSaveLen."""
    if n < 64:
        o[0] = <char> n
        return o + 1
    if n < 16384:
        o[0] = <char> ((n >> 8) | 0x40)
        o[1] = <char> (n & 0xFF)
        return o + 2
    cdef int i, width = 4 if n <= 0xFFFFFFFFULL else 8
    o[0] = <char> (0x80 if width == 4 else 0x81)
    for i in range(width):
        o[1 + i] = <char> ((n >> (8 * (width - 1 - i))) & 0xFF)
    return o + 1 + width


cdef inline char *_w_be64(char *o, uint64_t v) noexcept:
    cdef int i
    for i in range(8):
        o[i] = <char> ((v >> (56 - 8 * i)) & 0xFF)
    return o + 8


from cpython.object cimport PyObject

from rillet.engine.stream_node cimport StreamNode


cdef extern from "Python.h":
    bint PyBytes_Check(PyObject *o)
    Py_ssize_t PyBytes_GET_SIZE(PyObject *o)
    char *PyBytes_AS_STRING_P "PyBytes_AS_STRING" (PyObject *o)

def stream_nodes_rdb(list nodes, Py_ssize_t start, Py_ssize_t stop, bint compress,
                     encode_open):
    """rdb_stream.save_stream's node loop for nodes[start:stop], as one bytes: per node
    its master ID (16 bytes big-endian) and its listpack, each as rdbSaveRawString
    writes it (LZF above 20 bytes when `compress`, when it saves 4 bytes or more).

    A node loaded and not read since (its `lp` set) gives back the listpack it
    came in as; an open node is encoded by `encode_open(node)`. (A
    listpack never reads as a decimal integer: it starts with its byte count.)
    """
    cdef ByteBuf out
    cdef uint8_t *scratch = NULL
    cdef Py_ssize_t scratch_cap = 0, n, clen, i
    cdef uint32_t *htab
    cdef uint32_t base
    cdef int shared
    cdef int64_t live
    cdef char head[24]
    cdef char *o
    cdef const char *lp_p
    cdef PyObject *slot
    cdef StreamNode node
    memset(&out, 0, sizeof(ByteBuf))
    try:
        for i in range(start, stop):
            node = <StreamNode?> nodes[i]
            lp = None
            # `lp` and `_data` are read borrowed, without taking a reference: in a
            # fork child a reference count written to an object's header copies its
            # page, and these are large per-node bytes (most of the child's
            # copy-on-write faults otherwise).
            if node.lp is not None:
                slot = <PyObject *> node.lp
                if PyBytes_Check(slot):
                    lp_p = PyBytes_AS_STRING_P(slot)
                    n = PyBytes_GET_SIZE(slot)
                else:
                    lp = bytes(node.lp)
            elif node.is_open:
                lp = encode_open(node)
            else:
                slot = <PyObject *> node._data
                if not PyBytes_Check(slot):
                    raise TypeError("a closed stream node without its data")
                live = node.live
                lp = _lp_encode(live, node.n - live, node.mf, node._ms, node._seq, node.seq0,
                                PyBytes_AS_STRING_P(slot), PyBytes_GET_SIZE(slot),
                                node._offs, node._estart, node._same, node._dead)
            if lp is not None:
                if lp.__class__ is not bytes:
                    lp = bytes(lp)
                lp_p = <const char *> (<bytes> lp)
                n = len(<bytes> lp)
            head[0] = 16
            o = _w_be64(head + 1, <uint64_t> node.ms0)
            _w_be64(o, <uint64_t> node.seq0)
            _bytes_push(&out, head, 17)
            if compress and n > 20:
                if scratch_cap < n + 16:
                    PyMem_Free(scratch)
                    scratch_cap = 2 * n + 16
                    scratch = <uint8_t *> PyMem_Malloc(scratch_cap)
                    if scratch == NULL:
                        raise MemoryError()
                shared = _lzf_table(n, &htab, &base)
                clen = _lzf_into(<const uint8_t *> lp_p, n, scratch, <unsigned int> (n - 4),
                                 htab, base)
                _lzf_release(shared, htab)
                if clen:
                    head[0] = <char> 0xC3
                    o = _w_rdb_len(head + 1, <uint64_t> clen)
                    o = _w_rdb_len(o, <uint64_t> n)
                    _bytes_push(&out, head, o - head)
                    _bytes_push(&out, <const char *> scratch, clen)
                    continue
            o = _w_rdb_len(head, <uint64_t> n)
            _bytes_push(&out, head, o - head)
            _bytes_push(&out, lp_p, n)
        return PyBytes_FromStringAndSize(out.data, out.n) if out.n else b""
    finally:
        PyMem_Free(scratch)
        PyMem_Free(out.data)
