# The C-level face of engine/_pelindex.pyx, for the compiled command bodies
# (commands/_groups.pyx, _claims.pyx) that file pending entries without building int keys.

cdef extern from *:
    """
    typedef unsigned __int128 rillet_u128;
    """
    ctypedef unsigned long long u128 "rillet_u128"


cdef inline Py_ssize_t bisect_left_u128(const u128 *a, Py_ssize_t n, u128 k) noexcept nogil:
    """bisect_left over n sorted packed keys (a block's)."""
    cdef Py_ssize_t lo = 0, hi = n, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] < k:
            lo = mid + 1
        else:
            hi = mid
    return lo


cdef class SortedIndex:
    cdef u128 *_maxes
    cdef u128 **_kb
    cdef Py_ssize_t *_kcap
    cdef list _vals
    cdef Py_ssize_t _nb, _bcap, _len, _load

    cdef void _free_blocks(self) noexcept
    cdef int _reserve_blocks(self, Py_ssize_t need) except -1
    cdef int _new_block(self, Py_ssize_t pos, u128 *keys, Py_ssize_t n, Py_ssize_t cap,
                        list vals) except -1
    cdef void _drop_block(self, Py_ssize_t pos) noexcept
    cdef int _resize_keys(self, Py_ssize_t pos, Py_ssize_t cap) except -1
    cdef int _bounds(self, lo, hi, u128 *klo, u128 *khi) except -1
    cdef int _split(self, Py_ssize_t pos) except -1
    cdef int _maybe_merge(self, Py_ssize_t pos) except -1
    # get(), insert() and pop() on a packed key.
    cdef object get_key(self, u128 k)
    cdef int insert_key(self, u128 k, object value) except -1
    cdef object pop_key(self, u128 k)


cdef class PendingEntry:
    cdef u128 _key, _tkey
    cdef public object owner
    cdef public object delivery_count
