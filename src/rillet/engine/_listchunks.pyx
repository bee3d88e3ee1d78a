# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""engine/lists.py's `pack` and `unpack` compiled (the Python ones are the reference).

A list chunk is (data, offs): its elements' bytes concatenated, and an array
of len + 1 offsets in the narrowest unsigned type that holds len(data). In
Python, packing 128 elements cost ~900 instructions an element (join, the
offsets through accumulate, a list and the array's per-item conversion); an
LPUSH pays that once per element. Here it is one pass to size, one to copy,
and the offsets handed to the array as raw bytes. tests/engine/test_list_packed.py
checks both forms give the same chunks.
"""

from cpython cimport array
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_CheckExact, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE, PyList_New, PyList_SET_ITEM
from cpython.ref cimport Py_INCREF
from libc.string cimport memcpy

from array import array as _array
from itertools import accumulate


cdef object _py_pack(items):
    data = b"".join(items)
    top = len(data)
    code = "B" if top < 256 else "H" if top < 65536 else "I" if top < 4294967296 else "Q"
    return (data, _array(code, list(accumulate(map(len, items), initial=0))))


def pack(list items):
    """(data, offs) for `items` (bytes)."""
    cdef Py_ssize_t n = PyList_GET_SIZE(items), i, size
    cdef unsigned long long total = 0, at = 0
    cdef char* out
    cdef char* raw
    cdef int width
    for i in range(n):
        item = <object>PyList_GET_ITEM(items, i)
        if not PyBytes_CheckExact(item):
            return _py_pack(items)
        total += <unsigned long long>PyBytes_GET_SIZE(item)
    if total < 256:
        width, code = 1, "B"
    elif total < 65536:
        width, code = 2, "H"
    elif total < 4294967296ULL:
        width, code = 4, "I"
    else:
        width, code = 8, "Q"
    data = PyBytes_FromStringAndSize(NULL, <Py_ssize_t>total)
    offsets = PyBytes_FromStringAndSize(NULL, (n + 1) * width)
    out = PyBytes_AS_STRING(data)
    raw = PyBytes_AS_STRING(offsets)
    for i in range(n + 1):
        if width == 1:
            (<unsigned char*>raw)[i] = <unsigned char>at
        elif width == 2:
            (<unsigned short*>raw)[i] = <unsigned short>at
        elif width == 4:
            (<unsigned int*>raw)[i] = <unsigned int>at
        else:
            (<unsigned long long*>raw)[i] = at
        if i < n:
            item = <object>PyList_GET_ITEM(items, i)
            size = PyBytes_GET_SIZE(item)
            memcpy(out + at, PyBytes_AS_STRING(item), size)
            at += <unsigned long long>size
    return (data, _array(code, offsets))


cdef inline unsigned long long _at(array.array offs, char code, Py_ssize_t i) noexcept:
    if code == b'B':
        return offs.data.as_uchars[i]
    if code == b'H':
        return offs.data.as_ushorts[i]
    if code == b'I':
        return offs.data.as_uints[i]
    return offs.data.as_ulonglongs[i]


def unpack(tuple chunk):
    """The elements of a chunk, as a new list."""
    data = chunk[0]
    cdef array.array offs = chunk[1]
    cdef char code = offs.ob_descr.typecode
    cdef Py_ssize_t n = len(offs) - 1, i
    cdef unsigned long long a, b
    cdef const char* p = PyBytes_AS_STRING(data)
    cdef unsigned long long size = <unsigned long long>PyBytes_GET_SIZE(data)
    if n < 0 or code not in (b'B', b'H', b'I', b'Q'):
        raise ValueError("not a list chunk")
    out = PyList_New(n)
    b = _at(offs, code, 0)
    for i in range(n):
        a = b
        b = _at(offs, code, i + 1)
        if b < a or b > size:
            raise ValueError("list chunk offsets out of order")
        item = PyBytes_FromStringAndSize(p + a, <Py_ssize_t>(b - a))
        Py_INCREF(item)
        PyList_SET_ITEM(out, i, item)
    return out
