# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The common ZADD body compiled: `ZADD key score member [score member ...]` on an existing sorted set.

Profiled in-process (callgrind, redis-benchmark's `ZADD myzset <rand> element:<rand>`
on a set of ~45,000 members), the Python body's own frame (flag loop, sets and
slices, two config reads per call for the encoding limits), ZSet.add's frame
and the order's add/remove frames were most of a ZADD's instructions, next to
the tuple comparisons of the order's bisects (now engine/_zorder.pyx). Here
the same steps run in C: scores parsed in C when they are plain decimal
integers (any other form goes through engine/doubles.parse_score, the
reference), the member's score looked up and set in the `scores` dict, and
the pair inserted or moved in the compiled order without building tuples.

What this module does not answer goes to the Python body (commands/zsets.py
`zadd`, the reference): any flag (NX/XX/GT/LT/CH/INCR), a key that
does not exist yet (creation picks the encoding), a ZSet whose order is not
the compiled one, a key whose TTL is due or a database that is not plain (LFU,
new/overwritten hooks: Database.get's other work; `_plain_for`). Keep in step with
`zsets.zadd` and ZSet.add (engine/zsets.py);
tests/server/test_fast_bodies.py runs generated ZADD sequences through both
and compares replies, effects and the sets (order included).

The slot helpers are commands/_bodies.pxi's, shared with _writes.pyx: reading an
engine object's __slots__ at its member descriptor's offset after an exact type check.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_CheckExact, PyBytes_GET_SIZE
from cpython.dict cimport PyDict_GetItem, PyDict_SetItem
from cpython.float cimport PyFloat_AS_DOUBLE, PyFloat_CheckExact, PyFloat_FromDouble
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.object cimport PyObject
from libc.math cimport signbit

from rillet.engine._zorder cimport Key, ZOrder

from rillet import errors
from rillet.engine.zsets cimport ZSet
from rillet.errors import ReplyError
from rillet.notify import ZSET

cdef object _ReplyError = ReplyError
cdef object _WRONGTYPE = errors.WRONGTYPE
cdef object _ZSET_EVENT = ZSET
cdef object _ZSet = ZSet

# Set by bind_zadd(): the Python bodies for what this module does not answer.
cdef object _zadd_general = None  # ZADD's whole body
cdef object _score_arg = None  # zsets._score_arg: a score argument, or ReplyError
cdef object _note_sizes = None  # zsets._note_sizes(ctx, z, members): the encoding after adds


def bind_zadd(zadd_general, score_arg, note_sizes):
    """zsets.py hands over ZADD's Python body and its helpers."""
    global _zadd_general, _score_arg, _note_sizes
    _zadd_general = zadd_general
    _score_arg = score_arg
    _note_sizes = note_sizes


# --- direct slot access and the shared helpers (commands/_bodies.pxi) -----------------------

include "_bodies.pxi"






# --- scores ---------------------------------------------------------------------------------

cdef inline bint _plain_score(object raw, double* out) noexcept:
    """A score of 1-15 decimal digits, maybe after '-': exact as a double, and what
    parse_score gives for it ("-0" is -0.0). False for any other form."""
    cdef Py_ssize_t n = PyBytes_GET_SIZE(raw), i = 0
    cdef const char* p = PyBytes_AS_STRING(raw)
    cdef long long value = 0
    cdef bint negative = n > 0 and p[0] == b'-'
    if negative:
        i = 1
    if n - i < 1 or n - i > 15:
        return False
    while i < n:
        if not b'0' <= p[i] <= b'9':
            return False
        value = value * 10 + (p[i] - 48)
        i += 1
    out[0] = -<double>value if negative else <double>value
    return True


# --- ZADD key score member [score member ...] -----------------------------------------------

def zadd(ctx, list argv):
    """ZADD key [NX | XX] [GT | LT] [CH] [INCR] score member [score member ...]

    The compiled `zsets.zadd` for its common form (see the module docstring).
    """
    cdef Py_ssize_t argc = PyList_GET_SIZE(argv), pairs, i
    cdef double stack[16]
    cdef double* scores
    cdef PyObject* found
    cdef long long added = 0, changed = 0
    cdef Key k
    cdef ZOrder order
    if argc < 4 or argc & 1:
        return _zadd_general(ctx, argv)
    first = <object>PyList_GET_ITEM(argv, 2)
    if not PyBytes_CheckExact(first) or PyBytes_GET_SIZE(first) == 0:
        return _zadd_general(ctx, argv)
    if not (b'0' <= PyBytes_AS_STRING(first)[0] <= b'9' or PyBytes_AS_STRING(first)[0] == b'-'):
        return _zadd_general(ctx, argv)  # maybe a flag (NX, CH, INCR...), or "inf": the reference
    key = <object>PyList_GET_ITEM(argv, 1)
    db = (<Client>ctx).db if type(ctx) is Client else ctx.db
    if not _plain_for(db, key):
        return _zadd_general(ctx, argv)
    found = PyDict_GetItem((<Database>db).data, key)
    if found is NULL:
        return _zadd_general(ctx, argv)  # a new key: its encoding is chosen there
    z = <object>found
    if type(z) is not _ZSet:
        return _zadd_general(ctx, argv)  # WRONGTYPE, after its checks of the scores
    order_value = (<ZSet>z).order
    if type(order_value) is not ZOrder:
        return _zadd_general(ctx, argv)
    order = <ZOrder>order_value
    score_map = (<ZSet>z).scores
    if type(score_map) is not dict:
        return _zadd_general(ctx, argv)
    for i in range(3, argc, 2):
        if not PyBytes_CheckExact(<object>PyList_GET_ITEM(argv, i)):
            return _zadd_general(ctx, argv)
    pairs = (argc - 2) >> 1
    if pairs <= 16:
        scores = &stack[0]
    else:
        scores = <double*>PyMem_Malloc(pairs * sizeof(double))
        if scores == NULL:
            raise MemoryError()
    try:
        # Every score parsed before anything changes (validate before mutate).
        for i in range(pairs):
            raw = <object>PyList_GET_ITEM(argv, 2 + 2 * i)
            if not PyBytes_CheckExact(raw) or not _plain_score(raw, &scores[i]):
                scores[i] = _score_arg(raw)
            if scores[i] == 0 and signbit(scores[i]):
                return _zadd_general(ctx, argv)  # -0: kept by a skiplist only, see zsets.zadd
        # Database.get's access record (LRU; _plain_for excludes LFU).
        PyDict_SetItem((<Database>db).access, key, (<Database>db).lru_now)
        for i in range(pairs):
            member = <object>PyList_GET_ITEM(argv, 3 + 2 * i)
            found = PyDict_GetItem(score_map, member)
            if found is NULL:
                PyDict_SetItem(score_map, member, PyFloat_FromDouble(scores[i]))
                order._add(scores[i], member)
                added += 1
                continue
            old = <object>found
            if not PyFloat_CheckExact(old):
                k.score = float(old)
            else:
                k.score = PyFloat_AS_DOUBLE(old)
            if k.score == scores[i]:
                continue
            k.member = <PyObject*>member
            k.side = 0
            if not order._remove(&k):
                raise RuntimeError("sorted set order out of step with its scores")
            PyDict_SetItem(score_map, member, PyFloat_FromDouble(scores[i]))
            order._add(scores[i], member)
            changed += 1
    finally:
        if scores != &stack[0]:
            PyMem_Free(scores)
    if added or changed:
        if not (<ZSet>z).big:
            _note_sizes(ctx, z, argv[3::2])
        server = (<Client>ctx).server if type(ctx) is Client else ctx.server
        _modified(server, db, key)
        if _config_value(server, _NOTIFY):
            server.notify(_ZSET_EVENT, b"zadd", key, db.index)
    return added
