# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Stream entry replies encoded straight from packed stream nodes.

XRANGE, XREVRANGE, XREAD and XREADGROUP answer a run of entries as
[[id, [field, value, ...]], ...]: arrays and bulk strings only, so the bytes
are the same in RESP2 and RESP3. The Python path builds an (id, fields) tuple
and a list per entry (Stream.range), then encodes them; here the entries are
written from the nodes' arrays and element blobs in one pass, with no Python
object per entry. The result is a `Raw` reply (or [] when nothing matched, so
callers can test it for truth as they test the list).

The module knows nothing of the engine's classes: it reads a stream through
two accessors, `stream.read_cursor(start, end, reverse)` (where the walk
begins) and `node.read_view()` (a node's arrays). The Python path stays the
reference: tests/resp/test_stream_entries.py compares the two on generated
streams, and the pure path (rillet/compiled.py) never loads this module.
"""

from cpython.array cimport array
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.bytearray cimport PyByteArray_AS_STRING
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE
from cpython.long cimport PyLong_AsUnsignedLongLong
from cpython.ref cimport PyObject
from cpython.set cimport PySet_Contains
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcpy

from rillet._columns cimport Col, _at, _col

from rillet.resp.types import Raw

cdef extern from "Python.h":
    object PyMemoryView_FromMemory(char *mem, Py_ssize_t size, int flags)
    int PyBUF_READ

cdef object _Raw = Raw
# Room kept before the body for the outer `*<n>\r\n`, written once n is known.
DEF HEAD = 24
# The scratch buffer is kept between calls: a fresh multi-megabyte allocation
# costs more in page faults than the encoding itself. Above this it is freed.
DEF KEEP = 8 * 1024 * 1024


cdef struct Buf:
    char *ptr
    Py_ssize_t size
    Py_ssize_t cap


cdef int _reserve(Buf *buf, Py_ssize_t extra) except -1:
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
        raise MemoryError()
    buf.ptr = grown
    buf.cap = cap
    return 0


cdef inline int _digits(char *at, uint64_t value):
    """Decimal digits of value written at `at`; returns how many."""
    cdef char tmp[24]
    cdef int width = 0, i
    while True:
        tmp[width] = c'0' + <char>(value % 10)
        width += 1
        value //= 10
        if value == 0:
            break
    for i in range(width):
        at[i] = tmp[width - 1 - i]
    return width


cdef inline int _header(Buf *buf, char kind, uint64_t n) except -1:
    _reserve(buf, 24)
    cdef char *at = buf.ptr + buf.size
    at[0] = kind
    cdef int width = _digits(at + 1, n)
    at[width + 1] = c'\r'
    at[width + 2] = c'\n'
    buf.size += width + 3
    return 0


cdef inline int _bulk(Buf *buf, const char *text, Py_ssize_t size) except -1:
    _header(buf, c'$', size)
    _reserve(buf, size + 2)
    cdef char *at = buf.ptr + buf.size
    memcpy(at, text, size)
    at[size] = c'\r'
    at[size + 1] = c'\n'
    buf.size += size + 2
    return 0


cdef inline int _entry_id(Buf *buf, uint64_t ms, uint64_t seq) except -1:
    """`*2\\r\\n$<len>\\r\\n<ms>-<seq>\\r\\n`: the entry's array header and its ID."""
    cdef char text[48]
    cdef int width = _digits(text, ms)
    text[width] = c'-'
    width += 1
    width += _digits(text + width, seq)
    _reserve(buf, 4)
    memcpy(buf.ptr + buf.size, b"*2\r\n", 4)
    buf.size += 4
    return _bulk(buf, text, width)


cdef class _Node:
    """One node's read_view() unpacked into C fields."""
    cdef uint64_t ms0
    cdef Py_ssize_t n, k
    cdef object dead, mf, elems, data, keep
    cdef Col ms, seq, offs, estart
    cdef bint has_estart
    cdef const char *same
    cdef const char *blob

    cdef int load(self, object node) except -1:
        view = node.read_view()
        self.keep = view
        ms0, ms, seq, n, dead, mf, elems, data, offs, estart, same = view
        self.ms0 = PyLong_AsUnsignedLongLong(ms0)
        self.n = n
        if (type(mf) is not list or type(data) is not bytes
                or (elems is not None and type(elems) is not list)):
            raise TypeError("unexpected stream node layout")
        self.dead = dead
        self.mf = mf
        self.k = PyList_GET_SIZE(mf)
        _col(&self.ms, ms)
        _col(&self.seq, seq)
        self.elems = elems
        self.data = data
        self.blob = PyBytes_AS_STRING(data)
        if elems is None:
            _col(&self.offs, offs)
        self.has_estart = estart is not None
        if self.has_estart:
            _col(&self.estart, estart)
            if type(same) is bytearray:
                self.same = PyByteArray_AS_STRING(same)
            elif type(same) is bytes:
                self.same = PyBytes_AS_STRING(same)
            else:
                raise TypeError("unexpected stream node layout")
        return 0

    cdef inline bint is_dead(self, Py_ssize_t i) except -1:
        return self.dead is not None and PySet_Contains(self.dead, i)

    cdef inline int element(self, Buf *buf, Py_ssize_t j) except -1:
        cdef object item
        cdef uint64_t lo, hi
        if self.elems is not None:
            item = <object>PyList_GET_ITEM(self.elems, j)
            if type(item) is not bytes:
                item = bytes(item)
            return _bulk(buf, PyBytes_AS_STRING(item), PyBytes_GET_SIZE(item))
        lo = _at(&self.offs, j)
        hi = _at(&self.offs, j + 1)
        return _bulk(buf, self.blob + lo, <Py_ssize_t>(hi - lo))

    cdef int entry(self, Buf *buf, Py_ssize_t i, uint64_t ms, uint64_t seq) except -1:
        cdef Py_ssize_t a, b, j, k = self.k
        cdef bint same = True
        cdef object field
        if self.has_estart:
            a = <Py_ssize_t>_at(&self.estart, i)
            b = <Py_ssize_t>_at(&self.estart, i + 1)
            same = self.same[i] != 0
        else:
            a = i * k
            b = a + k
        _entry_id(buf, ms, seq)
        if not same:
            _header(buf, c'*', b - a)
            for j in range(a, b):
                self.element(buf, j)
            return 0
        if b - a != k:
            raise ValueError("stream entry disagrees with its node's fields")
        _header(buf, c'*', 2 * k)
        for j in range(b - a):
            field = <object>PyList_GET_ITEM(self.mf, j)
            if type(field) is not bytes:
                field = bytes(field)
            _bulk(buf, PyBytes_AS_STRING(field), PyBytes_GET_SIZE(field))
            self.element(buf, a + j)
        return 0


cdef inline bint _after(uint64_t ms, uint64_t seq, uint64_t bound_ms, uint64_t bound_seq):
    return ms > bound_ms or (ms == bound_ms and seq > bound_seq)


def encode_range(stream, start, end, Py_ssize_t count, bint reverse, cursor=None):
    """Stream.range(start, end, count or None, reverse) as an encoded reply.

    `count` <= 0 is no limit. Returns a Raw array of entries, or [] if none.
    `cursor` is what stream.read_cursor(start, end, reverse) answers, when the
    caller has it already (commands/_groups.pyx walked there to find the IDs).
    """
    if cursor is None:
        cursor = stream.read_cursor(start, end, reverse)
    if cursor is None:
        return []
    nodes, ni, first = cursor
    cdef uint64_t start_ms = PyLong_AsUnsignedLongLong(start[0])
    cdef uint64_t start_seq = PyLong_AsUnsignedLongLong(start[1])
    cdef uint64_t end_ms = PyLong_AsUnsignedLongLong(end[0])
    cdef uint64_t end_seq = PyLong_AsUnsignedLongLong(end[1])
    cdef Py_ssize_t node_index = ni, i = first, nnodes = PyList_GET_SIZE(nodes)
    cdef Py_ssize_t found = 0
    cdef uint64_t ms, seq
    cdef _Node node = _Node()
    global _scratch
    cdef Buf buf = _scratch
    buf.size = HEAD
    _scratch.ptr = NULL  # owned by this call until it gives it back
    _scratch.cap = 0
    cdef bint done = False
    cdef int width
    cdef char head[24]
    try:
        _reserve(&buf, 0)
        while not done and 0 <= node_index < nnodes:
            node.load(<object>PyList_GET_ITEM(nodes, node_index))
            if not reverse:
                while i < node.n:
                    ms = node.ms0 + _at(&node.ms, i)
                    seq = _at(&node.seq, i)
                    if _after(ms, seq, end_ms, end_seq):
                        done = True
                        break
                    if not node.is_dead(i):
                        node.entry(&buf, i, ms, seq)
                        found += 1
                        if found == count:
                            done = True
                            break
                    i += 1
                node_index += 1
                i = 0
            else:
                while i >= 0:
                    ms = node.ms0 + _at(&node.ms, i)
                    seq = _at(&node.seq, i)
                    if _after(start_ms, start_seq, ms, seq):
                        done = True
                        break
                    if not node.is_dead(i):
                        node.entry(&buf, i, ms, seq)
                        found += 1
                        if found == count:
                            done = True
                            break
                    i -= 1
                node_index -= 1
                if node_index >= 0:
                    i = (<object>PyList_GET_ITEM(nodes, node_index)).n - 1
        if not found:
            return []
        head[0] = c'*'
        width = _digits(head + 1, found) + 1
        head[width] = c'\r'
        head[width + 1] = c'\n'
        width += 2
        memcpy(buf.ptr + HEAD - width, head, width)
        return _Raw(PyMemoryView_FromMemory(buf.ptr + HEAD - width, buf.size - HEAD + width,
                                            PyBUF_READ))
    finally:
        if buf.cap > KEEP or _scratch.ptr != NULL:
            free(buf.ptr)
        else:
            _scratch.ptr = buf.ptr
            _scratch.cap = buf.cap


cdef Buf _scratch
_scratch.ptr = NULL
_scratch.size = 0
_scratch.cap = 0
