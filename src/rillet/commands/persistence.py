"""Persistence commands: SAVE, BGSAVE, BGREWRITEAOF, and the DEBUG subcommands tests use.

DEBUG RELOAD / LOADAOF / DIGEST / DIGEST-VALUE / SLEEP / POPULATE / OBJECT /
SET-ACTIVE-EXPIRE / CHANGE-REPL-ID / AOF-FLUSH-SLEEP / LOG / ERROR follow Redis,
and its tuning switches rillet has no use for answer OK (docs/compat.md);
DEBUG PERSISTENCE-FAULT is rillet's own fault injector for the AOF and
snapshot files. DEBUG is refused unless `enable-debug-command` allows it.
LASTSAVE lives in commands/server.py and reads `ServerState.persistence`.
"""

from __future__ import annotations

import errno
import logging
import re
import time

from rillet import errors
from rillet.commands import table
from rillet.commands.args import parse_int
from rillet.commands.keys import object_encoding
from rillet.commands.table import command, help_reply
from rillet.config import ConfigError, parse_memory
from rillet.engine.eviction import idle_ms
from rillet.errors import ReplyError
from rillet.persistence import rdb
from rillet.resp.types import OK, SimpleString
from rillet.state import Client, Persistence

log = logging.getLogger("rillet")


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
        raise ReplyError(errors.DEBUG_RELOAD_OPTIONS)
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

    Block the whole server for that long (a float, read as C's atof: "x" is 0).
    """
    time.sleep(max(0.0, _atof(argv[2])))
    return OK


_ATOF = re.compile(rb"\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")
_ATOI = re.compile(rb"\s*[-+]?\d+")


def _atof(raw: bytes) -> float:
    match = _ATOF.match(raw)
    return float(match.group()) if match else 0.0


def _atoi(raw: bytes) -> int:
    """C's atoi, as Redis reads DEBUG's switches: the leading digits, else 0."""
    match = _ATOI.match(raw)
    return int(match.group()) if match else 0


def _syntax(argv: list[bytes]) -> ReplyError:
    return ReplyError(errors.subcommand_syntax(argv[1], "debug"))


@command("debug|populate", -3, _DEBUG_FLAGS, group="server", since="1.0.0",
         protected_by=_DEBUG_GATE)
def debug_populate(ctx: Client, argv: list[bytes]) -> object:
    """DEBUG POPULATE count [prefix] [size]

    Create `count` string keys `prefix:N` (default `key`) holding `value:N`, cut or
    zero-padded to `size` bytes; existing keys are left alone. Not propagated (Redis's
    neither); WATCH and tracking see the keys change.
    """
    if len(argv) > 5:
        raise _syntax(argv)
    count = parse_int(argv[2], errors.COUNT_MUST_BE_POSITIVE)
    size = parse_int(argv[4], errors.COUNT_MUST_BE_POSITIVE) if len(argv) == 5 else 0
    if count < 0 or size < 0:
        raise ReplyError(errors.COUNT_MUST_BE_POSITIVE)
    prefix = argv[3] if len(argv) >= 4 else b"key"
    db = ctx.db
    for j in range(count):
        key = b"%s:%d" % (prefix, j)
        if db.peek(key) is not None:
            continue
        value = b"value:%d" % j
        if size:
            value = value[:size].ljust(size, b"\0")
        db.set(key, value)
        ctx.modified(key, 0)  # signalModifiedKey; not a change the save rules count
    return OK


@command("debug|object", 3, _DEBUG_FLAGS, group="server", since="1.0.0",
         protected_by=_DEBUG_GATE)
def debug_object(ctx: Client, argv: list[bytes]) -> object:
    """DEBUG OBJECT key

    Redis's line about the value: its address, refcount, encoding, serialized length
    and LRU clock.
    """
    db = ctx.db
    value = db.peek(argv[2])
    if value is None:
        raise ReplyError(errors.NO_SUCH_KEY)
    encoding = object_encoding(ctx, [b"object", b"encoding", argv[2]])
    config = ctx.server.config
    # rdbSavedObjectLen: the value's RDB form (DUMP's payload less its type byte,
    # 2-byte version and 8-byte checksum).
    length = len(rdb.dump_value(value, bool(config["rdbcompression"]), config)) - 11
    lru = db.access.get(argv[2], db.lru_now)
    idle = idle_ms(lru, db.lru_now) // 1000
    return SimpleString(b"Value at:0x%x refcount:1 encoding:%s serializedlength:%d lru:%d"
                        b" lru_seconds_idle:%d" % (id(value), encoding, length, lru, idle))


@command("debug|set-active-expire", 3, _DEBUG_FLAGS, group="server", since="1.0.0",
         protected_by=_DEBUG_GATE)
def debug_set_active_expire(ctx: Client, argv: list[bytes]) -> object:
    """DEBUG SET-ACTIVE-EXPIRE <0 | 1>"""
    ctx.server.active_expire_enabled = bool(_atoi(argv[2]))
    return OK


@command("debug|change-repl-id", 2, _DEBUG_FLAGS, group="server", since="1.0.0",
         protected_by=_DEBUG_GATE)
def debug_change_repl_id(ctx: Client, argv: list[bytes]) -> object:
    """DEBUG CHANGE-REPL-ID

    A new replication ID, and no secondary one.
    """
    replication = ctx.server.replication
    if replication is not None:
        replication.change_ids()
    return OK


@command("debug|aof-flush-sleep", 3, _DEBUG_FLAGS, group="server", since="1.0.0",
         protected_by=_DEBUG_GATE)
def debug_aof_flush_sleep(ctx: Client, argv: list[bytes]) -> object:
    """DEBUG AOF-FLUSH-SLEEP microsec"""
    persistence = ctx.server.persistence
    if persistence is not None:
        persistence.set_aof_flush_sleep(_atoi(argv[2]))
    return OK


@command("debug|log", 3, _DEBUG_FLAGS, group="server", since="1.0.0",
         protected_by=_DEBUG_GATE)
def debug_log(ctx: Client, argv: list[bytes]) -> object:
    """DEBUG LOG message

    A line in the server's log (harnesses mark their steps with it).
    """
    log.warning("DEBUG LOG: %s", argv[2].decode("utf-8", "replace"))
    return OK


@command("debug|error", 3, _DEBUG_FLAGS, group="server", since="1.0.0",
         protected_by=_DEBUG_GATE)
def debug_error(ctx: Client, argv: list[bytes]) -> object:
    """DEBUG ERROR string

    That string as an error reply (client libraries' tests).
    """
    raise ReplyError(errors.debug_error(argv[2]))


@command("debug|quicklist-packed-threshold", 3, _DEBUG_FLAGS, group="server", since="1.0.0",
         protected_by=_DEBUG_GATE)
def debug_quicklist_packed_threshold(ctx: Client, argv: list[bytes]) -> object:
    """DEBUG QUICKLIST-PACKED-THRESHOLD size

    Checked as Redis does; rillet's lists have no plain nodes to tune.
    """
    try:
        size = parse_memory(argv[2].decode("utf-8", "replace"))
    except ConfigError:
        size = -1
    if not 0 <= size <= (1 << 32) - (1 << 20):
        raise ReplyError(errors.DEBUG_PACKED_THRESHOLD)
    return OK


def _switch(name: str, summary: str) -> None:
    """A DEBUG switch Redis reads with atoi, for machinery rillet does not have: OK."""

    def handler(ctx: Client, argv: list[bytes]) -> object:
        return OK

    handler.__doc__ = summary
    command(f"debug|{name}", 3, _DEBUG_FLAGS, group="server", since="1.0.0",
            protected_by=_DEBUG_GATE)(handler)


_switch("set-skip-checksum-validation", "DEBUG SET-SKIP-CHECKSUM-VALIDATION <0 | 1>")
_switch("dict-resizing", "DEBUG DICT-RESIZING <0 | 1>")


@command("debug|pause-cron", 3, _DEBUG_FLAGS, group="server", since="1.0.0",
         protected_by=_DEBUG_GATE)
def debug_pause_cron(ctx: Client, argv: list[bytes]) -> object:
    """DEBUG PAUSE-CRON <0 | 1>

    Stop the periodic work (expiry, idle clients...).
    """
    ctx.server.cron_paused = bool(_atoi(argv[2]))
    return OK


@command("debug|replybuffer", 4, _DEBUG_FLAGS, group="server", since="1.0.0",
         protected_by=_DEBUG_GATE)
def debug_replybuffer(ctx: Client, argv: list[bytes]) -> object:
    """DEBUG REPLYBUFFER <PEAK-RESET-TIME <NEVER | RESET | time> | RESIZING <0 | 1>>

    Checked as Redis does; rillet's reply buffers are not resized by a cron.
    """
    what = argv[2].lower()
    if what == b"peak-reset-time":
        if argv[3].lower() not in (b"never", b"reset"):
            parse_int(argv[3])
    elif what != b"resizing":
        raise _syntax(argv)
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
        b"AOF-FLUSH-SLEEP <microsec>",
        b"    Server will sleep before flushing the AOF, this is used for testing.",
        b"CHANGE-REPL-ID", b"    Change the replication IDs of the instance.",
        b"    Dangerous: should be used only for testing the replication subsystem.",
        b"ERROR <string>",
        b"    Return a Redis protocol error with <string> as message. Useful for clients",
        b"    unit tests to simulate Redis errors.",
        b"LOG <message>", b"    Write <message> to the server log.",
        b"OBJECT <key>", b"    Show low level info about `key` and associated value.",
        b"POPULATE <count> [<prefix>] [<size>]",
        b"    Create <count> string keys named key:<num>. If <prefix> is specified then",
        b"    it is used instead of the 'key' prefix. These are not propagated to",
        b"    replicas.",
        b"SET-ACTIVE-EXPIRE <0|1>",
        b"    Setting it to 0 disables expiring keys (and hash-fields) in background",
        b"    when they are not accessed (otherwise the Redis behavior). Setting it",
        b"    to 1 reenables back the default.",
        b"PAUSE-CRON <0|1>", b"    Stop periodic cron job processing.",
        b"PERSISTENCE-FAULT <aof|snapshot> <count> [ENOSPC|EIO] [WRITE|FSYNC|ANY] | CLEAR",
        b"    Make the next <count> file operations fail (rillet test hook).",
    )
