# Client and ServerState as extension types (Cython pure mode: state.py is compiled as
# it is). The compiled command bodies and the command loop cimport them and read these
# fields directly (commands/_bodies.pxi, _writes.pyx, server/_fastpath.pyx). Every slot
# of the .py classes is a field here; ServerState keeps the rest in its __dict__.

cdef class Client:
    cdef public object id
    cdef public object server
    cdef public object conn
    cdef public object db
    cdef public object resp3
    cdef public object _authenticated
    cdef public object name
    cdef public object lib_name
    cdef public object lib_ver
    cdef public object _multi
    cdef public object gated
    cdef public object multi_error
    cdef public object watched
    cdef public object dirty_cas
    cdef public object created_ms
    cdef public object last_interaction_ms
    cdef public object last_command
    cdef public object blocked
    cdef public object closing
    cdef public object in_exec
    cdef public object blocked_retry
    cdef public object flags
    cdef public object is_internal
    cdef public object user
    cdef public object restricted
    cdef public object obuf_class
    cdef public object pubsub
    cdef public object reply_mode
    cdef public object tracking
    cdef public object replaying
    cdef public object no_evict
    cdef public object no_touch
    cdef public object cluster_asking, cluster_readonly


cdef class ServerState:
    cdef dict __dict__
    cdef object __weakref__
    cdef public object dirty
    cdef public object _effects
    cdef public object _tx_effects
    cdef public list effect_sinks
    cdef public dict watched_keys
    cdef public dict blocking
    cdef public object tracking
    cdef public object config
    cdef public object clock
    cdef public object memory
    cdef public object gated
    cdef public object stats
    cdef public object keyspace
    cdef public list key_wakeups
    cdef public dict ready_keys
    cdef public object shutdown_requested
    cdef public object notify_flags
    cdef public object slow_ns
