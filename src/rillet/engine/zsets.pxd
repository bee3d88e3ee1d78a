# ZSet as an extension type (Cython pure mode: zsets.py is compiled as it is); the
# compiled ZADD (commands/_zsets.pyx) cimports it and reads these fields directly.

cdef class ZSet:
    cdef public object scores
    cdef public object order
    cdef public object big
