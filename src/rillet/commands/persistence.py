"""Persistence commands: SAVE, BGSAVE, BGREWRITEAOF, and the DEBUG subcommands tests use.

DEBUG RELOAD / LOADAOF / DIGEST / DIGEST-VALUE / SLEEP follow Redis;
DEBUG PERSISTENCE-FAULT is rillet's own fault injector for the AOF and
snapshot files. DEBUG is refused unless `enable-debug-command` allows it.
LASTSAVE lives in commands/server.py and reads `ServerState.persistence`.
"""

from __future__ import annotations

import errno
import time

from rillet import errors
from rillet.commands import table
from rillet.commands.table import command, help_reply
from rillet.errors import ReplyError
from rillet.resp.types import OK, SimpleString
from rillet.state import Client, Persistence


def _persistence(ctx: Client) -> Persistence:
    found = ctx.server.persistence
    if found is None:
        raise ReplyError(errors.PERSISTENCE_UNAVAILABLE)
    return found


@command("save", 1, "admin noscript no_async_loading no_multi", group="server", since="1.0.0")
def save(ctx: Client, argv: list[bytes]) -> object:
    """SAVE"""
    _persistence(ctx).save()
    return OK


@command("bgsave", -1, "admin noscript no_async_loading", group="server", since="1.0.0")
def bgsave(ctx: Client, argv: list[bytes]) -> object:
    """BGSAVE [SCHEDULE]"""
    schedule = False
    if len(argv) > 1:
        if len(argv) == 2 and argv[1].lower() == b"schedule":
            schedule = True
        else:
            raise ReplyError(errors.SYNTAX)
    return SimpleString(_persistence(ctx).bgsave(schedule))


@command("bgrewriteaof", 1, "admin noscript no_async_loading", group="server", since="1.0.0")
def bgrewriteaof(ctx: Client, argv: list[bytes]) -> object:
    """BGREWRITEAOF"""
    return SimpleString(_persistence(ctx).bgrewriteaof(in_exec=ctx.in_exec))


# --- DEBUG ----------------------------------------------------------------------------

_DEBUG_FLAGS = "admin noscript loading stale"
_DEBUG_GATE = "enable-debug-command"  # Redis's CMD_PROTECTED: checked by dispatch


# DEBUG is one command in Redis (its categories are its own); here each subcommand is a spec.
table.container("debug", "server", "admin slow dangerous", _DEBUG_FLAGS, _DEBUG_GATE)


@command("debug|reload", -2, _DEBUG_FLAGS, group="server", since="1.0.0",
         protected_by=_DEBUG_GATE)
def debug_reload(ctx: Client, argv: list[bytes]) -> object:
    """DEBUG RELOAD [MERGE] [NOFLUSH] [NOSAVE]

    Save the snapshot, empty the keyspace and load the snapshot back.
    """
    options = {a.upper() for a in argv[2:]}
    if not options <= {b"MERGE", b"NOFLUSH", b"NOSAVE"}:
        raise ReplyError(errors.SYNTAX)
    flush = b"NOFLUSH" not in options and b"MERGE" not in options
    _persistence(ctx).debug_reload(save=b"NOSAVE" not in options, flush=flush)
    return OK


@command("debug|loadaof", 2, _DEBUG_FLAGS, group="server", since="1.0.0",
         protected_by=_DEBUG_GATE)
def debug_loadaof(ctx: Client, argv: list[bytes]) -> object:
    """DEBUG LOADAOF

    Flush the AOF, empty the keyspace and load the AOF back.
    """
    _persistence(ctx).debug_loadaof()
    return OK


@command("debug|digest", 2, _DEBUG_FLAGS, group="server", since="1.0.0",
         protected_by=_DEBUG_GATE)
def debug_digest(ctx: Client, argv: list[bytes]) -> object:
    """DEBUG DIGEST

    A digest of the whole keyspace (40 zeros when it is empty).
    """
    return SimpleString(_persistence(ctx).digest().encode())


@command("debug|digest-value", -2, _DEBUG_FLAGS, group="server", since="1.0.0",
         protected_by=_DEBUG_GATE)
def debug_digest_value(ctx: Client, argv: list[bytes]) -> object:
    """DEBUG DIGEST-VALUE [key ...]"""
    persistence = _persistence(ctx)
    return [SimpleString(persistence.key_digest(ctx.db, key).encode()) for key in argv[2:]]


@command("debug|sleep", 3, _DEBUG_FLAGS, group="server", since="1.0.0",
         protected_by=_DEBUG_GATE)
def debug_sleep(ctx: Client, argv: list[bytes]) -> object:
    """DEBUG SLEEP seconds

    Block the whole server for that long (a float).
    """
    try:
        seconds = float(argv[2])
    except ValueError:
        raise ReplyError(errors.NOT_FLOAT) from None
    time.sleep(max(0.0, seconds))
    return OK


_ERRNOS = {b"ENOSPC": errno.ENOSPC, b"EIO": errno.EIO, b"EDQUOT": errno.EDQUOT}


@command("debug|persistence-fault", -3, _DEBUG_FLAGS, group="server", since="1.0.0",
         protected_by=_DEBUG_GATE)
def debug_persistence_fault(ctx: Client, argv: list[bytes]) -> object:
    """DEBUG PERSISTENCE-FAULT <CLEAR | <AOF | SNAPSHOT> count [ENOSPC | EIO] [WRITE | FSYNC | ANY]>

    Make the next `count` write/fsync operations on the AOF or snapshot files
    fail with the given errno (count -1: until cleared; 0: none). rillet-only, for tests.
    """
    persistence = _persistence(ctx)
    if len(argv) == 3 and argv[2].upper() == b"CLEAR":
        persistence.clear_faults()
        return OK
    if len(argv) < 4 or len(argv) > 6:
        raise ReplyError(errors.SYNTAX)
    target = argv[2].lower().decode("utf-8", "replace")
    if target not in persistence.fault_targets:
        raise ReplyError(errors.SYNTAX)
    try:
        count = int(argv[3])
    except ValueError:
        raise ReplyError(errors.NOT_INTEGER) from None
    code = errno.ENOSPC
    op = "any"
    for word in argv[4:]:
        upper = word.upper()
        if upper in _ERRNOS:
            code = _ERRNOS[upper]
        elif upper in (b"WRITE", b"FSYNC", b"ANY"):
            op = upper.decode().lower()
        else:
            raise ReplyError(errors.SYNTAX)
    persistence.set_fault(target, count, code, op)
    return OK


@command("debug|help", 2, _DEBUG_FLAGS, group="server", since="1.0.0",
         protected_by=_DEBUG_GATE)
def debug_help(ctx: Client, argv: list[bytes]) -> object:
    """DEBUG HELP"""
    return help_reply(
        "DEBUG",
        b"DIGEST", b"    Output a hex signature representing the current DB content.",
        b"DIGEST-VALUE <key> [<key> ...]",
        b"    Output a hex signature of the values of all the specified keys.",
        b"LOADAOF", b"    Flush the AOF buffers on disk and reload the AOF in memory.",
        b"RELOAD [MERGE] [NOFLUSH] [NOSAVE]",
        b"    Save the RDB on disk and reload it back to memory.",
        b"SLEEP <seconds>", b"    Stop the server for <seconds>. Decimals allowed.",
        b"PERSISTENCE-FAULT <aof|snapshot> <count> [ENOSPC|EIO] [WRITE|FSYNC|ANY] | CLEAR",
        b"    Make the next <count> file operations fail (rillet test hook).",
    )
