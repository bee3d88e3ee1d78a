# Stream and NodeLimits as extension types (Cython pure mode: stream.py is the source).
# The compiled bodies cimport them and read these as C struct fields
# (commands/_writes.pyx, _groups.pyx, _claims.pyx).

from rillet.engine.stream_node cimport StreamNode


cdef class NodeLimits:
    cdef long long _node_max_entries, _node_max_bytes  # (the properties' values)
    cdef public long long effective_max_bytes, fast_entries


cdef class Stream:
    cdef readonly list _nodes, _keys  # (readonly: tests and memory.py read them)
    cdef StreamNode _tail  # _nodes[-1], or None
    cdef public NodeLimits limits
    cdef public Py_ssize_t length
    cdef public object last_id, entries_added, max_deleted_id, deleted_mark  # StreamID, int
    cdef public dict groups
    cdef public object idmp
    cdef public object retention_ms  # int (engine/stream_policy.py)
    cdef Py_ssize_t _tree_version
    cdef object _tree_nodes_cache
