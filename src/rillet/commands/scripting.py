"""Lua scripts: EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT LOAD/EXISTS/FLUSH/KILL.

The Lua runtime, the sandbox and the conversion rules live in rillet.scripting;
these handlers parse arguments, find the script and hand it to the engine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rillet import errors
from rillet.commands.args import parse_int
from rillet.commands.table import COMMANDS, command, help_reply
from rillet.compiled import compiled
from rillet.errors import ReplyError
from rillet.resp.types import OK
from rillet.state import Client, ServerState

if TYPE_CHECKING:
    from rillet.scripting.engine import LuaEngine

_EVAL_FLAGS = "noscript skip_monitor may_replicate no_mandatory_keys stale movablekeys"
_EVAL_RO_FLAGS = "noscript skip_monitor no_mandatory_keys stale readonly movablekeys"


def engine(ctx: Client) -> LuaEngine:
    """The server's Lua engine, created on first use."""
    server = ctx.server
    if server.scripting is None:
        # (Lua, lupa and the sandbox load with the first script, not with every start.)
        from rillet.scripting.engine import LuaEngine

        server.scripting = LuaEngine(server)
    return server.scripting


# The common numkeys values, spared parse_int on every EVALSHA.
_SMALL_NUMKEYS = {b"%d" % n: n for n in range(10)}


def split_keys(argv: list[bytes]) -> tuple[list[bytes], list[bytes]]:
    """numkeys, then the keys and the arguments (EVAL's and FCALL's layout)."""
    numkeys = _SMALL_NUMKEYS.get(argv[2])
    if numkeys is None:
        numkeys = parse_int(argv[2])
    if numkeys > len(argv) - 3:
        raise ReplyError(errors.SCRIPT_NUMKEYS_TOO_MANY)
    if numkeys < 0:
        raise ReplyError(errors.SCRIPT_NUMKEYS_NEGATIVE)
    return argv[3:3 + numkeys], argv[3 + numkeys:]


def feed_monitors(ctx: Client, argv: list[bytes]) -> None:
    """EVAL and FCALL are `skip_monitor` and feed MONITOR themselves, first, so that
    their script's commands follow them (Redis's evalCommand)."""
    if ctx.server.monitors:
        ctx.server.feed_monitors(ctx, argv)


def declared_flags(state: ServerState, name: str, argv: list[bytes]) -> frozenset[str] | None:
    """The flags EVAL's, EVALSHA's or FCALL's (or their _RO forms') script declared,
    None for a script without a shebang (the dispatcher's checks: evalGetCommandFlags)."""
    lua = state.scripting
    if name in ("fcall", "fcall_ro"):
        function = lua.functions.find(argv[1]) if lua is not None else None
        return function.flags if function is not None else None
    if name in ("evalsha", "evalsha_ro"):
        sha = argv[1]
        script = lua.scripts.get(sha.decode("latin-1").lower()) if lua is not None and len(sha) == 40 else None
        return script.flags if script is not None else None
    from rillet.scripting.engine import parse_shebang

    try:
        return parse_shebang(argv[1])[0]
    except ReplyError:
        return None  # EVAL itself reports the bad shebang


def _eval(ctx: Client, argv: list[bytes], read_only: bool) -> object:
    feed_monitors(ctx, argv)
    keys, args = split_keys(argv)
    lua = engine(ctx)
    script = lua.load(argv[1])
    return lua.run_script(ctx, script, keys, args, read_only)


def _evalsha(ctx: Client, argv: list[bytes], read_only: bool) -> object:
    server = ctx.server
    if server.monitors:
        server.feed_monitors(ctx, argv)
    if len(argv[1]) != 40:
        # evalShaCommand: no script has another length, NOSCRIPT before numkeys is read.
        raise ReplyError(errors.NOSCRIPT)
    args: list[bytes]
    if len(argv) == 4 and argv[2] == b"1":  # one key, no arguments: split_keys' answer
        keys, args = argv[3:], []
    else:
        keys, args = split_keys(argv)
    lua = server.scripting or engine(ctx)
    script = lua.by_sha.get(argv[1]) or lua.find(argv[1])
    if script is None:
        raise ReplyError(errors.NOSCRIPT)
    return lua.run_script(ctx, script, keys, args, read_only)


@command("eval", -3, _EVAL_FLAGS, group="scripting", since="2.6.0", acl="slow scripting")
def eval_(ctx: Client, argv: list[bytes]) -> object:
    """EVAL script numkeys [key [key ...]] [arg [arg ...]]"""
    return _eval(ctx, argv, False)


@command("evalsha", -3, _EVAL_FLAGS, group="scripting", since="2.6.0", acl="slow scripting")
def evalsha(ctx: Client, argv: list[bytes]) -> object:
    """EVALSHA sha1 numkeys [key [key ...]] [arg [arg ...]]"""
    return _evalsha(ctx, argv, False)


@command("eval_ro", -3, _EVAL_RO_FLAGS, group="scripting", since="7.0.0", acl="slow scripting")
def eval_ro(ctx: Client, argv: list[bytes]) -> object:
    """EVAL_RO script numkeys [key [key ...]] [arg [arg ...]]"""
    return _eval(ctx, argv, True)


@command("evalsha_ro", -3, _EVAL_RO_FLAGS, group="scripting", since="7.0.0", acl="slow scripting")
def evalsha_ro(ctx: Client, argv: list[bytes]) -> object:
    """EVALSHA_RO sha1 numkeys [key [key ...]] [arg [arg ...]]"""
    return _evalsha(ctx, argv, True)


# EVALSHA's common case compiled (scripting/_calls.pyx, see rillet/compiled.py);
# `_evalsha` above runs the others, or every case without it.
_calls = compiled("rillet.scripting._calls")
if _calls is not None:
    _calls.bind_evalsha(_evalsha)
    COMMANDS["evalsha"].handler = _calls.evalsha


@command("script|load", 3, "noscript stale", group="scripting", since="2.6.0", acl="slow scripting")
def script_load(ctx: Client, argv: list[bytes]) -> object:
    """SCRIPT LOAD script"""
    return engine(ctx).load(argv[2]).sha.encode()


@command("script|exists", -3, "noscript", group="scripting", since="2.6.0",
         acl="slow scripting")
def script_exists(ctx: Client, argv: list[bytes]) -> object:
    """SCRIPT EXISTS sha1 [sha1 ...]"""
    scripts = engine(ctx).scripts
    return [int(sha.decode("latin-1").lower() in scripts) for sha in argv[2:]]


@command("script|flush", -2, "noscript", group="scripting", since="2.6.0", acl="slow scripting")
def script_flush(ctx: Client, argv: list[bytes]) -> object:
    """SCRIPT FLUSH [ASYNC | SYNC]"""
    if len(argv) > 3 or (len(argv) == 3 and argv[2].upper() not in (b"SYNC", b"ASYNC")):
        raise ReplyError(errors.SCRIPT_FLUSH_OPTION)
    engine(ctx).reset()
    return OK


@command("script|kill", 2, "noscript allow_busy", group="scripting", since="2.6.0",
         acl="slow scripting")
def script_kill(ctx: Client, argv: list[bytes]) -> object:
    """SCRIPT KILL"""
    problem = engine(ctx).kill(is_eval=True)
    if problem is not None:
        raise ReplyError(problem)
    return OK


@command("script|help", 2, "loading stale", group="scripting", since="5.0.0", acl="slow scripting")
def script_help(ctx: Client, argv: list[bytes]) -> object:
    """SCRIPT HELP"""
    return help_reply(
        "SCRIPT",
        b"DEBUG (YES|SYNC|NO)",
        b"    Set the debug mode for subsequent scripts executed.",
        b"EXISTS <sha1> [<sha1> ...]",
        b"    Return information about the existence of the scripts in the script cache.",
        b"FLUSH [ASYNC|SYNC]",
        b"    Flush the Lua scripts cache. Very dangerous on replicas.",
        b"    When called without the optional mode argument, the behavior is determined by the",
        b"    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
        b"    * ASYNC: Asynchronously flush the scripts cache.",
        b"    * SYNC: Synchronously flush the scripts cache.",
        b"KILL",
        b"    Kill the currently executing Lua script.",
        b"LOAD <script>",
        b"    Load a script into the scripts cache without executing it.",
    )


@command("script|debug", 3, "noscript", group="scripting", since="3.2.0", acl="slow scripting",
         complexity="O(1)")
def script_debug(ctx: Client, argv: list[bytes]) -> object:
    """SCRIPT DEBUG <YES | SYNC | NO>

    Sets the debug mode of server-side Lua scripts."""
    # rillet has no Lua debugger (LDB): NO, the mode scripts run in anyway, is OK;
    # YES and SYNC, which would start a debugging session, are refused (docs/compat.md).
    if ctx.in_exec:
        raise ReplyError(errors.SCRIPT_DEBUG_MULTI)
    mode = argv[2].upper()
    if mode == b"NO":
        return OK
    if mode in (b"YES", b"SYNC"):
        raise ReplyError(errors.SCRIPT_DEBUG_UNSUPPORTED)
    raise ReplyError(errors.SCRIPT_DEBUG_USAGE)
