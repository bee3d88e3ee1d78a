# StreamNode as an extension type (Cython pure mode: stream_node.py is the source).
# The compiled bodies cimport it and read these as C struct fields
# (commands/_writes.pyx, _groups.pyx, _claims.pyx, persistence/_rdbfast.pyx).

cdef class StreamNode:
    cdef public object ms0, seq0  # u64: Python ints
    cdef public object mf  # list[bytes]
    cdef public Py_ssize_t k, k2, k18, fixed_text, n, live, body, same_fixed
    cdef public object elems
    cdef public bint is_open, fast, fresh
    cdef public object lp
    # The entry fields: None in a loaded node until `lp` is decoded (lp is None
    # once it is); Python reads them through the properties, which decode.
    cdef object _ms, _seq, _data, _offs, _estart, _same, _dead
    cdef Py_ssize_t _head
