# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""`ClientConnection.data_received` and `_run` compiled, the dispatcher's common case inline.

At 64 pipelined PINGs per read the Python loop spent ~0.5 us per command on
a handler that costs ~0.1 us: the call into `Dispatcher.execute`, its checks
and the reply encoding. Here a command takes the inline path only when it is
a plain one: found in the table by its exact bytes, no subcommands, arity
right, the client not gated (Client.gated carries the server's gate too).
Everything else, and every rejection, goes through `Dispatcher.execute`, so
the Python modules stay the single source of every rare case. A write's
effects leave through ServerState.publish_write, as on the general path. What
is repeated here is marked "keep in step": the two connection methods, the
lines of `Dispatcher.call` (stats, timing, the slow log), RequestParser.feed's whole-read
case and publish_write's first test; their Python originals say so too,
and tests/server/test_fastpath.py runs generated pipelines through both paths
and compares replies, effects and stats.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.dict cimport PyDict_Contains, PyDict_GetItemWithError
from libc.string cimport memcmp
from cpython.object cimport PyObject
from cpython.ref cimport Py_INCREF, Py_XDECREF
from posix.time cimport CLOCK_MONOTONIC, clock_gettime, timespec
from posix.types cimport clockid_t

from rillet.resp._encoder cimport put
from rillet._systime cimport system_now_ms as _system_now_ms
from rillet.engine.keyspace cimport Database
from rillet.memory cimport Memory
from rillet.state cimport Client, ServerState

from rillet.clock import SystemClock
from rillet.commands.table import TABLE
from rillet.dispatch import TIMING_MASK, TIMING_SAMPLE
from rillet.observe import COARSE_SLOW_NS
from rillet.errors import ReplyError
from rillet.resp.types import SimpleString
from rillet.notify import READS_AFTER, READS_BEFORE, READS_SET_GET
from rillet.state import PUBLISHED, Block
from rillet.resp.parser import YIELD_PENDING, _scan  # _scan: None on the pure path or unbuilt

cdef long long _MASK = TIMING_MASK
cdef long long _SAMPLE = TIMING_SAMPLE
cdef long long _COARSE_SLOW = COARSE_SLOW_NS
cdef object _Block = Block
cdef object _PUBLISHED = PUBLISHED
cdef object _SimpleString = SimpleString
cdef object _SystemClock = SystemClock
cdef object _ReplyError = ReplyError
cdef int _READS_AFTER = READS_AFTER
cdef int _READS_BEFORE = READS_BEFORE
cdef int _READS_SET_GET = READS_SET_GET


# --- attribute reads without getattr ---------------------------------------------------------
# A generic attribute read costs ~190 instructions (type lookup, then the
# instance dict or a member descriptor); _execute made seven per write. Client,
# ServerState and Memory are extension types (state.pxd, memory.pxd): their fields
# are read directly once the exact type is checked; ServerState's other
# attributes are in its __dict__.

cdef inline object _gated(object client):
    return (<Client>client).gated if type(client) is Client else client.gated


cdef inline object _ready_keys(object state):
    return (<ServerState>state).ready_keys if type(state) is ServerState else state.ready_keys


cdef inline object _closing(object client):
    return (<Client>client).closing if type(client) is Client else client.closing


cdef inline object _multi(object client):
    return (<Client>client)._multi if type(client) is Client else client._multi


cdef class _Entry:
    """What the inline path needs of one spec, read once: specs do not change after import."""
    cdef object spec
    cdef object handler
    cdef object name_bytes
    cdef long long min_argc
    cdef long long max_argc
    cdef bint plain  # a handler and no subcommands: _resolve has nothing to do
    cdef bint write
    cdef bint counted  # counted in _Counts: reads no statistics (Redis's `fast` flag, or a write)
    cdef bint oom_check  # maxmemory checks it first (DENYOOM, EVAL, FCALL)
    cdef bint sampled  # recorded once in _SAMPLE calls (CommandSpec.sampled), else every call
    cdef int reads  # how keyspace_hits/misses count it (CommandSpec.read_stats)
    cdef bint reply_counts  # GET: its reply is None exactly when its key is missing
    cdef Py_ssize_t first_key, last_key, key_step


cdef class _Counts:
    """`spec.calls` of the command a pipeline repeats, kept here until it changes.

    At 64 pipelined PINGs per read, reading and writing `spec.calls` and
    `client.last_command` for each one is a sixth of the command's cost. A run
    of one counted command (`fast`, or a write) keeps its count here and sets
    `last_command` once; the count is written back before any other command
    runs and at the end of the batch, so nothing that reads it (INFO, COMMAND,
    CLIENT LIST: neither fast nor writes) ever sees it behind.
    """
    cdef _Entry entry  # the command being counted here, or None
    cdef long long calls  # its spec.calls as of now
    # keyspace_hits/misses of READS_AFTER commands, added to the state's stats at the
    # same times (read then: CONFIG RESETSTAT replaces them).
    cdef long long hits, misses
    cdef object state

    cdef inline int flush(self) except -1:
        if self.entry is not None:
            self.entry.spec.calls = self.calls
            self.entry = None
        if self.hits or self.misses:
            stats = self.state.stats
            stats.keyspace_hits += self.hits
            stats.keyspace_misses += self.misses
            self.hits = self.misses = 0
        return 0


cdef _Counts _counts(object state):
    cdef _Counts counts = _Counts()
    counts.state = state
    return counts


cdef inline int _count_reads_after(_Entry entry, object client, list argv, _Counts counts) except -1:
    """ServerState.count_reads_after (keep in step): whether each key exists now it ran."""
    cdef Py_ssize_t argc = len(argv)
    cdef Py_ssize_t index = entry.first_key
    cdef Py_ssize_t last = entry.last_key if entry.last_key >= 0 else argc + entry.last_key
    db = (<Client>client).db if type(client) is Client else client.db
    data = (<Database>db).data if type(db) is Database else db.data
    if last >= argc:
        last = argc - 1
    while index <= last:
        if PyDict_Contains(data, argv[index]):
            counts.hits += 1
        else:
            counts.misses += 1
        index += entry.key_step
    return 0


# Raw command name (as TABLE keys it: lower and upper case) -> _Entry.
cdef dict _ENTRIES = {}


cdef _Entry _entry(object name):
    cdef _Entry entry
    spec = TABLE.get(name)
    if spec is None:
        return None  # unknown or mixed case: execute() resolves it (misses are not kept)
    entry = _Entry()
    entry.spec = spec
    entry.handler = spec.handler
    entry.name_bytes = spec.name_bytes
    entry.min_argc = spec.min_argc
    entry.max_argc = spec.max_argc
    entry.plain = spec.handler is not None and not spec.subcommands
    entry.write = spec.is_write
    # A write changes data, never reads command statistics (those that run other
    # commands, EXEC, EVAL, FCALL, are not writes), so a run of SETs is counted
    # as a run of GETs is.
    entry.counted = "fast" in spec.flags or spec.is_write
    entry.oom_check = spec.oom_check
    entry.sampled = spec.sampled
    entry.reads = spec.read_stats
    # GET's lookup already told whether its key exists (a due one is expired by it,
    # a wrong type is a hit): looking the key up again cost a GET a seventh more.
    entry.reply_counts = spec.read_stats == _READS_AFTER and spec.name == "get"
    entry.first_key = spec.first_key
    entry.last_key = spec.last_key
    entry.key_step = spec.key_step or 1
    _ENTRIES[name] = entry
    return entry


# The last name looked up and its entry: a pipeline repeats one command, and
# comparing its few bytes here costs less than hashing the new bytes object
# and comparing it again inside the dict.
cdef bytes _last_name = b""
cdef _Entry _last_entry = None


cdef inline _Entry _lookup(object name):
    global _last_name, _last_entry
    cdef Py_ssize_t size
    if type(name) is bytes:
        size = PyBytes_GET_SIZE(name)
        if (_last_entry is not None and size == PyBytes_GET_SIZE(_last_name)
                and memcmp(PyBytes_AS_STRING(name), PyBytes_AS_STRING(_last_name), size) == 0):
            return _last_entry
    found = _ENTRIES.get(name)
    entry = <_Entry>found if found is not None else _entry(name)
    if entry is not None and type(name) is bytes:
        _last_name = <bytes>name
        _last_entry = entry
    return entry


cdef extern from "<time.h>":
    const clockid_t CLOCK_MONOTONIC_COARSE


cdef inline long long _now_ns(bint coarse) noexcept nogil:
    # time.perf_counter_ns() reads the same clock on Linux; observe.coarse_ns the coarse one.
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC_COARSE if coarse else CLOCK_MONOTONIC, &ts)
    return ts.tv_sec * 1000000000LL + ts.tv_nsec


cdef object _execute(object dispatcher, object state, object client, list argv, _Counts counts):
    """Dispatcher.execute for `argv`, with the plain case inline."""
    cdef _Entry entry
    cdef Py_ssize_t argc = len(argv)
    cdef long long started, elapsed, calls, slow_ns
    cdef bint unsampled, coarse = False
    name = argv[0]
    entry = _lookup(name)
    if (
        entry is None
        or not entry.plain
        or argc < entry.min_argc
        or argc > entry.max_argc
        or type(state) is not ServerState  # (another type: the dispatcher's path)
        or _gated(client)
    ):
        counts.flush()
        return dispatcher.execute(client, argv)
    cdef ServerState server = <ServerState>state
    # maxmemory (keep in step with Dispatcher.execute): refused ones take execute(), which says so.
    if entry.oom_check:
        memory = server.memory
        limit = (<Memory>memory).limit if type(memory) is Memory else memory.limit
    if entry.oom_check and limit and not client.is_internal and memory.refuse(client, entry.spec, argv):
        counts.flush()
        return dispatcher.execute(client, argv)
    spec = entry.spec
    # Dispatcher.call (keep in step).
    if counts.entry is entry:
        calls = counts.calls
    else:
        counts.flush()
        client.last_command = entry.name_bytes
        calls = spec.calls
        if entry.counted:
            counts.entry = entry
    if entry.write:
        dirty_before = server.dirty
    if entry.reads >= _READS_BEFORE and (entry.reads == _READS_BEFORE or argc > 3):
        state.count_reads(client, spec, argv)  # keyspace_hits/misses, as Dispatcher.call
    # Dispatcher.call's clock (keep in step): the coarse one for a call timed for the
    # slow log alone, when its threshold is well above that clock's resolution.
    unsampled = entry.sampled and calls & _MASK
    if unsampled:
        slow_ns = <long long>server.slow_ns
        coarse = slow_ns >= _COARSE_SLOW
    started = _now_ns(coarse)
    try:
        reply = entry.handler(client, argv)
    except Exception as error:
        if entry.write:
            state.drop_effects()  # a handler that failed must leave no effect behind
        reply = dispatcher._failed(spec, argv, error)
    elapsed = _now_ns(coarse) - started
    if entry.reply_counts:
        if reply is None:
            counts.misses += 1
        else:
            counts.hits += 1
    elif entry.reads == _READS_AFTER:
        _count_reads_after(entry, client, argv, counts)
    if not unsampled:
        spec.usec += elapsed * (_SAMPLE if entry.sampled else 1) // 1000
        dispatcher.timed(client, spec, argv, elapsed, reply)  # the histogram, the slow log
    elif elapsed >= slow_ns or type(reply) is _Block:
        dispatcher.timed(client, spec, argv, elapsed, reply, False)  # the slow log
    if counts.entry is entry:
        counts.calls = calls + 1
    else:
        spec.calls = calls + 1
    if type(reply) is _Block and (client.in_exec or client.is_internal):
        reply = reply.timeout_reply
    # publish_write's "nothing to publish" test inline (keep in step): most
    # writes run with no effect sink, and the call would cost a Python frame.
    if entry.write and (server._effects is not None
                        or (server.dirty != dirty_before and server.effect_sinks)):
        effects = server._effects
        if effects is _PUBLISHED:  # the body wrote it into the sinks itself (XADD)
            server._effects = None
        elif (effects is not None and len(effects) == 1
                and server._tx_effects is None and not server.gated):
            # publish_write's one-effect case inline too (keep in step): a handler
            # that propagated its effect (XADD's ID), outside a transaction.
            server._effects = None
            for sink in server.effect_sinks:
                sink(effects)
        else:
            state.publish_write(client.db.index, argv, dirty_before)
    return reply


cdef tuple _feed_rest(parser, bytes data, list commands, Py_ssize_t used):
    # RequestParser.feed after a partial scan: the rest is a read of its own.
    more, error = parser.feed(data[used:])
    return commands + more, error


def data_received(conn, data):
    """ClientConnection.data_received (keep in step): one read, one write of its replies."""
    client = conn.client
    if client is None or conn._closed:
        return
    state = conn.state
    size = len(data)
    stats = state.stats
    stats.net_input_bytes += size
    stats.total_reads_processed += 1
    conn.net_in += size
    parser = conn.parser
    # `client.authenticated` is a property over `_authenticated`.
    authenticated = client._authenticated
    parser.authenticated = authenticated
    # RequestParser.feed's common case inline (keep in step): a read of whole
    # canonical requests, no partial command pending. A Python frame less per
    # read, as are the clock and the property above: at one command per read
    # the three were a tenth of the server's own work.
    if (_scan is not None and authenticated and parser._slow is None and size
            and type(data) is bytes and (<bytes>data)[0] == 42):  # b"*"
        commands, used = _scan(data, parser.max_bulk_len)
        if used == size:
            error = None
        else:
            commands, error = parser.feed(data) if not used else _feed_rest(parser, data, commands, used)
    else:
        commands, error = parser.feed(data)
    clock = state.clock
    client.last_interaction_ms = (
        _system_now_ms() if type(clock) is _SystemClock else conn._now_ms())
    cdef bytearray out = bytearray()
    if commands:
        if client.blocked is not None or conn.backlog:
            conn.backlog.extend(commands)
        else:
            run(conn, commands, out)
    if error is not None and not client.closing:
        conn.protocol_error(error, out)
    server = conn.server
    if out:
        if conn.held is None and not (
            server.hold_replies or server.flush_before_send or conn._closed
            or conn.obuf_limited
        ):
            size = len(out)
            stats.net_output_bytes += size
            stats.total_writes_processed += 1
            conn.net_out += size
            conn.transport.write(out)
        else:
            conn.send(out)
    if client.closing:
        conn.close()
    elif parser._slow is not None and parser.pending_size > YIELD_PENDING:
        conn.yield_reads()
    if (
        state.key_wakeups
        or state.ready_keys
        or server.before_flush
        or state.shutdown_requested is not None
    ):
        server.after_batch()


def run(conn, list commands, bytearray out):
    """ClientConnection._run (keep in step): commands in order until one blocks."""
    cdef Py_ssize_t done = 0
    cdef Py_ssize_t chunk = conn.reply_chunk
    client = conn.client
    state = conn.state
    cdef _Counts counts = _counts(state)
    dispatcher = conn.server.dispatcher
    for argv in commands:
        done += 1
        reply = _execute(dispatcher, state, client, argv, counts)
        if _ready_keys(state):
            # Clients parked on a key this command readied go first (keep in step).
            counts.flush()
            conn.server.serve_ready()
        kind = type(reply)
        if kind is _Block:
            counts.flush()
            conn.park_rest(commands, done, reply)
            return
        # Bulk and simple strings read the same in RESP2 and RESP3: no need to ask.
        put(out, reply, kind is not bytes and kind is not _SimpleString and client.resp3)
        if _closing(client):
            counts.flush()
            conn.commands += done
            return
        if len(out) > chunk and done < len(commands):
            counts.flush()
            conn.defer_rest(commands, done)
            return
    counts.flush()
    conn.commands += done


def run_replicated(dispatcher, state, client, list commands, Py_ssize_t start, bint in_multi,
                   failed):
    """MasterLink._run_plain compiled (replication/replica.py, keep in step): the
    master's commands from `start` on, for its (internal) client, replies dropped
    (a failed one goes to `failed(argv, reply)`), until a PING or REPLCONF (the link
    answers those itself: not run) or a command that entered or left MULTI (run).
    Returns the index to go on from. Each command takes `_execute`, so the plain
    ones run inline as a client's do: on a replica, the master's stream
    costs the write bodies, not the dispatcher's Python checks."""
    cdef Py_ssize_t index, count = len(commands)
    cdef _Counts counts = _counts(state)
    cdef unsigned char first
    cdef list argv
    for index in range(start, count):
        argv = <list>commands[index]
        name = argv[0]
        first = (<bytes>name)[0] if type(name) is bytes and len(<bytes>name) else 0
        if (first == 112 or first == 80 or first == 114 or first == 82) and \
                name.lower() in (b"ping", b"replconf"):  # p P r R
            counts.flush()
            return index
        reply = _execute(dispatcher, state, client, argv, counts)
        if type(reply) is _ReplyError:
            counts.flush()
            failed(argv, reply)
        multi = _multi(client)
        if (multi is not None) != in_multi:
            counts.flush()
            return index + 1
    counts.flush()
    return count
