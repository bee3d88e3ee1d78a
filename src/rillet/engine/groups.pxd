# Consumer and ConsumerGroup as extension types (Cython pure mode: groups.py is the
# source). The compiled bodies cimport them and read these as C struct fields
# (commands/_groups.pyx, _claims.pyx).

cdef class Consumer:
    cdef public object name  # bytes
    cdef public object pel  # SortedIndex
    cdef public object seen_time_ms, active_time_ms  # int


cdef class ConsumerGroup:
    cdef public object name  # bytes
    cdef public object last_id  # StreamID
    cdef public object entries_read  # int, or None (invalid)
    cdef public object pel, idle_index  # SortedIndex
    cdef public dict consumers
    cdef public Py_ssize_t nacked_count
    cdef public long long _touch_seq  # (public: tests read it)
    cdef public object _names_sorted  # list[bytes] or None
    cdef public object max_deliveries, dead_letter_key  # int, bytes or None (stream_policy.py)
