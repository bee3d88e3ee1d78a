# Hash as an extension type (Cython pure mode: hashes.py is compiled as it is); the
# compiled HSET (commands/_hashes.pyx) cimports it and reads these fields directly.

cdef class Hash:
    cdef public object fields
    cdef public object ttls
    cdef public object big
    cdef public object ex
