# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Compiled scan of the canonical multibulk requests at the start of a read.

`RequestParser.feed` calls `scan` first when this module is built. It takes
only what every parser reads the same way (Redis, hiredis, `SlowParser`):
"*N\\r\\n" then N times "$L\\r\\n" + L bytes + "\\r\\n", with N and L plain
decimals (no sign, no leading zero, no spaces). It stops at the first command
that is anything else, or not whole yet, and `feed` hands the rest of the
read to the Python parser, which stays the only judge of every other input.
Stopping early is always safe: the scanned part ends on a command boundary,
where the Python parser starts fresh.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.bytearray cimport PyByteArray_AS_STRING, PyByteArray_GET_SIZE
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE, PyList_New, PyList_SET_ITEM
from cpython.object cimport PyObject
from cpython.ref cimport Py_INCREF
from libc.string cimport memcmp, memcpy

# Commands with more arguments than this take the Python parser (so do those
# whose read is too short to hold N arguments): a list of N slots is allocated
# as soon as "*N" is read, before its arguments are seen.
cdef Py_ssize_t MAX_ARGS = 1 << 16
# The last command name seen (see scan).
cdef bytes _name = None
# Arguments up to this size equal to the previous command's at the same place
# are that object again (see scan).
cdef Py_ssize_t SHARE_MAX = 32


cdef inline Py_ssize_t _number(const char *buf, Py_ssize_t end, Py_ssize_t *pos,
                               Py_ssize_t limit) noexcept:
    """A plain decimal <= limit followed by CRLF at *pos (advanced past it), else -1."""
    cdef Py_ssize_t p = pos[0]
    cdef Py_ssize_t value = 0
    cdef char c
    if p >= end:
        return -1
    c = buf[p]
    if c == c'0':
        # Only "0" itself: a leading zero is not canonical.
        p += 1
    else:
        while p < end:
            c = buf[p]
            if c < c'0' or c > c'9':
                break
            value = value * 10 + (c - c'0')
            if value > limit:
                return -1
            p += 1
        if p == pos[0]:
            return -1
    if p + 1 >= end or buf[p] != c'\r' or buf[p + 1] != c'\n':
        return -1
    pos[0] = p + 2
    return value


def scan(object data, Py_ssize_t max_bulk_len):
    """(commands, used): the whole canonical commands that start `data`, and their size."""
    cdef Py_ssize_t used = 0, pos, count, size, i
    if type(data) is not bytes:  # (a bytearray, say: the Python parser takes it)
        return [], 0
    cdef const char *buf = PyBytes_AS_STRING(data)
    cdef Py_ssize_t end = PyBytes_GET_SIZE(data)
    cdef list commands = []
    cdef list argv
    cdef list prev = None  # the command before, in this read
    cdef bytes arg
    cdef PyObject* same
    # A pipeline mostly repeats one command: its name is allocated (and hashed
    # by the command table lookup) once, not once per command, and kept across
    # reads (bytes are immutable, so sharing one object is invisible; the same
    # holds for the other arguments shared below).
    global _name
    cdef bytes name = _name
    # Longer announced sizes take the Python parser; this bound keeps the
    # digit accumulation in _number far from overflow.
    if max_bulk_len > (<Py_ssize_t>1 << 40):
        max_bulk_len = <Py_ssize_t>1 << 40
    while used < end and buf[used] == c'*':
        pos = used + 1
        count = _number(buf, end, &pos, MAX_ARGS)
        if count <= 0:  # "*0" (an empty command) and anything odd: the Python parser
            break
        if end - pos < 6 * count:  # each argument takes at least "$0\r\n\r\n"
            break  # (and the list below is never bigger than the read warrants)
        argv = PyList_New(count)
        i = 0
        while i < count:
            if pos >= end or buf[pos] != c'$':
                break
            pos += 1
            size = _number(buf, end, &pos, max_bulk_len)
            if size < 0 or end - pos < size + 2:
                break
            if buf[pos + size] != c'\r' or buf[pos + size + 1] != c'\n':
                break
            if (
                i == 0
                and name is not None
                and PyBytes_GET_SIZE(name) == size
                and memcmp(PyBytes_AS_STRING(name), buf + pos, size) == 0
            ):
                arg = name
            else:
                # A pipeline (a master's stream most of all) repeats its keys,
                # field names and small values at the same places: the previous
                # command's argument is taken again when its bytes are the same,
                # which costs a compare instead of an allocation, a copy and a free.
                same = NULL
                if i and prev is not None and size <= SHARE_MAX and i < PyList_GET_SIZE(prev):
                    same = PyList_GET_ITEM(prev, i)  # (bytes: this scan made it)
                    if (PyBytes_GET_SIZE(<object>same) != size
                            or memcmp(PyBytes_AS_STRING(<object>same), buf + pos, size) != 0):
                        same = NULL
                if same is not NULL:
                    arg = <bytes>same
                else:
                    arg = PyBytes_FromStringAndSize(buf + pos, size)
                    if i == 0 and size <= 32:
                        name = _name = arg
            Py_INCREF(arg)  # PyList_SET_ITEM steals a reference
            PyList_SET_ITEM(argv, i, arg)
            pos += size + 2
            i += 1
        if i < count:
            # (The unfilled slots are NULL, which list deallocation allows.)
            break
        commands.append(argv)
        prev = argv
        used = pos
    return commands, used


def bulks(bytearray buf, Py_ssize_t pos, list args, Py_ssize_t remaining, Py_ssize_t max_bulk_len):
    """(pos, taken, payload): the canonical arguments of a half-read multibulk at buf[pos:].

    `SlowParser._bulks` calls this at each argument's '$' line: it appends up to
    `remaining` whole "$L\\r\\n" + L bytes + "\\r\\n" arguments to `args` and
    says where it stopped, how many it took and their payload bytes. Anything
    else (not whole yet, not canonical, longer than `max_bulk_len`) is left to
    the Python step, exactly as `scan` leaves it: a big command arriving over
    many reads then costs per argument what a small one does, not the Python
    parser's microsecond.
    """
    cdef const char *data = PyByteArray_AS_STRING(buf)
    cdef Py_ssize_t end = PyByteArray_GET_SIZE(buf)
    cdef Py_ssize_t taken = 0, payload = 0, start, size
    cdef bytes arg
    if max_bulk_len > (<Py_ssize_t>1 << 40):
        max_bulk_len = <Py_ssize_t>1 << 40
    while taken < remaining:
        if pos >= end or data[pos] != c'$':
            break
        start = pos + 1
        size = _number(data, end, &start, max_bulk_len)
        if size < 0 or end - start < size + 2:
            break
        if data[start + size] != c'\r' or data[start + size + 1] != c'\n':
            break
        arg = PyBytes_FromStringAndSize(data + start, size)
        args.append(arg)
        payload += size
        taken += 1
        pos = start + size + 2
    return pos, taken, payload


def blank(Py_ssize_t size):
    """A new bytes object of `size` bytes, not yet written: `fill` writes it.

    A big argument arrives over many reads; Redis reads it straight into an
    object of its size. So does `SlowParser`: the argument is one copy of its
    bytes, not a buffer of them and then a copy of that. Nobody sees (or
    hashes) the object before it is whole.
    """
    return PyBytes_FromStringAndSize(NULL, size)


def fill(bytes target, Py_ssize_t at, bytearray source, Py_ssize_t start, Py_ssize_t n):
    """Copy source[start:start + n] to target[at:at + n] (bounds checked)."""
    if (at < 0 or start < 0 or n < 0 or at + n > PyBytes_GET_SIZE(target)
            or start + n > PyByteArray_GET_SIZE(source)):
        raise IndexError("fill out of range")
    memcpy(PyBytes_AS_STRING(target) + at, PyByteArray_AS_STRING(source) + start, n)
