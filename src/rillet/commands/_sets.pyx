# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""SADD compiled for a set that has outgrown its intset and listpack: `SADD key member ...`.

Counted at -P 64 beside Redis 7.0.15 (bench/data_types.py), an SADD onto a
big set cost 3.7 us of server CPU against Redis's 1.3: the Python frames of
`sadd`, `get_set`, `lookup`, `Database.get`, `Set.add` per member,
`note_added` and `limits`, `modified` and `notify`. For a set in the
`hashtable` encoding (which no SADD converts) the work is a dict store per new
member; everything else goes to the Python `sets.sadd`, the reference: a new
key, another type, an intset or listpack set (its conversion rules), a
key whose TTL is due, a Database with LFU or key-event hooks (`_plain_for`),
arguments that are not bytes.

Keep in step with commands/sets.py `sadd` and engine/sets.py `Set.add`;
tests/server/test_container_bodies.py runs generated command sequences
through both and compares replies, effects, events and the sets.
"""

from cpython.dict cimport PyDict_Contains

from rillet.engine.sets cimport Set
from rillet.engine.sets import HASHTABLE
from rillet.notify import SET

include "_bodies.pxi"

cdef object _Set = Set
cdef object _SET_EVENT = SET
cdef object _HASHTABLE = HASHTABLE

cdef object _py_sadd = None  # sets.sadd, set by bind()


def bind(sadd_general):
    """commands/sets.py hands over its Python body."""
    global _py_sadd
    _py_sadd = sadd_general


def sadd(ctx, list argv):
    """SADD key member [member ...]

    The compiled `sets.sadd` for a set in the hashtable encoding (see the module docstring).
    """
    cdef Py_ssize_t argc = PyList_GET_SIZE(argv), i
    cdef long long added = 0
    s = _plain_value(ctx, argv, _Set) if argc >= 3 else None
    if s is None:
        return _py_sadd(ctx, argv)
    key = <object>PyList_GET_ITEM(argv, 1)
    db = (<Client>ctx).db
    members = (<Set>s).members
    if (<Set>s).kind != _HASHTABLE or type(members) is not dict:
        return _py_sadd(ctx, argv)
    _touch(db, key)
    for i in range(2, argc):
        member = <object>PyList_GET_ITEM(argv, i)
        if not PyDict_Contains(members, member):
            PyDict_SetItem(members, member, None)
            added += 1
    if added:
        server = (<Client>ctx).server
        _modified(server, db, key)
        if _notify_on(server):
            server.notify(_SET_EVENT, b"sadd", key, db.index)
    return added
