# cython: language_level=3, boundscheck=False, wraparound=False
"""redis.call / redis.pcall's common case compiled, as a Lua C function, and
EVALSHA's call into Lua without lupa's crossing.

Profiled in-process (callgrind, EVALSHA of a 3-command script at 64 per read),
a redis.call cost ~15,000 instructions besides its handler: lupa's crossing
(Lua -> Python: the userdata's __call, taking the GIL back, converting the
arguments to a tuple, and back: converting the reply, building a table through
another lupa call) and the Python lines of the closure. Here `redis.call` is a
C function registered in the same Lua state: it reads its arguments off the
Lua stack, runs the same checks and the handler, and pushes the reply itself.

How the C side reaches lupa's Lua: lupa's lua51 extension embeds Lua 5.1 and
exports its C API; Python loads extensions privately (RTLD_LOCAL), so the API
is found with dlsym on that already-loaded object (`_load_api`). The
lua_State comes from Lua itself: sandbox setup calls `package.loadlib` on this
very module for `rillet_lua_open` (Lua's standard way to load a C function),
which records the state and hands back the C closures.

What stays in Python (the reference, used on the pure path and tested against
this by tests/server/test_script_paths.py): every case but the common one
(`LuaEngine._dispatch`), the conversion of any reply other than a string, an
integer, a status or an error (`convert.to_lua`, its result handed over through
a Lua table), the run's bookkeeping (`LuaEngine._execute`) and the conversion
of a script's result other than a string or a number (`convert.from_lua`).
Keep in step with scripting/engine.py `_make_call` (its closure is this code
as Python).
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.object cimport PyObject
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM
from posix.time cimport CLOCK_MONOTONIC, clock_gettime, timespec

from rillet.errors import SCRIPT_CALL_UNCOUNTED, ReplyError
from rillet.notify import READS_AFTER, READS_BEFORE, READS_SET_GET
from rillet.resp.types import SimpleString
from rillet.state import Block

cdef object _ReplyError = ReplyError
cdef object _SimpleString = SimpleString
cdef object _Block = Block
cdef object _to_lua = None  # convert.to_lua (bind_engine)
cdef int _READS_AFTER = READS_AFTER
cdef int _READS_BEFORE = READS_BEFORE
cdef int _READS_SET_GET = READS_SET_GET


# --- the Lua 5.1 C API, from lupa's extension -----------------------------------------

cdef extern from *:
    """
    typedef struct lua_State lua_State;
    typedef int (*rillet_cfunction)(lua_State *L);
    /* Set at import to the Cython function below; loaded by Lua's package.loadlib. */
    static int (*rillet_open_impl)(lua_State *L) = 0;
    __attribute__((visibility("default"))) int rillet_lua_open(lua_State *L);
    int rillet_lua_open(lua_State *L) { return rillet_open_impl ? rillet_open_impl(L) : 0; }
    """
    ctypedef struct lua_State
    ctypedef int (*rillet_cfunction)(lua_State *L) noexcept nogil
    int (*rillet_open_impl)(lua_State *L) noexcept nogil

cdef extern from "<dlfcn.h>" nogil:
    void* dlopen(const char* filename, int flags)
    void* dlsym(void* handle, const char* symbol)
    int RTLD_NOW
    int RTLD_NOLOAD

ctypedef int (*f_int_L)(lua_State*) noexcept nogil
ctypedef void (*f_void_L)(lua_State*) noexcept nogil
ctypedef void (*f_void_L_int)(lua_State*, int) noexcept nogil
ctypedef int (*f_int_L_int)(lua_State*, int) noexcept nogil
ctypedef const char* (*f_tolstring)(lua_State*, int, size_t*) noexcept nogil
ctypedef double (*f_tonumber)(lua_State*, int) noexcept nogil
ctypedef void* (*f_touserdata)(lua_State*, int) noexcept nogil
ctypedef void (*f_pushlstring)(lua_State*, const char*, size_t) noexcept nogil
ctypedef void (*f_pushnumber)(lua_State*, double) noexcept nogil
ctypedef void (*f_pushlightuserdata)(lua_State*, void*) noexcept nogil
ctypedef void (*f_pushcclosure)(lua_State*, rillet_cfunction, int) noexcept nogil
ctypedef void (*f_createtable)(lua_State*, int, int) noexcept nogil
ctypedef void (*f_setfield)(lua_State*, int, const char*) noexcept nogil
ctypedef void (*f_rawgeti)(lua_State*, int, int) noexcept nogil
ctypedef int (*f_pcall)(lua_State*, int, int, int) noexcept nogil
ctypedef void (*f_unref)(lua_State*, int, int) noexcept nogil

cdef f_int_L lua_gettop
cdef f_void_L_int lua_settop
cdef f_int_L_int lua_type
cdef f_tolstring lua_tolstring
cdef f_tonumber lua_tonumber
cdef f_int_L_int lua_toboolean
cdef f_touserdata lua_touserdata
cdef f_pushlstring lua_pushlstring
cdef f_pushnumber lua_pushnumber
cdef f_void_L_int lua_pushboolean
cdef f_void_L lua_pushnil
cdef f_void_L_int lua_pushvalue
cdef f_pushlightuserdata lua_pushlightuserdata
cdef f_pushcclosure lua_pushcclosure
cdef f_createtable lua_createtable
cdef f_setfield lua_setfield
cdef f_rawgeti lua_rawgeti
cdef f_rawgeti lua_rawseti
cdef f_void_L_int lua_rawset
cdef f_void_L_int lua_remove
cdef f_int_L lua_error
cdef f_pcall lua_pcall
cdef f_int_L_int lua_checkstack
cdef f_int_L_int luaL_ref
cdef f_unref luaL_unref

cdef enum:
    LUA_REGISTRYINDEX = -10000
    LUA_GLOBALSINDEX = -10002
    LUA_MULTRET = -1
    LUA_TNIL = 0
    LUA_TBOOLEAN = 1
    LUA_TNUMBER = 3
    LUA_TSTRING = 4

cdef inline int upvalue(int i) noexcept nogil:
    return LUA_GLOBALSINDEX - i


cdef void* _symbol(void* handle, const char* name) except NULL:
    cdef void* found = dlsym(handle, name)
    if found == NULL:
        raise ImportError(f"lupa's Lua has no {name.decode()}")
    return found


cdef int _load_api() except -1:
    """The Lua C API of lupa's lua51 extension (already loaded: RTLD_NOLOAD)."""
    global lua_gettop, lua_settop, lua_type, lua_tolstring, lua_tonumber, lua_toboolean
    global lua_touserdata, lua_pushlstring, lua_pushnumber, lua_pushboolean, lua_pushnil
    global lua_pushvalue, lua_pushlightuserdata, lua_pushcclosure, lua_createtable
    global lua_setfield, lua_rawgeti, lua_rawseti, lua_remove, lua_error, lua_pcall
    global lua_checkstack, luaL_ref, luaL_unref, lua_rawset
    from lupa import lua51
    path = lua51.__file__.encode()
    cdef void* h = dlopen(path, RTLD_NOW | RTLD_NOLOAD)
    if h == NULL:
        raise ImportError("lupa's lua51 extension is not loaded")
    lua_gettop = <f_int_L>_symbol(h, b"lua_gettop")
    lua_settop = <f_void_L_int>_symbol(h, b"lua_settop")
    lua_type = <f_int_L_int>_symbol(h, b"lua_type")
    lua_tolstring = <f_tolstring>_symbol(h, b"lua_tolstring")
    lua_tonumber = <f_tonumber>_symbol(h, b"lua_tonumber")
    lua_toboolean = <f_int_L_int>_symbol(h, b"lua_toboolean")
    lua_touserdata = <f_touserdata>_symbol(h, b"lua_touserdata")
    lua_pushlstring = <f_pushlstring>_symbol(h, b"lua_pushlstring")
    lua_pushnumber = <f_pushnumber>_symbol(h, b"lua_pushnumber")
    lua_pushboolean = <f_void_L_int>_symbol(h, b"lua_pushboolean")
    lua_pushnil = <f_void_L>_symbol(h, b"lua_pushnil")
    lua_pushvalue = <f_void_L_int>_symbol(h, b"lua_pushvalue")
    lua_pushlightuserdata = <f_pushlightuserdata>_symbol(h, b"lua_pushlightuserdata")
    lua_pushcclosure = <f_pushcclosure>_symbol(h, b"lua_pushcclosure")
    lua_createtable = <f_createtable>_symbol(h, b"lua_createtable")
    lua_setfield = <f_setfield>_symbol(h, b"lua_setfield")
    lua_rawgeti = <f_rawgeti>_symbol(h, b"lua_rawgeti")
    lua_rawseti = <f_rawgeti>_symbol(h, b"lua_rawseti")
    lua_remove = <f_void_L_int>_symbol(h, b"lua_remove")
    lua_rawset = <f_void_L_int>_symbol(h, b"lua_rawset")
    lua_error = <f_int_L>_symbol(h, b"lua_error")
    lua_pcall = <f_pcall>_symbol(h, b"lua_pcall")
    lua_checkstack = <f_int_L_int>_symbol(h, b"lua_checkstack")
    luaL_ref = <f_int_L_int>_symbol(h, b"luaL_ref")
    luaL_unref = <f_unref>_symbol(h, b"luaL_unref")
    return 0



# --- values between the Lua stack and Python, as lupa converts them ---------------------

cdef inline object _number(double d):
    # lupa's rule for Lua 5.1 numbers: an int when integral and within a C long.
    if -9.2233720368547758e18 <= d < 9.2233720368547758e18 and <long long>d == d:
        return <long long>d
    return d


cdef inline void _push_text(lua_State* L, bytes text) noexcept:
    lua_pushlstring(L, PyBytes_AS_STRING(text), <size_t>PyBytes_GET_SIZE(text))


cdef inline void _push_field_table(lua_State* L, const char* field, bytes text) noexcept:
    """A new {field = text} table (Redis's {ok=...} and {err=...})."""
    lua_createtable(L, 0, 1)
    _push_text(L, text)
    lua_setfield(L, -2, field)


cdef object _HELD = object()  # a Lua value only lupa can convert (ScriptCall.run)

# The ScriptCall being opened (rillet_lua_open runs inside ScriptCall.open).
cdef ScriptCall _opening = None


cdef int _open(lua_State* L) noexcept nogil:
    """rillet_lua_open: with no argument, the two C closures (redis.call, redis.pcall);
    with (handoff, run_set, slots, env), the Lua values EVALSHA's compiled call uses."""
    cdef int n
    with gil:
        target = _opening
        if target is None:
            return 0
        n = lua_gettop(L)
        if n == 0:
            target.L = L
            target.pcall.L = L
            lua_pushlightuserdata(L, <void*>target)
            lua_pushcclosure(L, _c_call, 1)
            lua_pushlightuserdata(L, <void*>target.pcall)
            lua_pushcclosure(L, _c_call, 1)
            return 2
        lua_settop(L, 4)
        target.env_ref = luaL_ref(L, LUA_REGISTRYINDEX)  # pops the top
        target.slots_ref = luaL_ref(L, LUA_REGISTRYINDEX)
        target.run_ref = luaL_ref(L, LUA_REGISTRYINDEX)
        target.handoff_ref = luaL_ref(L, LUA_REGISTRYINDEX)
        return 0

rillet_open_impl = _open


cdef int _c_call(lua_State* L) noexcept nogil:
    """redis.call / redis.pcall as Lua sees them. The Python work is done (and every
    reference dropped) before a raised error leaves by lua_error's longjmp."""
    cdef int status
    cdef void* target = lua_touserdata(L, upvalue(1))
    with gil:
        status = (<ScriptCall>target).invoke(L)
    if status < 0:
        return lua_error(L)
    return status


cdef class _Entry:
    """A command's spec and the fields redis.call reads on every call, in C."""

    cdef object spec
    cdef object handler
    cdef Py_ssize_t min_argc
    cdef Py_ssize_t max_argc
    cdef bint write
    cdef bint refused_read_only  # a write or may_replicate command (engine._run_command)
    cdef int reads  # how keyspace_hits/misses count it (CommandSpec.read_stats)

    def __init__(self, spec):
        self.spec = spec
        self.reads = spec.read_stats
        self.handler = spec.handler
        self.min_argc = spec.min_argc
        self.max_argc = spec.max_argc
        self.write = spec.is_write
        self.refused_read_only = spec.is_write or "may_replicate" in spec.flags


cdef class ScriptCall:
    """redis.call (`raising`: a command's error is raised into the script as an
    {err=...} table) or redis.pcall (the error comes back as {err=...}).

    Callable from Python too (the lupa crossing, when the C function is not in
    use): `__call__` takes the arguments as lupa converted them."""

    cdef object engine
    cdef object state
    cdef dict specs
    cdef dict entries  # _Entry by command name, made from `specs` (LuaEngine._specs)
    cdef long long mask
    cdef bint raising
    cdef object command_failed
    cdef lua_State* L  # lupa's state, once `open` ran
    cdef public ScriptCall pcall  # the pcall twin (set on the raising one)
    cdef object runtime  # the LuaRuntime: L lives as long as it does
    cdef object handoff  # a Lua table (lupa object) for values only Python can convert
    cdef int handoff_ref
    cdef int run_ref
    cdef int slots_ref
    cdef int env_ref

    def __init__(self, engine, bint raising, long long mask, command_failed):
        self.engine = engine
        self.state = engine.state
        self.specs = engine._specs
        self.entries = {}
        self.mask = mask
        self.raising = raising
        self.command_failed = command_failed
        self.L = NULL
        self.handoff_ref = self.run_ref = self.slots_ref = 0

    # --- setting up ------------------------------------------------------------------
    def open(self, runtime, opener):
        """The C closures for redis.call and redis.pcall, from `opener` (the Lua
        function package.loadlib made of rillet_lua_open)."""
        global _opening
        self.runtime = runtime
        self.pcall.runtime = runtime
        _opening = self
        try:
            return opener()
        finally:
            _opening = None

    def bind(self, opener, handoff, run_set, slots, env):
        """The Lua values EVALSHA's compiled call uses: a table to hand values
        over, sandbox.lua's `run_set`, the table of scripts' functions by slot,
        and the scripts' globals (where KEYS and ARGV go)."""
        global _opening
        self.handoff = handoff
        self.pcall.handoff = handoff
        _opening = self
        try:
            opener(handoff, run_set, slots, env)
        finally:
            _opening = None
        self.pcall.handoff_ref = self.handoff_ref

    # --- redis.call -------------------------------------------------------------------
    def __call__(self, *args):
        reply = self.reply(args)
        if type(reply) is bytes or type(reply) is int:
            return reply
        if type(reply) is str:
            if self.raising:
                raise self.command_failed(reply)
            return self.engine._build.error(reply.encode("utf-8", "surrogateescape"),
                                            reply in SCRIPT_CALL_UNCOUNTED)
        if type(reply) is _SimpleString:
            return self.engine._build.status_of(reply)
        run = self.engine.current
        return _to_lua(reply, run is not None and run.resp == 3, self.engine._build)

    cdef int invoke(self, lua_State* L) noexcept:
        """The C function's body: its results pushed (their count), or -1 with the
        error value pushed."""
        cdef int n, i, kind
        cdef size_t size
        cdef const char* text
        cdef object args, value
        try:
            n = lua_gettop(L)
            args = PyTuple_New(n)
            for i in range(n):
                kind = lua_type(L, i + 1)
                if kind == LUA_TSTRING:
                    text = lua_tolstring(L, i + 1, &size)
                    value = PyBytes_FromStringAndSize(text, <Py_ssize_t>size)
                elif kind == LUA_TNUMBER:
                    value = _number(lua_tonumber(L, i + 1))
                else:
                    value = None  # _arg_bytes refuses booleans, tables, nil alike
                Py_INCREF(value)
                PyTuple_SET_ITEM(args, i, value)
            # An empty frame, as lupa leaves its own callbacks: lupa's operations on
            # this state (convert.to_lua's tables, the handoff) take the whole stack.
            lua_settop(L, 0)
            reply = self.reply(args)
            args = None
            if type(reply) is bytes:
                _push_text(L, <bytes>reply)
                return 1
            if type(reply) is int:
                lua_pushnumber(L, <double>reply)
                return 1
            if type(reply) is str:
                _push_field_table(L, b"err", (<str>reply).encode("utf-8", "surrogateescape"))
                if reply not in SCRIPT_CALL_UNCOUNTED:  # counted in errorstats already
                    lua_pushboolean(L, 1)
                    lua_setfield(L, -2, b"ignore_error_stats_update")
                return -1 if self.raising else 1
            if type(reply) is _SimpleString:
                _push_field_table(L, b"ok", bytes(reply))
                return 1
            run = self.engine.current
            value = _to_lua(reply, run is not None and run.resp == 3, self.engine._build)
            self._push_python(L, value)
            return 1
        except BaseException as error:
            # A bug (never a command's error, which is a reply): Lua's error, not a crash.
            _push_text(L, ("ERR internal error in redis.call: %r" % (error,)).encode())
            return -1

    cdef int _push_python(self, lua_State* L, object value) except -1:
        """A value converted by lupa (a Lua table from convert.to_lua, a boolean...)
        onto the stack: set into the handoff table from Python, read back here."""
        if value is None:
            lua_pushnil(L)
            return 0
        if type(value) is bytes:
            _push_text(L, <bytes>value)
            return 0
        if type(value) is bool:
            lua_pushboolean(L, value is True)
            return 0
        self.handoff[1] = value
        lua_rawgeti(L, LUA_REGISTRYINDEX, self.handoff_ref)
        lua_rawgeti(L, -1, 1)
        lua_pushnil(L)
        lua_rawseti(L, -3, 1)
        lua_remove(L, -2)
        return 0

    cdef object reply(self, tuple args):
        """The command's reply for the script, not yet a Lua value: bytes, int, a
        SimpleString, an error's text (str), or any other reply value."""
        cdef Py_ssize_t n = len(args)
        cdef object engine = self.engine
        cdef object current = engine.current
        cdef Run run
        cdef _Entry entry = None
        cdef object spec = None
        cdef object reply, first, argv, client, state, arg
        cdef bint plain = False, write = False
        cdef long long dirty_before = 0
        cdef int reads
        # The compiled Run is read in C; any other run takes `_dispatch`, the
        # Python reference (every run is a compiled Run when this class is in use).
        if type(current) is not Run:
            return engine._dispatch(args)
        run = <Run>current
        if n:
            first = args[0]
            if type(first) is bytes:
                entry = self.entries.get(first)
                if entry is None:
                    spec = self.specs.get(first)
                    if spec is not None:
                        entry = _Entry(spec)
                        self.entries[first] = entry
        # The common case: a known command, right arity, only strings, no write
        # to refuse, nothing observing (Run.fast), not the call commandstats times.
        if entry is not None and run.fast and entry.min_argc <= n <= entry.max_argc:
            spec = entry.spec
            write = entry.write
            if not (entry.refused_read_only and run.read_only) and spec.sampled and (spec.calls & self.mask):
                plain = True
                for arg in args:
                    if type(arg) is not bytes:
                        plain = False
                        break
        if not plain:
            return engine._dispatch(args)
        # Dispatcher.call's lines for an unobserved, untimed call (keep in step).
        argv = list(args)
        client = run.client
        state = self.state
        reads = entry.reads  # keyspace_hits/misses, as Dispatcher.call counts them
        if reads == _READS_BEFORE or (reads == _READS_SET_GET and n > 3):
            state.count_reads(client, spec, argv)
        if write:
            run.wrote = True
            dirty_before = state.dirty
            try:
                reply = entry.handler(client, argv)
            except Exception as error:
                state._effects = None  # a failed handler leaves no effect
                reply = engine._failed(spec, argv, error)
            spec.calls += 1
            if state._effects is not None or (
                    state.dirty != dirty_before and state.effect_sinks):
                state.publish_write(client.db.index, argv, dirty_before)
        else:
            try:
                reply = entry.handler(client, argv)
            except Exception as error:
                reply = engine._failed(spec, argv, error)
            spec.calls += 1
            if reads == _READS_AFTER:
                state.count_reads_after(client, spec, argv)
        if type(reply) is bytes or type(reply) is int:
            return reply
        if type(reply) is _Block:
            return reply.timeout_reply
        if isinstance(reply, _ReplyError):
            return reply.message
        return reply

    # --- EVALSHA's call into Lua ------------------------------------------------------
    def run(self, int slot, int nkeys, *values):
        """sandbox.lua's run(f, nkeys, ...) for the script in `slot`, called from C
        (lupa's call would release and retake the GIL, and convert each value).
        Returns what lupa's call returns: the single string or number, or the
        (ok, result, status) triple."""
        return self._call(slot, nkeys, list(values), 0)

    cdef object _call(self, int slot, int nkeys, list values, Py_ssize_t first):
        cdef lua_State* L = self.L
        cdef int base, status, nres, i
        cdef Py_ssize_t n = len(values) - first
        cdef Py_ssize_t k
        cdef object value
        base = lua_gettop(L)
        if base != 0:  # inside a Lua call (never for EVAL): lupa's way, which needs none
            return self.engine._run(self.engine._slots[slot], nkeys, *values[first:])
        if not lua_checkstack(L, 8):
            raise MemoryError("Lua stack overflow")
        # sandbox.lua run's split, here: KEYS and ARGV into the scripts' globals.
        lua_rawgeti(L, LUA_REGISTRYINDEX, self.env_ref)
        lua_pushlstring(L, b"KEYS", 4)
        lua_createtable(L, nkeys, 0)
        for k in range(nkeys):
            _push_text(L, <bytes?>values[first + k])
            lua_rawseti(L, -2, <int>k + 1)
        lua_rawset(L, -3)
        lua_pushlstring(L, b"ARGV", 4)
        lua_createtable(L, <int>(n - nkeys), 0)
        for k in range(nkeys, n):
            _push_text(L, <bytes?>values[first + k])
            lua_rawseti(L, -2, <int>(k - nkeys) + 1)
        lua_rawset(L, -3)
        lua_settop(L, base)
        lua_rawgeti(L, LUA_REGISTRYINDEX, self.run_ref)
        lua_rawgeti(L, LUA_REGISTRYINDEX, self.slots_ref)
        lua_rawgeti(L, -1, slot)
        lua_remove(L, -2)
        status = lua_pcall(L, 1, LUA_MULTRET, 0)
        nres = lua_gettop(L) - base
        result = PyTuple_New(nres)
        held = None
        # (ok, table, status): the caller reads the status alone, not the table.
        skip = nres == 3 and lua_type(L, base + 3) == LUA_TSTRING
        for i in range(nres):
            value = self._simple(L, base + 1 + i)
            if value is _HELD and skip and i == 1:
                value = None
            elif value is _HELD:
                # Only lupa makes a Lua table into a Python object, and its
                # operations take the whole stack: held aside until it is empty.
                lua_rawgeti(L, LUA_REGISTRYINDEX, self.handoff_ref)
                lua_pushvalue(L, base + 1 + i)
                lua_rawseti(L, -2, i + 1)
                lua_settop(L, -2)
                held = i
            Py_INCREF(value)
            PyTuple_SET_ITEM(result, i, value)
        lua_settop(L, base)
        if held is not None:
            values = list(result)
            for i in range(nres):
                if values[i] is _HELD:
                    values[i] = self.handoff[i + 1]
                    self.handoff[i + 1] = None
            result = tuple(values)
        if status:
            raise RuntimeError(result[0] if nres else "Lua error")
        if nres == 1:
            return result[0]
        return result

    cdef object run_script(self, client, script, int nkeys, list argv):
        """LuaEngine.run_script and `_execute` for a script without a shebang (keep in step)."""
        engine = self.engine
        state = self.state
        cdef Run run = Run(client, script.sha, False, True, _monotonic())
        own_tx = state._tx_effects is None  # not inside EXEC (or another transaction)
        saved_db, saved_in_exec, saved_resp3 = client.db, client.in_exec, client.resp3
        engine.current = run
        # Blocking commands act as if they timed out, as inside MULTI; the script's
        # commands speak RESP2 until redis.setresp(3) (which sets client.resp3 too).
        client.in_exec = True
        client.resp3 = False
        run.fast = run.unobserved = _engine_module.FAST_CALLS and not (client.gated or state.pre_command_oom)
        if own_tx:
            state._tx_effects = []  # ServerState.begin_transaction
        try:
            outcome = self._call(script.slot, nkeys, argv, 3)
        finally:
            engine.current = None
            client.db, client.in_exec, client.resp3 = saved_db, saved_in_exec, saved_resp3
            if own_tx:  # ServerState.end_transaction (keep in step)
                effects = state._tx_effects
                state._tx_effects = None
                if effects:
                    state.publish(effects)
            if run.busy:
                state.script_busy = None
        if type(outcome) is bytes or type(outcome) is int:
            return outcome
        if type(outcome) is not tuple:
            return engine.reply_of(outcome, run.resp, client.resp3)
        ok, result, status = outcome
        if ok:
            if status is not None:
                return _SimpleString(status.replace(b"\r", b" ").replace(b"\n", b" "))
            return engine.reply_of(result, run.resp, client.resp3)
        raise engine.script_error(run, result)

    cdef object _simple(self, lua_State* L, int index):
        """The value at `index` as lupa gives it (strings as bytes, numbers,
        booleans, nil as None), or _HELD for the others (tables, functions...)."""
        cdef int kind = lua_type(L, index)
        cdef size_t size
        cdef const char* text
        if kind == LUA_TSTRING:
            text = lua_tolstring(L, index, &size)
            return PyBytes_FromStringAndSize(text, <Py_ssize_t>size)
        if kind == LUA_TNUMBER:
            return _number(lua_tonumber(L, index))
        if kind == LUA_TNIL:
            return None
        if kind == LUA_TBOOLEAN:
            return lua_toboolean(L, index) != 0
        return _HELD


# --- EVALSHA's common case ---------------------------------------------------------------

cdef class Run:
    """scripting/engine.py Run compiled (the same fields and defaults; keep in step):
    the script being run, who runs it and what it may do."""

    cdef public object client
    cdef public object name
    cdef public bint read_only
    cdef public bint is_eval
    cdef public double started
    cdef public int resp
    cdef public int repl
    cdef public bint wrote
    cdef public bint busy
    cdef public bint killed
    cdef public bint allow_oom
    cdef public int slot
    cdef public bint cross_slot
    cdef public bint fast
    cdef public bint unobserved
    cdef public object command

    def __init__(self, client, name, bint read_only, bint is_eval, double started):
        self.client = client
        self.name = name
        self.read_only = read_only
        self.is_eval = is_eval
        self.started = started
        self.resp = 2
        self.repl = 3
        self.slot = -1
        self.command = ()



cdef inline double _monotonic() noexcept:
    # time.monotonic()'s clock (CLOCK_MONOTONIC on Linux), without the call.
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + ts.tv_nsec * 1e-9


cdef object _general_evalsha = None  # commands/scripting.py `_evalsha`, the reference
cdef object _engine_module = None


def bind_evalsha(general):
    """The Python EVALSHA (every case but the common one)."""
    global _general_evalsha
    _general_evalsha = general


def bind_engine(engine_module):
    """What needs lupa, bound when scripting/engine.py is imported (by the first
    script, not by every server start): the Lua C API and the engine's module."""
    global _engine_module, _to_lua
    if _engine_module is None:
        from rillet.scripting.convert import to_lua

        _load_api()
        _to_lua = to_lua
        _engine_module = engine_module


def evalsha(ctx, list argv):
    """EVALSHA sha1 numkeys [key [key ...]] [arg [arg ...]]

    commands/scripting.py `_evalsha` + LuaEngine.run_script + `_execute` for the
    common case (keep in step): the engine built with the compiled calls, no
    MONITOR, the script cached under these exact sha bytes without a shebang,
    0 to 9 keys. Everything else runs the Python reference."""
    server = ctx.server
    lua = server.scripting
    cdef Py_ssize_t n = len(argv)
    if lua is None or n < 3 or server.monitors:
        return _general_evalsha(ctx, argv, False)
    compiled = lua._compiled
    script = lua.by_sha.get(argv[1])
    count = argv[2]
    cdef int nkeys = -1
    if type(count) is bytes and len(<bytes>count) == 1:
        nkeys = (<unsigned char*>PyBytes_AS_STRING(count))[0] - 48
    if compiled is None or script is None or script.flags is not None or not 0 <= nkeys <= 9 \
            or nkeys > n - 3 or lua.current is not None:
        return _general_evalsha(ctx, argv, False)
    return (<ScriptCall>compiled).run_script(ctx, script, nkeys, argv)
