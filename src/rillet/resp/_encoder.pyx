# cython: language_level=3, boundscheck=False, wraparound=False
"""`encoder.encode_into` compiled for the reply shapes that carry stream data.

XRANGE, XREAD and XREADGROUP answer with nested arrays of bulk strings
([[id, [field, value, ...]], ...]); in Python each element costs a writer
lookup and a call, ~40 per XRANGE COUNT 10. Here arrays (lists, tuples), bulk
strings, integers, doubles (_fpconv's d2string), nulls and simple strings are
written in C; every other type goes to its Python writer in encoder.py, which
stays the reference
(the pure path uses it for everything; tests/resp compare the two).
"""

from cpython.bytearray cimport PyByteArray_AS_STRING, PyByteArray_GET_SIZE, PyByteArray_Resize
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.float cimport PyFloat_AS_DOUBLE
from cpython.long cimport PyLong_AsLongLongAndOverflow
from libc.string cimport memcpy

from rillet.resp._fpconv cimport FPCONV_MAX, d2string

from rillet.resp import encoder as _python
from rillet.resp.types import SimpleString

cdef object _WRITERS = _python._WRITERS
cdef list _INTS = _python.INT_REPLIES
cdef Py_ssize_t _NINTS = len(_python.INT_REPLIES)
cdef object _SimpleString = SimpleString


cdef inline char *_grow(bytearray out, Py_ssize_t extra) except NULL:
    cdef Py_ssize_t size = PyByteArray_GET_SIZE(out)
    PyByteArray_Resize(out, size + extra)
    return PyByteArray_AS_STRING(out) + size


cdef inline int _header(bytearray out, char kind, long long n) except -1:
    """`<kind><n>\\r\\n`: lengths, counts, -1 for RESP2 nulls, and integer replies."""
    cdef char digits[24]
    cdef int width = 0, i
    cdef bint negative = n < 0
    # 0 - n in unsigned arithmetic: -2**63 has no positive long long.
    cdef unsigned long long value = (0ULL - <unsigned long long>n) if negative else <unsigned long long>n
    while True:
        digits[width] = c'0' + value % 10
        width += 1
        value //= 10
        if value == 0:
            break
    cdef char *at = _grow(out, width + negative + 3)
    at[0] = kind
    at += 1
    if negative:
        at[0] = c'-'
        at += 1
    for i in range(width):
        at[i] = digits[width - 1 - i]
    at[width] = c'\r'
    at[width + 1] = c'\n'
    return 0


cdef int put(bytearray out, object value, bint resp3) except -1:
    cdef Py_ssize_t size, n, i
    cdef char *at
    cdef long long number
    cdef int overflow
    cdef char text[FPCONV_MAX]
    kind = type(value)
    if kind is bytes:
        size = PyBytes_GET_SIZE(value)
        _header(out, c'$', size)
        at = _grow(out, size + 2)
        memcpy(at, PyBytes_AS_STRING(value), size)
        at[size] = c'\r'
        at[size + 1] = c'\n'
    elif kind is list:
        n = len(<list>value)
        _header(out, c'*', n)
        for i in range(n):
            put(out, (<list>value)[i], resp3)
    elif kind is tuple:
        n = len(<tuple>value)
        _header(out, c'*', n)
        for i in range(n):
            put(out, (<tuple>value)[i], resp3)
    elif kind is int:
        number = PyLong_AsLongLongAndOverflow(value, &overflow)
        if overflow:
            _WRITERS[kind](out, value, resp3)
        elif 0 <= number < _NINTS:
            out += <bytes>_INTS[number]
        else:
            _header(out, c':', number)  # a counter's value, a negative count
    elif kind is float:
        # d2string's text straight into the buffer: a bulk string, or RESP3's `,` double.
        size = d2string(PyFloat_AS_DOUBLE(value), text)
        if resp3:
            at = _grow(out, size + 3)
            at[0] = c','
            at += 1
        else:
            _header(out, c'$', size)
            at = _grow(out, size + 2)
        memcpy(at, text, size)
        at[size] = c'\r'
        at[size + 1] = c'\n'
    elif value is None:
        if resp3:
            out += b"_\r\n"
        else:
            out += b"$-1\r\n"
    elif kind is _SimpleString:
        size = PyBytes_GET_SIZE(value)
        at = _grow(out, size + 3)
        at[0] = c'+'
        memcpy(at + 1, PyBytes_AS_STRING(value), size)
        at[size + 1] = c'\r'
        at[size + 2] = c'\n'
    else:
        _WRITERS[kind](out, value, resp3)
    return 0


def encode_into(bytearray out, object reply, bint resp3):
    """encoder.encode_into (keep in step): append `reply` as RESP2 or RESP3."""
    put(out, reply, resp3)


# encoder.py binds encode_into to this module's when it imports it; if this module
# was imported first (it imports encoder.py), that binding could not happen then.
if _python.encode_into is _python.python_encode_into:
    _python.encode_into = encode_into
