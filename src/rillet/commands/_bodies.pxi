# The helpers the compiled command bodies share (commands/_writes.pyx, _groups.pyx,
# _hashes.pyx, _lists.pyx, _sets.pyx and _zsets.pyx include this file; keep in step
# with the Python they inline, named at each).
# Each module includes its own copy at build time: one source, no cross-module calls
# on the hot path.

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_CheckExact, PyBytes_GET_SIZE
from cpython.dict cimport PyDict_GetItem, PyDict_GetItemWithError, PyDict_SetItem
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE
from cpython.long cimport PyLong_AsLongLong
from cpython.object cimport PyObject, Py_SIZE
from cpython.ref cimport Py_INCREF, Py_XDECREF

from rillet.engine.keyspace cimport Database
from rillet.state cimport Client, ServerState
from rillet.tracking cimport Tracking

cdef object _NOTIFY = "notify-keyspace-events"

# The engine's classes are extension types (a .pxd beside each .py): the bodies read
# their fields as struct fields, on objects whose exact type was checked.

cdef extern from "Python.h":
    Py_ssize_t PyDict_GET_SIZE(object) noexcept


cdef inline bint _plain_for(object db, object key) except -1:
    """The bodies below may do Database.get/set's work inline on `key`: `db` is exactly
    a Database with no LFU or LRM policy and no `new`/`overwritten` event hooks armed, `key`
    is bytes, and it has no TTL or one not yet due. Database.get's expiry step then
    does nothing for it (`_expire_if_due` returns False before anything else, the
    same test on the same clock), so TTLs elsewhere in the keyspace (sessions, caches,
    locks) keep every body compiled; a due key goes to the Python body, which expires
    it (DEL effect, `expired` event, stats). A body that replaces the value drops
    the TTL as Database.set does (`_db_set`); in-place changes keep it, as in Python."""
    cdef PyObject* deadline
    if (type(db) is not Database or not PyBytes_CheckExact(key)
            or (<Database>db).lfu is not None or (<Database>db).lrm is not False
            or (<Database>db).on_new is not None or (<Database>db).on_overwrite is not None):
        return False
    expires = (<Database>db).expires
    if not expires:
        return True
    deadline = PyDict_GetItem(expires, key)
    if deadline is NULL:
        return True
    return <object>deadline > ((<Database>db).clock).now_ms()


cdef inline void _touch(object db, object key) except *:
    """Database.get's access record (Redis's LRU clock), for a _plain_for key."""
    PyDict_SetItem((<Database>db).access, key, (<Database>db).lru_now)


cdef object _plain_value(object ctx, list argv, object cls):
    """The value at argv[1] when a body may work on it inline: `ctx` is a Client, every
    argument is bytes, its Database is plain for that key (`_plain_for`) and holds
    exactly a `cls` there. None otherwise: the caller hands the command to its Python body."""
    cdef Py_ssize_t i
    cdef PyObject* found
    if type(ctx) is not Client:
        return None
    for i in range(1, PyList_GET_SIZE(argv)):
        if not PyBytes_CheckExact(<object>PyList_GET_ITEM(argv, i)):
            return None
    db = (<Client>ctx).db
    key = <object>PyList_GET_ITEM(argv, 1)
    if not _plain_for(db, key):
        return None
    found = PyDict_GetItem((<Database>db).data, key)
    if found is NULL or type(<object>found) is not cls:
        return None
    return <object>found


# --- listpack sizes (keep in step with engine/listpack_size.py) -------------------------

cdef inline int _int_size(long long value) noexcept:
    if 0 <= value <= 127:
        return 2
    if -4096 <= value <= 4095:
        return 3
    if -32768 <= value <= 32767:
        return 4
    if -8388608 <= value <= 8388607:
        return 5
    if -2147483648 <= value <= 2147483647:
        return 6
    return 10


cdef inline int _diff_size(unsigned long long a, unsigned long long b) noexcept:
    # `a - b` in uint64 stored as int64, as t_stream.c does.
    return _int_size(<long long>(a - b))


cdef inline long long _string_size(Py_ssize_t length) noexcept:
    cdef long long n
    if length < 64:
        n = 1 + length
    elif length < 4096:
        n = 2 + length
    else:
        n = 5 + length
    if n < 128:
        return n + 1
    if n < 16384:
        return n + 2
    if n < 2097152:
        return n + 3
    if n < 268435456:
        return n + 4
    return n + 5


cdef long long _element_size(bytes value) noexcept:
    """listpack_size.element_size: canonical int64 decimals are stored as integers."""
    cdef Py_ssize_t length = PyBytes_GET_SIZE(value)
    cdef const unsigned char* p = <const unsigned char*>PyBytes_AS_STRING(value)
    cdef Py_ssize_t i = 0
    cdef bint negative = False
    cdef unsigned long long magnitude = 0
    cdef unsigned int digit
    if length == 0 or length >= 21:
        return _string_size(length)
    if p[0] == b'-':
        negative = True
        i = 1
        if length == 1:
            return _string_size(length)
    if p[i] == b'0' and (length - i > 1 or negative):
        return _string_size(length)  # leading zero or "-0": not canonical
    while i < length:
        digit = p[i] - 48
        if digit > 9:
            return _string_size(length)
        if magnitude > 922337203685477580ULL:
            return _string_size(length)
        magnitude = magnitude * 10 + digit
        i += 1
    if negative:
        if magnitude > 9223372036854775808ULL:
            return _string_size(length)
        if magnitude == 9223372036854775808ULL:
            return 10
        return _int_size(-<long long>magnitude)
    if magnitude > 9223372036854775807ULL:
        return _string_size(length)
    return _int_size(<long long>magnitude)


def element_size(bytes value):
    """The compiled listpack_size.element_size (tests compare the two)."""
    return _element_size(value)


# ServerState's attributes a write touches are typed fields (state.pxd): read here
# once the exact type is checked, ~5 instructions each where an instance-dict lookup
# cost ~110. Its other attributes are in its __dict__, read through
# _server_vars/_var (one dict lookup each).

cdef inline object _config(object server):
    return (<ServerState>server).config if type(server) is ServerState else server.config


cdef inline object _clock(object server):
    return (<ServerState>server).clock if type(server) is ServerState else server.clock


cdef object _vars_of = None
cdef dict _vars = None


cdef inline dict _server_vars(object server):
    global _vars_of, _vars
    if server is not _vars_of:
        if type(server) is not ServerState:
            return None
        _vars = server.__dict__
        _vars_of = server
    return _vars


cdef inline object _var(dict values, object server, str name):
    """server.<name> for an attribute in ServerState's __dict__ (its fields: _config, _clock)."""
    cdef PyObject* found
    if values is not None:
        found = PyDict_GetItemWithError(values, name)
        if found is not NULL:
            return <object>found
    return getattr(server, name)


cdef object _cfg_of = None  # the Config whose `values` is _cfg_values
cdef dict _cfg_values = None
cdef object _cfg_notify = _NOTIFY  # _cfg_values' own key object for _NOTIFY


cdef int _cfg_seen(object config) except -1:
    """Keeps config.values (never replaced: one dict per Config) and its own key for
    notify-keyspace-events, which a lookup then matches by identity, no compare."""
    global _cfg_of, _cfg_values, _cfg_notify
    values = config.values
    if type(values) is not dict:
        _cfg_of = None
        return 0
    _cfg_values = <dict>values
    _cfg_of = config
    _cfg_notify = _NOTIFY
    for name in _cfg_values:
        if name == _NOTIFY:
            _cfg_notify = name
            break
    return 0


cdef inline object _config_value(object server, str name):
    """server.config.values[name]."""
    config = _config(server)
    if config is not _cfg_of:
        _cfg_seen(config)
        if _cfg_of is None:
            return config.values[name]
    return _cfg_values[name]


cdef inline bint _notify_on(object server) except -1:
    """Any keyspace event class enabled (ServerState.notify's first test)."""
    cdef PyObject* flags
    if type(server) is ServerState:
        notify_flags = (<ServerState>server).notify_flags
        if type(notify_flags) is int:
            return Py_SIZE(notify_flags) != 0  # (an int is true when it has digits)
    config = _config(server)
    if config is not _cfg_of:
        _cfg_seen(config)
        if _cfg_of is None:
            return bool(config.values[_NOTIFY])
    flags = PyDict_GetItemWithError(_cfg_values, _cfg_notify)
    if flags is NULL:
        return bool(_cfg_values[_NOTIFY])  # raises KeyError as the lookup would
    return bool(<object>flags)


cdef inline bint _tracking_on(object tracking) except -1:
    """tracking.clients: some client has CLIENT TRACKING on."""
    if type(tracking) is Tracking:
        return bool((<Tracking>tracking).clients)
    return bool(tracking.clients)


cdef inline bint _empty_dict(dict value) noexcept:
    """`value` is an empty dict (None is not: key_modified decides)."""
    return value is not None and PyDict_GET_SIZE(value) == 0


cdef inline int _modified(object server, object db, object key) except -1:
    """ServerState.key_modified(db.index, key), its common case (nobody watching,
    blocked or tracking) inline (keep in step)."""
    if (type(server) is not ServerState or type(db) is not Database
            or not _empty_dict((<ServerState>server).watched_keys)
            or not _empty_dict((<ServerState>server).blocking)
            or _tracking_on((<ServerState>server).tracking)):
        server.key_modified(db.index, key)
        return 0
    dirty = (<ServerState>server).dirty
    if type(dirty) is not int:
        server.key_modified(db.index, key)
        return 0
    (<ServerState>server).dirty = dirty + 1
    # The key's memory estimate is redone when next asked for (key_modified, memory.py).
    PyDict_SetItem((<Database>db).pending, key, None)
    return 0


cdef inline bint _sinks(object server) except -1:
    if type(server) is ServerState:
        return bool((<ServerState>server).effect_sinks)
    return bool(server.effect_sinks)
