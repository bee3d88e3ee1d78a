# Stream-ID and argument readers and writers the compiled bodies share
# (commands/_groups.pyx: XREADGROUP/XACK, commands/_claims.pyx: XCLAIM/XAUTOCLAIM,
# commands/_writes.pyx: XADD's ID).
# Inline, so each module compiles its own copy from this one source.

cimport cython
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.long cimport PyLong_AsUnsignedLongLong
from cpython.object cimport PyObject
from cpython.tuple cimport PyTuple_GET_ITEM

from rillet.engine._pelindex cimport u128


cdef inline bint _word(object arg, const char* upper, Py_ssize_t n) noexcept:
    """`arg` (bytes) is the keyword `upper` in any case (bytes.upper() == upper)."""
    cdef const char* p
    cdef Py_ssize_t i
    cdef char c
    if PyBytes_GET_SIZE(arg) != n:
        return False
    p = PyBytes_AS_STRING(arg)
    for i in range(n):
        c = p[i]
        if c'a' <= c <= c'z':
            c = c - 32
        if c != upper[i]:
            return False
    return True


cdef inline bint _plain_count(object arg, long long* out) noexcept:
    """A count in plain decimals (no sign, no leading zero, < 10**18): what
    parse_int takes as that number, so the compiled bodies need not parse others."""
    cdef const char* p = PyBytes_AS_STRING(arg)
    cdef Py_ssize_t n = PyBytes_GET_SIZE(arg), i
    cdef long long value = 0
    if n == 0 or n > 18 or (p[0] == c'0' and n > 1):
        return False
    for i in range(n):
        if not c'0' <= p[i] <= c'9':
            return False
        value = value * 10 + (p[i] - c'0')
    out[0] = value
    return True


cdef inline u128 _key(unsigned long long ms, unsigned long long seq) noexcept:
    """An ID's packed key, as pel.id_key: ms << 64 | seq."""
    return (<u128>ms << 64) | seq


cdef inline bint _id_parts(object sid, unsigned long long* ms, unsigned long long* seq) except -1:
    """A StreamID's two ints as C integers."""
    ms[0] = PyLong_AsUnsignedLongLong(<object>PyTuple_GET_ITEM(sid, 0))
    seq[0] = PyLong_AsUnsignedLongLong(<object>PyTuple_GET_ITEM(sid, 1))
    return True


cdef inline u128 _tuple_key(object sid) except? 0:
    """A StreamID tuple's packed key."""
    return ((<u128>PyLong_AsUnsignedLongLong(<object>PyTuple_GET_ITEM(sid, 0)) << 64)
            | PyLong_AsUnsignedLongLong(<object>PyTuple_GET_ITEM(sid, 1)))


cdef inline bint _plain_ack_id(object raw, unsigned long long* ms, unsigned long long* seq) noexcept:
    """groups._parse_ids's fast form (keep in step): `digits-digits` (leading zeros
    allowed, as bytes.isdigit takes them), shorter than 42 bytes, each part < 2**64:
    parse_strict_id reads these as this ID, and every other text is left to it."""
    cdef const char* p = PyBytes_AS_STRING(raw)
    cdef Py_ssize_t n = PyBytes_GET_SIZE(raw), i = 0, start
    cdef unsigned long long parts[2]
    cdef unsigned long long value, digit
    cdef int part
    if n >= 42:
        return False
    for part in range(2):
        start = i
        value = 0
        while i < n and c'0' <= p[i] <= c'9':
            digit = <unsigned long long>(p[i] - c'0')
            if value > (0xFFFFFFFFFFFFFFFFULL - digit) // 10:
                return False
            value = value * 10 + digit
            i += 1
        if i == start:
            return False
        parts[part] = value
        if part == 0:
            if i >= n or p[i] != c'-':
                return False
            i += 1
    if i != n:
        return False
    ms[0] = parts[0]
    seq[0] = parts[1]
    return True


@cython.cdivision(True)
cdef inline Py_ssize_t _put_u64(char* end, unsigned long long value) noexcept:
    """Writes `value` in decimal ending just before `end`; returns its length."""
    cdef Py_ssize_t n = 0
    while True:
        n += 1
        end[-n] = <char>(48 + value % 10)
        value //= 10
        if value == 0:
            return n


cdef inline bytes _format_id(unsigned long long ms, unsigned long long seq):
    """format_id: b"%d-%d" % (ms, seq), the digits written backwards from the end of a
    buffer (snprintf cost ~1,000 instructions an ID, this ~150)."""
    cdef char buf[48]
    cdef Py_ssize_t seq_len = _put_u64(buf + 48, seq)
    buf[47 - seq_len] = b'-'
    cdef Py_ssize_t ms_len = _put_u64(buf + 47 - seq_len, ms)
    cdef Py_ssize_t total = ms_len + 1 + seq_len
    return PyBytes_FromStringAndSize(buf + 48 - total, total)


cdef inline bytes _id_text(u128 k):
    """format_id of a packed key."""
    return _format_id(<unsigned long long>(k >> 64), <unsigned long long>k)
