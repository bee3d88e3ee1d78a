# Set as an extension type (Cython pure mode: sets.py is compiled as it is); the
# compiled SADD (commands/_sets.pyx) cimports it and reads these fields directly.

cdef class Set:
    cdef public object members
    cdef public object kind
