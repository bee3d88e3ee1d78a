# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The list pushes and pops compiled: LPUSH/RPUSH/LPUSHX/RPUSHX, and LPOP/RPOP without a count.

Counted with callgrind in-process (64 pipelined commands per read), an LPUSH
onto a growing list cost ~26,000 instructions against ~7,700 for a compiled
SET: the Python frames of `_push`, `lookup`, `config_int` (twice), `will_add`,
`push`, `notify`, `_written`, `shrunk` and `modified`, and the listpack size
of each element. Here they run in C on the List's open ends (engine/lists.py:
`head`/`tail` lists, the size sum, the encoding flag), with every rare case
handed to the Python body that is the reference for it: a key whose TTL is due,
a Database with LFU or key-event hooks (`_plain_for`), a value that is not bytes,
a client of another class, LPOP/RPOP with a count. WATCH, blocked clients
and tracking go through ServerState.key_modified as in Python (`_modified`);
keyspace events through ServerState.notify; an open end that fills is sealed
and an empty one reopened by the List's own Python methods.

Keep in step with commands/lists.py `_push`/`_pop`/`_written`, engine/lists.py
(List's slots, OPEN_MAX, push/pop, will_add, shrunk) and
listpack_size.element_size. tests/server/test_list_bodies.py runs generated
command sequences through these and through the Python bodies and compares
replies, effects, events and the lists' layout. The slot-offset, server-attribute
and listpack-size helpers are commands/_bodies.pxi's, shared with _writes.pyx.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_CheckExact, PyBytes_GET_SIZE
from cpython.dict cimport PyDict_GetItem, PyDict_SetItem
from cpython.list cimport PyList_Append, PyList_GET_ITEM, PyList_GET_SIZE
from cpython.long cimport PyLong_AsLongLong, PyLong_FromLongLong
from cpython.object cimport PyObject
from cpython.ref cimport Py_INCREF, Py_XDECREF

from rillet import errors
from rillet.engine import lists as _lists_module
from rillet.engine.lists cimport List
from rillet.errors import ReplyError
from rillet.notify import GENERIC, LIST

cdef object _List = List
cdef object _ReplyError = ReplyError
cdef object _WRONGTYPE = errors.WRONGTYPE
cdef object _LIST = LIST
cdef object _GENERIC = GENERIC
cdef object _MAX_SIZE = "list-max-listpack-size"

# Set by bind(): the Python bodies, for what this module does not answer.
cdef object _py_push = None  # lists._push(ctx, argv, left, only_existing)
cdef object _py_pop = None  # lists._pop(ctx, argv, left)


def bind(push, pop):
    """commands/lists.py hands over its Python bodies."""
    global _py_push, _py_pop
    _py_push = push
    _py_pop = pop


# --- direct slot access and the shared helpers (commands/_bodies.pxi) -----------------------

include "_bodies.pxi"


# An open end this long is sealed (List.seal); read once, as List reads it at each push.
cdef Py_ssize_t _OPEN_MAX = _lists_module.OPEN_MAX


cdef inline dict _config_values(object server):
    """Config.values: canonical parameter name -> value (ints for int parameters)."""
    return _config(server).values


# --- listpack limits (keep in step with engine/lists.py) --------------------------------------

cdef inline long long _byte_limit(long long max_size) noexcept:
    # lists._SIZE_LIMITS: -1..-5 are 4..64 KiB, any other negative 8 KiB.
    if -5 <= max_size <= -1:
        return 4096LL << (-max_size - 1)
    return 8192


cdef inline bint _exceeds(long long max_size, long long nbytes, long long count) noexcept:
    """lists._exceeds (quicklistNodeExceedsLimit)."""
    if max_size < 0:
        return nbytes > _byte_limit(max_size)
    return nbytes > 8192 or count > max_size


cdef inline bint _small(long long max_size, long long nbytes, long long count) noexcept:
    """List.shrunk's test: back under half the limit."""
    if max_size < 0:
        return nbytes <= _byte_limit(max_size) // 2
    return count <= max_size // 2 and nbytes <= 4096


# --- the bodies -------------------------------------------------------------------------------

cdef object _lookup(object ctx, object key, PyObject** db_out):
    """The List at `key` (None if missing) on a plain database, WRONGTYPE for another type;
    NotImplemented when the Python body must answer."""
    cdef PyObject* found
    if type(ctx) is not Client:
        return NotImplemented
    db = (<Client>ctx).db
    if not _plain_for(db, key):
        return NotImplemented
    db_out[0] = <PyObject*>db
    found = PyDict_GetItem((<Database>db).data, key)
    if found is NULL:
        return None
    _touch(db, key)
    if type(<object>found) is not _List:
        raise _ReplyError(_WRONGTYPE)
    return <object>found


cdef object _push(object ctx, list argv, bint left, bint only_existing):
    cdef Py_ssize_t argc = PyList_GET_SIZE(argv), i, added = argc - 2
    cdef long long raw = 0, nbytes, count, max_size
    cdef PyObject* db_p = NULL
    for i in range(2, argc):
        if not PyBytes_CheckExact(<object>PyList_GET_ITEM(argv, i)):
            return _py_push(ctx, argv, left, only_existing)
    key = <object>PyList_GET_ITEM(argv, 1)
    value = _lookup(ctx, key, &db_p)
    if value is NotImplemented:
        return _py_push(ctx, argv, left, only_existing)
    db = <object>db_p
    server = (<Client>ctx).server
    if value is None:
        if only_existing:
            return 0
        value = _List()
        db.set(key, value)
    head = (<List>value).head
    tail = (<List>value).tail
    if type(head) is not list or type(tail) is not list:
        return _py_push(ctx, argv, left, only_existing)
    side = head if left else tail
    count = PyList_GET_SIZE(head) + PyLong_AsLongLong((<List>value).mid) + PyList_GET_SIZE(tail)
    nbytes = PyLong_AsLongLong((<List>value).nbytes)
    config = _config_values(server)
    max_size = config[_MAX_SIZE]
    big = (<List>value).big
    if not big:
        # will_add: the raw lengths, checked before the push
        for i in range(2, argc):
            raw += PyBytes_GET_SIZE(<object>PyList_GET_ITEM(argv, i))
        if _exceeds(max_size, nbytes + raw, count + added):
            big = True
    for i in range(2, argc):
        nbytes += _element_size(<bytes>PyList_GET_ITEM(argv, i))
    for i in range(2, argc):  # the head is reversed: LPUSH appends to it too
        PyList_Append(side, <object>PyList_GET_ITEM(argv, i))
    count += added
    (<List>value).nbytes = PyLong_FromLongLong(nbytes)
    if PyList_GET_SIZE(side) >= _OPEN_MAX:
        value.seal(left)
    if config[_NOTIFY]:
        server.notify(_LIST, b"lpush" if left else b"rpush", key, db.index)
    # _written: the list is not empty; shrunk() back to listpack under half the limit
    if big and _small(max_size, nbytes, count):
        big = False
    (<List>value).big = True if big else False
    _modified(server, db, key)
    return count


def lpush(ctx, list argv):
    """LPUSH key element [element ...]"""
    return _push(ctx, argv, True, False)


def rpush(ctx, list argv):
    """RPUSH key element [element ...]"""
    return _push(ctx, argv, False, False)


def lpushx(ctx, list argv):
    """LPUSHX key element [element ...]"""
    return _push(ctx, argv, True, True)


def rpushx(ctx, list argv):
    """RPUSHX key element [element ...]"""
    return _push(ctx, argv, False, True)


cdef object _pop(object ctx, list argv, bint left):
    cdef PyObject* db_p = NULL
    cdef long long nbytes, count, max_size
    cdef Py_ssize_t h, t
    if PyList_GET_SIZE(argv) != 2:
        return _py_pop(ctx, argv, left)
    key = <object>PyList_GET_ITEM(argv, 1)
    value = _lookup(ctx, key, &db_p)
    if value is NotImplemented:
        return _py_pop(ctx, argv, left)
    if value is None:
        return None
    db = <object>db_p
    head = (<List>value).head
    tail = (<List>value).tail
    if type(head) is not list or type(tail) is not list:
        return _py_pop(ctx, argv, left)
    server = (<Client>ctx).server
    # List.pop: an empty end reopens the nearest chunk, else the other end serves
    if left:
        if PyList_GET_SIZE(head) == 0 and (<List>value).chunks:
            value.reopen(True)
            head = (<List>value).head
        element = head.pop() if PyList_GET_SIZE(head) else tail.pop(0)
    else:
        if PyList_GET_SIZE(tail) == 0 and (<List>value).chunks:
            value.reopen(False)
            tail = (<List>value).tail
        element = tail.pop() if PyList_GET_SIZE(tail) else head.pop(0)
    nbytes = PyLong_AsLongLong((<List>value).nbytes) - _element_size(<bytes>element)
    (<List>value).nbytes = PyLong_FromLongLong(nbytes)
    count = PyList_GET_SIZE(head) + PyLong_AsLongLong((<List>value).mid) + PyList_GET_SIZE(tail)
    config = _config_values(server)
    if config[_NOTIFY]:
        server.notify(_LIST, b"lpop" if left else b"rpop", key, db.index)
    # _written: an emptied list goes (`del`), a shrunk one converts back
    if count == 0:
        db.delete(key)
        if config[_NOTIFY]:
            server.notify(_GENERIC, b"del", key, db.index)
    elif (<List>value).big:
        max_size = config[_MAX_SIZE]
        if _small(max_size, nbytes, count):
            (<List>value).big = False
    _modified(server, db, key)
    return element  # propagated as sent (lists._pop)


def lpop(ctx, list argv):
    """LPOP key [count]"""
    return _pop(ctx, argv, True)


def rpop(ctx, list argv):
    """RPOP key [count]"""
    return _pop(ctx, argv, False)
