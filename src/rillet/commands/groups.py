"""Consumer-group commands: XGROUP, XREADGROUP, XACK, XPENDING, XCLAIM, XAUTOCLAIM,
XINFO GROUPS/CONSUMERS, XDELEX, XACKDEL and XNACK.

Each handler parses and validates in Redis's order (t_stream.c), then applies the
engine (engine/groups.py) and emits the deterministic effects Redis propagates:
deliveries and claims as `XCLAIM ... TIME t RETRYCOUNT n FORCE JUSTID LASTID id`,
group moves as `XGROUP SETID ... ENTRIESREAD n`. Like Redis, none of these
commands touches WATCHed keys, except where entries leave the stream.
"""

from __future__ import annotations

from rillet import errors
from rillet.commands import policies
from rillet.commands.args import INT64_MAX, parse_int
from rillet.commands.stream_common import (
    ENCODES_FROM_NODES,
    _encode_range,
    existing_stream,
    get_stream,
    new_stream,
    parse_block_timeout,
    range_reply,
    streams_keys,
)
from rillet.commands.table import COMMANDS, command, help_reply
from rillet.compiled import compiled
from rillet.engine import groups as engine
from rillet.engine.groups import ConsumerGroup
from rillet.engine.ids import (
    MAX_ID,
    MIN_ID,
    StreamID,
    format_id,
    parse_id,
    parse_range_end,
    parse_range_start,
    parse_strict_id,
)
from rillet.engine.pel import MAX_ID_KEY, id_key
from rillet.engine.stream import Stream
from rillet.errors import ReplyError
from rillet.notify import STREAM
from rillet.resp.types import NULL_ARRAY, OK, Map
from rillet.state import KEEP_WAITING, Block, Client

_XCLAIM = b"XCLAIM"
_ZERO = b"0"
_TIME = b"TIME"
_RETRYCOUNT = b"RETRYCOUNT"
_FORCE = b"FORCE"
_JUSTID = b"JUSTID"
_LASTID = b"LASTID"
_GT = b">"


def _nogroup(key: bytes, group: bytes) -> ReplyError:
    return ReplyError(errors.NOGROUP_KEY_OR_GROUP.format(errors.c_text(key), errors.c_text(group)))


def _stream_and_group(ctx: Client, key: bytes, group_name: bytes) -> tuple[Stream, ConsumerGroup]:
    """The XCLAIM/XPENDING/XNACK lookup: WRONGTYPE, then NOGROUP for a missing key or group."""
    stream = get_stream(ctx, key)
    group = stream.groups.get(group_name) if stream is not None else None
    if group is None or stream is None:
        raise _nogroup(key, group_name)
    return stream, group


def _wake(ctx: Client, key: bytes) -> None:
    """signalKeyAsReady without signalModifiedKey: blocked readers re-check, WATCH is untouched."""
    state = ctx.server
    slot = (ctx.db.index, key)
    if slot in state.blocking:
        state.ready_keys[slot] = None


def _xclaim_effect(
    key: bytes, group: bytes, consumer: bytes, sid: bytes, time_ms: int, count: int, last_id: bytes
) -> list[bytes]:
    return [_XCLAIM, key, group, consumer, _ZERO, sid, _TIME, b"%d" % time_ms,
            _RETRYCOUNT, b"%d" % count, _FORCE, _JUSTID, _LASTID, last_id]


def _setid_effect(key: bytes, group: ConsumerGroup, group_name: bytes) -> list[bytes]:
    entries_read = -1 if group.entries_read is None else group.entries_read
    return [b"XGROUP", b"SETID", key, group_name, format_id(group.last_id),
            b"ENTRIESREAD", b"%d" % entries_read]


def _createconsumer_effect(key: bytes, group_name: bytes, consumer: bytes) -> list[bytes]:
    return [b"XGROUP", b"CREATECONSUMER", key, group_name, consumer]


def _propagate_dropped(ctx: Client, key: bytes, group: ConsumerGroup, group_name: bytes,
                       dropped: list) -> None:
    """Effects of PEL entries removed because their stream entry is gone (Redis 7+/8.8).

    Replayed, an XCLAIM of a missing entry removes it from the PEL; an entry
    released by XNACK has no owner to name, so Redis propagates XACK instead.
    """
    last = format_id(group.last_id)
    for entry in dropped:
        sid = format_id(entry.id_pair)
        owner = entry.owner
        if owner is None:
            ctx.propagate([b"XACK", key, group_name, sid])
        else:
            ctx.propagate(_xclaim_effect(key, group_name, owner, sid,
                                         entry.delivery_time_ms, entry.delivery_count, last))


# --- XGROUP -----------------------------------------------------------------------------

def _xgroup_prepare(ctx: Client, argv: list[bytes]) -> tuple[Stream | None, ConsumerGroup | None, bool, int | None]:
    """xgroupCommand's common part: options, key, group; in Redis's error order."""
    sub = argv[1].upper()
    create = sub == b"CREATE"
    setid = sub == b"SETID"
    mkstream = False
    entries_read: int | None = None
    i = 5
    n = len(argv)
    while i < n:
        word = argv[i].upper()
        if create and word == b"MKSTREAM":
            mkstream = True
            i += 1
        elif (create or setid) and word == b"ENTRIESREAD" and i + 1 < n:
            value = parse_int(argv[i + 1])
            if value < 0 and value != -1:
                raise ReplyError(errors.ENTRIESREAD_INVALID)
            entries_read = None if value == -1 else value
            i += 2
        else:
            raise ReplyError(errors.subcommand_syntax(argv[1], "xgroup"))
    key, group_name = argv[2], argv[3]
    stream = get_stream(ctx, key)
    group = None
    if not mkstream:
        if stream is None:
            raise ReplyError(errors.XGROUP_NO_KEY)
        group = stream.groups.get(group_name)
        if group is None and sub in (b"SETID", b"CREATECONSUMER", b"DELCONSUMER"):
            raise ReplyError(errors.NOGROUP_FOR_KEY.format(errors.c_text(group_name), errors.c_text(key)))
    elif stream is not None:
        group = stream.groups.get(group_name)
    return stream, group, mkstream, entries_read


def _clamp_entries_read(stream: Stream, entries_read: int | None) -> int | None:
    # Redis 8 caps ENTRIESREAD at the stream's entries-added (7.0 did not).
    if entries_read is not None and entries_read > stream.entries_added:
        return stream.entries_added
    return entries_read


@command("xgroup|create", -5, "write denyoom", keys=(2, 2, 1), group="stream", since="5.0.0",
         key_flags="RW insert")
def xgroup_create(ctx: Client, argv: list[bytes]) -> object:
    """XGROUP CREATE key group <id | $> [MKSTREAM] [ENTRIESREAD entries-read]

    Creates a consumer group. With `$` the effect names the ID it resolved to
    and the group's entries-read (-1: unknown), so replay needs no stream state.
    """
    stream, _, mkstream, entries_read = _xgroup_prepare(ctx, argv)
    if len(argv) > 8:
        raise ReplyError(errors.subcommand_syntax(argv[1], "xgroup"))
    key, group_name, raw_id = argv[2], argv[3], argv[4]
    dollar = raw_id == b"$"
    if dollar:
        last_id = stream.last_id if stream is not None else MIN_ID
    else:
        last_id = parse_strict_id(raw_id)
    if stream is None:
        stream = new_stream(ctx, key)
        ctx.modified(key, 0)  # a new key: WATCH sees it, as Redis's keyModified(..., 1)
    entries_read = _clamp_entries_read(stream, entries_read)
    if engine.create_group(stream, group_name, last_id, entries_read) is None:
        raise ReplyError(errors.BUSYGROUP)
    ctx.changed(1)
    ctx.notify(STREAM, b"xgroup-create", key)
    if dollar and ctx.server.effect_sinks:
        effect = [b"XGROUP", b"CREATE", key, group_name, format_id(last_id)]
        if mkstream:
            effect.append(b"MKSTREAM")
        ctx.propagate(_with_entries_read(effect, entries_read))
    return OK


def _with_entries_read(effect: list[bytes], entries_read: int | None) -> list[bytes]:
    effect += [b"ENTRIESREAD", b"-1" if entries_read is None else b"%d" % entries_read]
    return effect


@command("xgroup|setid", -5, "write", keys=(2, 2, 1), key_flags="RW update", group="stream", since="5.0.0")
def xgroup_setid(ctx: Client, argv: list[bytes]) -> object:
    """XGROUP SETID key group <id | $> [ENTRIESREAD entries-read]

    Moves the group's last-delivered ID; `-` and `+` are accepted, as in Redis.
    """
    stream, group, _, entries_read = _xgroup_prepare(ctx, argv)
    if len(argv) not in (5, 7):
        raise ReplyError(errors.subcommand_syntax(argv[1], "xgroup"))
    assert stream is not None and group is not None
    raw_id = argv[4]
    dollar = raw_id == b"$"
    last_id = stream.last_id if dollar else parse_id(raw_id)
    entries_read = _clamp_entries_read(stream, entries_read)
    group.set_id(last_id, entries_read)
    ctx.changed(1)
    ctx.notify(STREAM, b"xgroup-setid", argv[2])
    if dollar and ctx.server.effect_sinks:
        effect = [b"XGROUP", b"SETID", argv[2], argv[3], format_id(last_id)]
        ctx.propagate(_with_entries_read(effect, entries_read))
    return OK


@command("xgroup|destroy", 4, "write", keys=(2, 2, 1), group="stream", since="5.0.0",
         key_flags="RW delete")
def xgroup_destroy(ctx: Client, argv: list[bytes]) -> object:
    """XGROUP DESTROY key group

    Blocked XREADGROUP clients of the group wake up and get NOGROUP.
    """
    stream, group, _, _ = _xgroup_prepare(ctx, argv)
    if group is None:
        return 0
    engine.destroy_group(stream, argv[3])
    ctx.changed(1)
    ctx.notify(STREAM, b"xgroup-destroy", argv[2])
    _wake(ctx, argv[2])
    return 1


@command("xgroup|createconsumer", 5, "write denyoom", keys=(2, 2, 1), group="stream",
         since="6.2.0", key_flags="RW insert")
def xgroup_createconsumer(ctx: Client, argv: list[bytes]) -> object:
    """XGROUP CREATECONSUMER key group consumer"""
    _, group, _, _ = _xgroup_prepare(ctx, argv)
    assert group is not None
    if group.create_consumer(argv[4], ctx.clock.now_ms()) is None:
        return 0
    ctx.changed(1)
    ctx.notify(STREAM, b"xgroup-createconsumer", argv[2])
    return 1


@command("xgroup|delconsumer", 5, "write", keys=(2, 2, 1), group="stream", since="5.0.0",
         key_flags="RW delete")
def xgroup_delconsumer(ctx: Client, argv: list[bytes]) -> object:
    """XGROUP DELCONSUMER key group consumer

    Returns how many entries the consumer had pending; they leave the group PEL.
    """
    _, group, _, _ = _xgroup_prepare(ctx, argv)
    assert group is not None
    pending = group.delete_consumer(argv[4])
    if pending is None:
        return 0
    ctx.changed(1)
    ctx.notify(STREAM, b"xgroup-delconsumer", argv[2])
    return pending


_XGROUP_HELP = help_reply(
    "XGROUP",
    b"CREATE <key> <groupname> <id|$> [option]",
    b"    Create a new consumer group. Options are:",
    b"    * MKSTREAM",
    b"      Create the empty stream if it does not exist.",
    b"    * ENTRIESREAD entries_read",
    b"      Set the group's entries_read counter (internal use).",
    b"CREATECONSUMER <key> <groupname> <consumer>",
    b"    Create a new consumer in the specified group.",
    b"DELCONSUMER <key> <groupname> <consumer>",
    b"    Remove the specified consumer.",
    b"DESTROY <key> <groupname>",
    b"    Remove the specified group.",
    b"SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
    b"    Set the current group ID and entries_read counter.",
)


@command("xgroup|help", 2, "loading stale", group="stream", since="5.0.0")
def xgroup_help(ctx: Client, argv: list[bytes]) -> object:
    """XGROUP HELP"""
    return _XGROUP_HELP


# --- XREADGROUP --------------------------------------------------------------------------

@command("xreadgroup", -7, "write blocking movablekeys", group="stream", since="5.0.0",
         find_keys=streams_keys(4), keyword_keys=(("RO access", "STREAMS", 4, -1, 2),))
def xreadgroup(ctx: Client, argv: list[bytes]) -> object:
    """XREADGROUP GROUP group consumer [COUNT count] [BLOCK milliseconds] [CLAIM min-idle-time] [NOACK] STREAMS key [key ...] id [id ...]

    `>` delivers new entries (after idle pending ones with CLAIM, Redis 8.4);
    any other ID replays the consumer's own PEL after it, deleted entries with
    a nil body. The delivery is propagated as XCLAIM per entry (LASTID = that
    entry, as 8.2.3 does) plus XGROUP SETID; a consumer created on the way as
    XGROUP CREATECONSUMER (Redis does that only with NOACK; without it a
    consumer that read nothing would be missing on replicas). Unlike Redis,
    history re-deliveries are propagated too, so replicas keep the same
    delivery counts. Deleted entries met by CLAIM leave the PEL, as in
    XAUTOCLAIM (Redis 8.4 skips them), and their removal is propagated.
    """
    n = len(argv)
    count = 0
    timeout_ms = -1
    claim_ms = -1
    noack = False
    group_name = consumer_name = None
    streams_at = 0
    now = ctx.clock.now_ms()
    i = 1
    while i < n:
        word = argv[i].upper()
        more = n - i - 1
        if word == b"STREAMS" and more:
            streams_at = i + 1
            break
        if word == b"GROUP" and more >= 2:
            group_name, consumer_name = argv[i + 1], argv[i + 2]
            i += 3
        elif word == b"COUNT" and more:
            count = parse_int(argv[i + 1])
            if count < 0:
                count = 0
            i += 2
        elif word == b"BLOCK" and more:
            timeout_ms = parse_block_timeout(argv[i + 1], now)
            i += 2
        elif word == b"CLAIM" and more:
            claim_ms = parse_int(argv[i + 1], errors.CLAIM_MIN_IDLE_NOT_INTEGER)
            if claim_ms < 0:
                raise ReplyError(errors.CLAIM_MIN_IDLE_NEGATIVE)
            i += 2
        elif word == b"NOACK":
            noack = True
            i += 1
        else:
            raise ReplyError(errors.SYNTAX)
    if not streams_at:
        raise ReplyError(errors.SYNTAX)
    if (n - streams_at) % 2:
        raise ReplyError(errors.XREADGROUP_UNBALANCED)
    if group_name is None:
        raise ReplyError(errors.XREADGROUP_MISSING_GROUP)
    assert consumer_name is not None
    half = (n - streams_at) // 2
    db = ctx.db
    targets = []
    for j in range(streams_at, streams_at + half):
        key = argv[j]
        raw = argv[j + half]
        stream = db.get(key)
        if stream is not None and stream.__class__ is not Stream:
            raise ReplyError(errors.WRONGTYPE)
        group = stream.groups.get(group_name) if stream is not None else None
        if group is None or stream is None:
            raise ReplyError(errors.NOGROUP_XREADGROUP.format(errors.c_text(key), errors.c_text(group_name)))
        if group.dead_letter_key is not None:
            policies.check_target(ctx, group)
        if raw == _GT:
            after = None
        elif raw == b"$" or raw == b"+":
            raise ReplyError(errors.XREADGROUP_SPECIAL_ID.format(raw.decode()))
        else:
            after = parse_strict_id(raw)
            if after == MAX_ID:
                after = None  # Redis encodes '>' as the maximum ID internally
        targets.append((key, stream, group, after))

    sinks = bool(ctx.server.effect_sinks)
    served = []
    for key, stream, group, after in targets:
        if after is not None:
            claim_ms = -1  # as in Redis, a history read turns CLAIM off from here on
            entries = _read_history(ctx, key, stream, group, group_name, consumer_name, after,
                                    count, now, sinks)
            served.append((key, entries))
            continue
        entries = _read_new(ctx, key, stream, group, group_name, consumer_name, count, claim_ms,
                            noack, now, sinks)
        if entries:
            served.append((key, entries))

    if served:
        if ctx.resp3:
            return Map(served)
        return [[key, entries] for key, entries in served]
    if timeout_ms < 0:
        return NULL_ARRAY
    if claim_ms >= 0 and not ctx.in_exec:
        _track_claim_wakeup(ctx, targets, claim_ms, now)
    if ctx.blocked_retry:
        return KEEP_WAITING
    keys = list(dict.fromkeys(t[0] for t in targets))
    return Block(keys=keys, timeout_ms=timeout_ms, argv=argv, timeout_reply=NULL_ARRAY)


def _read_new(ctx: Client, key: bytes, stream: Stream, group: ConsumerGroup, group_name: bytes,
              consumer_name: bytes, count: int, claim_ms: int, noack: bool, now: int,
              sinks: bool) -> list:
    entries: list = []
    if claim_ms >= 0:
        snapshot = (policies.at_limit_idle(group, claim_ms, count, now)
                    if _dead_letters(ctx, group) else None)
        claim = group.read_claim(stream, consumer_name, claim_ms, count or None, now)
        if claim.consumer_created:
            _consumer_created(ctx, key, group_name, consumer_name, sinks)
        if claim.dropped:
            ctx.changed(1)
            if sinks:
                _propagate_dropped(ctx, key, group, group_name, claim.dropped)
        dead = policies.divert(ctx, key, stream, group, claim.touched, snapshot) if snapshot else None
        if claim.claimed:
            ctx.changed(1)
            last = format_id(group.last_id) if sinks else b""
            for (sid, fields), (idle, prior_count), entry in zip(
                claim.claimed, claim.prior, claim.touched, strict=True
            ):
                if dead and entry.key in dead:
                    continue
                text = format_id(sid)
                # Redis reports now - delivery time; an XNACKed entry's time is 0.
                entries.append([text, fields, now if idle < 0 else idle, prior_count])
                if sinks:
                    ctx.propagate(_xclaim_effect(key, group_name, consumer_name, text, now,
                                                 entry.delivery_count, last))
        if count and len(entries) >= count:
            return entries
    # Compiled, the plain reply is encoded from the stream's nodes (range_reply)
    # and the engine hands back the IDs only.
    with_fields = claim_ms >= 0 or not ENCODES_FROM_NODES
    delivery = group.read_new(stream, consumer_name, (count - len(entries)) if count else None,
                              now, noack, with_fields)
    if delivery.consumer_created:
        _consumer_created(ctx, key, group_name, consumer_name, sinks)
    ids = delivery.ids
    if not ids:
        return entries
    ctx.changed(1)
    if claim_ms >= 0:
        entries.extend([format_id(sid), fields, 0, 0] for sid, fields in delivery.entries)
    elif with_fields:
        entries = [[format_id(sid), fields] for sid, fields in delivery.entries]
    else:
        entries = range_reply(stream, ids[0], ids[-1], len(ids))  # type: ignore[assignment]
    if sinks:
        propagate = ctx.propagate
        if not noack:
            for sid, entry in zip(ids, delivery.touched, strict=True):
                text = format_id(sid)
                propagate(_xclaim_effect(key, group_name, consumer_name, text, now,
                                         entry.delivery_count, text))
        propagate(_setid_effect(key, group, group_name))
    return entries


def _read_history(ctx: Client, key: bytes, stream: Stream, group: ConsumerGroup,
                  group_name: bytes, consumer_name: bytes, after, count: int, now: int,
                  sinks: bool) -> list:
    snapshot = (policies.at_limit_history(group, consumer_name, after, count)
                if _dead_letters(ctx, group) else None)
    delivery = group.read_history(stream, consumer_name, after, count or None, now)
    if delivery.consumer_created:
        _consumer_created(ctx, key, group_name, consumer_name, sinks)
    dead = policies.divert(ctx, key, stream, group, delivery.touched, snapshot) if snapshot else None
    entries = [[format_id(sid), NULL_ARRAY if fields is None else fields]
               for sid, fields in delivery.entries if not dead or id_key(sid) not in dead]
    if sinks and delivery.touched:
        last = format_id(group.last_id)
        for entry in delivery.touched:
            if dead and entry.key in dead:
                continue
            ctx.propagate(_xclaim_effect(key, group_name, consumer_name,
                                         format_id(entry.id_pair), now, entry.delivery_count,
                                         last))
    return entries


def _dead_letters(ctx: Client, group: ConsumerGroup) -> bool:
    """Whether this delivery applies the group's dead-letter policy (commands/policies.py)."""
    return group.dead_letter_key is not None and policies.enforcing(ctx.server, ctx.db)


def _consumer_created(ctx: Client, key: bytes, group_name: bytes, consumer_name: bytes,
                      sinks: bool) -> None:
    ctx.changed(1)
    ctx.notify(STREAM, b"xgroup-createconsumer", key)
    if sinks:
        ctx.propagate(_createconsumer_effect(key, group_name, consumer_name))


# XREADGROUP ... CLAIM ... BLOCK: a parked client must also wake when a pending entry
# becomes idle enough, with no write to the key. The handler records the earliest
# such time per key with `wake_key_at`; the server marks the key ready when it is due.


def _track_claim_wakeup(ctx: Client, targets: list, claim_ms: int, now: int) -> None:
    due = None
    for _, stream, group, after in targets:
        if after is not None:
            continue
        for entry in group.idle_index.iter_values():
            if stream.get(entry.id_pair) is not None:
                when = entry.delivery_time_ms + claim_ms
                due = when if due is None else min(due, when)
                break
    if due is None:
        due = now + claim_ms
    for key, *_ in targets:
        ctx.server.wake_key_at(due, ctx.db.index, key)


# --- XACK ------------------------------------------------------------------------------

_U64_MAX = (1 << 64) - 1
_tuple_new = tuple.__new__


def _parse_ids(argv: list[bytes], start: int) -> list[StreamID]:
    """Explicit IDs from argv[start:]; plain `ms-seq` digits take a fast path.

    Anything else (incomplete IDs, signs, spaces, overflow, over-long text)
    goes through parse_strict_id, which has Redis's exact rules and errors.
    """
    return [_plain_id(argv[i]) or parse_strict_id(argv[i]) for i in range(start, len(argv))]


def _plain_id(raw: bytes) -> StreamID | None:
    """`raw` as parse_strict_id reads it when it is plain `ms-seq` digits (under 42
    bytes, each part < 2**64), else None: the caller asks parse_strict_id."""
    ms, dash, seq = raw.partition(b"-")
    if dash and ms.isdigit() and seq.isdigit() and len(raw) < 42:
        ms_value, seq_value = int(ms), int(seq)
        if ms_value <= _U64_MAX and seq_value <= _U64_MAX:
            return _tuple_new(StreamID, (ms_value, seq_value))
    return None


@command("xack", -4, "write fast", keys=(1, 1, 1), key_flags="RW update", group="stream", since="5.0.0")
def xack(ctx: Client, argv: list[bytes]) -> object:
    """XACK key group id [id ...]

    A missing key or group acknowledges nothing (0) before the IDs are parsed,
    as in Redis; otherwise every ID is parsed before anything changes.
    """
    stream = ctx.db.get(argv[1])
    if stream is None:
        return 0
    if stream.__class__ is not Stream:
        raise ReplyError(errors.WRONGTYPE)
    group = stream.groups.get(argv[2])
    if group is None:
        return 0
    acked = group.ack(_parse_ids(argv, 3))
    if acked:
        ctx.changed(acked)
    return acked


# --- XPENDING --------------------------------------------------------------------------

@command("xpending", -3, "readonly", keys=(1, 1, 1), key_flags="RO access", group="stream", since="5.0.0")
def xpending(ctx: Client, argv: list[bytes]) -> object:
    """XPENDING key group [[IDLE min-idle-time] start end count [consumer]]

    As in Redis, arguments after the consumer name are ignored.
    """
    n = len(argv)
    if n != 3 and not 6 <= n <= 9:
        raise ReplyError(errors.SYNTAX)
    min_idle = 0
    consumer_name = None
    if n >= 6:
        at = 3
        if argv[3].upper() == b"IDLE":
            min_idle = parse_int(argv[4])
            if n < 8:
                raise ReplyError(errors.SYNTAX)
            at = 5
        count = parse_int(argv[at + 2])
        if count < 0:
            count = 0
        start = parse_range_start(argv[at])
        end = parse_range_end(argv[at + 1])
        if at + 3 < n:
            consumer_name = argv[at + 3]
    _, group = _stream_and_group(ctx, argv[1], argv[2])
    if n == 3:
        total, first, last, per_consumer = group.pending_summary()
        if not total:
            return [0, None, None, NULL_ARRAY]
        return [total, format_id(first), format_id(last),  # type: ignore[arg-type]  # set when total
                [[name, b"%d" % pending] for name, pending in per_consumer]]
    now = ctx.clock.now_ms()
    out = []
    for entry in group.pending_range(start, end, count, now, consumer_name, min_idle):
        owner = entry.owner
        out.append([format_id(entry.id_pair), b"" if owner is None else owner,
                    entry.idle_ms(now), entry.delivery_count])
    return out


# --- XCLAIM ----------------------------------------------------------------------------

@command("xclaim", -6, "write fast", keys=(1, 1, 1), key_flags="RW update", group="stream", since="5.0.0")
def xclaim(ctx: Client, argv: list[bytes]) -> object:
    """XCLAIM key group consumer min-idle-time id [id ...] [IDLE ms] [TIME unix-time-milliseconds] [RETRYCOUNT count] [FORCE] [JUSTID] [LASTID lastid]

    IDs are read until the first argument that is not one; the rest are
    options. LASTID only ever raises the group's last-delivered ID. An ID
    whose entry left the stream is removed from the PEL; each claim and each
    removal is propagated as an XCLAIM (XACK for an unowned entry), and a
    LASTID move without claims as XGROUP SETID.
    """
    key, group_name, consumer_name = argv[1], argv[2], argv[3]
    stream, group = _stream_and_group(ctx, key, group_name)
    min_idle = parse_int(argv[4], errors.XCLAIM_INVALID_MIN_IDLE)
    if min_idle < 0:
        min_idle = 0
    n = len(argv)
    ids = []
    j = 5
    while j < n:
        sid = _plain_id(argv[j])
        if sid is None:
            try:
                sid = parse_strict_id(argv[j])
            except ReplyError:
                break
        ids.append(sid)
        j += 1
    now = ctx.clock.now_ms()
    delivery_time = None
    retry_count = None
    force = justid = False
    last_id = None
    while j < n:
        word = argv[j].upper()
        more = j + 1 < n
        if word == b"FORCE":
            force = True
        elif word == b"JUSTID":
            justid = True
        elif word == b"IDLE" and more:
            j += 1
            delivery_time = now - parse_int(argv[j], errors.XCLAIM_INVALID_IDLE)
        elif word == b"TIME" and more:
            j += 1
            delivery_time = parse_int(argv[j], errors.XCLAIM_INVALID_TIME)
        elif word == b"RETRYCOUNT" and more:
            j += 1
            retry_count = parse_int(argv[j], errors.XCLAIM_INVALID_RETRYCOUNT)
        elif word == b"LASTID" and more:
            j += 1
            last_id = parse_strict_id(argv[j])
        else:
            raise ReplyError(errors.XCLAIM_UNKNOWN_OPTION.format(errors.c_text(argv[j])))
        j += 1
    snapshot = None
    if group.dead_letter_key is not None and policies.check_target(ctx, group):
        snapshot = policies.at_limit_ids(group, ids)
    result = group.claim(stream, consumer_name, min_idle, ids, now,
                         delivery_time_ms=delivery_time, retry_count=retry_count, force=force,
                         justid=justid, last_id=last_id)
    dead = _propagate_claims(ctx, key, stream, group, group_name, consumer_name, result, snapshot)
    claimed = result.claimed
    if dead:
        claimed = [item for item, entry in zip(claimed, result.touched, strict=True)
                   if entry.key not in dead]
    # (Dead-lettered claims leave no XCLAIM to carry LASTID either.)
    if result.last_id_moved and not (claimed or any(
        e.owner is not None for e in result.dropped
    )):
        ctx.changed(1)
        if ctx.server.effect_sinks:
            ctx.propagate(_setid_effect(key, group, group_name))
    if justid:
        return [format_id(sid) for sid, _ in claimed]
    return [[format_id(sid), fields] for sid, fields in claimed]


def _propagate_claims(ctx: Client, key: bytes, stream: Stream, group: ConsumerGroup,
                      group_name: bytes, consumer_name: bytes, result,
                      snapshot: policies.Snapshot | None) -> frozenset[int] | None:
    """The claims' events and effects; the entries the dead-letter policy took
    instead (by ID key, see policies.divert), to leave out of the reply."""
    state = ctx.server
    changes = len(result.claimed) + len(result.dropped) + (1 if result.consumer_created else 0)
    if not changes:
        return None
    ctx.changed(changes)
    if result.consumer_created:
        ctx.notify(STREAM, b"xgroup-createconsumer", key)
    if state.effect_sinks and result.consumer_created:
        ctx.propagate(_createconsumer_effect(key, group_name, consumer_name))
    dead = policies.divert(ctx, key, stream, group, result.touched, snapshot) if snapshot else None
    if not state.effect_sinks:
        return dead
    _propagate_dropped(ctx, key, group, group_name, result.dropped)
    last = format_id(group.last_id)
    for entry in result.touched:
        if dead and entry.key in dead:
            continue
        ctx.propagate(_xclaim_effect(key, group_name, consumer_name, format_id(entry.id_pair),
                                     entry.delivery_time_ms, entry.delivery_count, last))
    return dead


# --- XAUTOCLAIM ------------------------------------------------------------------------

# COUNT is capped so that COUNT * 10 attempts (and Redis's COUNT * 16 bytes) fit a long.
_AUTOCLAIM_MAX_COUNT = INT64_MAX // 16


@command("xautoclaim", -6, "write fast", keys=(1, 1, 1), group="stream", since="6.2.0",
         key_flags="RW delete")
def xautoclaim(ctx: Client, argv: list[bytes]) -> object:
    """XAUTOCLAIM key group consumer min-idle-time start [COUNT count] [JUSTID]

    Scans at most 10 * COUNT PEL entries from `start`; entries whose stream
    entry is gone are removed from the PEL and count against COUNT. Replies
    [next cursor (0-0 at the end), claimed entries, removed IDs].
    """
    min_idle = parse_int(argv[4], errors.XAUTOCLAIM_INVALID_MIN_IDLE)
    if min_idle < 0:
        min_idle = 0
    start = parse_range_start(argv[5])
    count = 100
    justid = False
    n = len(argv)
    j = 6
    while j < n:
        word = argv[j].upper()
        if word == b"COUNT" and j + 1 < n:
            count = parse_int(argv[j + 1], errors.XAUTOCLAIM_COUNT)
            if not 1 <= count <= _AUTOCLAIM_MAX_COUNT:
                raise ReplyError(errors.XAUTOCLAIM_COUNT)
            j += 2
        elif word == b"JUSTID":
            justid = True
            j += 1
        else:
            raise ReplyError(errors.SYNTAX)
    key, group_name, consumer_name = argv[1], argv[2], argv[3]
    stream, group = _stream_and_group(ctx, key, group_name)
    snapshot = None
    if group.dead_letter_key is not None and policies.check_target(ctx, group):
        snapshot = policies.at_limit_scan(group, start, count)
    result = group.autoclaim(stream, consumer_name, min_idle, start, count,
                             ctx.clock.now_ms(), justid)
    dead = _propagate_claims(ctx, key, stream, group, group_name, consumer_name, result, snapshot)
    kept = result.claimed
    if dead:
        kept = [item for item, entry in zip(kept, result.touched, strict=True)
                if entry.key not in dead]
    claimed: list[object]
    if justid:
        claimed = [format_id(sid) for sid, _ in kept]
    else:
        claimed = [[format_id(sid), fields] for sid, fields in kept]
    return [format_id(result.cursor), claimed, [format_id(sid) for sid in result.deleted]]


# --- XINFO GROUPS / CONSUMERS ----------------------------------------------------------

def _reported_entries_read(group: ConsumerGroup) -> int | None:
    read = group.entries_read
    return None if read is None else engine.as_long_long(read)


def _policy_fields(group: ConsumerGroup) -> list[tuple[bytes, object]]:
    """RILLET.XDEADLETTER's, for a group that has it (others reply as in Redis)."""
    if group.dead_letter_key is None:
        return []
    return [(b"max-deliveries", group.max_deliveries), (b"dead-letter-key", group.dead_letter_key)]


@command("xinfo|groups", 3, "readonly", keys=(2, 2, 1), key_flags="RO access", group="stream", since="5.0.0")
def xinfo_groups(ctx: Client, argv: list[bytes]) -> object:
    """XINFO GROUPS key"""
    stream = existing_stream(ctx, argv[2])
    return [
        Map([
            (b"name", group.name),
            (b"consumers", len(group.consumers)),
            (b"pending", len(group.pel)),
            (b"last-delivered-id", format_id(group.last_id)),
            (b"entries-read", _reported_entries_read(group)),
            (b"lag", engine.group_lag(stream, group)),
            *_policy_fields(group),
        ])
        for group in engine.groups_in_order(stream)
    ]


@command("xinfo|consumers", 4, "readonly", keys=(2, 2, 1), key_flags="RO access", group="stream", since="5.0.0")
def xinfo_consumers(ctx: Client, argv: list[bytes]) -> object:
    """XINFO CONSUMERS key group"""
    key, group_name = argv[2], argv[3]
    stream = existing_stream(ctx, key)
    group = stream.groups.get(group_name)
    if group is None:
        raise ReplyError(errors.NOGROUP_FOR_KEY.format(errors.c_text(group_name), errors.c_text(key)))
    now = ctx.clock.now_ms()
    return [
        Map([
            (b"name", consumer.name),
            (b"pending", len(consumer.pel)),
            (b"idle", consumer.idle_ms(now)),
            (b"inactive", consumer.inactive_ms(now)),
        ])
        for consumer in group.consumers_in_order()
    ]


def xinfo_full_groups(stream: Stream, count: int, now_ms: int = 0, nacked: bool = False) -> list:
    """The "groups" value of XINFO STREAM key FULL [COUNT count], in Redis 8.2's shape.

    `count` 0 lists every PEL entry; otherwise at most `count` per PEL. With
    `nacked` each group also reports Redis 8.8's "nacked-count" (after
    pel-count). Delivery times are absolute Unix ms; an entry released by
    XNACK shows consumer "" and time 0. (`now_ms` is unused: kept so callers
    need not care whether a future field is relative.)
    """
    limit = count if count > 0 else None
    out = []
    for group in engine.groups_in_order(stream):
        pending = [
            [format_id(e.id_pair), b"" if e.owner is None else e.owner,
             e.delivery_time_ms, e.delivery_count]
            for e in group.pel.range_values(0, MAX_ID_KEY, limit)
        ]
        consumers = [
            Map([
                (b"name", c.name),
                (b"seen-time", c.seen_time_ms),
                (b"active-time", c.active_time_ms),
                (b"pel-count", len(c.pel)),
                (b"pending", [[format_id(e.id_pair), e.delivery_time_ms, e.delivery_count]
                              for e in c.pel.range_values(0, MAX_ID_KEY, limit)]),
            ])
            for c in group.consumers_in_order()
        ]
        fields: list[tuple[bytes, object]] = [
            (b"name", group.name),
            (b"last-delivered-id", format_id(group.last_id)),
            (b"entries-read", _reported_entries_read(group)),
            (b"lag", engine.group_lag(stream, group)),
            (b"pel-count", len(group.pel)),
        ]
        if nacked:
            fields.append((b"nacked-count", group.nacked_count))
        fields.append((b"pending", pending))
        fields.append((b"consumers", consumers))
        out.append(Map(fields))
    return out


# --- XDELEX / XACKDEL --------------------------------------------------------------------

_KEEPREF, _DELREF, _ACKED = b"KEEPREF", b"DELREF", b"ACKED"


def _parse_ackdel(argv: list[bytes], start: int) -> tuple[bytes, int, int]:
    """streamParseAckDelArgsOrReply: (policy, index of the first ID, number of IDs)."""
    policy = None
    first = -1
    numids = 0
    n = len(argv)
    j = start
    while j < n:
        word = argv[j].upper()
        if word in (_KEEPREF, _DELREF, _ACKED) and policy is None:
            policy = word
            j += 1
        elif word == b"IDS" and j + 1 < n:
            numids = parse_int(argv[j + 1], errors.IDS_NUMIDS_INVALID)
            if numids < 1:
                raise ReplyError(errors.IDS_NUMIDS_INVALID)
            if numids > n - j - 2:
                raise ReplyError(errors.IDS_NUMIDS_MISMATCH)
            first = j + 2
            j = first + numids
        else:
            raise ReplyError(errors.SYNTAX)
    if first < 0:
        raise ReplyError(errors.IDS_REQUIRED)
    return policy or _KEEPREF, first, numids


@command("xdelex", -5, "write fast", keys=(1, 1, 1), group="stream", since="8.2.0",
         key_flags="RW delete")
def xdelex(ctx: Client, argv: list[bytes]) -> object:
    """XDELEX key [KEEPREF | DELREF | ACKED] IDS numids id [id ...]

    Per ID: 1 deleted, -1 not in the stream, 2 kept because a group still
    needs it (ACKED). DELREF also drops the ID from every PEL, even when the
    entry is not in the stream; unlike Redis that alone makes it propagate.
    """
    key = argv[1]
    stream = get_stream(ctx, key)
    policy, first, numids = _parse_ackdel(argv, 2)
    if stream is None:
        return [-1] * numids
    ids = [parse_strict_id(raw) for raw in argv[first:first + numids]]
    has_groups = bool(stream.groups)
    replies = []
    deleted = refs = 0
    for sid in ids:
        if has_groups and policy == _ACKED and engine.is_referenced(stream, sid):
            replies.append(2)
            continue
        if has_groups and policy == _DELREF:
            refs += engine.remove_refs(stream, [sid])
        if stream.delete(sid):
            deleted += 1
            replies.append(1)
        else:
            replies.append(-1)
    if deleted:
        ctx.modified(key, deleted)
        ctx.notify(STREAM, b"xdel", key)
    elif refs:
        ctx.changed(refs)
    return replies


@command("xackdel", -6, "write fast", keys=(1, 1, 1), group="stream", since="8.2.0",
         key_flags="RW update delete")
def xackdel(ctx: Client, argv: list[bytes]) -> object:
    """XACKDEL key group [KEEPREF | DELREF | ACKED] IDS numids id [id ...]

    Per ID: -1 not pending in the group; else acknowledged and 1 (deleted from
    the stream, or already gone) or 2 (kept: another group still needs it).
    """
    key = argv[1]
    stream = get_stream(ctx, key)
    policy, first, numids = _parse_ackdel(argv, 3)
    group = stream.groups.get(argv[2]) if stream is not None else None
    if group is None:
        return [-1] * numids
    assert stream is not None
    ids = [parse_strict_id(raw) for raw in argv[first:first + numids]]
    replies = []
    acked = deleted = 0
    for sid in ids:
        if not group.ack((sid,)):
            replies.append(-1)
            continue
        acked += 1
        if policy == _ACKED and engine.is_referenced(stream, sid):
            replies.append(2)
            continue
        if policy == _DELREF:
            engine.remove_refs(stream, [sid])
        if stream.delete(sid):
            deleted += 1
        replies.append(1)
    if deleted:
        ctx.modified(key, acked + deleted)
        ctx.notify(STREAM, b"xdel", key)
    elif acked:
        ctx.changed(acked)
    return replies


# --- XNACK (Redis 8.8) -------------------------------------------------------------------

_NACK_MODES = {b"SILENT": engine.NACK_SILENT, b"FAIL": engine.NACK_FAIL,
               b"FATAL": engine.NACK_FATAL}


# Redis 8.2.3's COMMAND DOCS has no XNACK: its text is src/commands/xnack.json of Redis 8.8.
@command("xnack", -7, "write fast", keys=(1, 1, 1), group="stream", since="8.8.0",
         summary="Releases claimed messages back to the group's PEL without acknowledging them,"
                 " making them available for re-delivery.",
         complexity="O(1) for each message ID processed.")
def xnack(ctx: Client, argv: list[bytes]) -> object:
    """XNACK key group <SILENT | FAIL | FATAL> IDS numids id [id ...] [RETRYCOUNT count] [FORCE]

    Releases pending entries back to the group (Redis 8.8, from t_stream.c and
    redis.io): each loses its owner, gets delivery time 0, so any CLAIM or
    XAUTOCLAIM takes it at once, longest-released first, and its counter is
    decremented (SILENT, not below 0), kept (FAIL) or set to LLONG_MAX (FATAL);
    RETRYCOUNT sets it instead. IDs not pending are skipped, unless FORCE and
    the entry exists: then an unowned entry is created (counter 0, LLONG_MAX
    for FATAL, or RETRYCOUNT). Replies how many entries were released; parked
    XREADGROUP ... CLAIM clients are woken. Choice: Redis's source sends these
    errors as "-ERR ERR ..." (addReplyError with an "ERR" prefix); we send a
    single "ERR", which is what its tests and clients expect.
    """
    key, group_name = argv[1], argv[2]
    stream, group = _stream_and_group(ctx, key, group_name)
    mode = _NACK_MODES.get(argv[3].upper())
    if mode is None:
        raise ReplyError(errors.XNACK_MODE)
    n = len(argv)
    first = 0
    numids = 0
    force = False
    retry_count = None
    i = 4
    while i < n:
        word = argv[i].upper()
        more = n - 1 - i
        if word == b"IDS" and more:
            numids = parse_int(argv[i + 1], errors.XNACK_NUMIDS_INVALID)
            if not 1 <= numids <= 2**31 - 1:
                raise ReplyError(errors.XNACK_NUMIDS_INVALID)
            first = i + 2
            if numids > n - first:
                raise ReplyError(errors.XNACK_NUMIDS_MISMATCH)
            i = first + numids
            continue
        if word == b"FORCE":
            force = True
        elif word == b"RETRYCOUNT" and more:
            i += 1
            retry_count = parse_int(argv[i])
            if retry_count < 0:
                raise ReplyError(errors.XNACK_RETRYCOUNT)
        else:
            raise ReplyError(errors.XNACK_UNKNOWN_OPTION.format(errors.c_text(argv[i])))
        i += 1
    if not first:
        raise ReplyError(errors.XNACK_EXPECTED_IDS)
    ids = [parse_strict_id(raw) for raw in argv[first:first + numids]]
    released = group.nack(stream, ids, mode, retry_count, force)
    if released:
        ctx.changed(released)
        _wake(ctx, key)
    return released



# --- the compiled hot path -----------------------------------------------------------------
# XREADGROUP's one-stream `>` read and XACK with plain IDs, compiled (commands/_groups.pyx):
# the table holds those; the Python bodies above stay the reference and take every other
# case (tests/server/test_group_bodies.py holds the two equal).
_groups = compiled("rillet.commands._groups")
if _groups is not None and ENCODES_FROM_NODES:
    _groups.bind(xreadgroup, xack, _encode_range, parse_block_timeout)
    COMMANDS["xreadgroup"].handler = _groups.xreadgroup
    COMMANDS["xack"].handler = _groups.xack

# XCLAIM, XAUTOCLAIM and XPENDING in their common forms, compiled
# (commands/_claims.pyx), the same way; tests/server/test_claim_bodies.py holds them equal
# to the bodies above.
_claims = compiled("rillet.commands._claims")
if _claims is not None:
    _claims.bind(xclaim, xautoclaim, xpending, _encode_range)
    COMMANDS["xclaim"].handler = _claims.xclaim
    COMMANDS["xautoclaim"].handler = _claims.xautoclaim
    COMMANDS["xpending"].handler = _claims.xpending
