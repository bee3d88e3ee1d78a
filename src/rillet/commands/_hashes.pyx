# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""HSET compiled for a hash that has outgrown its listpack: `HSET key field value ...`.

Counted at -P 64 beside Redis 7.0.15 (bench/data_types.py), an HSET onto a big
hash cost 4.3 us of server CPU against Redis's 1.6: the Python frames of
`hset`, `get_hash`, `lookup`, `Database.get`, `Hash.set` per pair, `_note`
and its two config reads, `modified` and `notify`. For a hash in the
`hashtable` encoding with no field TTLs (which no HSET can convert back or
expire) the work is a dict store per pair; everything else goes to the
Python `hashes.hset`, the reference: a new key, another type, a listpack hash
(its conversion rules), field TTLs (HSET drops them), a key whose TTL is due,
a Database with LFU or key-event hooks (`_plain_for`), arguments that are not bytes.

Keep in step with commands/hashes.py `hset` and engine/hashes.py `Hash.set`;
tests/server/test_container_bodies.py runs generated command sequences
through both and compares replies, effects, events and the hashes.
"""

from cpython.dict cimport PyDict_Contains

from rillet.engine.hashes cimport Hash
from rillet.notify import HASH

include "_bodies.pxi"

cdef object _Hash = Hash
cdef object _HASH_EVENT = HASH

cdef object _py_hset = None  # hashes.hset, set by bind()


def bind(hset_general):
    """commands/hashes.py hands over its Python body."""
    global _py_hset
    _py_hset = hset_general


def hset(ctx, list argv):
    """HSET key field value [field value ...]

    The compiled `hashes.hset` for a big hash without field TTLs (see the module docstring).
    """
    cdef Py_ssize_t argc = PyList_GET_SIZE(argv), i
    cdef long long added = 0
    h = _plain_value(ctx, argv, _Hash) if argc >= 4 and not argc & 1 else None
    if h is None:
        return _py_hset(ctx, argv)
    key = <object>PyList_GET_ITEM(argv, 1)
    db = (<Client>ctx).db
    fields = (<Hash>h).fields
    if not (<Hash>h).big or (<Hash>h).ttls or type(fields) is not dict:
        return _py_hset(ctx, argv)
    _touch(db, key)
    for i in range(2, argc, 2):
        field = <object>PyList_GET_ITEM(argv, i)
        if not PyDict_Contains(fields, field):
            added += 1
        PyDict_SetItem(fields, field, <object>PyList_GET_ITEM(argv, i + 1))
    server = (<Client>ctx).server
    _modified(server, db, key)
    if _notify_on(server):
        server.notify(_HASH_EVENT, b"hset", key, db.index, argv[2::2])
    return added
