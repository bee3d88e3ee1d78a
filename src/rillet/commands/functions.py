"""Redis functions: FUNCTION LOAD/LIST/DELETE/FLUSH/DUMP/RESTORE/STATS/KILL/HELP, FCALL, FCALL_RO.

The libraries live in the Lua engine (rillet.scripting.functions). FUNCTION
LOAD, DELETE, FLUSH and RESTORE are writes: they reach the AOF and replicas as
sent, so a restart replays them.
"""

from __future__ import annotations

import time

from rillet import errors
from rillet.commands.args import parse_int
from rillet.commands.scripting import engine, feed_monitors, split_keys
from rillet.commands.table import command, help_reply
from rillet.errors import ReplyError
from rillet.glob import glob_match
from rillet.resp.types import OK, Map, SetReply, SimpleString
from rillet.state import Client, ServerState

_FCALL_FLAGS = "noscript skip_monitor may_replicate no_mandatory_keys stale movablekeys"
_FCALL_RO_FLAGS = "noscript skip_monitor no_mandatory_keys stale readonly movablekeys"


@command("function|load", -3, "write denyoom noscript", group="scripting", since="7.0.0",
         acl="write slow scripting")
def function_load(ctx: Client, argv: list[bytes]) -> object:
    """FUNCTION LOAD [REPLACE] function-code"""
    replace = False
    for option in argv[2:-1]:  # functionLoadCommand: REPLACE, any number of times
        if option.upper() != b"REPLACE":
            raise ReplyError(errors.FUNCTION_LOAD_BAD_OPTION.format(errors.c_text(option)))
        replace = True
    name = engine(ctx).functions.load(argv[-1], replace)
    ctx.changed()
    return name


@command("function|delete", 3, "write noscript", group="scripting", since="7.0.0",
         acl="write slow scripting")
def function_delete(ctx: Client, argv: list[bytes]) -> object:
    """FUNCTION DELETE library-name"""
    engine(ctx).functions.delete(argv[2])
    ctx.changed()
    return OK


@command("function|flush", -2, "write noscript", group="scripting", since="7.0.0",
         acl="write slow scripting")
def function_flush(ctx: Client, argv: list[bytes]) -> object:
    """FUNCTION FLUSH [ASYNC | SYNC]"""
    if len(argv) > 3:
        raise ReplyError(errors.subcommand_syntax(argv[1], "function"))
    if len(argv) == 3 and argv[2].upper() not in (b"ASYNC", b"SYNC"):
        raise ReplyError(errors.FUNCTION_FLUSH_MODE)
    engine(ctx).functions.flush()
    ctx.changed()
    return OK


@command("function|dump", 2, "noscript", group="scripting", since="7.0.0", acl="slow scripting")
def function_dump(ctx: Client, argv: list[bytes]) -> object:
    """FUNCTION DUMP"""
    return engine(ctx).functions.dump()


@command("function|restore", -3, "write denyoom noscript", group="scripting", since="7.0.0",
         acl="write slow scripting")
def function_restore(ctx: Client, argv: list[bytes]) -> object:
    """FUNCTION RESTORE serialized-value [FLUSH | APPEND | REPLACE]"""
    policy = b"APPEND"
    if len(argv) == 4:
        policy = argv[3].upper()
        if policy not in (b"FLUSH", b"APPEND", b"REPLACE"):
            raise ReplyError(errors.FUNCTION_RESTORE_POLICY)
    elif len(argv) > 4:  # functionRestoreCommand: addReplySubcommandSyntaxError
        raise ReplyError(errors.subcommand_syntax(argv[1], "function"))
    engine(ctx).functions.restore(argv[2], policy)
    ctx.changed()
    return OK


@command("function|list", -2, "noscript", group="scripting", since="7.0.0", acl="slow scripting")
def function_list(ctx: Client, argv: list[bytes]) -> object:
    """FUNCTION LIST [LIBRARYNAME library-name-pattern] [WITHCODE]"""
    with_code = False
    pattern = None
    i = 2
    while i < len(argv):
        word = argv[i].upper()
        if word == b"WITHCODE" and not with_code:
            with_code = True
            i += 1
        elif word == b"LIBRARYNAME" and pattern is None:
            if i + 1 >= len(argv):
                raise ReplyError(errors.FUNCTION_LIST_NO_LIBRARYNAME)
            pattern = argv[i + 1]
            i += 2
        else:
            raise ReplyError(errors.FUNCTION_LIST_BAD_OPTION.format(errors.c_text(argv[i])))
    reply = []
    for library in engine(ctx).functions.libraries.values():
        if pattern is not None and not glob_match(pattern, library.name):
            continue
        functions = [
            Map([(b"name", f.name), (b"description", f.description),
                 (b"flags", SetReply([SimpleString(flag.encode()) for flag in sorted(f.flags)]))])
            for f in library.functions.values()
        ]
        fields: list = [(b"library_name", library.name), (b"engine", b"LUA"), (b"functions", functions)]
        if with_code:
            fields.append((b"library_code", library.code))
        reply.append(Map(fields))
    return reply


@command("function|stats", 2, "noscript allow_busy", group="scripting", since="7.0.0",
         acl="slow scripting")
def function_stats(ctx: Client, argv: list[bytes]) -> object:
    """FUNCTION STATS"""
    lua = engine(ctx)
    run = lua.current
    running = None
    if run is not None and run.is_eval and run.busy:
        raise ReplyError(errors.BUSY_EVAL)  # Redis's functionStatsCommand
    if run is not None and not run.is_eval:
        running = Map([(b"name", run.name.encode()), (b"command", list(run.command)),
                       (b"duration_ms", int((time.monotonic() - run.started) * 1000))])
    functions = lua.functions
    return Map([
        (b"running_script", running),
        (b"engines", Map([(b"LUA", Map([(b"libraries_count", len(functions.libraries)),
                                        (b"functions_count", len(functions.functions))]))])),
    ])


@command("function|kill", 2, "noscript allow_busy", group="scripting", since="7.0.0",
         acl="slow scripting")
def function_kill(ctx: Client, argv: list[bytes]) -> object:
    """FUNCTION KILL"""
    problem = engine(ctx).kill(is_eval=False)
    if problem is not None:
        raise ReplyError(problem)
    return OK


@command("function|help", 2, "loading stale", group="scripting", since="7.0.0", acl="slow scripting")
def function_help(ctx: Client, argv: list[bytes]) -> object:
    """FUNCTION HELP"""
    return help_reply(
        "FUNCTION",
        b"LOAD [REPLACE] <FUNCTION CODE>",
        b"    Create a new library with the given library name and code.",
        b"DELETE <LIBRARY NAME>",
        b"    Delete the given library.",
        b"LIST [LIBRARYNAME PATTERN] [WITHCODE]",
        b"    Return general information on all the libraries:",
        b"    * Library name",
        b"    * The engine used to run the Library",
        b"    * Functions list",
        b"    * Library code (if WITHCODE is given)",
        b"    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
        b"STATS",
        b"    Return information about the current function running:",
        b"    * Function name",
        b"    * Command used to run the function",
        b"    * Duration in MS that the function is running",
        b"    If no function is running, return nil",
        b"    In addition, returns a list of available engines.",
        b"KILL",
        b"    Kill the current running function.",
        b"FLUSH [ASYNC|SYNC]",
        b"    Delete all the libraries.",
        b"    When called without the optional mode argument, the behavior is determined by the",
        b"    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
        b"    * ASYNC: Asynchronously flush the libraries.",
        b"    * SYNC: Synchronously flush the libraries.",
        b"DUMP",
        b"    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
        b"RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
        b"    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
        b"    control how to handle existing libraries (default APPEND):",
        b"    * FLUSH: delete all existing libraries.",
        b"    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
        b"    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
        b"      libraries with the new libraries (notice that even on this option there is a chance of failure",
        b"      in case of functions name collision with another library).",
    )


def restore_library(state: ServerState, code: bytes) -> None:
    """A library from a snapshot (ServerState.library_loader): loaded as FUNCTION LOAD REPLACE."""
    if state.scripting is None:
        from rillet.scripting.engine import LuaEngine

        state.scripting = LuaEngine(state)
    state.scripting.functions.load(code, replace=True)


def _fcall(ctx: Client, argv: list[bytes], read_only: bool) -> object:
    feed_monitors(ctx, argv)
    lua = engine(ctx)
    function = lua.functions.find(argv[1])
    if function is None:
        raise ReplyError(errors.FUNCTION_NOT_FOUND)
    try:
        parse_int(argv[2])
    except ReplyError:
        raise ReplyError(errors.FCALL_BAD_NUMKEYS) from None
    keys, args = split_keys(argv)
    return lua.run_function(ctx, function, keys, args, read_only, argv)


@command("fcall", -3, _FCALL_FLAGS, group="scripting", since="7.0.0", acl="slow scripting")
def fcall(ctx: Client, argv: list[bytes]) -> object:
    """FCALL function numkeys [key [key ...]] [arg [arg ...]]"""
    return _fcall(ctx, argv, False)


@command("fcall_ro", -3, _FCALL_RO_FLAGS, group="scripting", since="7.0.0", acl="slow scripting")
def fcall_ro(ctx: Client, argv: list[bytes]) -> object:
    """FCALL_RO function numkeys [key [key ...]] [arg [arg ...]]"""
    return _fcall(ctx, argv, True)
