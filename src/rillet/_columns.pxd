# A stream node's ms or seq column read in C: a packed node's array (1, 2, 4 or 8
# bytes wide), or the open tail's Python list (width 0). engine/stream_node.py keeps
# the columns; resp/_stream_entries.pyx (range replies) and commands/_groups.pyx
# (XREADGROUP's new IDs) read them. Inline, so each module compiles its own copy.
# A leaf beside the package's other shared declarations: it imports nothing of rillet,
# so resp/ may cimport it without reaching up into engine/ (tests/test_layers.py).

from cpython.array cimport array
from cpython.list cimport PyList_GET_ITEM
from cpython.long cimport PyLong_AsUnsignedLongLong
from cpython.object cimport PyObject
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t


cdef struct Col:
    const char *ptr
    int width
    PyObject *items


cdef inline int _col(Col *col, object values) except -1:
    cdef array packed
    if type(values) is list:
        col.width = 0
        col.items = <PyObject *>values
        col.ptr = NULL
    else:
        packed = values  # checked: anything but an array raises TypeError
        if packed.ob_descr.typecode not in b"BHIQL":
            raise TypeError("stream node column must hold unsigned integers")
        col.width = packed.ob_descr.itemsize
        col.ptr = packed.data.as_chars
        col.items = NULL
    return 0


cdef inline uint64_t _at(Col *col, Py_ssize_t i) except? 0xFFFFFFFFFFFFFFFF:
    cdef int width = col.width
    if width == 1:
        return (<const uint8_t *>col.ptr)[i]
    if width == 2:
        return (<const uint16_t *>col.ptr)[i]
    if width == 4:
        return (<const uint32_t *>col.ptr)[i]
    if width == 8:
        return (<const uint64_t *>col.ptr)[i]
    return PyLong_AsUnsignedLongLong(<object>PyList_GET_ITEM(<object>col.items, i))
