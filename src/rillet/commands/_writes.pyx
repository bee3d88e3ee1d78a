# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The common write bodies compiled: `XADD key * f v ...` (and `XADD key ms-seq f v ...`,
a replica's and an AOF replay's form), plain `SET key value`, `GET key`, and INCR,
DECR, INCRBY, DECRBY on an integer string or a missing key.

Profiled at 64 pipelined commands per read (callgrind, in-process), an XADD
cost ~27,000 instructions against ~2,700 for a PING, and a plain SET ~13,000:
the Python bodies' frames, the calls into Stream.next_id/append, key_modified,
notify, propagate and publish, the hashing of each value to look up its
listpack size, and the ID's formatting. Here the same steps run in C, with
the rare cases (a key that does not hold a stream, the node full or of other
fields, IDs near 2**64, watchers, keyspace events, effect sinks) handed to the
Python code that is the reference for them.

Keep in step with commands/streams.py `xadd` (its `*` body), Stream.next_id
and Stream.append's fast path (engine/stream.py), listpack_size.element_size,
and commands/strings.py `set_`/`get`/`_incr`. tests/server/test_fast_bodies.py runs
generated command sequences (node boundaries, numeric values, clock jumps,
trims) through these and through the general bodies and compares replies,
effects and the streams' node layout; tests/server/test_string_bodies.py does
the same for the string bodies (values, encodings, sizes, DUMP, events).

Counted again after ServerState's hot attributes became slots (state.py) and
the command lookup, the call counts and the notify test got cheaper
(server/_fastpath.pyx, _bodies.pxi): per command at 64 per read, a plain SET
7.6k -> 4.2k instructions, INCR 18.2k (its Python body) -> 5.1k.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_CheckExact, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.dict cimport PyDict_Contains, PyDict_DelItem, PyDict_GetItem, PyDict_GetItemWithError, PyDict_SetItem, PyDict_Size
from cpython.list cimport PyList_Append, PyList_GET_ITEM, PyList_GET_SIZE, PyList_New, PyList_SET_ITEM
from cpython.long cimport PyLong_AsLong, PyLong_AsLongLong, PyLong_AsUnsignedLongLong, PyLong_FromLongLong, PyLong_FromUnsignedLongLong
from cpython.object cimport PyObject
from cpython.ref cimport Py_INCREF, Py_XDECREF
from cpython.tuple cimport PyTuple_GET_ITEM, PyTuple_New, PyTuple_SET_ITEM
from cpython cimport array as carray
from libc.string cimport memcmp, memcpy

from rillet.resp._command cimport bulk_size, digits, put_bulk, put_len
from rillet.persistence._aofenc cimport EffectStream
from rillet.commands._streamids cimport _format_id, _put_u64
from rillet.engine.stream cimport NodeLimits, Stream
from rillet.engine.stream_node cimport StreamNode
from rillet._systime cimport system_now_ms as _system_now_ms

from rillet import errors
from rillet.clock import SystemClock
from rillet.engine.ids import StreamID
from rillet.commands.args import parse_int
from rillet.engine.stream import default_trim_limit
from rillet.engine.listpack_size import LISTPACK_EMPTY_SIZE
from rillet.state import PUBLISHED
from rillet.errors import ReplyError
from rillet.notify import GENERIC, STREAM, STRING
from rillet.resp.types import OK
from rillet.commands.policies import trim_after_add

cdef object _StreamID = StreamID
cdef object _SystemClock = SystemClock
cdef object _ReplyError = ReplyError
cdef object _OK = OK
cdef object _PUBLISHED = PUBLISHED
cdef object _tuple_new = tuple.__new__
cdef object _WRONGTYPE = errors.WRONGTYPE
cdef object _XADD_ARITY = errors.wrong_arity("xadd")
cdef object _XADD_MAXLEN_NEGATIVE = errors.XADD_MAXLEN_NEGATIVE
cdef object _parse_int = parse_int
cdef object _default_trim_limit = default_trim_limit
cdef object _trim_after_add = trim_after_add
cdef object _STREAM_TOO_LARGE = errors.STREAM_ELEMENTS_TOO_LARGE
cdef object _STREAM = STREAM
cdef object _STRING = STRING
cdef object _GENERIC = GENERIC
# streams.STREAM_LISTPACK_MAX_SIZE; a Python global so that a test can lower both.
STREAM_LISTPACK_MAX_SIZE = 1 << 30
cdef unsigned long long _U64_MAX = 0xFFFFFFFFFFFFFFFFULL

# Set by bind_xadd()/bind_set(): the Python bodies for what this module does not answer.
cdef object _xadd_other = None  # XADD with anything but `*` or MAXLEN as its third argument
cdef object _xadd_general = None  # XADD's general body
cdef object _set_general = None  # SET with options


def bind_xadd(xadd_other, xadd_general):
    """streams.py hands over the Python bodies of the uncommon XADD forms."""
    global _xadd_other, _xadd_general
    _xadd_other = xadd_other
    _xadd_general = xadd_general


def bind_set(set_general):
    """strings.py hands over SET's general body."""
    global _set_general
    _set_general = set_general


# --- direct slot access ----------------------------------------------------------------------
include "_bodies.pxi"



# --- shared steps -------------------------------------------------------------------------

cdef inline object _client_db(object ctx):
    return (<Client>ctx).db if type(ctx) is Client else ctx.db


cdef inline object _client_server(object ctx):
    return (<Client>ctx).server if type(ctx) is Client else ctx.server


cdef int _propagate(object ctx, object server, object db, object effect) except -1:
    """Client.propagate (keep in step): `effect` is the write's (an argv list, or
    encoded: state.Effect), for the publish step.

    Built with PyTuple_New/PyList_New and the db's index read at its slot: the
    displays `[(db.index, effect)]` cost a generic attribute lookup and two
    allocations through the general paths, on every write while a replica or
    the AOF listens."""
    if type(ctx) is not Client or type(server) is not ServerState or type(db) is not Database:
        ctx.propagate(effect)
        return 0
    cdef object index = (<Database>db).index
    cdef tuple pair = PyTuple_New(2)
    Py_INCREF(index)
    PyTuple_SET_ITEM(pair, 0, index)
    Py_INCREF(effect)
    PyTuple_SET_ITEM(pair, 1, effect)
    effects = (<ServerState>server)._effects
    cdef list one
    if effects is None or effects is _PUBLISHED:
        one = PyList_New(1)
        Py_INCREF(pair)
        PyList_SET_ITEM(one, 0, pair)
        (<ServerState>server)._effects = one
    else:
        PyList_Append(effects, pair)
    return 0


cdef bytes _MAXLEN_EQ = b"$6\r\nMAXLEN\r\n$1\r\n=\r\n"


cdef Py_ssize_t _xadd_effect_size(list argv, Py_ssize_t first, object sid_text, object kept,
                                  Py_ssize_t* count) noexcept:
    """The RESP size of XADD's effect (see _xadd_effect), and its argument count in *count."""
    cdef Py_ssize_t argc = PyList_GET_SIZE(argv), i
    count[0] = 3 + argc - first + (0 if kept is None else 3)
    cdef Py_ssize_t size = 3 + digits(count[0]) + bulk_size(sid_text)
    for i in range(2):
        size += bulk_size(<object>PyList_GET_ITEM(argv, i))
    if kept is not None:
        size += PyBytes_GET_SIZE(_MAXLEN_EQ) + bulk_size(kept)
    for i in range(first, argc):
        size += bulk_size(<object>PyList_GET_ITEM(argv, i))
    return size


cdef char* _xadd_effect_write(char* p, list argv, Py_ssize_t first, Py_ssize_t count,
                              object sid_text, object kept) noexcept:
    """XADD's effect, as _xadd_effect_size sized it, at p; returns the end."""
    cdef Py_ssize_t argc = PyList_GET_SIZE(argv), i
    p = put_len(p, 42, count)  # '*'
    for i in range(2):
        p = put_bulk(p, <object>PyList_GET_ITEM(argv, i))
    if kept is not None:
        memcpy(p, PyBytes_AS_STRING(_MAXLEN_EQ), PyBytes_GET_SIZE(_MAXLEN_EQ))
        p = put_bulk(p + PyBytes_GET_SIZE(_MAXLEN_EQ), kept)
    p = put_bulk(p, sid_text)
    for i in range(first, argc):
        p = put_bulk(p, <object>PyList_GET_ITEM(argv, i))
    return p


cdef bytes _xadd_effect(list argv, Py_ssize_t first, object sid_text, object kept):
    """XADD's effect already encoded (state.Effect's `bytes` form): argv[0], the key,
    `MAXLEN = kept` when it trimmed, the ID, the fields; every argument an exact bytes.

    As a list, the effect cost ~2,400 instructions on the master per XADD while a
    replica or the AOF listened: the list and its (db, argv) pair built, encoded
    into the stream, then freed (with GC tracking). Encoded here it is one
    allocation, and the encoders copy it (persistence/_aofenc.pyx)."""
    cdef Py_ssize_t count
    cdef Py_ssize_t size = _xadd_effect_size(argv, first, sid_text, kept, &count)
    cdef bytes out = PyBytes_FromStringAndSize(NULL, size)
    _xadd_effect_write(PyBytes_AS_STRING(out), argv, first, count, sid_text, kept)
    return out


cdef bint _xadd_direct(object ctx, object server, object db, list argv, Py_ssize_t first,
                       object sid_text, object kept) except -1:
    """XADD's effect written straight into the sinks, when each is an EffectStream (the
    AOF's and the replication stream's are) and the publish step would hand them this one effect
    as it is: no other effect of this command, no transaction gathering, not
    gated. Then `_effects` says PUBLISHED (state.py) and True. Else False, and
    nothing is written.

    Through the publish step the effect cost the master ~1,100 instructions per
    XADD more: its `bytes`, the (db, effect) pair, a one-item list, the sink call,
    then the copy into the stream and the frees."""
    cdef list sinks
    cdef Py_ssize_t n, i, size, count
    cdef long index
    cdef EffectStream stream
    if type(ctx) is not Client or type(server) is not ServerState or type(db) is not Database:
        return False
    if ((<ServerState>server)._effects is not None or (<ServerState>server)._tx_effects is not None
            or (<ServerState>server).gated is not False):
        return False
    sinks = (<ServerState>server).effect_sinks
    if sinks is None:
        return False
    n = PyList_GET_SIZE(sinks)
    for i in range(n):
        if type(<object>PyList_GET_ITEM(sinks, i)) is not EffectStream:
            return False
    index = PyLong_AsLong((<Database>db).index)
    size = _xadd_effect_size(argv, first, sid_text, kept, &count)
    for i in range(n):
        stream = <EffectStream>PyList_GET_ITEM(sinks, i)
        stream.select(index)
        _xadd_effect_write(stream.reserve(size), argv, first, count, sid_text, kept)
    (<ServerState>server)._effects = _PUBLISHED
    return True


# --- stream IDs and node opening (keep in step with engine/stream.py, stream_node.py) ------

cdef extern from *:
    """
    #define _rillet_generic_alloc(t, n) PyType_GenericAlloc((PyTypeObject*)(t), (n))
    """
    object _rillet_generic_alloc(object t, Py_ssize_t n)


cdef inline object _new_id(object ms, object seq):
    """tuple.__new__(StreamID, (ms, seq)) without the call: what tuple_subtype_new does."""
    sid = _rillet_generic_alloc(_StreamID, 2)
    Py_INCREF(ms)
    PyTuple_SET_ITEM(sid, 0, ms)
    Py_INCREF(seq)
    PyTuple_SET_ITEM(sid, 1, seq)
    return sid


cdef extern from *:
    """
    /* The ID tuple at `p` may be rewritten in place: a StreamID (exactly, two items)
       that only its holder references. Python 3.14 caches a tuple's hash: not there. */
    static inline int _rillet_sole_id(PyObject* p, PyObject* type) {
    #if PY_VERSION_HEX < 0x030E0000 && !defined(Py_GIL_DISABLED)
        return p != NULL && Py_REFCNT(p) == 1 && (PyObject*)Py_TYPE(p) == type
               && PyTuple_GET_SIZE(p) == 2;
    #else
        return 0;
    #endif
    }
    static inline void _rillet_tuple_put(PyObject* t, Py_ssize_t i, PyObject* v) {
        PyObject* old = PyTuple_GET_ITEM(t, i);
        if (old != v) {
            Py_INCREF(v);
            PyTuple_SET_ITEM(t, i, v);
            Py_DECREF(old);
        }
    }
    """
    bint _rillet_sole_id(PyObject* p, PyObject* type) noexcept
    void _rillet_tuple_put(PyObject* t, Py_ssize_t i, PyObject* v) noexcept


cdef inline void _put_last_id(Stream stream, object ms, object seq) noexcept:
    """stream.last_id = StreamID(ms, seq), for a Stream. When the stream holds the only
    reference to its previous last_id, that tuple takes the new items in place:
    nobody else can see it change, and an XADD then neither builds an ID nor frees
    one (~0.4k instructions, the most of it the StreamID's dealloc)."""
    cdef PyObject* p = <PyObject*>stream.last_id
    if _rillet_sole_id(p, <PyObject*>_StreamID):
        _rillet_tuple_put(p, 0, <PyObject*>ms)
        _rillet_tuple_put(p, 1, <PyObject*>seq)
    else:
        stream.last_id = _new_id(ms, seq)


def put_last_id(Stream stream, ms, seq):
    """The compiled `stream.last_id = StreamID(ms, seq)` (tests check the in-place case)."""
    _put_last_id(stream, ms, seq)


def new_id(ms, seq):
    """The compiled StreamID constructor (tests compare it with tuple.__new__)."""
    return _new_id(ms, seq)


import array as _array_module
cdef carray.array _ARRAY_B = _array_module.array("B")
cdef carray.array _ARRAY_H = _array_module.array("H")
cdef carray.array _ARRAY_I = _array_module.array("I")
cdef carray.array _ARRAY_Q = _array_module.array("Q")
cdef bytes _EMPTY = b""


cdef carray.array _narrowest(unsigned long long top, Py_ssize_t n):
    """An uninitialised array of n items of stream_node.compact_array's type for `top`."""
    if top < 256:
        return carray.clone(_ARRAY_B, n, False)
    if top < 65536:
        return carray.clone(_ARRAY_H, n, False)
    if top < 4294967296ULL:
        return carray.clone(_ARRAY_I, n, False)
    return carray.clone(_ARRAY_Q, n, False)


cdef inline void _store(carray.array out, Py_ssize_t i, unsigned long long value) noexcept:
    cdef int size = out.ob_descr.itemsize
    if size == 1:
        out.data.as_uchars[i] = <unsigned char>value
    elif size == 2:
        out.data.as_ushorts[i] = <unsigned short>value
    elif size == 4:
        out.data.as_uints[i] = <unsigned int>value
    else:
        out.data.as_ulonglongs[i] = value


cdef carray.array _compact(list values):
    """stream_node.compact_array for a list of ints (OverflowError past 64 bits, as there)."""
    cdef Py_ssize_t n = PyList_GET_SIZE(values), i
    cdef unsigned long long top = 0, value
    for i in range(n):
        value = PyLong_AsUnsignedLongLong(<object>PyList_GET_ITEM(values, i))
        if value > top:
            top = value
    cdef carray.array out = _narrowest(top, n)
    for i in range(n):
        _store(out, i, PyLong_AsUnsignedLongLong(<object>PyList_GET_ITEM(values, i)))
    return out


cdef int _pack(StreamNode node) except -1:
    """StreamNode.pack for an open all-SAMEFIELDS node; others call pack()."""
    cdef Py_ssize_t n, i
    cdef unsigned long long total = 0
    if not node.is_open:
        return 0
    if node._estart is not None:
        node.pack()
        return 0
    elems = node.elems
    ms_list = node._ms
    seq_list = node._seq
    if type(elems) is not list or type(ms_list) is not list or type(seq_list) is not list:
        node.pack()
        return 0
    n = PyList_GET_SIZE(<list>elems)
    for i in range(n):
        item = <object>PyList_GET_ITEM(<list>elems, i)
        if not PyBytes_CheckExact(item):
            node.pack()
            return 0
        total += PyBytes_GET_SIZE(item)
    ms_arr = _compact(<list>ms_list)
    seq_arr = _compact(<list>seq_list)
    cdef carray.array offs = _narrowest(total, n + 1)
    total = 0
    _store(offs, 0, 0)
    for i in range(n):
        total += PyBytes_GET_SIZE(<object>PyList_GET_ITEM(<list>elems, i))
        _store(offs, i + 1, total)
    data = _EMPTY.join(<list>elems)
    node._ms = ms_arr
    node._seq = seq_arr
    node._data = data
    node._offs = offs
    node.elems = None
    node.is_open = False
    node.fast = False
    node.fresh = False
    return 0


def pack_node(StreamNode node):
    """The compiled StreamNode.pack (tests compare it with the Python one)."""
    _pack(node)


cdef object _INT_SIZE_2 = 2


cdef bint _append_open(Stream stream, list argv, Py_ssize_t first, long long text, unsigned long long ms,
                       unsigned long long seq, sid) except -1:
    """Stream._append_general when the entry opens a node, with _open_node (keep in step).

    True if it took the entry: the stream has no node, or its tail is full by
    stream-node-max-entries or by stream-node-max-bytes. `text` is the
    fields' and values' total length. False leaves everything untouched.
    """
    cdef Py_ssize_t argc = PyList_GET_SIZE(argv), nfields = argc - first, k = nfields >> 1, i
    cdef long long max_entries, n, live, dead, lp, body, mf_text = 0
    cdef PyObject* p
    cdef StreamNode prev, node
    cdef NodeLimits limits = stream.limits
    cdef list nodes = stream._nodes, keys = stream._keys
    if limits is None or nodes is None or keys is None:
        return False
    prev = stream._tail
    if prev is not None:
        if PyList_GET_SIZE(nodes) == 0 or (
                <object>PyList_GET_ITEM(nodes, PyList_GET_SIZE(nodes) - 1) is not prev):
            return False
        max_entries = limits._node_max_entries
        n = prev.n
        if not (max_entries != 0 and n >= max_entries):
            live = prev.live
            dead = n - live
            lp = (prev.body + (2 if live < 128 else _int_size(live))
                  + (2 if dead < 128 else _int_size(dead)))
            if lp + text < limits.effective_max_bytes:
                return False  # the tail takes it: Stream.append's general path
    elif PyList_GET_SIZE(nodes) != 0:
        return False
    mf = argv[first::2]
    values = argv[first + 1::2]
    if prev is not None:
        _pack(prev)
        prev_mf = prev.mf
        if prev_mf == mf:
            mf = prev_mf  # one list for a run of nodes with the same fields
    # StreamNode(ms, seq, mf), field by field, then its first (SAMEFIELDS) entry.
    ms_obj = <object>PyTuple_GET_ITEM(sid, 0)
    seq_obj = <object>PyTuple_GET_ITEM(sid, 1)
    body = LISTPACK_EMPTY_SIZE + _int_size(k) + 2
    for i in range(k):
        master = <object>PyList_GET_ITEM(<list>mf, i)
        if not PyBytes_CheckExact(master):
            return False
        body += _element_size(<bytes>master)
        mf_text += PyBytes_GET_SIZE(master)
    same_fixed = 2 + _int_size(k + 3)
    body += same_fixed + 2 + 2  # the entry: flags, lp-count, ms and seq diffs of 0
    for i in range(k):
        body += _element_size(<bytes>PyList_GET_ITEM(<list>values, i))
    node = StreamNode.__new__(StreamNode)
    node.ms0 = ms_obj
    node.seq0 = seq_obj
    node.mf = mf
    node.k = k
    node.k2 = 2 * k
    node.k18 = 18 * k
    node.fixed_text = mf_text + 4
    node.n = 1
    node.live = 1
    node._dead = None
    node._head = 0
    node.body = body
    node.same_fixed = same_fixed
    node._ms = [0]
    node._seq = [seq_obj]
    node.elems = values
    node._data = _EMPTY
    node._offs = None
    node._estart = None
    node._same = None
    node.is_open = True
    node.fast = True
    node.fresh = True
    node.lp = None  # not a loaded node (persistence/rdb_stream.LoadedNode)
    PyList_Append(nodes, node)
    PyList_Append(keys, _new_id(ms_obj, seq_obj))
    stream._tail = node
    stream._tree_version += 1
    stream.length += 1
    stream.entries_added = stream.entries_added + 1
    stream.last_id = sid
    return True


# --- XADD key * field value ... -------------------------------------------------------------

cdef bint _plain_id(bytes arg, unsigned long long* ms, unsigned long long* seq) noexcept:
    """`arg` is `ms-seq` in plain decimals (no sign, no leading zero, within 64 bits),
    not 0-0: its parts in *ms and *seq. Any other form (`ms`, `ms-*`, `0-0`) is
    for the Python body, which judges it and orders its errors as Redis does."""
    cdef const char* p = PyBytes_AS_STRING(arg)
    cdef Py_ssize_t n = PyBytes_GET_SIZE(arg), i = 0, start
    cdef unsigned long long parts[2]
    cdef unsigned long long value, digit
    cdef int k
    for k in range(2):
        start = i
        value = 0
        while i < n and c'0' <= p[i] <= c'9':
            digit = <unsigned long long>(p[i] - c'0')
            # (19 digits never overflow: only a 20th is checked.)
            if i - start >= 19 and value > (_U64_MAX - digit) // 10:
                return False
            value = value * 10 + digit
            i += 1
        if i == start or (p[start] == c'0' and i - start > 1):
            return False
        parts[k] = value
        if k == 0:
            if i >= n or p[i] != c'-':
                return False
            i += 1
    if i != n or (parts[0] == 0 and parts[1] == 0):
        return False
    ms[0] = parts[0]
    seq[0] = parts[1]
    return True


def xadd(ctx, list argv):
    """XADD key [NOMKSTREAM] [KEEPREF | DELREF | ACKED] [IDMPAUTO producer-id | IDMP producer-id idempotent-id] [<MAXLEN | MINID> [= | ~] threshold [LIMIT count]] <* | id> field value [field value ...]

    The compiled `streams.xadd` and `streams._xadd_maxlen` (see the module
    docstring); other forms go to their Python bodies.
    """
    cdef Py_ssize_t argc = PyList_GET_SIZE(argv)
    third = <object>PyList_GET_ITEM(argv, 2)
    if _is_star(third):
        if not argc & 1:
            raise _ReplyError(_XADD_ARITY)
        return _xadd(ctx, argv, 3, 0, _NO_TRIM, False, 0, 0)
    if PyBytes_CheckExact(third) and PyBytes_GET_SIZE(third) == 6 and third.upper() == b"MAXLEN":
        return _xadd_maxlen(ctx, argv)
    # `XADD key ms-seq f v ...`, what a replica and an AOF replay apply: the same
    # body, with the ID given (its other forms and its errors in Python).
    cdef unsigned long long ms = 0, seq = 0
    if PyBytes_CheckExact(third) and argc & 1 and _plain_id(third, &ms, &seq):
        return _xadd(ctx, argv, 3, 0, _NO_TRIM, True, ms, seq)
    return _xadd_other(ctx, argv)


cdef inline bint _is_star(object arg) noexcept:
    return (PyBytes_CheckExact(arg) and PyBytes_GET_SIZE(arg) == 1
            and PyBytes_AS_STRING(arg)[0] == b'*')


cdef inline bint _is_op(object arg, char op) noexcept:
    return PyBytes_CheckExact(arg) and PyBytes_GET_SIZE(arg) == 1 and PyBytes_AS_STRING(arg)[0] == op


cdef enum:
    _NO_TRIM = 0
    _EXACT = 1
    _APPROX = 2


cdef object _xadd_maxlen(ctx, list argv):
    """streams._xadd_maxlen (keep in step): `XADD key MAXLEN [~|=] n * field value ...`."""
    cdef Py_ssize_t argc = PyList_GET_SIZE(argv), first
    cdef int trim
    op = <object>PyList_GET_ITEM(argv, 3)
    if _is_op(op, b'~') or _is_op(op, b'='):
        if argc < 8 or not _is_star(<object>PyList_GET_ITEM(argv, 5)) or argc & 1:
            return _xadd_general(ctx, argv)
        trim = _APPROX if _is_op(op, b'~') else _EXACT
        first = 6
        maxlen = _parse_int(<object>PyList_GET_ITEM(argv, 4))
    else:
        if argc < 7 or not _is_star(<object>PyList_GET_ITEM(argv, 4)) or not argc & 1:
            return _xadd_general(ctx, argv)
        trim = _EXACT
        first = 5
        maxlen = _parse_int(op)
    if maxlen < 0:
        raise _ReplyError(_XADD_MAXLEN_NEGATIVE)
    return _xadd(ctx, argv, first, maxlen, trim, False, 0, 0)


cdef object _xadd(ctx, list argv, Py_ssize_t first, long long maxlen, int trim, bint explicit,
                  unsigned long long ms, unsigned long long seq):
    """XADD's body once the form is known: fields from argv[first], an optional MAXLEN trim,
    the ID (ms, seq) when `explicit`, else the next one by the clock."""
    cdef Py_ssize_t argc = PyList_GET_SIZE(argv)
    cdef Py_ssize_t i
    cdef long long total = 0, now, trimmed = 0, length
    cdef long long max_size = STREAM_LISTPACK_MAX_SIZE
    cdef unsigned long long last_ms, last_seq
    cdef PyObject* found
    cdef Stream stream
    key = <object>PyList_GET_ITEM(argv, 1)
    db = _client_db(ctx)
    server = _client_server(ctx)
    if not _plain_for(db, key):
        value = db.get(key)
    else:
        found = PyDict_GetItem((<Database>db).data, key)
        value = <object>found if found is not NULL else None
        if value is not None:
            _touch(db, key)
    created = value is None
    if created:
        stream = Stream(limits=server.keyspace.stream_limits)
    elif type(value) is not Stream:
        raise _ReplyError(_WRONGTYPE)
    else:
        stream = <Stream>value
    # Stream.next_id(ms, seq, now): its common cases here, the others in Python.
    last = stream.last_id
    if type(last) is not tuple and not isinstance(last, tuple):
        last = tuple(last)
    last_ms = <object>PyTuple_GET_ITEM(last, 0)
    last_seq = <object>PyTuple_GET_ITEM(last, 1)
    if explicit:
        if ((last_ms == _U64_MAX and last_seq == _U64_MAX) or ms < last_ms
                or (ms == last_ms and seq <= last_seq)):
            stream.next_id(ms, seq, 0)  # raises Redis's error (exhausted, or not greater)
    else:
        clock = _clock(server)
        now = _system_now_ms() if type(clock) is _SystemClock else clock.now_ms()
    if explicit:
        pass  # (ms, seq) as given
    elif now >= 0 and <unsigned long long>now > last_ms:
        ms = <unsigned long long>now
        seq = 0
    elif last_seq < _U64_MAX:
        ms = last_ms
        seq = last_seq + 1
    else:
        sid = stream.next_id(None, None, now)  # exhausted, or the next millisecond
        ms = sid[0]
        seq = sid[1]
    for i in range(first, argc):
        value = <object>PyList_GET_ITEM(argv, i)
        if not PyBytes_CheckExact(value):
            total = -1
            break
        total += PyBytes_GET_SIZE(value)
    if total < 0:
        if sum(map(len, argv[first:])) > max_size:
            raise _ReplyError(_STREAM_TOO_LARGE)
    elif total > max_size:
        raise _ReplyError(_STREAM_TOO_LARGE)
    if created:
        db.set(key, stream)
    # The new ID's parts: its ms is most often the last one's (an object kept, not built).
    ms_obj = <object>PyTuple_GET_ITEM(last, 0) if ms == last_ms else PyLong_FromUnsignedLongLong(ms)
    seq_obj = PyLong_FromUnsignedLongLong(seq)
    last = None  # (the stream's last_id may then be rewritten in place: _put_last_id)
    if total < 0 or not _append_fast(stream, argv, first, ms, seq, ms_obj, seq_obj):
        sid = _new_id(ms_obj, seq_obj)
        if total < 0 or not _append_open(stream, argv, first, total, ms, seq, sid):
            stream.append(sid, argv[first:])
    if trim != _NO_TRIM:
        length = stream.length
        if length > maxlen:
            trimmed = _trim_maxlen(stream, length, maxlen, trim == _APPROX)
    _modified(server, db, key)
    if _notify_on(server):
        server.notify(_STREAM, b"xadd", key, db.index)
        if trimmed:
            server.notify(_STREAM, b"xtrim", key, db.index)
    # An explicit ID passed _plain_id: its bytes are what _format_id would write.
    sid_text = <object>PyList_GET_ITEM(argv, 2) if explicit else _format_id(ms, seq)
    if _sinks(server):
        # What streams.xadd/_xadd_maxlen propagate: the ID given, and `~` as the
        # exact length it kept.
        kept = None if trim == _NO_TRIM else b"%d" % (stream.length if trim == _APPROX else maxlen)
        if total >= 0 and PyBytes_CheckExact(argv[0]) and PyBytes_CheckExact(key):
            if not _xadd_direct(ctx, server, db, argv, first, sid_text, kept):
                _propagate(ctx, server, db, _xadd_effect(argv, first, sid_text, kept))
        elif kept is None:
            _propagate(ctx, server, db, [argv[0], key, sid_text, *argv[first:]])
        else:
            _propagate(ctx, server, db, [argv[0], key, b"MAXLEN", b"=", kept, sid_text, *argv[first:]])
    if stream.retention_ms and _head_aged(stream, server):
        _trim_after_add(ctx, key, stream)  # after the XADD's effect, as streams.xadd
    return sid_text


cdef bint _head_aged(Stream stream, object server) except -1:
    """policies.trim_after_add's first tests (keep in step): whether the oldest node's
    entries may all have aged out, its last entry's ms at or below now - retention_ms.
    False on nearly every XADD, so a stream with a retention policy costs about what
    one without does; the trim itself, and when it applies, is the Python's."""
    cdef long long retention = stream.retention_ms, now
    cdef StreamNode head
    nodes = stream._nodes
    if nodes is None or not PyList_GET_SIZE(nodes):
        return False
    head = <StreamNode>PyList_GET_ITEM(nodes, 0)
    clock = _clock(server)
    now = _system_now_ms() if type(clock) is _SystemClock else clock.now_ms()
    if retention <= 0 or now - retention < 0 or <unsigned long long>head.ms0 > <unsigned long long>(now - retention):
        return False
    ms = head._ms
    if head.lp is not None or ms is None or not len(ms):
        return True  # not decoded: the Python decodes it
    return <unsigned long long>(head.ms0 + ms[len(ms) - 1]) <= <unsigned long long>(now - retention)


cdef long long _trim_maxlen(Stream stream, long long length, long long maxlen, bint approx) except -1:
    """stream.trim_maxlen(maxlen, approx, default limit) with KEEPREF (the group PELs keep
    their refs). Under `~` Stream._trim's first test is made here: when the
    oldest node cannot go whole it stops at once, which is every XADD but about
    one per node."""
    if approx:
        nodes = stream._nodes
        if nodes is not None and PyList_GET_SIZE(nodes):
            head = <object>PyList_GET_ITEM(nodes, 0)
            if isinstance(head, StreamNode) and length - (<StreamNode>head).live < maxlen:
                return 0
        return stream.trim_maxlen(maxlen, True, _default_trim_limit(stream.limits.node_max_entries))
    return stream.trim_maxlen(maxlen, False, 0)


cdef bint _append_fast(Stream stream, list argv, Py_ssize_t first, unsigned long long ms, unsigned long long seq,
                       ms_obj, seq_obj) except -1:
    """Stream.append's fast path (keep in step): True if it took the entry, whose ID is
    (ms, seq), as objects ms_obj and seq_obj."""
    cdef Py_ssize_t argc = PyList_GET_SIZE(argv)
    cdef Py_ssize_t nfields = argc - first, i, k
    cdef long long values_size = 0, room, text = 0, n, body
    cdef unsigned long long ms0, seq0
    cdef StreamNode node = stream._tail
    cdef NodeLimits limits = stream.limits
    if node is None or not node.fast or limits is None:
        return False
    n = node.n
    if n >= limits.fast_entries or nfields != node.k2:
        return False
    if type(node.mf) is not list:
        return False
    mf = <list>node.mf
    k = nfields >> 1
    for i in range(k):
        field = <object>PyList_GET_ITEM(argv, first + 2 * i)
        master = <object>PyList_GET_ITEM(mf, i)
        if field is not master and field != master:
            return False
    for i in range(k):
        values_size += _element_size(<bytes>PyList_GET_ITEM(argv, first + 1 + 2 * i))
    body = node.body
    room = limits.effective_max_bytes - body - node.fixed_text
    if not values_size + node.k18 < room:
        for i in range(k):
            text += PyBytes_GET_SIZE(<object>PyList_GET_ITEM(argv, first + 1 + 2 * i))
        if not text < room:
            return False
    # (Cython's conversion reads a two-digit int's digits; PyLong_AsUnsignedLongLong
    # takes _PyLong_AsByteArray for any ms, ~0.1k instructions more.)
    ms0 = node.ms0
    seq0 = node.seq0
    elems = node.elems
    ms_list = node._ms
    seq_list = node._seq
    if type(elems) is not list or type(ms_list) is not list or type(seq_list) is not list:
        return False
    node.body = body + (
        node.same_fixed
        + values_size
        + (2 if ms - ms0 < 128 else _diff_size(ms, ms0))
        + (2 if seq >= seq0 and seq - seq0 < 128 else _diff_size(seq, seq0))
    )
    for i in range(k):
        PyList_Append(elems, <object>PyList_GET_ITEM(argv, first + 1 + 2 * i))
    PyList_Append(ms_list, PyLong_FromUnsignedLongLong(ms - ms0))
    PyList_Append(seq_list, seq_obj)
    node.n = n + 1
    node.live += 1
    stream.length += 1
    stream.entries_added = stream.entries_added + 1
    _put_last_id(stream, ms_obj, seq_obj)
    return True


# --- SET key value / GET key ----------------------------------------------------------------

cdef inline int _db_set(object db, object key, object value, bint keep_ttl) except -1:
    """Database.set(key, value, keep_ttl) for a _plain_for(db, key) (keep in step): a new
    key is remembered, and either way its access is recorded (under LRU; LFU is
    excluded); its TTL goes unless `keep_ttl`; its encoding note goes. One lookup in
    `data` for both: the store, then its size says whether the key is new."""
    data = (<Database>db).data
    cdef Py_ssize_t before = PyDict_Size(data)
    PyDict_SetItem(data, key, value)
    if PyDict_Size(data) != before:
        db._remember(key)
    _touch(db, key)
    if not keep_ttl:
        expires = (<Database>db).expires
        if expires and PyDict_Contains(expires, key):
            PyDict_DelItem(expires, key)
    encodings = (<Database>db).encodings
    if encodings:
        encodings.pop(key, None)
    return 0


def set_(ctx, list argv):
    """SET key value [NX | XX | IFEQ ifeq-value | IFNE ifne-value | IFDEQ ifdeq-digest | IFDNE ifdne-digest] [GET] [EX seconds | PX milliseconds | EXAT unix-time-seconds | PXAT unix-time-milliseconds | KEEPTTL]

    The compiled `strings.set_` for `SET key value`, and `strings._set_general` for
    NX, XX, GET, KEEPTTL and the expiries; other forms (IFEQ and its kin), every
    error and a key whose TTL is due go to the general body.
    """
    if PyList_GET_SIZE(argv) != 3:
        return _set_options(ctx, argv)
    key = <object>PyList_GET_ITEM(argv, 1)
    value = <object>PyList_GET_ITEM(argv, 2)
    db = _client_db(ctx)
    if not _plain_for(db, key):
        return _set_general(ctx, argv)
    _db_set(db, key, value, False)
    server = _client_server(ctx)
    _modified(server, db, key)
    if _notify_on(server):
        server.notify(_STRING, b"set", key, db.index)
    if _sinks(server):
        _propagate(ctx, server, db, argv)  # as sent, as Redis
    return _OK


cdef enum:
    _O_OTHER = 0
    _O_NX = 1
    _O_XX = 2
    _O_GET = 3
    _O_KEEPTTL = 4
    _O_EX = 5
    _O_PX = 6
    _O_EXAT = 7
    _O_PXAT = 8


cdef int _set_option(object arg) noexcept:
    """Which of SET's options `arg` is, in any case (_O_OTHER for anything else)."""
    cdef char word[8]
    cdef Py_ssize_t n, i
    cdef const char* p
    if not PyBytes_CheckExact(arg):
        return _O_OTHER
    n = PyBytes_GET_SIZE(arg)
    if n < 2 or n > 7:
        return _O_OTHER
    p = PyBytes_AS_STRING(arg)
    for i in range(n):
        word[i] = p[i] - 32 if c'a' <= p[i] <= c'z' else p[i]
    if n == 2:
        if word[1] == c'X':
            return _O_NX if word[0] == c'N' else _O_XX if word[0] == c'X' else (
                _O_EX if word[0] == c'E' else _O_PX if word[0] == c'P' else _O_OTHER)
        return _O_OTHER
    if n == 3:
        return _O_GET if memcmp(word, b"GET", 3) == 0 else _O_OTHER
    if n == 4:
        return _O_EXAT if memcmp(word, b"EXAT", 4) == 0 else (
            _O_PXAT if memcmp(word, b"PXAT", 4) == 0 else _O_OTHER)
    if n == 7:
        return _O_KEEPTTL if memcmp(word, b"KEEPTTL", 7) == 0 else _O_OTHER
    return _O_OTHER


cdef object _set_options(object ctx, list argv):
    """strings._set_general (keep in step) for NX, XX, GET, KEEPTTL, EX, PX, EXAT, PXAT on
    a key with no TTL or one not yet due, in a Database otherwise plain; everything
    else (IFEQ and its kin, syntax errors, bad expiries, WRONGTYPE) to it from the start."""
    cdef Py_ssize_t argc = PyList_GET_SIZE(argv), i = 3
    cdef int option, condition = _O_OTHER, unit = _O_OTHER
    cdef bint want_old = False, keep_ttl = False
    cdef long long amount = 0, scale, now, deadline = 0
    cdef PyObject* found
    raw = None
    while i < argc:
        option = _set_option(<object>PyList_GET_ITEM(argv, i))
        if option == _O_NX or option == _O_XX:
            if condition != _O_OTHER and condition != option:
                return _set_general(ctx, argv)
            condition = option
        elif option == _O_GET:
            want_old = True
        elif option == _O_KEEPTTL and unit == _O_OTHER:
            keep_ttl = True
        elif option >= _O_EX and (unit == _O_OTHER or unit == option) and not keep_ttl and i + 1 < argc:
            unit = option
            i += 1
            raw = <object>PyList_GET_ITEM(argv, i)
        else:
            return _set_general(ctx, argv)  # a syntax error, or IFEQ and its kin
        i += 1
    key = <object>PyList_GET_ITEM(argv, 1)
    value = <object>PyList_GET_ITEM(argv, 2)
    if type(ctx) is not Client or not PyBytes_CheckExact(key):
        return _set_general(ctx, argv)
    db = (<Client>ctx).db
    # Database.get(key): a key whose TTL is due expires first (its DEL is propagated):
    # the general body does that.
    if not _plain_for(db, key) or (unit != _O_OTHER and (<Database>db).on_set_expire is not None):
        return _set_general(ctx, argv)  # (a TTL a writable replica must hear of: Database.set_expire)
    server = (<Client>ctx).server
    clock = _clock(server)
    now = _system_now_ms() if type(clock) is _SystemClock else clock.now_ms()
    if unit != _O_OTHER:
        scale = 1000 if unit == _O_EX or unit == _O_EXAT else 1
        if (not _parse_ll(raw, &amount) or amount <= 0 or amount > _LL_MAX // scale
                or now < 0):
            return _set_general(ctx, argv)  # the error (or a clock before 1970)
        deadline = amount * scale
        if unit == _O_EX or unit == _O_PX:
            if deadline > _LL_MAX - now:
                return _set_general(ctx, argv)
            deadline += now
    data = (<Database>db).data
    found = PyDict_GetItem(data, key)
    old = None
    if found is not NULL:
        old = <object>found
        if want_old and type(old) is not bytes:
            return _set_general(ctx, argv)  # WRONGTYPE
        _touch(db, key)
    if (condition == _O_NX and old is not None) or (condition == _O_XX and old is None):
        return old if want_old else None
    _db_set(db, key, value, keep_ttl)
    if unit != _O_OTHER:
        PyDict_SetItem((<Database>db).expires, key, PyLong_FromLongLong(deadline))
    _modified(server, db, key)
    if _notify_on(server):
        server.notify(_STRING, b"set", key, db.index)
        if unit != _O_OTHER:
            server.notify(_GENERIC, b"expire", key, db.index)
    if _sinks(server):
        # _set_general's effect: with no expiry every argument past the value is an option.
        if unit != _O_OTHER and unit != _O_PXAT:
            _propagate(ctx, server, db, [b"SET", key, value, b"PXAT", _format_ll(deadline)])
        elif want_old and unit == _O_OTHER:
            _propagate(ctx, server, db, [arg for i, arg in enumerate(argv)
                                         if i < 3 or _set_option(arg) != _O_GET])
        else:
            _propagate(ctx, server, db, argv)
    return old if want_old else _OK


def get(ctx, list argv):
    """GET key"""
    cdef PyObject* found
    key = <object>PyList_GET_ITEM(argv, 1)
    db = _client_db(ctx)
    if not _plain_for(db, key):
        value = db.get(key)
    else:
        found = PyDict_GetItem((<Database>db).data, key)
        if found is NULL:
            return None
        value = <object>found
        _touch(db, key)
    if value is None or type(value) is bytes:
        return value
    raise _ReplyError(_WRONGTYPE)


# --- INCR / DECR / INCRBY / DECRBY ----------------------------------------------------------

cdef long long _LL_MAX = 9223372036854775807LL
cdef long long _LL_MIN = -9223372036854775807LL - 1

# Set by bind_incr(): each command's Python body, the reference for every case
# this module does not answer (a non-integer value or increment, a wrong type,
# an overflow, a key whose TTL is due, event hooks, LFU).
cdef object _incr_py = None
cdef object _decr_py = None
cdef object _incrby_py = None
cdef object _decrby_py = None


def bind_incr(incr_body, decr_body, incrby_body, decrby_body):
    """strings.py hands over the Python bodies of INCR, DECR, INCRBY, DECRBY."""
    global _incr_py, _decr_py, _incrby_py, _decrby_py
    _incr_py = incr_body
    _decr_py = decr_body
    _incrby_py = incrby_body
    _decrby_py = decrby_body


cdef bint _parse_ll(object raw, long long* out) noexcept:
    """args.parse_int's accepted forms (Redis's string2ll): optional '-', decimal digits,
    no leading zero, no "-0", within int64. False for anything else."""
    if not PyBytes_CheckExact(raw):
        return False
    cdef Py_ssize_t n = PyBytes_GET_SIZE(raw), i = 0
    cdef const char* p = PyBytes_AS_STRING(raw)
    cdef bint negative = False
    cdef unsigned long long value = 0, digit
    if n == 0 or n > 20:
        return False
    if p[0] == b'-':
        negative = True
        i = 1
        if n == 1:
            return False
    if p[i] == b'0' and (n - i > 1 or negative):
        return False
    while i < n:
        if not (c'0' <= p[i] <= c'9'):
            return False
        digit = <unsigned long long>(p[i] - c'0')
        if value > (9223372036854775808ULL - digit) // 10:
            return False
        value = value * 10 + digit
        i += 1
    if negative:
        out[0] = <long long>(0ULL - value)  # -2**63 included
        return True
    if value > 9223372036854775807ULL:
        return False
    out[0] = <long long>value
    return True


cdef bytes _format_ll(long long value):
    """b"%d" % value."""
    cdef char buf[24]
    cdef unsigned long long magnitude = (0ULL - <unsigned long long>value) if value < 0 else <unsigned long long>value
    cdef Py_ssize_t n = _put_u64(buf + 24, magnitude)
    if value < 0:
        n += 1
        buf[24 - n] = b'-'
    return PyBytes_FromStringAndSize(buf + 24 - n, n)


cdef object _incr_by(object ctx, list argv, long long delta, object general):
    """strings._incr (keep in step) for an integer string or a missing key in a plain
    Database; every other case to `general`, the command's Python body, from the start."""
    cdef long long number = 0
    cdef PyObject* found
    if type(ctx) is not Client:
        return general(ctx, argv)
    key = <object>PyList_GET_ITEM(argv, 1)
    db = (<Client>ctx).db
    if not _plain_for(db, key):
        return general(ctx, argv)
    found = PyDict_GetItem((<Database>db).data, key)
    if found is not NULL and not _parse_ll(<object>found, &number):
        return general(ctx, argv)  # another type (WRONGTYPE), or not an integer
    if (delta > 0 and number > _LL_MAX - delta) or (delta < 0 and number < _LL_MIN - delta):
        return general(ctx, argv)  # the overflow error
    number += delta
    _db_set(db, key, _format_ll(number), True)  # strings._incr: Database.set(keep_ttl=True)
    server = (<Client>ctx).server
    _modified(server, db, key)
    if _notify_on(server):
        server.notify(_STRING, b"incrby", key, db.index)
    return PyLong_FromLongLong(number)


def incr(ctx, list argv):
    """INCR key"""
    return _incr_by(ctx, argv, 1, _incr_py)


def decr(ctx, list argv):
    """DECR key"""
    return _incr_by(ctx, argv, -1, _decr_py)


def incrby(ctx, list argv):
    """INCRBY key increment"""
    cdef long long delta
    if not _parse_ll(<object>PyList_GET_ITEM(argv, 2), &delta):
        return _incrby_py(ctx, argv)
    return _incr_by(ctx, argv, delta, _incrby_py)


def decrby(ctx, list argv):
    """DECRBY key decrement"""
    cdef long long delta
    if not _parse_ll(<object>PyList_GET_ITEM(argv, 2), &delta) or delta == _LL_MIN:
        return _decrby_py(ctx, argv)
    return _incr_by(ctx, argv, -delta, _decrby_py)
