# Database as an extension type (Cython pure mode: keyspace.py is compiled as it is).
# The compiled command bodies and the command loop cimport it and read these fields
# directly (commands/_bodies.pxi, server/_fastpath.pyx). Every slot of the .py class
# is a field here; containers are typed (they are only ever those), the rest are objects.

cdef class Database:
    cdef public object index
    cdef public dict data
    cdef public dict expires
    cdef public object clock
    cdef public object on_expire
    cdef public object expire_mode
    cdef public object expiry_paused
    cdef public dict _seq_of
    cdef public list _scan_keys
    cdef public list _scan_seqs
    cdef public object _next_seq
    cdef public object _dead
    cdef public dict encodings
    cdef public dict sizes
    cdef public object used
    cdef public dict pending
    cdef public dict access
    cdef public object lru_now
    cdef public object lfu
    cdef public object lrm
    cdef public dict in_use
    cdef public object on_new
    cdef public object on_overwrite
    cdef public dict streams
    cdef public object on_set_expire
    cdef public object avg_ttl
