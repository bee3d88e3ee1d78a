"""The stream commands without consumer groups: XADD, XLEN, XRANGE, XREVRANGE, XDEL,
XTRIM, XREAD (BLOCK), XSETID, XINFO STREAM / HELP, and Redis 8.6's idempotent
production (XADD IDMP/IDMPAUTO, XCFGSET, XIDMPRECORD).

Replies and errors are Redis 8's, byte for byte (7.0 where 8 did not change
them). Every write hands a deterministic effect to AOF/replication: XADD's `*`
becomes the chosen ID, `~`/LIMIT trimming its exact `=` form.
"""

from __future__ import annotations

from rillet import errors
from rillet.commands import policies
from rillet.commands.args import INT64_MAX, Options, int_in_range, parse_int
from rillet.commands.stream_common import (
    apply_trim,
    effect_options,
    entries_reply,
    existing_stream,
    get_stream,
    idmp_auto_iid,
    idmp_for,
    idmp_of,
    idmp_settings,
    node_limits,
    parse_add_trim_args,
    parse_block_timeout,
    range_reply,
    streams_keys,
)
from rillet.commands.table import COMMANDS, command, help_reply
from rillet.compiled import compiled
from rillet.engine.groups import as_long_long
from rillet.engine.idmp import IDMP_DURATION_MAX_S, IDMP_MAXSIZE_MAX
from rillet.engine.ids import (
    MAX_ID,
    MIN_ID,
    StreamID,
    check_xadd_id_not_zero,
    decr_id,
    format_id,
    incr_id,
    parse_range_end,
    parse_range_start,
    parse_strict_id,
)
from rillet.engine.stream import Stream, default_trim_limit
from rillet.errors import ReplyError
from rillet.notify import STREAM
from rillet.resp.types import NULL_ARRAY, OK, Map
from rillet.state import KEEP_WAITING, Block, Client

_XADD_ARITY = errors.wrong_arity("xadd")
# streamAppendItem refuses an entry whose fields and values add up to more (1 GiB).
# Redis has created a missing key by then and leaves it empty; rillet leaves no trace.
STREAM_LISTPACK_MAX_SIZE = 1 << 30

# --- XADD -------------------------------------------------------------------------------

@command("xadd", -5, "write denyoom fast", keys=(1, 1, 1), key_flags="RW update", group="stream", since="5.0.0",
         key_notes="UPDATE instead of INSERT because of the optional trimming feature")
def xadd(ctx: Client, argv: list[bytes]) -> object:
    """XADD key [NOMKSTREAM] [KEEPREF | DELREF | ACKED] [IDMPAUTO producer-id | IDMP producer-id idempotent-id] [<MAXLEN | MINID> [= | ~] threshold [LIMIT count]] <* | id> field value [field value ...]

    IDMP/IDMPAUTO (Redis 8.6): a (producer, idempotent ID) pair seen within
    the stream's IDMP-DURATION, and among its producer's last IDMP-MAXSIZE,
    answers the ID it added then and changes nothing else (no entry, no
    trimming; iids-duplicates counts it). IDMPAUTO derives the iid from the
    field/value pairs, ignoring their order. A new pair is recorded after the
    entry is added and propagated as XADD with the ID plus XIDMPRECORD
    (Redis's internal command for exactly that), so replicas and the AOF keep
    deduplicating. The IDMP map lives beside the stream, not in its entries:
    trimming or deleting the entry does not forget the pair.
    """
    if argv[2] != b"*":
        return _xadd_other(ctx, argv)
    # The common case, `XADD key * field value ...`: nothing to parse, no
    # helper objects. _xadd_general gives the same replies and effects
    # (tests/server/test_fast_bodies.py holds both fast bodies to it, and
    # commands/_writes.pyx, this body compiled: keep in step).
    if not len(argv) & 1:
        raise ReplyError(_XADD_ARITY)
    key = argv[1]
    db = ctx.db
    server = ctx.server
    stream = db.get(key)  # a lookup: it records the access (LRU clock / LFU counter)
    created = stream is None
    if stream is None:
        stream = Stream(limits=node_limits(server))
    elif stream.__class__ is not Stream:
        raise ReplyError(errors.WRONGTYPE)
    sid = stream.next_id(None, None, server.clock.now_ms())
    fields = argv[3:]
    if sum(map(len, fields)) > STREAM_LISTPACK_MAX_SIZE:
        raise ReplyError(errors.STREAM_ELEMENTS_TOO_LARGE)
    if created:
        db.set(key, stream)
    stream.append(sid, fields)
    server.key_modified(db.index, key)
    if server.notify_flags:
        server.notify(STREAM, b"xadd", key, db.index)
    sid_text = b"%d-%d" % sid
    if server.effect_sinks:
        ctx.propagate([argv[0], key, sid_text, *fields])
    if stream.retention_ms:
        policies.trim_after_add(ctx, key, stream)
    return sid_text


def _xadd_other(ctx: Client, argv: list[bytes]) -> object:
    """XADD with anything but `*` third: the producer's MAXLEN form, else the general body."""
    third = argv[2]
    if len(third) == 6 and third.upper() == b"MAXLEN":
        return _xadd_maxlen(ctx, argv)
    return _xadd_general(ctx, argv)


def _xadd_maxlen(ctx: Client, argv: list[bytes]) -> object:
    """`XADD key MAXLEN [~|=] n * field value ...`, the producer's capped stream."""
    argc = len(argv)
    op = argv[3]
    if op == b"~" or op == b"=":
        if argc < 8 or argv[5] != b"*" or argc & 1:
            return _xadd_general(ctx, argv)
        approx = op == b"~"
        first_field = 6
        maxlen = parse_int(argv[4])
    else:
        if argc < 7 or argv[4] != b"*" or not argc & 1:
            return _xadd_general(ctx, argv)
        approx = False
        first_field = 5
        maxlen = parse_int(op)
    if maxlen < 0:
        raise ReplyError(errors.XADD_MAXLEN_NEGATIVE)
    key = argv[1]
    server = ctx.server
    stream = get_stream(ctx, key)
    created = stream is None
    if stream is None:
        stream = Stream(limits=node_limits(server))
    sid = stream.next_id(None, None, server.clock.now_ms())
    fields = argv[first_field:]
    if sum(map(len, fields)) > STREAM_LISTPACK_MAX_SIZE:
        raise ReplyError(errors.STREAM_ELEMENTS_TOO_LARGE)
    if created:
        ctx.db.set(key, stream)
    stream.append(sid, fields)
    trimmed = 0
    if stream.length > maxlen:
        limits = stream.limits
        limit = default_trim_limit(limits.node_max_entries) if approx else 0
        trimmed = stream.trim_maxlen(maxlen, approx, limit)  # KEEPREF: the group PELs keep their refs
    server.key_modified(ctx.db.index, key)
    ctx.notify(STREAM, b"xadd", key)
    if trimmed:
        ctx.notify(STREAM, b"xtrim", key)
    sid_text = b"%d-%d" % sid
    if server.effect_sinks:
        exact = stream.length if approx else maxlen  # what exact_trim_args says
        ctx.propagate([argv[0], key, b"MAXLEN", b"=", b"%d" % exact, sid_text, *fields])
    if stream.retention_ms:
        policies.trim_after_add(ctx, key, stream)
    return sid_text


def _xadd_general(ctx: Client, argv: list[bytes]) -> object:
    args = parse_add_trim_args(argv, xadd=True)
    field_pos = args.id_pos + 1
    nfields = len(argv) - field_pos
    if nfields < 2 or nfields & 1:
        raise ReplyError(_XADD_ARITY)
    if args.id_seq is not None:
        check_xadd_id_not_zero(args.id_ms, args.id_seq)
    key = argv[1]
    stream = get_stream(ctx, key)
    if stream is None and args.nomkstream:
        return None
    fields = argv[field_pos:]
    server = ctx.server
    now_ms = server.clock.now_ms()
    pid = args.idmp_pid
    iid = b""
    if pid is not None:
        iid = args.idmp_iid if args.idmp_iid is not None else idmp_auto_iid(fields)
        if stream is not None:
            idmp = idmp_of(server, stream)
            if idmp is not None:
                duration_s, _ = idmp_settings(server, idmp)
                seen = idmp.lookup(pid, iid, now_ms, duration_s)
                if seen is not None:
                    idmp.iids_duplicates += 1
                    return format_id(seen)
    created = stream is None
    if stream is None:
        stream = Stream(limits=node_limits(server))
    sid = stream.next_id(args.id_ms, args.id_seq, now_ms)
    if sum(map(len, fields)) > STREAM_LISTPACK_MAX_SIZE:
        raise ReplyError(errors.STREAM_ELEMENTS_TOO_LARGE)
    if created:
        ctx.db.set(key, stream)
    stream.append(sid, fields)
    trimmed = 0
    if args.trim is not None:
        trimmed = apply_trim(stream, args.trim, args.policy or b"KEEPREF")
    sid_text = format_id(sid)
    if pid is not None:
        idmp = idmp_for(server, stream)
        duration_s, maxsize = idmp_settings(server, idmp)
        idmp.record(pid, iid, sid, now_ms, duration_s, maxsize)
    ctx.modified(key)
    ctx.notify(STREAM, b"xadd", key)
    if trimmed:
        ctx.notify(STREAM, b"xtrim", key)
    if server.effect_sinks:
        ctx.propagate([argv[0], key, *effect_options(args, stream), sid_text, *fields])
        if pid is not None:
            ctx.propagate([b"XIDMPRECORD", key, pid, iid, sid_text])
    if stream.retention_ms:
        policies.trim_after_add(ctx, key, stream)
    return sid_text


# `xadd`'s `*` and `MAXLEN [~|=] n *` bodies compiled (commands/_writes.pyx, see
# rillet/compiled.py); the other forms, or all without it, are the Python bodies above.
_writes = compiled("rillet.commands._writes")
if _writes is not None:
    _writes.bind_xadd(_xadd_other, _xadd_general)
    COMMANDS["xadd"].handler = _writes.xadd


# --- XLEN / XRANGE / XREVRANGE -------------------------------------------------------------

@command("xlen", 2, "readonly fast", keys=(1, 1, 1), key_flags="RO", group="stream", since="5.0.0")
def xlen(ctx: Client, argv: list[bytes]) -> object:
    """XLEN key"""
    stream = get_stream(ctx, argv[1])
    return 0 if stream is None else stream.length


def _xrange(ctx: Client, argv: list[bytes], reverse: bool) -> object:
    # The start bound is parsed first: for XREVRANGE that is the second ID.
    start = parse_range_start(argv[3] if reverse else argv[2])
    end = parse_range_end(argv[2] if reverse else argv[3])
    count = -1
    argc = len(argv)
    j = 4
    while j < argc:
        if j + 1 < argc and argv[j].upper() == b"COUNT":
            count = max(parse_int(argv[j + 1]), 0)
            j += 2
        else:
            raise ReplyError(errors.SYNTAX)
    stream = get_stream(ctx, argv[1])
    if stream is None:
        return []
    if count == 0:
        return NULL_ARRAY
    return range_reply(stream, start, end, count if count > 0 else None, reverse)


@command("xrange", -4, "readonly", keys=(1, 1, 1), key_flags="RO access", group="stream", since="5.0.0")
def xrange(ctx: Client, argv: list[bytes]) -> object:
    """XRANGE key start end [COUNT count]

    `-`/`+` are the extremes, an incomplete ID `ms` means `ms-0` as a start
    and `ms-18446744073709551615` as an end, `(id` excludes the bound.
    COUNT 0 or negative answers a null array, as Redis does.
    """
    return _xrange(ctx, argv, False)


@command("xrevrange", -4, "readonly", keys=(1, 1, 1), key_flags="RO access", group="stream", since="5.0.0")
def xrevrange(ctx: Client, argv: list[bytes]) -> object:
    """XREVRANGE key end start [COUNT count]"""
    return _xrange(ctx, argv, True)


# --- XDEL / XTRIM -----------------------------------------------------------------------------

@command("xdel", -3, "write fast", keys=(1, 1, 1), group="stream", since="5.0.0",
         key_flags="RW delete")
def xdel(ctx: Client, argv: list[bytes]) -> object:
    """XDEL key id [id ...]

    A missing key answers 0 without looking at the IDs; otherwise every ID is
    checked before anything is deleted, so a bad one deletes nothing.
    """
    key = argv[1]
    stream = get_stream(ctx, key)
    if stream is None:
        return 0
    ids = [parse_strict_id(arg) for arg in argv[2:]]
    deleted = 0
    for sid in ids:
        if stream.delete(sid):
            deleted += 1
    if deleted:
        ctx.modified(key, deleted)
        ctx.notify(STREAM, b"xdel", key)
    return deleted


@command("xtrim", -4, "write", keys=(1, 1, 1), group="stream", since="5.0.0",
         key_flags="RW delete")
def xtrim(ctx: Client, argv: list[bytes]) -> object:
    """XTRIM key <MAXLEN | MINID> [= | ~] threshold [LIMIT count] [KEEPREF | DELREF | ACKED]

    With `~` only whole nodes go (at most LIMIT entries, 100 nodes' worth by
    default). The effect is the exact form, XTRIM key MAXLEN|MINID = <result>,
    and only when something was removed. DELREF/ACKED with `~` trim the way
    Redis does since the fix of redis#14623 (8.2.3 itself trims nothing there).
    """
    args = parse_add_trim_args(argv, xadd=False)
    key = argv[1]
    stream = get_stream(ctx, key)
    if stream is None:
        return 0
    deleted = apply_trim(stream, args.trim, args.policy or b"KEEPREF")  # type: ignore[arg-type]  # XTRIM has one
    if deleted:
        ctx.modified(key, deleted)
        ctx.notify(STREAM, b"xtrim", key)
        ctx.propagate([argv[0], key, *effect_options(args, stream)])
    return deleted


# --- XREAD ------------------------------------------------------------------------------------

@command("xread", -4, "readonly blocking movablekeys", keys=(0, 0, 0), group="stream",
         since="5.0.0", find_keys=streams_keys(1), keyword_keys=(("RO access", "STREAMS", 1, -1, 2),))
def xread(ctx: Client, argv: list[bytes]) -> object:
    """XREAD [COUNT count] [BLOCK milliseconds] STREAMS key [key ...] id [id ...]

    `$` is the stream's last ID, `+` (7.4+) its last entry. With BLOCK and
    nothing to read, the client is parked with `$` pinned to the IDs it
    meant; `+` stays as is, so when woken it still reads the last entry only
    (what Redis 8.2 does). A woken client is served only if a stream among
    its keys has new entries; a key now holding another type keeps it waiting
    unless another key has data, then the re-run answers WRONGTYPE (Redis
    re-runs the command only for keys that hold a stream).
    """
    argc = len(argv)
    count = 0
    timeout_ms = -1
    streams_at = 0
    i = 1
    while i < argc:
        more = argc - 1 - i
        word = argv[i].upper()
        if word == b"BLOCK" and more:
            i += 1
            timeout_ms = parse_block_timeout(argv[i], ctx.server.clock.now_ms())
        elif word == b"COUNT" and more:
            i += 1
            count = max(parse_int(argv[i]), 0)
        elif word == b"STREAMS" and more:
            streams_at = i + 1
            if (argc - streams_at) % 2:
                raise ReplyError(errors.XREAD_UNBALANCED)
            break
        elif word == b"GROUP" and more >= 2:
            raise ReplyError(errors.XREAD_GROUP_OPTION)
        elif word == b"NOACK":
            raise ReplyError(errors.XREAD_NOACK_OPTION)
        else:
            raise ReplyError(errors.SYNTAX)
        i += 1
    if not streams_at:
        raise ReplyError(errors.SYNTAX)
    nkeys = (argc - streams_at) // 2
    retry = ctx.blocked_retry
    db = ctx.db
    streams: list[Stream | None] = []
    after: list[StreamID] = []
    wrongtype = False
    for n in range(nkeys):
        value = db.get(argv[streams_at + n])
        if value is not None and value.__class__ is not Stream:
            if not retry:
                raise ReplyError(errors.WRONGTYPE)
            wrongtype = True
            value = None
        stream: Stream | None = value
        streams.append(stream)
        arg = argv[streams_at + nkeys + n]
        if arg == b"$":
            after.append(stream.last_id if stream is not None else MIN_ID)
        elif arg == b"+":
            last = stream.last_valid_id() if stream is not None and stream.length else MIN_ID
            after.append(decr_id(last) or MIN_ID)
        elif arg == b">":
            raise ReplyError(errors.XREAD_GT_ID)
        else:
            after.append(parse_strict_id(arg))
    results = []
    limit = count or None
    for n, stream in enumerate(streams):
        if stream is None or not stream.length or stream.last_id <= after[n]:
            continue
        start = incr_id(after[n])
        if start is None:
            continue
        entries = range_reply(stream, start, MAX_ID, limit)
        if entries:
            results.append((argv[streams_at + n], entries))
    if results:
        if wrongtype:
            raise ReplyError(errors.WRONGTYPE)
        if ctx.resp3:
            return Map(results)
        return [[key, entries] for key, entries in results]
    if retry:
        return KEEP_WAITING
    if timeout_ms < 0:
        return NULL_ARRAY
    pinned = list(argv)
    for n in range(nkeys):
        if argv[streams_at + nkeys + n] == b"$":
            pinned[streams_at + nkeys + n] = format_id(after[n])
    return Block(list(argv[streams_at:streams_at + nkeys]), timeout_ms, pinned, NULL_ARRAY)


# --- XSETID -----------------------------------------------------------------------------------

@command("xsetid", -3, "write denyoom fast", keys=(1, 1, 1), key_flags="RW update", group="stream", since="5.0.0")
def xsetid(ctx: Client, argv: list[bytes]) -> object:
    """XSETID key last-id [ENTRIESADDED entries-added] [MAXDELETEDID max-deleted-id]

    Checks in Redis 8.2's order: the arguments, then the key, then the new
    last ID against the current max-deleted-entry-id (8.x), then against the
    last entry, then ENTRIESADDED against the length.
    """
    last_id = parse_strict_id(argv[2])

    def max_deleted_id(raw: bytes) -> StreamID:
        given = parse_strict_id(raw)
        if last_id < given:
            raise ReplyError(errors.XSETID_SMALLER_THAN_GIVEN_MAXDEL)
        return given

    options = Options({
        b"ENTRIESADDED": (1, int_in_range(0, INT64_MAX, errors.XSETID_ENTRIES_ADDED_NEGATIVE)),
        b"MAXDELETEDID": (1, max_deleted_id),
    }).parse(argv, 3)
    entries_added: int | None = options.get(b"ENTRIESADDED")
    max_deleted: StreamID | None = options.get(b"MAXDELETEDID")
    key = argv[1]
    stream = existing_stream(ctx, key)
    if last_id < stream.max_deleted_id:
        raise ReplyError(errors.XSETID_SMALLER_THAN_MAXDEL)
    if stream.length:
        if last_id < stream.last_valid_id():
            raise ReplyError(errors.XSETID_SMALLER_THAN_TOP)
        if entries_added is not None and entries_added < stream.length:
            raise ReplyError(errors.XSETID_ENTRIES_ADDED_TOO_SMALL)
    stream.set_id(last_id, entries_added, max_deleted)
    ctx.modified(key)
    ctx.notify(STREAM, b"xsetid", key)
    return OK


# --- XINFO STREAM / HELP ----------------------------------------------------------------------

def _idmp_fields(ctx: Client, stream: Stream) -> list[tuple[bytes, int]]:
    """The six IDMP fields XINFO STREAM has reported since Redis 8.6."""
    server = ctx.server
    idmp = idmp_of(server, stream)
    if idmp is None:
        config = server.config
        return [(b"idmp-duration", config["stream-idmp-duration"]),
                (b"idmp-maxsize", config["stream-idmp-maxsize"]),
                (b"pids-tracked", 0), (b"iids-tracked", 0), (b"iids-added", 0),
                (b"iids-duplicates", 0)]
    duration_s, maxsize = idmp_settings(server, idmp)
    idmp.expire_all(server.clock.now_ms(), duration_s)
    return [(b"idmp-duration", duration_s), (b"idmp-maxsize", maxsize),
            (b"pids-tracked", len(idmp.producers)), (b"iids-tracked", idmp.iids_tracked),
            (b"iids-added", idmp.iids_added), (b"iids-duplicates", idmp.iids_duplicates)]


def _full_groups(stream: Stream, count: int, now_ms: int) -> list:
    if not stream.groups:
        return []
    from rillet.commands import groups as group_commands

    render = getattr(group_commands, "xinfo_full_groups", None)
    return [] if render is None else render(stream, count, now_ms)


@command("xinfo|stream", -3, "readonly", keys=(2, 2, 1), key_flags="RO access", group="stream", since="5.0.0")
def xinfo_stream(ctx: Client, argv: list[bytes]) -> object:
    """XINFO STREAM key [FULL [COUNT count]]

    The reply is Redis 8.6's: after recorded-first-entry-id come the IDMP
    fields (idmp-duration, idmp-maxsize, pids-tracked, iids-tracked,
    iids-added, iids-duplicates), present for every stream. FULL lists at
    most COUNT entries (default 10, 0 = all, negative = 10) and the groups
    with at most COUNT PEL entries each.
    """
    argc = len(argv)
    # Redis's xinfoCommand looks the key up before it reads the options.
    stream = existing_stream(ctx, argv[2])
    full = argc >= 4 and argv[3].upper() == b"FULL"
    if not (argc == 3 or (argc == 4 and full)
            or (argc == 6 and full and argv[4].upper() == b"COUNT")):
        raise ReplyError(errors.subcommand_syntax(argv[1], "xinfo"))
    count = 10
    if argc == 6:
        count = parse_int(argv[5])
        if count < 0:
            count = 10
    fields: list[tuple[bytes, object]] = [
        (b"length", stream.length),
        (b"radix-tree-keys", stream.radix_tree_keys),
        (b"radix-tree-nodes", stream.radix_tree_nodes),
        (b"last-generated-id", format_id(stream.last_id)),
        (b"max-deleted-entry-id", format_id(stream.max_deleted_id)),
        (b"entries-added", as_long_long(stream.entries_added)),
        (b"recorded-first-entry-id", format_id(stream.first_id)),
    ]
    fields += _idmp_fields(ctx, stream)
    if stream.retention_ms:
        fields.append((b"retention-ms", stream.retention_ms))
    if not full:
        first = stream.first_entry()
        last = stream.last_entry()
        fields += [
            (b"groups", len(stream.groups)),
            (b"first-entry", None if first is None else [format_id(first[0]), first[1]]),
            (b"last-entry", None if last is None else [format_id(last[0]), last[1]]),
        ]
        return Map(fields)
    entries = stream.range(MIN_ID, MAX_ID, count or None)
    fields += [
        (b"entries", entries_reply(entries)),
        (b"groups", _full_groups(stream, count, ctx.clock.now_ms())),
    ]
    return Map(fields)


_XINFO_HELP = help_reply(
    "XINFO",
    b"CONSUMERS <key> <groupname>",
    b"    Show consumers of <groupname>.",
    b"GROUPS <key>",
    b"    Show the stream consumer groups.",
    b"STREAM <key> [FULL [COUNT <count>]",
    b"    Show information about the stream.",
)


@command("xinfo|help", 2, "loading stale", group="stream", since="5.0.0")
def xinfo_help(ctx: Client, argv: list[bytes]) -> object:
    """XINFO HELP"""
    return list(_XINFO_HELP)


# --- XCFGSET / XIDMPRECORD (Redis 8.6) -------------------------------------------------------------

_XCFGSET_OPTIONS = Options({
    b"IDMP-DURATION": (1, int_in_range(1, IDMP_DURATION_MAX_S, errors.XCFGSET_DURATION_RANGE)),
    b"IDMP-MAXSIZE": (1, int_in_range(1, IDMP_MAXSIZE_MAX, errors.XCFGSET_MAXSIZE_RANGE)),
})


@command("xcfgset", -2, "write fast", keys=(1, 1, 1), group="stream", since="8.6.0")
def xcfgset(ctx: Client, argv: list[bytes]) -> object:
    """XCFGSET key [IDMP-DURATION duration] [IDMP-MAXSIZE maxsize]

    Sets the stream's IDMP retention (1-86400 s) and per-producer capacity
    (1-10000). A value that differs from the current one clears every
    producer's history (the lifetime counters stay); repeating the current
    values keeps it. The stream must exist. Options repeat, the last wins.
    """
    argc = len(argv)
    if argc < 3:
        raise ReplyError(errors.XCFGSET_NO_PARAMETER)
    options = _XCFGSET_OPTIONS.parse(argv, 2)
    duration_s: int | None = options.get(b"IDMP-DURATION")
    maxsize: int | None = options.get(b"IDMP-MAXSIZE")
    key = argv[1]
    stream = existing_stream(ctx, key)
    server = ctx.server
    idmp = idmp_for(server, stream)
    old_duration, old_maxsize = idmp_settings(server, idmp)
    new_duration = old_duration if duration_s is None else duration_s
    new_maxsize = old_maxsize if maxsize is None else maxsize
    if (new_duration, new_maxsize) != (old_duration, old_maxsize):
        idmp.clear()
    idmp.duration_s, idmp.maxsize = new_duration, new_maxsize
    ctx.modified(key)
    return OK


@command("xidmprecord", 5, "write denyoom fast", keys=(1, 1, 1), group="stream", since="8.6.2")
def xidmprecord(ctx: Client, argv: list[bytes]) -> object:
    """XIDMPRECORD key pid iid stream-id

    Internal (Redis 8.6.2+): records that (pid, iid) produced `stream-id`, as
    XADD IDMP's effect does for replicas and the AOF. The iid's age counts
    from the ID's milliseconds, like the original record's. Refused, as
    redis.io's page lists: no such key, not a stream, an empty pid or iid, an
    entry that does not exist (not checked while loading: an AOF rewrite keeps
    the records of deleted entries), a pair recorded for another ID; the same
    pair and ID again is OK and changes nothing.
    """
    key, pid, iid = argv[1], argv[2], argv[3]
    sid = parse_strict_id(argv[4])
    if not pid:
        raise ReplyError(errors.IDMP_EMPTY_PID)
    if not iid:
        raise ReplyError(errors.IDMP_EMPTY_IID)
    stream = existing_stream(ctx, key)
    server = ctx.server
    if not server.loading and stream.get(sid) is None:
        raise ReplyError(errors.XIDMPRECORD_NO_ENTRY)
    idmp = idmp_for(server, stream)
    duration_s, maxsize = idmp_settings(server, idmp)
    now = server.clock.now_ms()
    recorded = idmp.lookup(pid, iid, now, duration_s)
    if recorded is not None:
        if recorded != sid:
            raise ReplyError(errors.XIDMPRECORD_OTHER_ID)
        return OK
    idmp.record(pid, iid, sid, now, duration_s, maxsize)
    ctx.modified(key)
    return OK

