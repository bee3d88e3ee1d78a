# Memory as an extension type (Cython pure mode: memory.py is compiled as it is); the
# command loop (server/_fastpath.pyx) cimports it to read `limit`.

cdef class Memory:
    cdef public object state
    cdef public object limit
    cdef public object policy
    cdef public object samples
    cdef public object tenacity
    cdef public object lfu
    cdef public object pool
    cdef public object peak
    cdef public object peak_time
    cdef public object _next_db
    cdef public object running
    cdef public object exceeded_since_us
    cdef public object ignore_on_replica
