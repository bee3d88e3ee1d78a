# cython: language_level=3, boundscheck=False, wraparound=False
"""`AofWriter.feed`'s encoding loop compiled: effects -> RESP commands in the AOF buffer.

Every write command's effect is encoded once on its way to the AOF. In Python
that costs ~0.5 us per XADD (hiredis.pack_command, plus the loop around it),
a tenth of the whole command at 64 pipelined XADDs per read. Here a command
whose arguments are all exact `bytes` is measured, the buffer grown once, and
the headers written with no formatting call. Anything else (a bytearray,
memoryview or int argument) goes to `encode_command`, the Python reference, so
the bytes are the same either way (tests/persistence/test_formats.py).
"""

from cpython.bytearray cimport PyByteArray_AS_STRING, PyByteArray_GET_SIZE, PyByteArray_Resize
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_CheckExact, PyBytes_GET_SIZE
from libc.string cimport memcpy


cdef inline Py_ssize_t _digits(Py_ssize_t n) noexcept:
    cdef Py_ssize_t count = 1
    while n >= 10:
        n //= 10
        count += 1
    return count


cdef inline char *_header(char *at, char kind, Py_ssize_t n) noexcept:
    """Write `<kind><n>\\r\\n` at `at`; returns the byte after it."""
    cdef Py_ssize_t width = _digits(n)
    cdef Py_ssize_t i
    at[0] = kind
    for i in range(width, 0, -1):
        at[i] = c'0' + n % 10
        n //= 10
    at[width + 1] = c'\r'
    at[width + 2] = c'\n'
    return at + width + 3


cdef bint _append(bytearray buf, object argv) except -1:
    """Append `argv` as one RESP command; False (buffer untouched) if an argument is not bytes."""
    cdef list args = argv if type(argv) is list else list(argv)
    cdef Py_ssize_t argc = len(args)
    cdef Py_ssize_t total = 3 + _digits(argc)
    cdef Py_ssize_t size, i
    cdef object arg
    for i in range(argc):
        arg = args[i]
        if not PyBytes_CheckExact(arg):
            return False
        size = PyBytes_GET_SIZE(arg)
        total += size + 5 + _digits(size)
    cdef Py_ssize_t start = PyByteArray_GET_SIZE(buf)
    PyByteArray_Resize(buf, start + total)
    cdef char *at = _header(PyByteArray_AS_STRING(buf) + start, c'*', argc)
    for i in range(argc):
        arg = args[i]
        size = PyBytes_GET_SIZE(arg)
        at = _header(at, c'$', size)
        memcpy(at, PyBytes_AS_STRING(arg), size)
        at[size] = c'\r'
        at[size + 1] = c'\n'
        at += size + 2
    return True


def encode_effects(bytearray buf, list effects, object selected_db, encode_select,
                   encode_command):
    """Append each (db, argv) of `effects` to `buf`, a SELECT first whenever the db
    changes; returns the db selected at the end (AofWriter.feed, keep in step)."""
    for db_index, argv in effects:
        if db_index != selected_db:
            buf += encode_select(db_index)
            selected_db = db_index
        if not _append(buf, argv):
            buf += encode_command(argv)
    return selected_db
