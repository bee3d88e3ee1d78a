# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""XCLAIM, XAUTOCLAIM and XPENDING compiled: the recovery loop of task
queues (celery, dramatiq, taskiq, faststream run XAUTOCLAIM, or XPENDING then XCLAIM,
over and over).

Profiled in-process (cProfile, 5,000 pending entries), an XCLAIM of 10 IDs or an
XAUTOCLAIM COUNT 10 cost ~33 µs in the Python bodies (~400k instructions), spread
thin: parse_strict_id per ID (~25%), Stream.get per ID (a tuple bisect over the nodes'
first IDs, then two bisects in the node: ~35%), and per claim
ConsumerGroup._set_owner/_retime (three SortedIndex calls on Python int keys, a
PendingEntry attribute walk). Here the same work runs in C: IDs parsed to packed keys,
the stream entry located over the node columns (rillet/_columns.pxd), the PEL updated
with the packed-key SortedIndex calls (engine/_pelindex.pxd: get_key/insert_key/
pop_key), and a reply of consecutive live entries encoded from the nodes
(resp/_stream_entries.pyx). XPENDING builds its rows from the PendingEntry
fields, and its summary from the indexes' sizes and edge keys. bench/ANALYSIS.md has the figures.

The common forms only; everything else is handed, before anything changed, to the
Python body, which stays the reference: a consumer to create (its event and effect),
a pending entry whose stream entry is gone (its removal and XCLAIM/XACK effect), LASTID,
an ID in another form than `ms-seq` (or XAUTOCLAIM's start other than that or `-`),
numbers not in plain decimals, any error to report, and anything that is not plain
(another client type, expiring keys, a Python SortedIndex...).

Keep in step with commands/groups.py `xclaim`/`xautoclaim`/`xpending`/`_propagate_claims`
and engine/groups.py `claim`/`autoclaim`/`pending_range`/`_add`/`_retime`/`_set_owner`.
tests/server/test_claim_bodies.py runs generated command sequences through these and
through the Python bodies and compares replies, effects, events and the groups' state.
"""

from cpython.long cimport (
    PyLong_AsSsize_t, PyLong_AsUnsignedLongLong, PyLong_FromLongLong, PyLong_FromSsize_t,
)
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.set cimport PySet_Contains

from rillet.engine.groups cimport Consumer, ConsumerGroup
from rillet.engine.stream cimport Stream
from rillet.engine.stream_node cimport StreamNode
from rillet.commands._streamids cimport (
    _id_text, _key, _plain_ack_id, _plain_count, _tuple_key, _word,
)
from rillet._columns cimport Col, _at, _col
from rillet.engine._pelindex cimport PendingEntry, SortedIndex, bisect_left_u128, u128
from rillet._systime cimport system_now_ms as _system_now_ms

from rillet.clock import SystemClock
from rillet.resp.types import NULL_ARRAY

include "_bodies.pxi"

cdef object _SystemClock = SystemClock
# The effect's words (groups._xclaim_effect).
cdef bytes _XCLAIM = b"XCLAIM"
cdef bytes _ZERO = b"0"
cdef bytes _TIME = b"TIME"
cdef bytes _RETRYCOUNT = b"RETRYCOUNT"
cdef bytes _FORCE = b"FORCE"
cdef bytes _JUSTID = b"JUSTID"
cdef bytes _LASTID = b"LASTID"
cdef bytes _ZERO_ID = b"0-0"
cdef int TOUCH_BITS = 40  # pel.TOUCH_BITS
cdef long long LLONG_MAX = 0x7FFFFFFFFFFFFFFF
# groups._AUTOCLAIM_MAX_COUNT (INT64_MAX // 16) and engine AUTOCLAIM_ATTEMPTS_FACTOR.
cdef long long AUTOCLAIM_MAX_COUNT = 0x7FFFFFFFFFFFFFFF // 16
cdef long long ATTEMPTS_FACTOR = 10


# Set by bind(): the Python bodies, for every case not answered here.
cdef object _xclaim_py = None
cdef object _xautoclaim_py = None
cdef object _xpending_py = None
cdef object _encode_range = None


def bind(xclaim, xautoclaim, xpending, encode_range=None):
    """commands/groups.py hands over its bodies, and the node-walking reply encoder
    (resp/_stream_entries.pyx encode_range) when it is built."""
    global _xclaim_py, _xautoclaim_py, _xpending_py, _encode_range
    _xclaim_py = xclaim
    _xautoclaim_py = xautoclaim
    _xpending_py = xpending
    _encode_range = encode_range


# --- the stream entry of an ID ---------------------------------------------------------------

cdef object _locate(Stream stream, u128 k, Py_ssize_t *at, Py_ssize_t *node_index):
    """Stream._locate (keep in step): the node holding the live entry `k` (at[0] gets its
    index in the node, node_index[0] the node's, when not NULL), or None: bisect_right over the nodes' first IDs, then the
    entry's index inside the node (IDs rise strictly there), then its tombstone."""
    cdef list nodes = stream._nodes
    cdef list firsts = stream._keys
    cdef Py_ssize_t lo = 0, hi = PyList_GET_SIZE(firsts), mid, n, ni
    cdef Col ms, seq
    cdef unsigned long long ms0
    cdef u128 found
    while lo < hi:
        mid = (lo + hi) >> 1
        if k < _tuple_key(<object>PyList_GET_ITEM(firsts, mid)):
            hi = mid
        else:
            lo = mid + 1
    if lo == 0:
        return None
    ni = lo - 1
    cdef StreamNode node = <StreamNode?><object>PyList_GET_ITEM(nodes, ni)
    if node.lp is not None:
        node.materialize()  # a loaded node's first read (rdb_stream.LoadedNode)
    ms0 = PyLong_AsUnsignedLongLong(node.ms0)
    n = node.n
    _col(&ms, node._ms)
    _col(&seq, node._seq)
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi) >> 1
        if _key(ms0 + _at(&ms, mid), _at(&seq, mid)) < k:
            lo = mid + 1
        else:
            hi = mid
    if lo == n:
        return None
    found = _key(ms0 + _at(&ms, lo), _at(&seq, lo))
    if found != k:
        return None
    dead = node._dead
    if dead is not None and PySet_Contains(dead, PyLong_FromSsize_t(lo)):
        return None
    at[0] = lo
    if node_index != NULL:
        node_index[0] = ni
    return node


# --- the shared lookup and the PEL moves -------------------------------------------------

cdef object _plain_group(ctx, list argv):
    """(db, stream, group, consumer) for `argv[1]`, `argv[2]`, `argv[3]` when the body
    may work inline (a plain db, an existing stream, group and consumer, compiled
    indexes), else None."""
    cdef ConsumerGroup group
    cdef Consumer consumer
    cdef PyObject* found
    cdef Stream stream
    stream = _plain_value(ctx, argv, Stream)
    if stream is None:
        return None
    found = PyDict_GetItem(stream.groups, <object>PyList_GET_ITEM(argv, 2))
    if found is NULL or type(<object>found) is not ConsumerGroup:
        return None
    group = <ConsumerGroup>found
    if group.dead_letter_key is not None:
        return None  # a dead-letter policy (commands/policies.py) is Python's
    found = PyDict_GetItem(group.consumers, <object>PyList_GET_ITEM(argv, 3))
    if found is NULL or type(<object>found) is not Consumer:
        return None  # a consumer to create: event and effect in Python
    consumer = <Consumer>found
    if (type(group.pel) is not SortedIndex
            or type(group.idle_index) is not SortedIndex
            or type(consumer.pel) is not SortedIndex):
        return None
    return stream, group, consumer


cdef int _set_owner(ConsumerGroup group, PendingEntry entry, Consumer consumer) except -1:
    """ConsumerGroup._set_owner to an existing consumer (keep in step)."""
    name = consumer.name
    owner = entry.owner
    if owner == name:
        return 0
    if owner is None:
        group.nacked_count -= 1
    else:
        previous = group.consumers[owner]
        if type(previous) is Consumer and type((<Consumer>previous).pel) is SortedIndex:
            (<SortedIndex>(<Consumer>previous).pel).pop_key(entry._key)
        else:
            previous.pel.pop(entry.key)
    (<SortedIndex>consumer.pel).insert_key(entry._key, entry)
    entry.owner = name
    return 0


cdef object _run_reply(Stream stream, list touched):
    """The claimed entries' [[id, fields], ...] reply encoded straight from the stream's
    nodes (encode_range, as XREADGROUP's), when they are, in order, consecutive live
    entries of the stream: what claims of a PEL page or of IDs from XPENDING mostly are.
    None otherwise (the caller builds it with fields_at)."""
    cdef Py_ssize_t n = PyList_GET_SIZE(touched), j = 0, ni, i, first_ni, first_i, size
    cdef PendingEntry entry
    cdef StreamNode node
    cdef Col ms, seq
    cdef unsigned long long ms0
    cdef u128 first, last
    if _encode_range is None or n == 0:
        return None
    first = (<PendingEntry><object>PyList_GET_ITEM(touched, 0))._key
    last = (<PendingEntry><object>PyList_GET_ITEM(touched, n - 1))._key
    if _locate(stream, first, &first_i, &first_ni) is None:
        return None
    nodes = stream._nodes
    ni, i = first_ni, first_i
    while j < n and ni < PyList_GET_SIZE(nodes):
        item = <object>PyList_GET_ITEM(nodes, ni)
        if not isinstance(item, StreamNode):
            return None
        node = <StreamNode>item
        if node.lp is not None:
            node.materialize()  # a loaded node's first read (rdb_stream.LoadedNode)
        ms0 = PyLong_AsUnsignedLongLong(node.ms0)
        size = node.n
        _col(&ms, node._ms)
        _col(&seq, node._seq)
        dead = node._dead
        while i < size and j < n:
            if dead is None or not PySet_Contains(dead, PyLong_FromSsize_t(i)):
                entry = <PendingEntry><object>PyList_GET_ITEM(touched, j)
                if _key(ms0 + _at(&ms, i), _at(&seq, i)) != entry._key:
                    return None
                j += 1
            i += 1
        ni += 1
        i = 0
    if j < n:
        return None
    return _encode_range(stream, (<unsigned long long>(first >> 64), <unsigned long long>first),
                         (<unsigned long long>(last >> 64), <unsigned long long>last), n, False,
                         (nodes, first_ni, first_i))


cdef object _claim_reply(list keys, list bodies, bint justid):
    """The claimed entries as the bodies reply them: IDs (JUSTID) or [id, fields] pairs."""
    cdef Py_ssize_t j
    out = []
    for j in range(PyList_GET_SIZE(keys)):
        text = <object>PyList_GET_ITEM(keys, j)
        if justid:
            out.append(text)
        else:
            out.append([text, <object>PyList_GET_ITEM(bodies, j)])
    return out


cdef int _publish(object ctx, ConsumerGroup group, list argv, list touched, list texts) except -1:
    """groups._propagate_claims for claims only (keep in step): the save counter, and per
    touched entry `XCLAIM key group consumer 0 id TIME t RETRYCOUNT n FORCE JUSTID
    LASTID group-last-id` when effects are wanted, Client.propagate's way."""
    cdef Py_ssize_t j, n = PyList_GET_SIZE(touched)
    cdef PendingEntry entry
    if not n:
        return 0
    server = (<Client>ctx).server
    if type(server) is not ServerState:
        ctx.changed(n)
        sinks = bool(server.effect_sinks)
    else:
        (<ServerState>server).dirty = (<ServerState>server).dirty + n
        sinks = bool((<ServerState>server).effect_sinks)
    if not sinks:
        return 0
    key = <object>PyList_GET_ITEM(argv, 1)
    group_name = <object>PyList_GET_ITEM(argv, 2)
    consumer_name = <object>PyList_GET_ITEM(argv, 3)
    last = _id_text(_tuple_key(group.last_id))
    index = (<Database>(<Client>ctx).db).index
    for j in range(n):
        entry = <PendingEntry><object>PyList_GET_ITEM(touched, j)
        effect = [_XCLAIM, key, group_name, consumer_name, _ZERO,
                  <object>PyList_GET_ITEM(texts, j), _TIME,
                  b"%d" % <unsigned long long>(entry._tkey >> TOUCH_BITS),
                  _RETRYCOUNT, b"%d" % entry.delivery_count, _FORCE, _JUSTID, _LASTID, last]
        if type(server) is ServerState:
            effects = (<ServerState>server)._effects
            if effects is None:
                (<ServerState>server)._effects = [(index, effect)]
            else:
                effects.append((index, effect))
        else:
            ctx.propagate(effect)
    return 0


cdef inline long long _now(object ctx) except? -1:
    server = (<Client>ctx).server
    clock = _clock(server)
    return _system_now_ms() if type(clock) is _SystemClock else clock.now_ms()


# --- XCLAIM ------------------------------------------------------------------------------------

def xclaim(ctx, list argv):
    """XCLAIM key group consumer min-idle-time id [id ...] [IDLE ms] [TIME unix-time-milliseconds] [RETRYCOUNT count] [FORCE] [JUSTID] [LASTID lastid]

    The compiled `groups.xclaim` for plain IDs and options without LASTID (see the
    module docstring); everything else goes to the Python body.
    """
    cdef ConsumerGroup group
    cdef Consumer consumer
    cdef Py_ssize_t argc = PyList_GET_SIZE(argv), j, nids, first_option
    cdef unsigned long long ms = 0, seq = 0
    cdef long long min_idle, now, value, delivery_time = -1, retry_count = -1
    cdef bint force = False, justid = False, has_time = False
    cdef u128 stack_keys[32]
    cdef u128 *keys
    cdef Py_ssize_t stack_positions[32]
    cdef Py_ssize_t *positions
    if argc < 6:
        return _xclaim_py(ctx, argv)
    found = _plain_group(ctx, argv)
    if found is None:
        return _xclaim_py(ctx, argv)
    stream, group, consumer = found
    if not _plain_count(<object>PyList_GET_ITEM(argv, 4), &min_idle):
        return _xclaim_py(ctx, argv)
    now = _now(ctx)
    # IDs up to the first option word; anything else is an ID in another form or an
    # error, which the Python body reads.
    j = 5
    while j < argc and _plain_ack_id(<object>PyList_GET_ITEM(argv, j), &ms, &seq):
        j += 1
    first_option = j
    while j < argc:
        word = <object>PyList_GET_ITEM(argv, j)
        if _word(word, b"FORCE", 5):
            force = True
        elif _word(word, b"JUSTID", 6):
            justid = True
        elif j + 1 < argc and _word(word, b"IDLE", 4):
            j += 1
            if not _plain_count(<object>PyList_GET_ITEM(argv, j), &value):
                return _xclaim_py(ctx, argv)
            delivery_time = now - value
            has_time = True
        elif j + 1 < argc and _word(word, b"TIME", 4):
            j += 1
            if not _plain_count(<object>PyList_GET_ITEM(argv, j), &value):
                return _xclaim_py(ctx, argv)
            delivery_time = value
            has_time = True
        elif j + 1 < argc and _word(word, b"RETRYCOUNT", 10):
            j += 1
            if not _plain_count(<object>PyList_GET_ITEM(argv, j), &retry_count):
                return _xclaim_py(ctx, argv)
        else:
            return _xclaim_py(ctx, argv)  # LASTID, an unknown option: Python
        j += 1
    if not has_time or delivery_time < 0 or delivery_time > now:
        delivery_time = now
    nids = first_option - 5
    keys = stack_keys
    positions = stack_positions
    if nids > 32:
        keys = <u128 *>PyMem_Malloc(nids * sizeof(u128))
        positions = <Py_ssize_t *>PyMem_Malloc(nids * sizeof(Py_ssize_t))
    try:
        if keys == NULL or positions == NULL:
            raise MemoryError()
        for j in range(nids):
            _plain_ack_id(<object>PyList_GET_ITEM(argv, 5 + j), &ms, &seq)
            keys[j] = _key(ms, seq)
        return _claim(ctx, argv, stream, group, consumer, keys, positions, nids, min_idle,
                      now, delivery_time, retry_count, force, justid)
    finally:
        if keys != stack_keys:
            PyMem_Free(keys)
            PyMem_Free(positions)


cdef object _claim(ctx, list argv, Stream stream, ConsumerGroup group, Consumer consumer,
                   u128 *keys, Py_ssize_t *positions, Py_ssize_t nids, long long min_idle,
                   long long now, long long delivery_time, long long retry_count, bint force,
                   bint justid):
    """engine ConsumerGroup.claim and groups.xclaim's effects and reply (keep in step),
    or the Python body's answer when a pending entry's stream entry is gone."""
    cdef Py_ssize_t j
    cdef long long touch_seq, count
    cdef u128 k
    cdef PendingEntry entry
    cdef SortedIndex pel = <SortedIndex>group.pel
    cdef SortedIndex idle = <SortedIndex>group.idle_index
    cdef SortedIndex cpel = <SortedIndex>consumer.pel
    # engine claim (keep in step). A pending entry whose stream entry is gone leaves the
    # PEL with effects of its own: the Python body does that, so look before changing.
    # The stream does not change below: each ID's entry is located once, here.
    nodes = []
    for j in range(nids):
        k = keys[j]
        pending = pel.get_key(k) is not None
        node = None
        if force or pending:
            node = _locate(stream, k, &positions[j], NULL)
            if node is None and pending:
                return _xclaim_py(ctx, argv)
        nodes.append(node)
    _touch((<Client>ctx).db, <object>PyList_GET_ITEM(argv, 1))
    now_obj = PyLong_FromLongLong(now)
    consumer.seen_time_ms = now_obj
    touch_seq = group._touch_seq
    name = consumer.name
    touched = []
    texts = []
    bodies = []
    try:
        for j in range(nids):
            k = keys[j]
            value_obj = pel.get_key(k)
            if value_obj is None and not force:
                continue
            node = <object>PyList_GET_ITEM(nodes, j)
            if node is None:
                continue  # FORCE of an ID not in the stream (never pending: see above)
            if value_obj is None:
                if retry_count >= 0:
                    count = retry_count
                else:
                    count = 1 if justid else 2
                entry = PendingEntry.__new__(PendingEntry)
                entry._key = k
                entry._tkey = (<u128>delivery_time << TOUCH_BITS) | <u128>touch_seq
                touch_seq += 1
                entry.owner = name
                entry.delivery_count = count
                cpel.insert_key(k, entry)
                pel.insert_key(k, entry)
                idle.insert_key(entry._tkey, entry)
            else:
                entry = <PendingEntry>value_obj
                if (entry.owner is not None and min_idle > 0
                        and now - <long long>(entry._tkey >> TOUCH_BITS) < min_idle):
                    continue
                _set_owner(group, entry, consumer)
                idle.pop_key(entry._tkey)
                entry._tkey = (<u128>delivery_time << TOUCH_BITS) | <u128>touch_seq
                touch_seq += 1
                idle.insert_key(entry._tkey, entry)
                if retry_count >= 0:
                    entry.delivery_count = retry_count
                elif not justid:
                    if entry.delivery_count < LLONG_MAX:
                        entry.delivery_count = entry.delivery_count + 1
            touched.append(entry)
            texts.append(_id_text(k))
            if not justid:
                bodies.append((node, j))
            consumer.active_time_ms = now_obj
    finally:
        group._touch_seq = touch_seq
    _publish(ctx, group, argv, touched, texts)
    if justid:
        return texts
    reply = _run_reply(stream, touched)
    if reply is not None:
        return reply
    return _claim_reply(texts, [node.fields_at(positions[j]) for node, j in bodies], False)


# --- XAUTOCLAIM --------------------------------------------------------------------------------

def xautoclaim(ctx, list argv):
    """XAUTOCLAIM key group consumer min-idle-time start [COUNT count] [JUSTID]

    The compiled `groups.xautoclaim` for a plain start (`ms-seq` or `-`) and options
    (see the module docstring); everything else goes to the Python body.
    """
    cdef ConsumerGroup group
    cdef Consumer consumer
    cdef Py_ssize_t argc = PyList_GET_SIZE(argv), j, pos, i, n, at
    cdef unsigned long long ms, seq
    cdef long long min_idle, now, count = 100, attempts, remaining, touch_seq
    cdef bint justid = False
    cdef u128 start, cursor = 0
    cdef SortedIndex pel, idle
    cdef PendingEntry entry
    cdef list vals
    if argc < 6:
        return _xautoclaim_py(ctx, argv)
    found = _plain_group(ctx, argv)
    if found is None:
        return _xautoclaim_py(ctx, argv)
    stream, group, consumer = found
    if not _plain_count(<object>PyList_GET_ITEM(argv, 4), &min_idle):
        return _xautoclaim_py(ctx, argv)
    raw = <object>PyList_GET_ITEM(argv, 5)
    if PyBytes_GET_SIZE(raw) == 1 and PyBytes_AS_STRING(raw)[0] == c'-':
        start = 0
    elif _plain_ack_id(raw, &ms, &seq):
        start = _key(ms, seq)
    else:
        return _xautoclaim_py(ctx, argv)
    j = 6
    while j < argc:
        word = <object>PyList_GET_ITEM(argv, j)
        if j + 1 < argc and _word(word, b"COUNT", 5):
            if (not _plain_count(<object>PyList_GET_ITEM(argv, j + 1), &count)
                    or not 1 <= count <= AUTOCLAIM_MAX_COUNT):
                return _xautoclaim_py(ctx, argv)
            j += 2
        elif _word(word, b"JUSTID", 6):
            justid = True
            j += 1
        else:
            return _xautoclaim_py(ctx, argv)
    now = _now(ctx)
    pel = <SortedIndex>group.pel
    idle = <SortedIndex>group.idle_index
    # engine autoclaim (keep in step): the walk decides everything before any change,
    # as claims never move entries in the group PEL; a deleted entry met on the way
    # (removed, reported, effects of its own) hands the command to the Python body.
    attempts = count * ATTEMPTS_FACTOR
    remaining = count
    chosen = []
    nodes = []
    positions = []
    pos = bisect_left_u128(pel._maxes, pel._nb, start)
    i = 0
    if pos < pel._nb:
        i = bisect_left_u128(pel._kb[pos], PyList_GET_SIZE(<list>pel._vals[pos]), start)
    while attempts and remaining:
        attempts -= 1
        while pos < pel._nb and i == PyList_GET_SIZE(<list>pel._vals[pos]):
            pos += 1
            i = 0
        if pos >= pel._nb:
            break
        entry = <PendingEntry><object>PyList_GET_ITEM(<list>pel._vals[pos], i)
        i += 1
        node = _locate(stream, entry._key, &at, NULL)
        if node is None:
            return _xautoclaim_py(ctx, argv)
        if min_idle > 0 and now - <long long>(entry._tkey >> TOUCH_BITS) < min_idle:
            continue
        chosen.append(entry)
        if not justid:
            nodes.append(node)
            positions.append(at)
        remaining -= 1
    while pos < pel._nb and i == PyList_GET_SIZE(<list>pel._vals[pos]):
        pos += 1
        i = 0
    if pos < pel._nb:
        cursor = pel._kb[pos][i]
    # From here the claims happen (nothing below hands over).
    _touch((<Client>ctx).db, <object>PyList_GET_ITEM(argv, 1))
    now_obj = PyLong_FromLongLong(now)
    consumer.seen_time_ms = now_obj
    touch_seq = group._touch_seq
    texts = []
    n = PyList_GET_SIZE(chosen)
    try:
        for j in range(n):
            entry = <PendingEntry><object>PyList_GET_ITEM(chosen, j)
            _set_owner(group, entry, consumer)
            idle.pop_key(entry._tkey)
            entry._tkey = (<u128>now << TOUCH_BITS) | <u128>touch_seq
            touch_seq += 1
            idle.insert_key(entry._tkey, entry)
            if not justid and entry.delivery_count < LLONG_MAX:
                entry.delivery_count = entry.delivery_count + 1
            texts.append(_id_text(entry._key))
    finally:
        group._touch_seq = touch_seq
    if n:
        consumer.active_time_ms = now_obj
    _publish(ctx, group, argv, chosen, texts)
    if justid:
        claimed = texts
    else:
        claimed = _run_reply(stream, chosen)
        if claimed is None:
            claimed = _claim_reply(texts, [(<object>PyList_GET_ITEM(nodes, j)).fields_at(
                <object>PyList_GET_ITEM(positions, j)) for j in range(n)], False)
    return [_ZERO_ID if cursor == 0 else _id_text(cursor), claimed, []]



# --- XPENDING --------------------------------------------------------------------------------------

cdef inline bint _range_bound(object raw, bint is_end, u128 *out) noexcept:
    """parse_range_start/parse_range_end for `-`, `+` and plain `ms-seq` (the rest: Python)."""
    cdef unsigned long long ms, seq
    if PyBytes_GET_SIZE(raw) == 1:
        if PyBytes_AS_STRING(raw)[0] == c'-':
            out[0] = 0
            return True
        if PyBytes_AS_STRING(raw)[0] == c'+':
            out[0] = ~(<u128>0)
            return True
    if not _plain_ack_id(raw, &ms, &seq):
        return False
    out[0] = _key(ms, seq)
    return True


def xpending(ctx, list argv):
    """XPENDING key group [[IDLE min-idle-time] start end count [consumer]]

    The compiled `groups.xpending`: the summary, and the extended form with plain
    bounds and numbers (everything else goes to the Python body).
    """
    cdef ConsumerGroup group
    cdef Py_ssize_t argc = PyList_GET_SIZE(argv), at = 3, pos, i, n
    cdef long long min_idle = 0, count, now, dt, idle_ms
    cdef u128 lo, hi
    cdef SortedIndex index
    cdef PendingEntry entry
    cdef list vals
    cdef PyObject* found
    cdef Stream stream
    if argc == 3:
        return _summary(ctx, argv)
    if not 6 <= argc <= 9:
        return _xpending_py(ctx, argv)
    stream = _plain_value(ctx, argv, Stream)
    if stream is None:
        return _xpending_py(ctx, argv)
    if _word(<object>PyList_GET_ITEM(argv, 3), b"IDLE", 4):
        if argc < 8 or not _plain_count(<object>PyList_GET_ITEM(argv, 4), &min_idle):
            return _xpending_py(ctx, argv)
        at = 5
    if (not _plain_count(<object>PyList_GET_ITEM(argv, at + 2), &count)
            or not _range_bound(<object>PyList_GET_ITEM(argv, at), False, &lo)
            or not _range_bound(<object>PyList_GET_ITEM(argv, at + 1), True, &hi)):
        return _xpending_py(ctx, argv)
    found = PyDict_GetItem(stream.groups, <object>PyList_GET_ITEM(argv, 2))
    if found is NULL or type(<object>found) is not ConsumerGroup:
        return _xpending_py(ctx, argv)
    group = <ConsumerGroup>found
    if at + 3 < argc:
        found = PyDict_GetItem(group.consumers,
                               <object>PyList_GET_ITEM(argv, at + 3))
        if found is NULL:
            _touch((<Client>ctx).db, <object>PyList_GET_ITEM(argv, 1))
            return []  # an unknown consumer has nothing pending
        if type(<object>found) is not Consumer:
            return _xpending_py(ctx, argv)
        index_obj = (<Consumer>found).pel
    else:
        index_obj = group.pel
    if type(index_obj) is not SortedIndex:
        return _xpending_py(ctx, argv)
    index = <SortedIndex>index_obj
    _touch((<Client>ctx).db, <object>PyList_GET_ITEM(argv, 1))
    now = _now(ctx)
    # engine pending_range (keep in step): ID order from lo, at most `count`, with IDLE
    # only the entries idle for at least that long; each as groups.xpending replies it.
    out = []
    if count <= 0 or lo > hi:
        return out
    pos = bisect_left_u128(index._maxes, index._nb, lo)
    i = 0
    if pos < index._nb:
        i = bisect_left_u128(index._kb[pos], PyList_GET_SIZE(<list>index._vals[pos]), lo)
    while pos < index._nb:
        vals = <list>index._vals[pos]
        n = PyList_GET_SIZE(vals)
        if i == n:
            pos += 1
            i = 0
            continue
        if index._kb[pos][i] > hi:
            break
        entry = <PendingEntry><object>PyList_GET_ITEM(vals, i)
        i += 1
        dt = <long long>(entry._tkey >> TOUCH_BITS)
        if min_idle and now - dt < min_idle:
            continue
        owner = entry.owner
        if owner is None:
            out.append([_id_text(entry._key), b"", -1, entry.delivery_count])
        else:
            idle_ms = now - dt
            out.append([_id_text(entry._key), owner, idle_ms if idle_ms > 0 else 0,
                        entry.delivery_count])
        if PyList_GET_SIZE(out) == count:
            break
    return out


cdef object _summary(ctx, list argv):
    """XPENDING key group: engine pending_summary and groups.xpending's reply (keep in
    step), when the consumers' sorted names are cached (else the Python body sorts and
    caches them)."""
    cdef ConsumerGroup group
    cdef PyObject* found
    cdef SortedIndex pel, cpel
    cdef Py_ssize_t j
    cdef Stream stream
    stream = _plain_value(ctx, argv, Stream)
    if stream is None:
        return _xpending_py(ctx, argv)
    found = PyDict_GetItem(stream.groups, <object>PyList_GET_ITEM(argv, 2))
    if found is NULL or type(<object>found) is not ConsumerGroup:
        return _xpending_py(ctx, argv)
    group = <ConsumerGroup>found
    names = group._names_sorted
    if type(group.pel) is not SortedIndex or type(names) is not list:
        return _xpending_py(ctx, argv)
    consumers = group.consumers
    per_consumer = []
    for j in range(PyList_GET_SIZE(<list>names)):
        name = <object>PyList_GET_ITEM(<list>names, j)
        consumer = consumers[name]
        if type(consumer) is not Consumer or type((<Consumer>consumer).pel) is not SortedIndex:
            return _xpending_py(ctx, argv)
        cpel = <SortedIndex>(<Consumer>consumer).pel
        if cpel._len:
            per_consumer.append([name, b"%d" % cpel._len])
    _touch((<Client>ctx).db, <object>PyList_GET_ITEM(argv, 1))
    pel = <SortedIndex>group.pel
    if not pel._len:
        return [0, None, None, NULL_ARRAY]
    return [pel._len, _id_text(pel._kb[0][0]), _id_text(pel._maxes[pel._nb - 1]), per_consumer]
