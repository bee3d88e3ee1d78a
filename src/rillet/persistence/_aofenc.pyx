# cython: language_level=3, boundscheck=False, wraparound=False
"""`AofWriter.feed`'s encoding loop compiled: effects -> RESP commands in the AOF buffer.

Every write command's effect is encoded once on its way to the AOF. In Python
that costs ~0.5 us per XADD (hiredis.pack_command, plus the loop around it),
a tenth of the whole command at 64 pipelined XADDs per read. A command whose
arguments are all exact `bytes` (in a list) is an array of bulk strings,
written here; anything else (a bytearray, memoryview or int
argument) goes to `encode_command`, the Python reference, so the bytes are the
same either way (tests/persistence/test_formats.py).
"""

from cpython.bytearray cimport PyByteArray_AS_STRING, PyByteArray_GET_SIZE, PyByteArray_Resize
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_CheckExact, PyBytes_GET_SIZE
from cpython.list cimport PyList_CheckExact, PyList_GET_ITEM, PyList_GET_SIZE
from cpython.object cimport PyObject
from libc.string cimport memcpy


cdef inline Py_ssize_t _digits(Py_ssize_t n) noexcept:
    cdef Py_ssize_t d = 1
    while n >= 10:
        n //= 10
        d += 1
    return d


cdef inline char* _put_len(char* p, char kind, Py_ssize_t n) noexcept:
    """`kind` (b'*' or b'$'), n in decimal, CRLF at p; returns the end."""
    cdef Py_ssize_t d = _digits(n), i
    p[0] = kind
    i = d
    while i > 0:
        p[i] = <char>(48 + n % 10)
        n //= 10
        i -= 1
    p[d + 1] = 13
    p[d + 2] = 10
    return p + d + 3


cdef bint _put_command(bytearray buf, object argv) except -1:
    """A list of exact `bytes` as a RESP array of bulk strings: sized first, then
    written in place with one resize (the reply encoder's put() resized per
    piece and dispatched on each argument's type: ~3,300 instructions for a
    5-argument XADD, this ~400). False (nothing written) for anything else."""
    if not PyList_CheckExact(argv):
        return False
    cdef Py_ssize_t n = PyList_GET_SIZE(argv), i, size, total, start
    cdef PyObject* arg
    cdef char* p
    total = 3 + _digits(n)
    for i in range(n):
        arg = PyList_GET_ITEM(argv, i)
        if not PyBytes_CheckExact(<object>arg):
            return False
        size = PyBytes_GET_SIZE(<object>arg)
        total += 5 + _digits(size) + size
    start = PyByteArray_GET_SIZE(buf)
    PyByteArray_Resize(buf, start + total)
    p = _put_len(PyByteArray_AS_STRING(buf) + start, 42, n)  # '*'
    for i in range(n):
        arg = PyList_GET_ITEM(argv, i)
        size = PyBytes_GET_SIZE(<object>arg)
        p = _put_len(p, 36, size)  # '$'
        memcpy(p, PyBytes_AS_STRING(<object>arg), size)
        p[size] = 13
        p[size + 1] = 10
        p += size + 2
    return True


def encode_effects(bytearray buf, list effects, object selected_db, encode_select,
                   encode_command):
    """Append each (db, argv) of `effects` to `buf`, a SELECT first whenever the db
    changes; returns the db selected at the end (AofWriter.feed, keep in step)."""
    for db_index, argv in effects:
        if db_index != selected_db:
            buf += encode_select(db_index)
            selected_db = db_index
        if not _put_command(buf, argv):
            buf += encode_command(argv)
    return selected_db
