# The compiled encoder's C entry point, shared with server/_fastpath.pyx.
cdef int put(bytearray out, object value, bint resp3) except -1
