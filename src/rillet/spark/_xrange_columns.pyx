# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""XRANGE replies decoded from the socket's bytes straight into Arrow column buffers.

A reply `[[id, [field, value, ...]], ...]` parsed by hiredis becomes about seven
Python objects per entry, and turning those into Arrow costs as much again; on the
executor that was most of a read's CPU. Here the RESP2 bytes go into flat buffers
(ID text and offsets, ms, seq, microsecond timestamps, per-entry pair offsets, field
names and values with their offsets) with no Python object per entry, and with the
GIL released, so the fetch thread's parsing overlaps Spark consuming the previous page.

The decoder is fed whatever bytes have arrived and consumes whole entries only (an
entry cut by the end of the received data is left for the next call), so a reply is
parsed once however it is split. `take()` hands over the columns gathered so far:
at the end of a reply, or earlier when a batch grows past a byte limit (Arrow's
string offsets are 32-bit).

Used by rillet.spark.reading when rillet/compiled.py gives it (never on the pure path); the
pure path (hiredis lists -> rillet.spark.arrow.entries_to_batch) stays the reference
and tests/spark/test_xrange_columns.py compares the two.
"""

from cpython.bytearray cimport PyByteArray_AS_STRING, PyByteArray_GET_SIZE
from cpython.bytes cimport PyBytes_FromStringAndSize
from libc.stdint cimport INT64_MAX, UINT64_MAX, int32_t, int64_t, uint64_t
from libc.stdlib cimport free, realloc
from libc.string cimport memcmp, memmove

# Entries with more pairs than this are not checked for repeated names here (the
# check is quadratic); the batch is then marked for the vectorised check instead.
DEF PAIRWISE_MAX = 64

cdef enum:
    OK = 0
    INCOMPLETE = 1
    PROTOCOL = -1
    NOMEM = -2


cdef struct Buf:
    char *ptr
    Py_ssize_t size
    Py_ssize_t cap


cdef int _reserve(Buf *buf, Py_ssize_t extra) noexcept nogil:
    cdef Py_ssize_t need = buf.size + extra
    cdef Py_ssize_t cap
    cdef char *grown
    if need <= buf.cap:
        return 0
    cap = buf.cap * 2 if buf.cap else 4096
    while cap < need:
        cap *= 2
    grown = <char *>realloc(buf.ptr, cap)
    if grown == NULL:
        return -1
    buf.ptr = grown
    buf.cap = cap
    return 0


cdef inline int _append(Buf *buf, const char *data, Py_ssize_t size) noexcept nogil:
    if _reserve(buf, size) < 0:
        return -1
    if size:
        memmove(buf.ptr + buf.size, data, size)
    buf.size += size
    return 0


cdef inline int _push32(Buf *buf, int32_t value) noexcept nogil:
    if _reserve(buf, 4) < 0:
        return -1
    (<int32_t *>(buf.ptr + buf.size))[0] = value
    buf.size += 4
    return 0


cdef inline int _push64(Buf *buf, int64_t value) noexcept nogil:
    if _reserve(buf, 8) < 0:
        return -1
    (<int64_t *>(buf.ptr + buf.size))[0] = value
    buf.size += 8
    return 0


cdef inline Py_ssize_t _header(
    const char *data, Py_ssize_t pos, Py_ssize_t end, char kind, long long *out
) noexcept nogil:
    """Parse `<kind><int>\\r\\n` at pos: the position after it, -1 if incomplete, -2 if
    the bytes are not that header."""
    cdef long long value = 0
    cdef bint negative = False
    cdef Py_ssize_t i = pos + 1
    cdef char c
    if pos >= end:
        return -1
    if data[pos] != kind:
        return -2
    if i < end and data[i] == c'-':
        negative = True
        i += 1
    while i < end:
        c = data[i]
        if c == c'\r':
            if i + 1 >= end:
                return -1
            if data[i + 1] != c'\n' or i == pos + 1 + negative:
                return -2
            out[0] = -value if negative else value
            return i + 2
        if c < c'0' or c > c'9' or value > 100000000000000000LL:
            return -2
        value = value * 10 + (c - c'0')
        i += 1
    return -1


cdef inline Py_ssize_t _bulk(
    const char *data, Py_ssize_t pos, Py_ssize_t end, Py_ssize_t *start, Py_ssize_t *size
) noexcept nogil:
    """A bulk string at pos: its start and size, and the position after it (-1, -2 as _header)."""
    cdef long long length = 0
    cdef Py_ssize_t p = _header(data, pos, end, c'$', &length)
    if p < 0:
        return p
    if length < 0:
        return -2  # a nil bulk has no place in an XRANGE reply
    if p + length + 2 > end:
        return -1
    if data[p + length] != c'\r' or data[p + length + 1] != c'\n':
        return -2
    start[0] = p
    size[0] = <Py_ssize_t>length
    return p + length + 2


cdef inline bint _parse_id(const char *text, Py_ssize_t size, uint64_t *ms, uint64_t *seq) noexcept nogil:
    cdef uint64_t part = 0
    cdef uint64_t digit
    cdef Py_ssize_t i
    cdef bint dash = False
    cdef Py_ssize_t digits = 0
    cdef char c
    for i in range(size):
        c = text[i]
        if c == c'-':
            if dash or digits == 0:
                return False
            ms[0] = part
            part = 0
            digits = 0
            dash = True
            continue
        if c < c'0' or c > c'9':
            return False
        digit = <uint64_t>(c - c'0')
        if part > (UINT64_MAX - digit) // 10:
            return False
        part = part * 10 + digit
        digits += 1
    if not dash or digits == 0:
        return False
    seq[0] = part
    return True


cdef class XrangeDecoder:
    """One XRANGE reply at a time: `feed()` received bytes, `take()` the columns.

    `check_names`: look for a field name repeated inside an entry (the map view keeps
    the last value); the lossless pairs view keeps every pair and skips it.
    """

    cdef Buf ids, id_offsets, ms, seq, ts, pair_offsets, names, name_offsets
    cdef Buf values, value_offsets
    cdef bint check_names
    cdef Py_ssize_t batch_bytes
    cdef public bint started, done
    cdef public Py_ssize_t remaining
    cdef Py_ssize_t rows, pairs
    cdef bint repeated, unchecked, too_large
    cdef uint64_t last_ms, last_seq
    cdef bint has_last
    cdef object error_text

    def __cinit__(self, bint check_names=True, Py_ssize_t batch_bytes=256 * 1024 * 1024):
        self.check_names = check_names
        self.batch_bytes = batch_bytes
        self.error_text = None
        self._reset_columns()

    def __dealloc__(self):
        free(self.ids.ptr)
        free(self.id_offsets.ptr)
        free(self.ms.ptr)
        free(self.seq.ptr)
        free(self.ts.ptr)
        free(self.pair_offsets.ptr)
        free(self.names.ptr)
        free(self.name_offsets.ptr)
        free(self.values.ptr)
        free(self.value_offsets.ptr)

    cdef void _reset_columns(self) noexcept:
        self.ids.size = 0
        self.id_offsets.size = 0
        self.ms.size = 0
        self.seq.size = 0
        self.ts.size = 0
        self.pair_offsets.size = 0
        self.names.size = 0
        self.name_offsets.size = 0
        self.values.size = 0
        self.value_offsets.size = 0
        self.rows = 0
        self.pairs = 0
        self.repeated = False
        self.unchecked = False
        self.too_large = False
        if (
            _push32(&self.id_offsets, 0) < 0
            or _push32(&self.pair_offsets, 0) < 0
            or _push32(&self.name_offsets, 0) < 0
            or _push32(&self.value_offsets, 0) < 0
        ):
            raise MemoryError()

    def reset(self):
        """Ready for the next reply; columns not taken are dropped (a retried reply)."""
        self._reset_columns()
        self.started = False
        self.done = False
        self.remaining = 0
        self.has_last = False
        self.error_text = None

    @property
    def error(self):
        """The server's error line (`-ERR ...`) if the reply was one, else None."""
        return self.error_text

    @property
    def last_id(self):
        """`(ms, seq)` of the last entry of the reply so far, or None."""
        return (self.last_ms, self.last_seq) if self.has_last else None

    @property
    def rows_pending(self):
        return self.rows

    @property
    def batch_full(self):
        """The columns reached `batch_bytes`: take them before feeding more."""
        return self.names.size + self.values.size + self.ids.size >= self.batch_bytes

    cdef int _entry(self, const char *data, Py_ssize_t *pos, Py_ssize_t end) noexcept nogil:
        cdef long long count = 0
        cdef long long k
        cdef Py_ssize_t p = pos[0]
        cdef Py_ssize_t start = 0
        cdef Py_ssize_t size = 0
        cdef Py_ssize_t first_name, a, b, i, j
        cdef Py_ssize_t saved_ids = self.ids.size, saved_names = self.names.size
        cdef Py_ssize_t saved_values = self.values.size
        cdef Py_ssize_t saved_name_offsets = self.name_offsets.size
        cdef Py_ssize_t saved_value_offsets = self.value_offsets.size
        cdef uint64_t ms = 0, seq = 0
        cdef int32_t *offs
        p = _header(data, p, end, c'*', &count)
        if p == -1:
            return INCOMPLETE
        if p < 0 or count != 2:
            return PROTOCOL
        p = _bulk(data, p, end, &start, &size)
        if p == -1:
            return INCOMPLETE
        if p < 0 or not _parse_id(data + start, size, &ms, &seq):
            return PROTOCOL
        if _append(&self.ids, data + start, size) < 0:
            return NOMEM
        p = _header(data, p, end, c'*', &count)
        if p == -1:
            self.ids.size = saved_ids
            return INCOMPLETE
        if p < 0 or count < -1:
            return PROTOCOL
        if count == -1:
            count = 0  # a nil field list (a deleted entry): no pairs
        if count % 2 != 0:
            return PROTOCOL
        first_name = self.pairs
        for k in range(count // 2):
            p = _bulk(data, p, end, &start, &size)
            if p >= 0:
                if _append(&self.names, data + start, size) < 0:
                    return NOMEM
                if _push32(&self.name_offsets, <int32_t>self.names.size) < 0:
                    return NOMEM
                p = _bulk(data, p, end, &start, &size)
            if p >= 0:
                if _append(&self.values, data + start, size) < 0:
                    return NOMEM
                if _push32(&self.value_offsets, <int32_t>self.values.size) < 0:
                    return NOMEM
            if p < 0:
                self.ids.size = saved_ids
                self.names.size = saved_names
                self.values.size = saved_values
                self.name_offsets.size = saved_name_offsets
                self.value_offsets.size = saved_value_offsets
                return INCOMPLETE if p == -1 else PROTOCOL
        # The whole entry is in: commit it.
        self.pairs += count // 2
        if (
            _push32(&self.id_offsets, <int32_t>self.ids.size) < 0
            or _push32(&self.pair_offsets, <int32_t>self.pairs) < 0
            or _push64(&self.ms, <int64_t>ms) < 0
            or _push64(&self.seq, <int64_t>seq) < 0
            or _push64(&self.ts, <int64_t>(ms * 1000)) < 0
        ):
            return NOMEM
        if ms > <uint64_t>INT64_MAX or seq > <uint64_t>INT64_MAX:
            self.too_large = True
        if self.check_names and not self.repeated and count > 2:
            if count // 2 > PAIRWISE_MAX:
                self.unchecked = True
            else:
                offs = <int32_t *>self.name_offsets.ptr
                for i in range(first_name, self.pairs):
                    for j in range(i + 1, self.pairs):
                        a = offs[i + 1] - offs[i]
                        b = offs[j + 1] - offs[j]
                        if a == b and memcmp(
                            self.names.ptr + offs[i], self.names.ptr + offs[j], a
                        ) == 0:
                            self.repeated = True
        self.rows += 1
        self.last_ms = ms
        self.last_seq = seq
        self.has_last = True
        pos[0] = p
        return OK

    def feed(self, bytearray buffer, Py_ssize_t filled):
        """Consume the whole entries in `buffer[:filled]`, move the rest to the front,
        and return how many bytes are left there (the start of an entry still arriving).

        Stops early, leaving bytes unconsumed, when `batch_full`; raises ValueError on
        bytes that are not an XRANGE reply.
        """
        cdef char *data = PyByteArray_AS_STRING(buffer)
        cdef Py_ssize_t pos = 0
        cdef Py_ssize_t line_end
        cdef long long count = 0
        cdef int status = OK
        cdef Py_ssize_t limit = self.batch_bytes
        if filled > PyByteArray_GET_SIZE(buffer) or filled < 0:
            raise ValueError("filled is out of the buffer")
        if self.done:
            raise ValueError("the reply is complete: reset() before feeding another")
        if not self.started:
            if filled == 0:
                return 0
            if data[0] == c'-':
                line_end = buffer.find(b"\r\n", 0, filled)
                if line_end < 0:
                    return filled
                self.error_text = bytes(buffer[1:line_end]).decode("utf-8", "replace")
                self.started = True
                self.done = True
                return self._compact(data, line_end + 2, filled)
            pos = _header(data, 0, filled, c'*', &count)
            if pos == -1:
                return filled
            if pos < 0 or count < -1:
                raise ValueError("not an XRANGE reply (expected an array)")
            self.started = True
            self.remaining = count if count > 0 else 0
        with nogil:
            while self.remaining > 0:
                if self.names.size + self.values.size + self.ids.size >= limit:
                    break
                status = self._entry(data, &pos, filled)
                if status != OK:
                    break
                self.remaining -= 1
        if status == PROTOCOL:
            raise ValueError("not an XRANGE reply (unexpected bytes in an entry)")
        if status == NOMEM:
            raise MemoryError()
        if self.names.size >= 0x7FFFFFFF or self.values.size >= 0x7FFFFFFF or self.ids.size >= 0x7FFFFFFF:
            raise ValueError("a batch outgrew Arrow's 32-bit offsets: lower batch_bytes")
        if self.remaining == 0:
            self.done = True
        return self._compact(data, pos, filled)

    cdef Py_ssize_t _compact(self, char *data, Py_ssize_t pos, Py_ssize_t filled):
        if pos and filled > pos:
            memmove(data, data + pos, filled - pos)
        return filled - pos

    def take(self):
        """The columns gathered since the last take, as bytes, and clear them.

        Returns a dict: rows, pairs, ids, id_offsets, ms, seq, ts, pair_offsets, names,
        name_offsets, values, value_offsets (offsets are int32, the numbers int64),
        repeated (a field name repeats inside an entry), unchecked (some entry was too
        wide for the check), too_large (an ID part exceeds int64).
        """
        cdef dict out = {
            "rows": self.rows,
            "pairs": self.pairs,
            "ids": PyBytes_FromStringAndSize(self.ids.ptr, self.ids.size),
            "id_offsets": PyBytes_FromStringAndSize(self.id_offsets.ptr, self.id_offsets.size),
            "ms": PyBytes_FromStringAndSize(self.ms.ptr, self.ms.size),
            "seq": PyBytes_FromStringAndSize(self.seq.ptr, self.seq.size),
            "ts": PyBytes_FromStringAndSize(self.ts.ptr, self.ts.size),
            "pair_offsets": PyBytes_FromStringAndSize(self.pair_offsets.ptr, self.pair_offsets.size),
            "names": PyBytes_FromStringAndSize(self.names.ptr, self.names.size),
            "name_offsets": PyBytes_FromStringAndSize(self.name_offsets.ptr, self.name_offsets.size),
            "values": PyBytes_FromStringAndSize(self.values.ptr, self.values.size),
            "value_offsets": PyBytes_FromStringAndSize(
                self.value_offsets.ptr, self.value_offsets.size
            ),
            "repeated": self.repeated,
            "unchecked": self.unchecked,
            "too_large": self.too_large,
        }
        self._reset_columns()
        return out
