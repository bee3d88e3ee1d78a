# The compiled sorted-set order's C interface (engine/_zorder.pyx), for the
# compiled ZADD body (commands/_zsets.pyx), which inserts and moves pairs
# without building tuples.
from cpython.object cimport PyObject


cdef struct Pair:
    double score
    PyObject* member  # a bytes object; the chunk owns one reference


cdef struct Chunk:
    Py_ssize_t n
    Py_ssize_t cap  # pairs `items` has room for: grows by doubling up to 2 * load + 1
    Pair* items


cdef struct Key:
    double score
    PyObject* member  # NULL when side != 0
    int side  # -1: before every member of `score`; 1: after every one; 0: `member`


cdef class ZOrder:
    cdef Chunk* _chunks
    cdef Py_ssize_t _nchunks
    cdef Py_ssize_t _room  # chunk slots allocated
    cdef Pair* _maxes  # _maxes[k]: the last pair of chunk k (borrowed reference)
    cdef Py_ssize_t* _cum  # _cum[k]: pairs before chunk k; _cum[_nchunks] = _len
    cdef bint _cum_ok
    cdef Py_ssize_t _len
    cdef readonly Py_ssize_t load

    cdef Chunk* _insert_chunk(self, Py_ssize_t at, Py_ssize_t cap) except NULL
    cdef void _drop_chunk(self, Py_ssize_t at) noexcept
    cdef Py_ssize_t* _offsets(self) noexcept
    cdef Py_ssize_t _locate(self, Py_ssize_t index, Py_ssize_t* at) noexcept
    cdef Py_ssize_t _chunk_left(self, const Key* k) noexcept
    cdef Py_ssize_t _chunk_right(self, const Key* k) noexcept
    cdef int _add(self, double score, object member) except -1
    cdef bint _remove(self, const Key* k) except -1
    cdef list _chunk_list(self, Py_ssize_t k, Py_ssize_t start, Py_ssize_t stop)
    cdef list _slice(self, Py_ssize_t start, Py_ssize_t stop)
