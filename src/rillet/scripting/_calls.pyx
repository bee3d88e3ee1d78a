# cython: language_level=3, boundscheck=False, wraparound=False
"""redis.call / redis.pcall's common case compiled: `LuaEngine._make_call`'s closure.

Profiled in-process (callgrind, EVALSHA of a 3-command script), a redis.call
cost ~15,000 instructions besides its handler: the lupa crossing (~4,000) and
the closure's Python lines (the checks, the argv, Dispatcher.call's lines),
about 6,000 of them in the interpreter loop. Here the same lines run in C.
Everything but the common case (an unknown or not exactly named command, a
wrong arity, a non-string argument, a write in a read-only script, an
observed or timed call) goes to `LuaEngine._dispatch`, the Python reference.

Keep in step with scripting/engine.py `_make_call` (the reference, used under
RILLET_PURE); tests/server/test_script_paths.py runs the same scripts through
this, through the Python closure and through the general path, and compares
replies, effects, statistics and data.
"""

from rillet.errors import ReplyError
from rillet.resp.types import SimpleString
from rillet.scripting.convert import to_lua
from rillet.state import Block

cdef object _ReplyError = ReplyError
cdef object _SimpleString = SimpleString
cdef object _Block = Block
cdef object _to_lua = to_lua


cdef class ScriptCall:
    """redis.call (`raising`: a command's error is raised into the script as
    `command_failed`) or redis.pcall (the error comes back as {err=...})."""

    cdef object engine
    cdef object state
    cdef dict specs
    cdef long long mask
    cdef bint raising
    cdef object command_failed

    def __init__(self, engine, bint raising, long long mask, command_failed):
        self.engine = engine
        self.state = engine.state
        self.specs = engine._specs
        self.mask = mask
        self.raising = raising
        self.command_failed = command_failed

    def __call__(self, *args):
        cdef Py_ssize_t n = len(args)
        cdef object engine = self.engine
        cdef object run = engine.current
        cdef object spec = None
        cdef object reply, first, argv, client, state, arg
        cdef bint plain = False
        cdef long long dirty_before = 0
        if n:
            first = args[0]
            if type(first) is bytes:
                spec = self.specs.get(first)
        # The common case: a known command, right arity, only strings, no write
        # to refuse, nothing observing (Run.fast), not the call commandstats times.
        if spec is not None and run is not None and run.fast \
                and spec.min_argc <= n <= spec.max_argc \
                and not (spec.is_write and run.read_only) \
                and spec.sampled and (spec.calls & self.mask):
            plain = True
            for arg in args:
                if type(arg) is not bytes:
                    plain = False
                    break
        if not plain:
            reply = engine._dispatch(args)
        else:
            # Dispatcher.call's lines for an unobserved, untimed call (keep in step).
            argv = list(args)
            client = run.client
            state = self.state
            if spec.is_write:
                run.wrote = True
                dirty_before = state.dirty
                try:
                    reply = spec.handler(client, argv)
                except Exception as error:
                    state._effects = None  # a failed handler leaves no effect
                    reply = engine._failed(spec, argv, error)
                spec.calls += 1
                if state._effects is not None or (state.dirty != dirty_before and state.effect_sinks):
                    state.publish_write(client.db.index, argv, dirty_before)
            else:
                try:
                    reply = spec.handler(client, argv)
                except Exception as error:
                    reply = engine._failed(spec, argv, error)
                spec.calls += 1
            if type(reply) is bytes or type(reply) is int:
                return reply
            if type(reply) is _Block:
                reply = reply.timeout_reply
            elif isinstance(reply, _ReplyError):
                reply = reply.message
        if type(reply) is bytes or type(reply) is int:
            return reply
        if type(reply) is str:
            if self.raising:
                raise self.command_failed(reply)
            return engine._build.error(reply.encode("utf-8", "surrogateescape"))
        if type(reply) is _SimpleString:
            return engine._build.status_of(reply)
        return _to_lua(reply, run is not None and run.resp == 3, engine._build)
