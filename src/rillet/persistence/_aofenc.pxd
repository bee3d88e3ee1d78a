# EffectStream's C side, for compiled bodies that write their effect straight into
# a sink (commands/_writes.pyx, XADD).

cdef class EffectStream:
    cdef char* data
    cdef Py_ssize_t size
    cdef Py_ssize_t capacity
    cdef public long selected_db
    cdef public object on_buffered
    cdef char* reserve(self, Py_ssize_t n) except NULL
    cdef int select(self, long db) except -1
