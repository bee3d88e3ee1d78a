# RESP arrays of bulk strings written in C: the AOF's and the replication stream's
# commands (persistence/_aofenc.pyx), and a compiled body's effect written already
# encoded (commands/_writes.pyx, XADD). Inline, so each module compiles its own copy.

cimport cython
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from libc.string cimport memcpy


@cython.cdivision(True)
cdef inline Py_ssize_t digits(Py_ssize_t n) noexcept:
    cdef Py_ssize_t d = 1
    while n >= 10:
        n //= 10
        d += 1
    return d


@cython.cdivision(True)
cdef inline char* put_len(char* p, char kind, Py_ssize_t n) noexcept:
    """`kind` (b'*' or b'$'), n (>= 0) in decimal, CRLF at p; returns the end."""
    p[0] = kind
    if n < 10:  # most lengths in a command: no division at all
        p[1] = <char>(48 + n)
        p[2] = 13
        p[3] = 10
        return p + 4
    cdef Py_ssize_t d = digits(n), i
    i = d
    while i > 0:
        p[i] = <char>(48 + n % 10)
        n //= 10
        i -= 1
    p[d + 1] = 13
    p[d + 2] = 10
    return p + d + 3


cdef inline Py_ssize_t bulk_size(object arg) noexcept:
    """The RESP size of `arg`, an exact `bytes`, as a bulk string."""
    cdef Py_ssize_t size = PyBytes_GET_SIZE(arg)
    return 5 + digits(size) + size


cdef inline char* put_bulk(char* p, object arg) noexcept:
    """`arg` (an exact `bytes`) as a bulk string at p; returns the end."""
    cdef Py_ssize_t size = PyBytes_GET_SIZE(arg)
    p = put_len(p, 36, size)  # '$'
    memcpy(p, PyBytes_AS_STRING(arg), size)
    p[size] = 13
    p[size + 1] = 10
    return p + size + 2
