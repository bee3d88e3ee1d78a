"""The Lua engine behind EVAL and FCALL: one embedded Lua 5.1 (lupa), the script
cache, and the run of one script with Redis's rules.

A script's commands go through `Dispatcher.call` with the caller's client, after
the checks Redis's scriptCall makes (unknown command, arity, `noscript`, writes
in read-only scripts). Its writes gather as one transaction (Redis 7's effects
replication: a script leaves as the commands it ran, wrapped in MULTI/EXEC).
"""

from __future__ import annotations

import hashlib
import logging
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lupa import lua51

from rillet import REDIS_COMPAT_VERSION, errors
from rillet import acl as acl_model
from rillet.cluster.keyslot import key_slot
from rillet.commands import table as command_table
from rillet.commands.acl import check as acl_check
from rillet.commands.acl import refuse as acl_refusal
from rillet.commands.cluster import has_keys as cluster_has_keys
from rillet.commands.cluster import locate as cluster_locate
from rillet.compiled import compiled
from rillet.errors import CountedReplyError, ReplyError
from rillet.notify import READS_AFTER, READS_BEFORE, READS_SET_GET
from rillet.resp.encoder import format_double
from rillet.resp.types import SimpleString
from rillet.scripting.convert import Builders, from_lua, to_lua
from rillet.scripting.functions import Functions
from rillet.scripting.libs import make_libraries
from rillet.state import Block

if TYPE_CHECKING:
    from rillet.state import Client, ServerState

log = logging.getLogger("rillet")

# redis.call's common case inline (LuaEngine._make_call); tests turn it off to
# compare it with the general path (tests/server/test_script_paths.py).
FAST_CALLS = True
# Instructions between two looks at the clock (the Lua count hook).
HOOK_EVERY = 100000
KNOWN_FLAGS = ("no-writes", "allow-oom", "allow-stale", "no-cluster", "allow-cross-slot-keys")


@dataclass(eq=False)
class Script:
    sha: str
    body: bytes
    function: Any
    flags: frozenset[str] | None  # None: no shebang (Redis's legacy EVAL flags)
    slot: int = 0  # its key in the Lua table of scripts' functions (the compiled run)


class Run:
    """The script being run: who runs it and what it may do.

    No __slots__: the fields that start the same for every run are class
    attributes, so starting a script sets five attributes, not ten."""

    resp = 2  # redis.setresp
    repl = 3  # redis.set_repl
    wrote = False
    busy = False
    killed = False
    allow_oom = False  # the script declared allow-oom (or no-writes): writes ignore maxmemory
    # Cluster mode: the slot its commands' keys must be in (its declared keys', else the
    # first key it touches; -1 until then), unless it declared allow-cross-slot-keys.
    slot = -1
    cross_slot = False
    # redis.call's common case applies (LuaEngine._make_call): nothing observes the
    # script's commands one by one (no MONITOR, keyspace `m` events, tracking,
    # write guard, pause or busy state: the client is not gated), memory was under
    # maxmemory at the start, and its effects replicate (set_repl ALL).
    fast = False
    unobserved = False
    command: list[bytes] | tuple = ()  # FCALL's argv, as sent (FUNCTION STATS)

    def __init__(self, client: Client, name: str, read_only: bool, is_eval: bool,
                 started: float) -> None:
        self.client = client
        self.name = name  # the sha (EVAL) or the function name (FCALL), for error texts
        self.read_only = read_only
        self.is_eval = is_eval
        self.started = started


# scripting/_calls.pyx (redis.call's common case compiled), when rillet/compiled.py
# gives it; without it the closure in `_make_call` runs as written.
_calls: Any = compiled("rillet.scripting._calls")
_ScriptCall = None if _calls is None else _calls.ScriptCall
if _calls is not None:
    _calls.bind_engine(sys.modules[__name__])


def _sha1(body: bytes) -> str:
    return hashlib.sha1(body).hexdigest()


def parse_shebang(body: bytes) -> tuple[frozenset[str] | None, bytes]:
    """EVAL's `#!lua flags=...` line: the flags and the body to compile (the line
    becomes empty so line numbers stay the user's)."""
    if not body.startswith(b"#!"):
        return None, body
    end = body.find(b"\n")
    line = body if end < 0 else body[:end]
    rest = b"" if end < 0 else body[end:]
    parts = line.decode("utf-8", "surrogateescape").split()
    if parts[0] != "#!lua":
        raise ReplyError(errors.SCRIPT_BAD_ENGINE.format(parts[0]))
    flags: set[str] = set()
    for part in parts[1:]:
        if not part.startswith("flags="):
            raise ReplyError(errors.SCRIPT_BAD_SHEBANG_OPTION.format(part))
        for flag in part[6:].split(","):
            if not flag:
                continue
            if flag not in KNOWN_FLAGS:
                raise ReplyError(errors.SCRIPT_BAD_FLAG.format(flag))
            flags.add(flag)
    return frozenset(flags), rest


def _arg_bytes(value: Any) -> bytes | None:
    cls = value.__class__
    if cls is bytes:
        return value
    if cls is int and -_HALF_LLONG_MAX <= value <= _HALF_LLONG_MAX:
        return b"%d" % value
    if cls is float or cls is int:
        return _number_arg(float(value))
    return None


_HALF_LLONG_MAX = 2**62  # (double)(LLONG_MAX / 2)


def _number_arg(value: float) -> bytes:
    """luaArgsToRedisArgv: a Lua number as an argument. double2ll's integers (within
    +-LLONG_MAX/2) as integers, else fpconv_dtoa: Grisu2's digits (format_double's, as
    d2string goes straight to it here), and the sign bit printed for NaN too (0/0 on
    x86-64 is "-nan")."""
    if value != value:
        return b"-nan" if math.copysign(1.0, value) < 0 else b"nan"
    if -_HALF_LLONG_MAX <= value <= _HALF_LLONG_MAX and value == int(value):
        return b"%d" % int(value)
    return format_double(value)


class CommandFailed(Exception):
    """A command's error inside redis.call; sandbox.lua recognises the text's marker,
    then "c" (counted already) or "u"."""

    def __str__(self) -> str:
        message = self.args[0]
        return "\0rillet\0" + ("u" if message in errors.SCRIPT_CALL_UNCOUNTED else "c") + message


class LuaEngine:
    """One Lua runtime for EVAL scripts and function libraries."""

    def __init__(self, state: ServerState) -> None:
        self.state = state
        self.scripts: dict[str, Script] = {}
        # The same scripts by their sha as lower-case bytes (EVALSHA's lookup).
        self.by_sha: dict[bytes, Script] = {}
        self.current: Run | None = None
        self._next_slot = 0
        self.functions = Functions(self)
        self._new_runtime()

    def _command_call(self, client: Client, spec: Any, argv: list[bytes]) -> object:
        # Replaced by the dispatcher's bound `call` on first use (one frame less per redis.call).
        dispatcher = self.state.transactions
        assert dispatcher is not None
        self._command_call = dispatcher.call  # type: ignore[method-assign]  # (see above)
        return dispatcher.call(client, spec, argv)

    def _new_runtime(self) -> None:
        def deny(obj: object, name: object, setting: bool) -> object:
            raise AttributeError("access to Python objects is not allowed")

        lua = lua51.LuaRuntime(encoding=None, register_eval=False, register_builtins=False,
                               unpack_returned_tuples=True, attribute_filter=deny)
        self.lua = lua
        # Taken before the sandbox runs: INFO's used_memory_lua reads the heap size.
        self._collectgarbage = lua.eval(b"collectgarbage")
        self._table = lua.table_from
        # cjson.null: Redis's is a NULL lightuserdata; a userdata made here is its like
        # (type "userdata", a reply's nil, and no script can make another).
        libraries = make_libraries(self._table, lua.eval(b"newproxy(false)"), lua.eval(
            # luaL_where(1) seen from a library function: its caller's line (level 3
            # from here: this function, the library's, its caller).
            b"(function(getinfo) return function() local i = getinfo(3, 'Sl') "
            b"if i and i.what ~= 'C' and i.currentline > 0 then "
            b"return i.short_src .. ':' .. i.currentline .. ': ' end return '' end end)(debug.getinfo)"))

        def lib(name: bytes, *args: object) -> object:
            return self._lib(libraries, name, *args)

        from importlib import resources  # (pathlib, tempfile...: not for a server without Lua)

        source = resources.files("rillet.scripting").joinpath("sandbox.lua").read_bytes()
        chunk = lua.eval(b"function(src, name) local f, e = loadstring(src, name); "
                         b"if not f then error(e) end; return f end")
        loader = chunk(source, b"=rillet")
        self._specs: dict[bytes, Any] = {}
        call, pcall = self._make_call(True), self._make_call(False)
        # The compiled redis.call as a Lua C function, and EVALSHA's call into Lua
        # without lupa (scripting/_calls.pyx), when built and loadable.
        compiled = None
        opener = None
        if _ScriptCall is not None:
            opener = lua.eval(b"package.loadlib")(_calls.__file__.encode(), b"rillet_lua_open")
            if lua51.lua_type(opener) == "function":
                compiled = call
                call.pcall = pcall
                call, pcall = compiled.open(lua, opener)
        (self._compile, self._run, self._run_library, self._run_function, set_version,
         self._lua_type, status, error, array, ok_batch, run_set, env, self._shape) = loader(
            call, pcall, self._log, self._sha1hex, self._hook, lib)
        self._build = Builders(self._table, status, error, array, ok_batch)
        self._compiled = compiled
        # The compiled calls read the compiled Run's fields in C (same fields, same defaults).
        self._Run: type = Run if compiled is None else _calls.Run
        self._slots = lua.table()
        if compiled is not None:
            compiled.bind(opener, lua.table(), run_set, self._slots, env)
        version = REDIS_COMPAT_VERSION
        major, minor, patch = (int(p) for p in (version.split(".") + ["0", "0"])[:3])
        set_version(version.encode(), (major << 16) | (minor << 8) | patch)

    def memory_bytes(self) -> int:
        """The Lua heap in bytes (Redis's used_memory_lua)."""
        return int(self._collectgarbage(b"count") * 1024)

    def reset(self) -> None:
        """SCRIPT FLUSH: an empty cache (and a new Lua state, unless functions live in this one)."""
        if self.functions.libraries:  # the runtime stays: its scripts' functions go
            for script in self.scripts.values():
                self._slots[script.slot] = None
        self.scripts.clear()
        self.by_sha.clear()
        if not self.functions.libraries:
            self._new_runtime()

    def run_library(self, body: bytes, register: Callable) -> tuple[bool, object]:
        """Run a library's code once (FUNCTION LOAD), its register_function bound to `register`."""
        def raising(*args: object) -> None:
            register(*args)
        run = self._Run(self.state.internal_client(), "", True, False, time.monotonic())
        if self.current is not None:
            raise ReplyError(errors.SCRIPT_NOT_ALLOWED)
        self.current = run
        try:
            return self._run_library(body, b"@user_function", raising)
        finally:
            self.current = None

    def run_function(self, client: Client, function: Any, keys: list[bytes], args: list[bytes],
                     read_only: bool, argv: list[bytes] | tuple = ()) -> object:
        """FCALL / FCALL_RO of a registered function (`argv`: the command, as sent)."""
        no_writes = read_only or "no-writes" in function.flags
        run = self._Run(client, function.name.decode("utf-8", "surrogateescape"), no_writes, False,
                  time.monotonic())
        run.command = argv
        self._check_cluster(run, function.flags, keys)
        self._check_oom(run, function.flags)
        self._check_read_only(function.flags, read_only)
        return self._execute(run, self._run_function, function.callback, len(keys), *keys, *args)

    # --- the script cache ---------------------------------------------------------
    def load(self, body: bytes) -> Script:
        sha = _sha1(body)
        script = self.scripts.get(sha)
        if script is not None:
            return script
        flags, code = parse_shebang(body)
        function, problem = self._compile(code, b"@user_script")
        if function is None:
            raise ReplyError(errors.SCRIPT_COMPILE.format(problem.decode("utf-8", "surrogateescape")))
        self._next_slot += 1
        script = Script(sha, body, function, flags, self._next_slot)
        self._slots[script.slot] = function
        self.scripts[sha] = script
        self.by_sha[sha.encode()] = script
        return script

    def find(self, sha: bytes) -> Script | None:
        """The cached script with this sha (any case), for EVALSHA."""
        script = self.by_sha.get(sha)
        if script is None and len(sha) == 40:
            script = self.by_sha.get(sha.lower())
        return script

    # --- running ------------------------------------------------------------------
    def run_script(self, client: Client, script: Script, keys: list[bytes], args: list[bytes],
                   read_only: bool) -> object:
        flags = script.flags
        if flags is None:  # no shebang: its first write obeys maxmemory instead (_dispatch)
            run = self._Run(client, script.sha, read_only, True, time.monotonic())
            self._check_cluster(run, flags, keys)
        else:
            run = self._Run(client, script.sha, read_only or "no-writes" in flags, True, time.monotonic())
            self._check_cluster(run, flags, keys)
            self._check_oom(run, flags)
            self._check_read_only(flags, read_only)
        compiled = self._compiled
        if compiled is not None:  # the same run, called from C (scripting/_calls.pyx)
            return self._execute(run, compiled.run, script.slot, len(keys), *keys, *args)
        if args:
            return self._execute(run, self._run, script.function, len(keys), *keys, *args)
        return self._execute(run, self._run, script.function, len(keys), *keys)

    def _check_cluster(self, run: Run, flags: frozenset[str] | None, keys: list[bytes]) -> None:
        """scriptPrepareForRun's first check (no-cluster), and the slot the script's
        commands must keep to (scriptVerifyClusterState, at each redis.call)."""
        if self.state.cluster is None:
            return
        if flags is None:
            run.cross_slot = True  # a script without a shebang: Redis's compat mode allows it
        else:
            if "no-cluster" in flags:
                raise ReplyError(errors.SCRIPT_NO_CLUSTER)
            run.cross_slot = "allow-cross-slot-keys" in flags
        if keys:
            run.slot = key_slot(keys[0])

    def _check_oom(self, run: Run, flags: frozenset[str] | None) -> None:
        """scriptPrepareForRun: a script that declared flags, without allow-oom or
        no-writes, does not start while memory was over maxmemory at the command's start."""
        if flags is None:
            return  # no shebang: its first write obeys maxmemory instead (_dispatch)
        run.allow_oom = "allow-oom" in flags or "no-writes" in flags
        state = self.state
        if (not run.allow_oom and state.pre_command_oom and state.memory.limit
                and not run.client.is_internal):
            raise ReplyError(errors.SCRIPT_OOM_ALLOW_OOM)

    @staticmethod
    def _check_read_only(flags: frozenset[str], read_only: bool) -> None:
        """scriptPrepareForRun, after the OOM check: a script that declared flags without
        no-writes (a function without it too) is refused by EVAL_RO/EVALSHA_RO/FCALL_RO,
        before it runs. A script without a shebang runs, and its writes are refused."""
        if read_only and "no-writes" not in flags:
            raise ReplyError(errors.FUNCTION_RO_WITH_WRITES)

    def _execute(self, run: Run, runner: Callable, *lua_args: object) -> object:
        if self.current is not None:
            # A script cannot run another (EVAL is `noscript`); defensive only.
            raise ReplyError(errors.SCRIPT_NOT_ALLOWED)
        client = run.client
        state = self.state
        own_tx = state._tx_effects is None  # not inside EXEC (or another transaction)
        saved_db, saved_in_exec, saved_resp3 = client.db, client.in_exec, client.resp3
        self.current = run
        # Blocking commands act as if they timed out, as inside MULTI; the script's
        # commands speak RESP2 until redis.setresp(3) (which sets client.resp3 too).
        client.in_exec = True
        client.resp3 = False
        run.fast = run.unobserved = FAST_CALLS and not (client.gated or state.pre_command_oom)
        if own_tx:
            state.begin_transaction()
        try:
            outcome = runner(*lua_args)
        finally:
            self.current = None
            client.db, client.in_exec, client.resp3 = saved_db, saved_in_exec, saved_resp3
            if own_tx:
                state.end_transaction()
            if run.busy:
                state.script_busy = None
        cls = outcome.__class__
        if cls is bytes or cls is int:  # a string or number result comes alone (sandbox.lua finish)
            return outcome
        if cls is not tuple:
            return self.reply_of(outcome, run.resp, client.resp3)
        ok, result, status = outcome
        if ok:
            if status is not None:
                return SimpleString(status.replace(b"\r", b" ").replace(b"\n", b" "))
            return self.reply_of(result, run.resp, client.resp3)
        raise self.script_error(run, result)

    def reply_of(self, value: object, lua_resp: int, resp3: bool) -> object:
        """A script's return value as its reply (convert.from_lua), its errors counted."""
        return from_lua(value, lua_resp, resp3, self._shape, self._count_error)

    def _count_error(self, message: str) -> None:
        dispatcher = self.state.transactions
        assert dispatcher is not None
        dispatcher._count_error(message)

    def script_error(self, run: Run, result: Any) -> ReplyError:
        """The error a failed script replies; not counted again in errorstats if it is
        a command's error that was counted when the command failed."""
        message = self._error_message(run, result)
        if lua51.lua_type(result) == "table" and result[b"ignore_error_stats_update"] is True:
            return CountedReplyError(message)
        return ReplyError(message)

    def _error_message(self, run: Run, result: Any) -> str:
        if lua51.lua_type(result) != "table":
            text = result.decode("utf-8", "surrogateescape") if isinstance(result, bytes) else "execution failure"
            prefix = "f_" if run.is_eval else ""
            return f"ERR Error running script {prefix}{run.name}, {text[:100]}"
        err = result[b"err"]
        message = err.decode("utf-8", "surrogateescape") if isinstance(err, bytes) else "(null)"
        source, line = result[b"source"], result[b"line"]
        if source is not None and line is not None:
            where = source.decode("utf-8", "surrogateescape") if isinstance(source, bytes) else str(source)
            message += f" script: {run.name}, on {where}:{int(line)}."
        return message.replace("\r", " ").replace("\n", " ")

    # --- callbacks from Lua ---------------------------------------------------------
    def _make_call(self, raising: bool) -> Any:
        """redis.call (raising: a command's error is raised into the script, see
        sandbox.lua MARK) or redis.pcall (the error comes back as {err=...}).

        This is the hot path of every script: one Python frame from Lua to the
        handler for the common case (a command found by its exact name, all
        arguments strings, nothing observing the call: see `Run.fast`), the rest
        through `_dispatch` and `Dispatcher.call`. The common case repeats the
        lines of `Dispatcher.call` that apply when nobody observes (keep in
        step). scripting/_calls.pyx is this closure compiled, used when built;
        tests/server/test_script_paths.py runs scripts through both and through
        the general path, and compares replies, effects and stats.
        """
        mask = command_table.TIMING_MASK
        if _ScriptCall is not None:
            return _ScriptCall(self, raising, mask, CommandFailed)
        engine = self
        specs = self._specs
        state = self.state
        join = b"".join

        def call(*args: Any) -> object:  # (Lua values)
            reply: Any  # tested by its class below
            run = engine.current
            spec = specs.get(args[0]) if args and args[0].__class__ is bytes else None
            # The common case: a known command, right arity, only strings, no write
            # to refuse, nothing observing (Run.fast), not the call of the command
            # that commandstats times. Anything else takes `_dispatch`.
            if (spec is None or run is None or not run.fast
                    or not spec.min_argc <= len(args) <= spec.max_argc
                    or spec.is_write and run.read_only or not (spec.sampled and spec.calls & mask)):
                reply = engine._dispatch(args)
            else:
                try:
                    # Only strings? (Lua gives bytes, numbers, booleans, tables...: the
                    # join, in C, refuses all but bytes; cheaper than a Python loop.)
                    join(args)
                except TypeError:
                    reply = engine._dispatch(args)
                else:
                    # Dispatcher.call's lines for an unobserved, untimed call (keep in step).
                    argv = list(args)
                    reads = spec.read_stats  # keyspace_hits/misses
                    if reads == READS_BEFORE or (reads == READS_SET_GET and len(argv) > 3):
                        state.count_reads(run.client, spec, argv)
                    if spec.is_write:
                        run.wrote = True
                        dirty_before = state.dirty
                        try:
                            reply = spec.handler(run.client, argv)
                        except Exception as error:
                            state._effects = None  # a failed handler leaves no effect
                            reply = engine._failed(spec, argv, error)
                        spec.calls += 1
                        if state._effects is not None or (state.dirty != dirty_before and state.effect_sinks):
                            state.publish_write(run.client.db.index, argv, dirty_before)
                    else:
                        try:
                            reply = spec.handler(run.client, argv)
                        except Exception as error:
                            reply = engine._failed(spec, argv, error)
                        spec.calls += 1
                        if reads == READS_AFTER:
                            state.count_reads_after(run.client, spec, argv)
                    cls = reply.__class__
                    if cls is bytes or cls is int:
                        return reply
                    if cls is Block:
                        reply = reply.timeout_reply
                    elif cls is ReplyError or isinstance(reply, ReplyError):
                        reply = reply.message
            cls = reply.__class__
            if cls is bytes or cls is int:
                return reply
            if cls is str:
                if raising:
                    raise CommandFailed(reply)
                return engine._build.error(reply.encode("utf-8", "surrogateescape"),
                                           reply in errors.SCRIPT_CALL_UNCOUNTED)
            if cls is SimpleString:
                return engine._build.status_of(reply)
            return to_lua(reply, run is not None and run.resp == 3, engine._build)
        return call

    def _failed(self, spec: Any, argv: list[bytes], error: Exception) -> object:
        """A handler raised: Dispatcher._failed's reply (its stats, its log)."""
        dispatcher = self.state.transactions
        assert dispatcher is not None
        return dispatcher._failed(spec, argv, error)

    def _dispatch(self, args: tuple) -> object:
        """One command for the script, the general case: its reply, or its error text (a str)."""
        run = self.current
        if run is None:
            return errors.SCRIPT_CALL_OUTSIDE
        if not args:
            return errors.SCRIPT_CALL_NO_ARGS
        # (list[Any]: bytes once the None check below has passed.)
        argv: list[Any] = [value if value.__class__ is bytes else _arg_bytes(value) for value in args]
        if None in argv:
            return errors.SCRIPT_CALL_BAD_ARG
        # Specs that need no subcommand lookup and may run in scripts, by their raw name.
        spec = self._specs.get(argv[0])
        if spec is None:
            spec = self._lookup(argv)
            if spec.__class__ is str:
                return self._refused(spec)
        return self._run_command(run, spec, argv)

    def _refused(self, message: str) -> str:
        """scriptCall's refusal of a command: counted in errorstats as it happens."""
        self._count_error(message)
        return message

    def _run_command(self, run: Run, spec: Any, argv: list[bytes]) -> object:
        """scriptCall's checks after the lookup, then the command: its reply (not yet
        converted to Lua), or its error text (a str)."""
        if not spec.min_argc <= len(argv) <= spec.max_argc:
            return self._refused(errors.SCRIPT_WRONG_ARITY)
        client = run.client
        state = self.state
        if client.restricted:
            # scriptCall: the user's ACL rules apply to a script's commands (logged as "lua").
            # (A restricted client is gated: its scripts' commands all come this way.)
            refused = acl_refusal(client, spec, argv, context="lua")
            if refused is not None:
                return self._refused(errors.SCRIPT_ACL_FAILURE.format(refused.removeprefix("NOPERM ")))
        if run.read_only and (spec.is_write or "may_replicate" in spec.flags):
            # scriptVerifyWriteCommandAllow: may-replicate commands (PFCOUNT, PUBLISH)
            # count as writes for a read-only script.
            return self._refused(errors.SCRIPT_WRITE_IN_READONLY)
        if spec.is_write:
            guard = state.write_guard
            if guard is not None and not client.is_internal:
                problem = guard()
                if problem is not None:
                    return self._refused(problem)
        # scriptVerifyOOM: a command that may grow memory is refused if memory was
        # over maxmemory when the script started, unless the script wrote already
        # (it cannot stop halfway) or declared allow-oom.
        if (state.pre_command_oom and not run.wrote and not run.allow_oom
                and "denyoom" in spec.flags and state.memory.limit and not client.is_internal):
            return self._refused(errors.OOM)
        if state.cluster is not None and not client.is_internal:
            refused = self._cluster_refusal(run, spec, argv)
            if refused is not None:
                return self._refused(refused)
        if spec.is_write:
            run.wrote = True
        if run.repl:
            reply = self._command_call(client, spec, argv)
        else:
            mark = state.effects_mark()
            reply = self._command_call(client, spec, argv)
            state.drop_effects_since(mark)
        if reply.__class__ is ReplyError or isinstance(reply, ReplyError):
            return reply.message
        return reply

    def _cluster_refusal(self, run: Run, spec: Any, argv: list[bytes]) -> str | None:
        """scriptVerifyClusterState: a script's command must be served here, and its keys
        keep to one slot (every client is gated in cluster mode, so calls come here)."""
        client = run.client
        if not cluster_has_keys(spec):
            return None
        redirect, slot = cluster_locate(self.state, client, spec, argv)
        if redirect is not None:
            if redirect == errors.CLUSTER_DOWN_READONLY:
                return errors.SCRIPT_CLUSTER_DOWN_READONLY
            if redirect == errors.CLUSTER_DOWN:
                return errors.SCRIPT_CLUSTER_DOWN
            if redirect == errors.CLUSTER_CROSSSLOT:
                return errors.SCRIPT_CROSSSLOT.format(spec.name)
            return errors.SCRIPT_NON_LOCAL_KEY
        if slot >= 0 and not run.cross_slot:
            if run.slot < 0:
                run.slot = slot
            elif run.slot != slot:
                return errors.SCRIPT_OTHER_SLOT
        return None

    def _lookup(self, argv: list[bytes]) -> Any:
        """The spec for a script's command, or the error text (scriptCall's checks)."""
        spec = command_table.lookup(argv[0])
        if spec is not None and spec.subcommands and (len(argv) >= 2 or spec.handler is None):
            if len(argv) < 2:
                return errors.SCRIPT_WRONG_ARITY
            spec = spec.subcommands.get(argv[1]) or spec.subcommands.get(argv[1].lower())
        elif spec is not None and "noscript" not in spec.flags and not spec.subcommands:
            self._specs[argv[0]] = spec
        if spec is None:
            return errors.SCRIPT_UNKNOWN_COMMAND
        if "noscript" in spec.flags:
            if not spec.min_argc <= len(argv) <= spec.max_argc:
                return errors.SCRIPT_WRONG_ARITY  # scriptCall checks the arity first
            return errors.SCRIPT_NOT_ALLOWED
        return spec

    def _log(self, level: int, message: bytes) -> None:
        levels = (logging.DEBUG, logging.INFO, logging.WARNING, logging.WARNING)
        log.log(levels[int(level)], "%s", message.decode("utf-8", "replace"))

    def _sha1hex(self, value: object) -> bytes:
        raw = _arg_bytes(value)
        return _sha1(raw if raw is not None else b"").encode()

    def _lib(self, libraries: dict, name: bytes, *args: Any) -> object:
        key = name.decode()
        if key in libraries:
            return libraries[key]
        run = self.current
        if key == "setresp" and run is not None:
            run.resp = int(args[0])
            run.client.resp3 = run.resp == 3
        elif key == "set_repl" and run is not None:
            run.repl = int(args[0])
            run.fast = run.unobserved and run.repl == 3
        elif key == "acl_check_cmd":
            # luaRedisAclCheckCmdPermissionsCommand: redis.call's arguments, the command
            # (a container's subcommand) without its arity, the caller's user's rules.
            # (list[Any]: bytes once the None check below has passed.)
            argv: list[Any] = [_arg_bytes(arg) for arg in args]
            if None in argv:
                return errors.SCRIPT_CALL_BAD_ARG.encode()  # sandbox.lua raises it
            spec = command_table.lookup(argv[0])
            if spec is not None and spec.subcommands and len(argv) >= 2:
                spec = spec.subcommands.get(argv[1]) or spec.subcommands.get(argv[1].lower())
            if spec is None:
                return None  # sandbox.lua raises Redis's error table
            if run is None:
                return True
            try:
                return acl_check(run.client.user, spec, argv)[0] == acl_model.OK
            except IndexError:
                # Keys looked for past the arguments given (fewer than the arity): Redis
                # answers false for a user with key patterns (tests/compat/test_scripting_edges.py).
                return False
        return None

    def _hook(self) -> bytes | None:
        """The count hook: past busy-reply-threshold, serve others; the kill message once killed."""
        run = self.current
        if run is None:
            return None
        if run.killed:
            return errors.SCRIPT_KILLED_BY_USER.encode()
        threshold = self.state.config["lua-time-limit"]
        if threshold and (time.monotonic() - run.started) * 1000 >= threshold:
            if not run.busy:
                run.busy = True
                log.warning("Slow script detected: still in execution after %d milliseconds. "
                            "You can try killing the script using the %s KILL command. Script name is: %s.",
                            threshold, "SCRIPT" if run.is_eval else "FUNCTION", run.name)
                self.state.script_busy = run
            serve = self.state.serve_while_busy
            if serve is not None:
                # Others run only `allow_busy` commands meanwhile: none of them starts
                # observing this script's calls (MONITOR, tracking, ...), so Run.fast holds.
                serve(run.client)
            if run.killed:
                return errors.SCRIPT_KILLED_BY_USER.encode()
        return None

    def kill(self, is_eval: bool) -> str | None:
        """SCRIPT KILL / FUNCTION KILL: None if the running script was killed, else the error."""
        run = self.current
        if run is None or not run.busy:
            return errors.NOTBUSY
        if run.wrote:
            return errors.UNKILLABLE
        if run.is_eval != is_eval:
            # Redis's scriptKill: the other kind's BUSY, naming the command that would do.
            return errors.BUSY_EVAL if run.is_eval else errors.BUSY_FUNCTION
        run.killed = True
        return None
