# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The consumer-group hot path compiled: `XREADGROUP GROUP g c [COUNT n] [BLOCK ms]
[NOACK] STREAMS key >` delivering new entries, and `XACK key group id ...`.

Profiled (callgrind, in-process, one XACK of 10 IDs pipelined with one
XREADGROUP COUNT 10) a round trip cost ~340,000 instructions, nearly all of it
in the Python bodies: option parsing, ConsumerGroup.read_new's per-entry
`_advance_to` and `_add` (an int key, a PendingEntry and three index inserts
through Python calls), `_parse_ids` and `ack`. Here the common case runs in C
against the packed-key indexes (engine/_pelindex.pxd: insert_key/pop_key),
and every other case is handed, before anything changed, to the Python body,
which stays the reference: a consumer to create (its event and effect), effect
CLAIM, history IDs, several keys, entries
already pending (after XGROUP SETID), an entries-read counter that needs
re-deriving (deleted entries ahead, the group behind the first entry, SCG
invalid), nothing to deliver (NULL or blocking), IDs in other forms, and
anything that is not plain (another clock, a key whose TTL is due, ...: `_plain_for`).

Keep in step with commands/groups.py `xreadgroup`/`_read_new`/`xack`/`_parse_ids`
and engine/groups.py `read_new`/`_advance_to`/`_add`/`ack`. tests/server/
test_group_bodies.py runs generated command sequences through these and through
the Python bodies and compares replies, effects, events and the groups' state.
"""

from cpython.array cimport array
from cpython.long cimport PyLong_AsSsize_t, PyLong_AsUnsignedLongLong, PyLong_FromLongLong, PyLong_FromSsize_t
from cpython.mem cimport PyMem_Free, PyMem_Malloc, PyMem_Realloc
from cpython.set cimport PySet_Contains
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdio cimport snprintf
from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.tuple cimport PyTuple_GET_ITEM

from rillet.engine.groups cimport Consumer, ConsumerGroup
from rillet.engine.stream cimport Stream
from rillet.engine.stream_node cimport StreamNode
from rillet._columns cimport Col, _at, _col
from rillet.engine._pelindex cimport PendingEntry, SortedIndex, u128
from rillet.commands._streamids cimport (
    _id_parts, _id_text, _key, _plain_ack_id, _plain_count, _tuple_key, _word,
)
from rillet._systime cimport system_now_ms as _system_now_ms

from rillet.clock import SystemClock
from rillet.engine.ids import StreamID
from rillet.resp.types import Map

include "_bodies.pxi"

cdef object _StreamID = StreamID
cdef object _SystemClock = SystemClock
cdef object _Map = Map
cdef object _ONE = 1
# The effects' words (groups._xclaim_effect, _setid_effect).
cdef bytes _XCLAIM = b"XCLAIM"
cdef bytes _ZERO = b"0"
cdef bytes _TIME = b"TIME"
cdef bytes _RETRYCOUNT = b"RETRYCOUNT"
cdef bytes _ONE_TEXT = b"1"
cdef bytes _FORCE = b"FORCE"
cdef bytes _JUSTID = b"JUSTID"
cdef bytes _LASTID = b"LASTID"
cdef bytes _XGROUP = b"XGROUP"
cdef bytes _SETID = b"SETID"
cdef bytes _ENTRIESREAD = b"ENTRIESREAD"
cdef object _tuple_new = tuple.__new__
cdef unsigned long long _U64_MAX = 0xFFFFFFFFFFFFFFFFULL
cdef int TOUCH_BITS = 40  # pel.TOUCH_BITS


# Set by bind(): the Python bodies, for every case not answered here.
cdef object _xreadgroup_py = None
cdef object _xack_py = None
cdef object _encode_range = None
cdef object _parse_block_timeout = None


def bind(xreadgroup, xack, encode_range, parse_block_timeout):
    """commands/groups.py hands over its bodies and the node-walking reply encoder."""
    global _xreadgroup_py, _xack_py, _encode_range, _parse_block_timeout
    _xreadgroup_py = xreadgroup
    _xack_py = xack
    _encode_range = encode_range
    _parse_block_timeout = parse_block_timeout


# --- the stream's IDs, read from its nodes ----------------------------------------------------
# Stream.range_ids and first_id walk the nodes in Python (a StreamID tuple per entry and
# tuple compares in the bisect): here the same walk over the nodes' columns (read with
# rillet/_columns.pxd), as packed keys.


cdef int _first_live(Stream stream, u128 *out) except -1:
    """Stream.first_id as a key (keep in step): the first live entry; 0 if none."""
    cdef Col ms, seq
    cdef Py_ssize_t head
    cdef StreamNode node
    for item in stream._nodes:
        node = <StreamNode?>item
        if node.live:
            if node.lp is not None:
                node.materialize()  # a loaded node's first read (rdb_stream.LoadedNode)
            head = node._head
            _col(&ms, node._ms)
            _col(&seq, node._seq)
            out[0] = _key(PyLong_AsUnsignedLongLong(node.ms0) + _at(&ms, head),
                          _at(&seq, head))
            return 0
    out[0] = 0
    return 0


cdef Py_ssize_t _ids_from(Stream stream, u128 start, Py_ssize_t limit, u128 **keys,
                          Py_ssize_t *cap, Py_ssize_t *at) except -1:
    """Stream.range_ids(start, MAX_ID, limit or None) as packed keys in *keys (grown
    with PyMem_Realloc; the caller frees it): read_cursor's bisect over the nodes'
    first IDs, first_index_ge inside the node, then live entries in order. at[0],
    at[1] get read_cursor's node and entry index (the reply encoder starts there)."""
    cdef list nodes = stream._nodes
    cdef list firsts = stream._keys
    cdef Py_ssize_t lo = 0, hi = PyList_GET_SIZE(firsts), mid, ni, i, n, found = 0, nnodes
    cdef Col ms, seq
    cdef uint64_t ms0
    cdef u128 k
    cdef void *grown
    cdef bint first_in_node
    cdef StreamNode node
    nnodes = PyList_GET_SIZE(nodes)
    while lo < hi:  # bisect_right(firsts, start)
        mid = (lo + hi) >> 1
        if start < _tuple_key(<object>PyList_GET_ITEM(firsts, mid)):
            hi = mid
        else:
            lo = mid + 1
    ni = lo - 1
    first_in_node = ni >= 0
    if ni < 0:
        ni = 0
    while ni < nnodes:
        node = <StreamNode?><object>PyList_GET_ITEM(nodes, ni)
        if node.lp is not None:
            node.materialize()  # a loaded node's first read (rdb_stream.LoadedNode)
        ms0 = PyLong_AsUnsignedLongLong(node.ms0)
        n = node.n
        _col(&ms, node._ms)
        _col(&seq, node._seq)
        dead = node._dead
        i = 0
        if first_in_node:  # first_index_ge: IDs rise strictly inside a node
            lo, hi = 0, n
            while lo < hi:
                mid = (lo + hi) >> 1
                if _key(ms0 + _at(&ms, mid), _at(&seq, mid)) < start:
                    lo = mid + 1
                else:
                    hi = mid
            i = lo
            first_in_node = False
        if found == 0 and at[0] < 0:
            at[0] = ni
            at[1] = i
        while i < n:
            if dead is None or not PySet_Contains(dead, PyLong_FromSsize_t(i)):
                if found == cap[0]:
                    grown = PyMem_Realloc(keys[0], (2 * found + 16) * sizeof(u128))
                    if grown == NULL:
                        raise MemoryError()
                    keys[0] = <u128 *>grown
                    cap[0] = 2 * found + 16
                keys[0][found] = _key(ms0 + _at(&ms, i), _at(&seq, i))
                found += 1
                if found == limit:
                    return found
            i += 1
        ni += 1
    return found


cdef inline object _sid(u128 k):
    return _tuple_new(_StreamID, (<unsigned long long>(k >> 64), <unsigned long long>k))


# --- XREADGROUP ... STREAMS key > ---------------------------------------------------------

def xreadgroup(ctx, list argv):
    """XREADGROUP GROUP group consumer [COUNT count] [BLOCK milliseconds] [CLAIM min-idle-time] [NOACK] STREAMS key [key ...] id [id ...]

    The compiled `groups.xreadgroup` for one stream read with `>` (see the
    module docstring); everything else goes to the Python body.
    """
    cdef ConsumerGroup group
    cdef Consumer consumer
    cdef Py_ssize_t argc = PyList_GET_SIZE(argv), i = 1, more, j
    cdef long long count = 0, now
    cdef bint noack = False
    cdef PyObject* found
    cdef Stream stream
    if type(ctx) is not Client:
        return _xreadgroup_py(ctx, argv)
    group_name = consumer_name = block_raw = None
    while i < argc:
        word = <object>PyList_GET_ITEM(argv, i)
        if not PyBytes_CheckExact(word):
            return _xreadgroup_py(ctx, argv)
        more = argc - i - 1
        if more and _word(word, b"STREAMS", 7):
            break
        if more >= 2 and _word(word, b"GROUP", 5):
            group_name = <object>PyList_GET_ITEM(argv, i + 1)
            consumer_name = <object>PyList_GET_ITEM(argv, i + 2)
            i += 3
        elif more and _word(word, b"COUNT", 5):
            word = <object>PyList_GET_ITEM(argv, i + 1)
            if not PyBytes_CheckExact(word) or not _plain_count(word, &count):
                return _xreadgroup_py(ctx, argv)
            i += 2
        elif more and _word(word, b"BLOCK", 5):
            block_raw = <object>PyList_GET_ITEM(argv, i + 1)
            i += 2
        elif _word(word, b"NOACK", 5):
            noack = True
            i += 1
        else:
            return _xreadgroup_py(ctx, argv)  # CLAIM, or an error to report in order
    # Exactly `STREAMS key >`, and every argument bytes (_plain_value checks).
    if i + 3 != argc or group_name is None:
        return _xreadgroup_py(ctx, argv)
    raw = <object>PyList_GET_ITEM(argv, i + 2)
    if not PyBytes_CheckExact(raw) or PyBytes_GET_SIZE(raw) != 1 or PyBytes_AS_STRING(raw)[0] != c'>':
        return _xreadgroup_py(ctx, argv)
    key = <object>PyList_GET_ITEM(argv, i + 1)
    server = (<Client>ctx).server
    if type(server) is not ServerState:
        return _xreadgroup_py(ctx, argv)
    clock = _clock(server)
    now = _system_now_ms() if type(clock) is _SystemClock else clock.now_ms()
    if block_raw is not None:
        try:
            _parse_block_timeout(block_raw, now)
        except Exception:
            return _xreadgroup_py(ctx, argv)
    # _plain_value wants the key at argv[1]: look it up the same way here.
    for j in range(1, argc):
        if not PyBytes_CheckExact(<object>PyList_GET_ITEM(argv, j)):
            return _xreadgroup_py(ctx, argv)
    db = (<Client>ctx).db
    if not _plain_for(db, key):
        return _xreadgroup_py(ctx, argv)
    found = PyDict_GetItem((<Database>db).data, key)
    if found is NULL or type(<object>found) is not Stream:
        return _xreadgroup_py(ctx, argv)
    stream = <Stream>found
    found = PyDict_GetItem(stream.groups, group_name)
    if found is NULL or type(<object>found) is not ConsumerGroup:
        return _xreadgroup_py(ctx, argv)
    group = <ConsumerGroup>found
    found = PyDict_GetItem(group.consumers, consumer_name)
    if found is NULL or type(<object>found) is not Consumer:
        return _xreadgroup_py(ctx, argv)  # a consumer to create: event and effect in Python
    consumer = <Consumer>found
    if (type(group.pel) is not SortedIndex
            or type(consumer.pel) is not SortedIndex):
        return _xreadgroup_py(ctx, argv)
    reply = _read_new(ctx, server, db, key, stream, group, consumer, noack, count, now,
                      group_name, consumer_name)
    if reply is None:
        return _xreadgroup_py(ctx, argv)
    return reply


cdef object _read_new(ctx, server, db, key, Stream stream, ConsumerGroup group,
                      Consumer consumer, bint noack, long long count, long long now,
                      group_name, consumer_name):
    """engine ConsumerGroup.read_new and groups._read_new (keep in step), or None
    (nothing changed) for the cases the Python body answers."""
    cdef unsigned long long last_ms, last_seq, del_ms, del_seq
    cdef u128 k, first_live, tbase
    cdef u128 stack_keys[16]
    cdef u128 *keys = NULL
    cdef Py_ssize_t cap = 0, n, j
    cdef Py_ssize_t at[2]
    cdef long long seq_no
    cdef SortedIndex pel = <SortedIndex>group.pel
    cdef SortedIndex idle = <SortedIndex>group.idle_index
    cdef SortedIndex cpel = <SortedIndex>consumer.pel
    cdef PendingEntry entry
    # engine read_new/_advance_to (keep in step): entries_read counts on while it
    # is valid, the group is not behind the first entry and no deletion lies
    # ahead of last_id; each stays so as last_id grows, so one test covers the read.
    entries_read = group.entries_read
    if entries_read is None:
        return None
    _id_parts(group.last_id, &last_ms, &last_seq)
    if last_seq == _U64_MAX:
        return None
    _id_parts(stream.max_deleted_id, &del_ms, &del_seq)
    if (del_ms or del_seq) and _key(del_ms, del_seq) >= _key(last_ms, last_seq):
        return None
    _first_live(stream, &first_live)
    if _key(last_ms, last_seq) < first_live:
        return None
    try:
        if count and count <= 16:
            keys = stack_keys  # never grown: _ids_from stops at `count` entries
            cap = 16
        at[0] = -1
        at[1] = 0
        n = _ids_from(stream, _key(last_ms, last_seq + 1), count if count else -1, &keys, &cap,
                      at)
        if n == 0:
            return None  # nothing new: NULL, or BLOCK
        if pel._nb and keys[0] <= pel._maxes[pel._nb - 1]:
            return None  # some may be pending already (SETID moved back)
        # Everything checked: from here the read happens (nothing below hands over).
        _touch(db, key)  # Database.get's access record
        now_obj = PyLong_FromLongLong(now)
        consumer.seen_time_ms = now_obj
        if not noack:
            name = consumer.name
            seq_no = group._touch_seq
            tbase = <u128>now << TOUCH_BITS
            for j in range(n):
                k = keys[j]
                entry = PendingEntry.__new__(PendingEntry)
                entry._key = k
                entry._tkey = tbase | <u128>(seq_no + j)
                entry.owner = name
                entry.delivery_count = _ONE
                pel.insert_key(k, entry)
                idle.insert_key(entry._tkey, entry)
                cpel.insert_key(k, entry)
            group._touch_seq = seq_no + n
            consumer.active_time_ms = now_obj
        first_id = _sid(keys[0])
        last_id = _sid(keys[n - 1])
        group.last_id = last_id
        group.entries_read = entries_read + n
        (<ServerState>server).dirty = (<ServerState>server).dirty + 1  # ctx.changed(1)
        if (<ServerState>server).effect_sinks:
            _propagate_read(server, db, key, group_name, consumer_name, noack, now, keys, n,
                            last_id, entries_read + n)
    finally:
        if keys != stack_keys:
            PyMem_Free(keys)
    entries = _encode_range(stream, first_id, last_id, n, False,
                            (stream._nodes, at[0], at[1]))
    if ctx.resp3:
        return _Map([(key, entries)])
    return [[key, entries]]


cdef int _propagate_read(server, db, key, group_name, consumer_name, bint noack,
                         long long now, u128 *keys, Py_ssize_t n, last_id,
                         entries_read) except -1:
    """groups._read_new's effects, Client.propagate's way (keep in step): per delivered
    entry `XCLAIM key group consumer 0 id TIME now RETRYCOUNT 1 FORCE JUSTID LASTID id`
    (a new entry's count is 1), then `XGROUP SETID key group last-id ENTRIESREAD n`;
    with NOACK only the latter."""
    cdef Py_ssize_t j
    effects = (<ServerState>server)._effects
    if effects is None:
        effects = []
        (<ServerState>server)._effects = effects
    index = (<Database>db).index
    if not noack:
        now_text = b"%d" % now
        for j in range(n):
            text = _id_text(keys[j])
            effects.append((index, [_XCLAIM, key, group_name, consumer_name, _ZERO, text,
                                    _TIME, now_text, _RETRYCOUNT, _ONE_TEXT, _FORCE, _JUSTID,
                                    _LASTID, text]))
    effects.append((index, [_XGROUP, _SETID, key, group_name, _id_text(_tuple_key(last_id)),
                            _ENTRIESREAD, b"%d" % entries_read]))
    return 0


# --- XACK key group id ... -------------------------------------------------------------------

def xack(ctx, list argv):
    """XACK key group id [id ...]

    The compiled `groups.xack` for IDs in plain `ms-seq` form (see the module
    docstring); other forms, and keys that are not plain streams, go to the
    Python body.
    """
    cdef ConsumerGroup group
    cdef Py_ssize_t argc = PyList_GET_SIZE(argv), i, n
    cdef unsigned long long ms, seq
    cdef u128* keys
    cdef u128 stack_keys[64]
    cdef SortedIndex pel, idle
    cdef PendingEntry entry
    cdef PyObject* found
    cdef long long acked = 0, released = 0
    cdef Stream stream
    if argc < 4:
        return _xack_py(ctx, argv)
    stream = _plain_value(ctx, argv, Stream)
    if stream is None:
        return _xack_py(ctx, argv)
    found = PyDict_GetItem(stream.groups, <object>PyList_GET_ITEM(argv, 2))
    if found is NULL or type(<object>found) is not ConsumerGroup:
        return _xack_py(ctx, argv)
    group = <ConsumerGroup>found
    if type(group.pel) is not SortedIndex:
        return _xack_py(ctx, argv)
    n = argc - 3
    if n <= 64:
        keys = stack_keys
    else:
        keys = <u128*>PyMem_Malloc(n * sizeof(u128))
        if keys == NULL:
            raise MemoryError()
    try:
        # Every ID parsed before anything changes (the Python body's order).
        for i in range(n):
            if not _plain_ack_id(<object>PyList_GET_ITEM(argv, i + 3), &ms, &seq):
                return _xack_py(ctx, argv)
            keys[i] = _key(ms, seq)
        _touch((<Client>ctx).db, <object>PyList_GET_ITEM(argv, 1))
        pel = <SortedIndex>group.pel
        idle = <SortedIndex>group.idle_index
        consumers = group.consumers
        # engine ConsumerGroup.ack (keep in step).
        for i in range(n):
            value = pel.pop_key(keys[i])
            if value is None:
                continue
            entry = <PendingEntry>value
            idle.pop_key(entry._tkey)
            owner = entry.owner
            if owner is None:
                released += 1
            else:
                consumer = consumers[owner]
                if type(consumer) is Consumer:
                    (<SortedIndex>(<Consumer>consumer).pel).pop_key(keys[i])
                else:
                    consumer.pel.pop(entry.key)
            acked += 1
    finally:
        if keys != stack_keys:
            PyMem_Free(keys)
    if released:
        group.nacked_count -= released
    if acked:
        server = (<Client>ctx).server
        if type(server) is ServerState:
            (<ServerState>server).dirty = (<ServerState>server).dirty + acked
        else:
            ctx.changed(acked)
    return acked
