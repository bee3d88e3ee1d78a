# Tracking as an extension type (Cython pure mode: tracking.py is compiled as it is);
# the compiled bodies (commands/_bodies.pxi) cimport it to read `clients`.

cdef class Tracking:
    cdef dict __dict__
    cdef public object clients
