# List as an extension type (Cython pure mode: lists.py is compiled as it is); the
# compiled pushes and pops (commands/_lists.pyx) cimport it and read these fields directly.

cdef class List:
    cdef public object head
    cdef public object chunks
    cdef public object tail
    cdef public object mid
    cdef public object nbytes
    cdef public object big
