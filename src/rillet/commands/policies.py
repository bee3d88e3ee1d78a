"""rillet's stream policies: RILLET.XRETENTION and RILLET.XDEADLETTER (issue #30).

Namespaced as KeyDB's KEYDB.* were, so no Redis command can ever collide. The
policies live on the engine's objects (engine/stream_policy.py has the data
and the pure logic); this module applies them and says what happened as
plain Redis commands, so a Redis replica, an AOF and `redis-cli --rdb` stay
exact (docs/streams-policies.md):

- retention: after XADD (commands/streams.py) and in the server cron
  (`RetentionCycle`), the aged entries go as `XTRIM key MINID = <id>`;
- dead letters: XREADGROUP (history, CLAIM), XCLAIM and XAUTOCLAIM
  (commands/groups.py) snapshot the entries at the limit before the engine
  moves them (`at_limit_*`), then `divert` adds each to the dead-letter
  stream and acknowledges it: `XADD <dlk> <id> ...` + `XACK key group <id>`.

Only a master enforces them: a replica and a loading server apply what the
master's stream or the file says (the policies' own commands set them).
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import islice, takewhile

from rillet import errors
from rillet.commands.args import parse_int
from rillet.commands.stream_common import existing_stream, get_stream, new_stream
from rillet.commands.table import command
from rillet.engine.groups import AUTOCLAIM_ATTEMPTS_FACTOR, ConsumerGroup
from rillet.engine.ids import MAX_ID, StreamID, format_id
from rillet.engine.keyspace import Database
from rillet.engine.pel import MAX_ID_KEY, TOUCH_BITS, PendingEntry, id_key
from rillet.engine.stream import Stream, default_trim_limit
from rillet.engine.stream_policy import Snapshot, at_limit, dead_letter_fields, trim_expired
from rillet.errors import ReplyError
from rillet.notify import STREAM
from rillet.resp.types import OK
from rillet.state import Client, ServerState

_NONE: frozenset[int] = frozenset()


def enforcing(server: ServerState, db: Database) -> bool:
    """Whether this server applies the policies itself: a master that is not loading
    (a replica's db has an expire mode; its master's stream carries the results)."""
    return not db.expire_mode and not server.loading


# --- the commands ------------------------------------------------------------------------

@command("rillet.xretention", 3, "write fast", keys=(1, 1, 1), key_flags="RW update",
         group="stream", since="8.2.3",
         summary="Sets or removes a stream's retention by age (rillet only).",
         complexity="O(1)")
def xretention(ctx: Client, argv: list[bytes]) -> object:
    """RILLET.XRETENTION key milliseconds

    Entries whose ID's time part is `milliseconds` or more in the past are
    trimmed on every XADD to the key and by the server cron; 0 removes the
    policy. Propagated as itself (to rillet replicas and the AOF).
    """
    stream = existing_stream(ctx, argv[1])
    retention = parse_int(argv[2], errors.RETENTION_NOT_VALID)
    if retention < 0:
        raise ReplyError(errors.RETENTION_NOT_VALID)
    stream.retention_ms = retention
    ctx.changed(1)
    return OK


def _deadletter_keys(argv: list[bytes]) -> list[tuple[int, str]]:
    keys = [(1, "RW update")]
    if len(argv) == 5:
        keys.append((4, "RW insert"))
    return keys


@command("rillet.xdeadletter", -4, "write fast movablekeys", keys=(1, 1, 1), group="stream",
         since="8.2.3", find_keys=_deadletter_keys,
         summary="Sets or removes a consumer group's dead-letter stream (rillet only).",
         complexity="O(1)")
def xdeadletter(ctx: Client, argv: list[bytes]) -> object:
    """RILLET.XDEADLETTER key group <max-deliveries dead-letter-key | OFF>

    An entry of `group` that was delivered `max-deliveries` times is, at its
    next delivery by XREADGROUP (history or CLAIM), XCLAIM or XAUTOCLAIM,
    added to `dead-letter-key` instead and acknowledged. OFF removes the
    policy. Propagated as itself (to rillet replicas and the AOF).
    """
    key, group_name = argv[1], argv[2]
    stream = existing_stream(ctx, key)
    group = stream.groups.get(group_name)
    if group is None:
        raise ReplyError(errors.NOGROUP_FOR_KEY.format(errors.c_text(group_name), errors.c_text(key)))
    if len(argv) == 4 and argv[3].upper() == b"OFF":
        group.max_deliveries, group.dead_letter_key = 0, None
    elif len(argv) == 5:
        limit = parse_int(argv[3], errors.MAX_DELIVERIES_NOT_POSITIVE)
        if limit <= 0:
            raise ReplyError(errors.MAX_DELIVERIES_NOT_POSITIVE)
        target = argv[4]
        if target == key:
            raise ReplyError(errors.DEAD_LETTER_SAME_KEY)
        get_stream(ctx, target)  # WRONGTYPE now rather than at the first dead letter
        group.max_deliveries, group.dead_letter_key = limit, target
    else:
        raise ReplyError(errors.SYNTAX)
    ctx.changed(1)
    return OK


# --- dead letters --------------------------------------------------------------------------

def check_target(ctx: Client, group: ConsumerGroup) -> bool:
    """Before a delivery changes anything: whether the group's policy applies here,
    refusing (WRONGTYPE, an exhausted ID) what would fail half-way."""
    target = group.dead_letter_key
    if target is None or not enforcing(ctx.server, ctx.db):
        return False
    stream = get_stream(ctx, target)
    if stream is not None and stream.last_id == MAX_ID:
        raise ReplyError(errors.STREAM_EXHAUSTED)
    return True


def at_limit_history(group: ConsumerGroup, consumer_name: bytes, after: StreamID,
                     count: int) -> Snapshot:
    """XREADGROUP with an ID: the consumer's own entries read_history will redeliver."""
    consumer = group.consumers.get(consumer_name)
    if consumer is None:
        return {}
    lo = (id_key(after) + 1) & MAX_ID_KEY
    return at_limit(consumer.pel.range_values(lo, MAX_ID_KEY, count or None), group.max_deliveries)


def at_limit_idle(group: ConsumerGroup, min_idle_ms: int, count: int, now_ms: int) -> Snapshot:
    """XREADGROUP ... CLAIM: the idle entries read_claim walks, longest idle first."""
    threshold = now_ms - max(min_idle_ms, 0)
    idle: Iterable[PendingEntry] = takewhile(
        lambda entry: entry.tkey >> TOUCH_BITS <= threshold, group.idle_index.iter_values())
    if count:
        idle = islice(idle, count * AUTOCLAIM_ATTEMPTS_FACTOR)
    return at_limit(idle, group.max_deliveries)


def at_limit_ids(group: ConsumerGroup, ids: list[StreamID]) -> Snapshot:
    """XCLAIM: the named entries."""
    pel = group.pel
    found = (pel.get(id_key(sid)) for sid in ids)
    return at_limit((entry for entry in found if entry is not None), group.max_deliveries)


def at_limit_scan(group: ConsumerGroup, start: StreamID, count: int) -> Snapshot:
    """XAUTOCLAIM: the entries its scan from `start` may meet."""
    entries = group.pel.range_values(id_key(start), MAX_ID_KEY, count * AUTOCLAIM_ATTEMPTS_FACTOR)
    return at_limit(entries, group.max_deliveries)


def divert(ctx: Client, key: bytes, stream: Stream, group: ConsumerGroup, touched: list,
           snapshot: Snapshot) -> frozenset[int]:
    """Dead-letter the entries a delivery just touched that were at the limit.

    Each goes to the group's dead-letter stream with its fields and where it came
    from, and leaves the PEL; returns their ID keys, which the caller leaves out
    of its reply and of its XCLAIM effects.
    """
    # (Once each: XCLAIM may name an ID twice, and touches it twice.)
    dead = list({entry.key: entry for entry in touched if entry.key in snapshot}.values())
    if not dead:
        return _NONE
    target_key = group.dead_letter_key
    assert target_key is not None
    target = get_stream(ctx, target_key) or new_stream(ctx, target_key)
    now = ctx.clock.now_ms()
    sinks = bool(ctx.server.effect_sinks)
    group_name = group.name
    for entry in dead:
        sid = entry.id_pair
        text = format_id(sid)
        owner, deliveries = snapshot[entry.key]
        body = stream.get(sid)
        assert body is not None  # the engine touches only entries still in the stream
        fields = dead_letter_fields(body, key, text, group_name, owner, deliveries)
        new_id = target.next_id(None, None, now)
        target.append(new_id, fields)
        group.ack((sid,))
        if sinks:
            ctx.propagate([b"XADD", target_key, format_id(new_id), *fields])
            ctx.propagate([b"XACK", key, group_name, text])
    ctx.changed(len(dead))
    ctx.modified(target_key, len(dead))
    ctx.notify(STREAM, b"xadd", target_key)
    ctx.server.stats.stream_deadlettered += len(dead)
    return frozenset(entry.key for entry in dead)


# --- retention ------------------------------------------------------------------------------

def trim_after_add(ctx: Client, key: bytes, stream: Stream) -> None:
    """XADD's part: the nodes whose entries all aged out go, as `MINID ~` trims (the
    cron trims the rest exactly), said as XTRIM MINID = id.

    Trimming entry by entry on every XADD made a busy stream pay a trim per
    entry; whole nodes cost one per node (stream-node-max-entries entries).
    The compiled XADD (commands/_writes.pyx, `_head_aged`) makes the first two
    tests below in C and calls this only when they pass (keep in step), so most
    XADDs to a stream with a policy never come here."""
    server = ctx.server
    now = server.clock.now_ms()
    edge = now - stream.retention_ms
    nodes = stream.nodes
    # Most XADDs find no whole node old enough: the first node's first entry, or
    # its last (entries are in ID order), is recent.
    if not nodes or nodes[0].ms0 > edge:
        return
    if nodes[0].last_id_any()[0] > edge or not enforcing(server, ctx.db):
        return
    removed, minid = trim_expired(stream, now, default_trim_limit(stream.limits.node_max_entries),
                                  exact=False)
    if not removed:
        return
    assert minid is not None
    server.stats.stream_retention_trimmed += removed
    ctx.notify(STREAM, b"xtrim", key)
    if server.effect_sinks:
        ctx.propagate([b"XTRIM", key, b"MINID", b"=", format_id(minid)])


class RetentionCycle:
    """The cron's retention pass, bounded per tick as active expiry is: at most
    STREAMS keys looked at and about ENTRIES entries removed per database, going
    on from where the previous tick stopped. It walks the databases' stream index
    (`Database.streams`), so a keyspace without streams costs nothing."""

    STREAMS = 200
    ENTRIES = 10_000

    def __init__(self) -> None:
        self._pending: dict[int, list[bytes]] = {}

    def run(self, server: ServerState, db: Database) -> int:
        """One tick on `db`; returns the entries removed."""
        if not db.streams or not enforcing(server, db) or db.expiry_paused:
            return 0
        pending = self._pending.get(db.index)
        if not pending:
            pending = self._pending[db.index] = list(db.streams)
        now = server.clock.now_ms()
        budget = self.ENTRIES
        total = 0
        for _ in range(min(self.STREAMS, len(pending))):
            key = pending.pop()
            stream = db.peek(key)  # a sweep is no access: the key's LRU/LFU field stays
            if stream.__class__ is not Stream or not stream.retention_ms:
                continue
            removed, minid = trim_expired(stream, now, budget)
            if not removed:
                continue
            assert minid is not None
            total += removed
            server.key_modified(db.index, key, removed)
            server.notify(STREAM, b"xtrim", key, db.index)
            server.publish([(db.index, [b"XTRIM", key, b"MINID", b"=", format_id(minid)])])
            budget -= removed
            if budget <= 0:
                if stream.retention_ms:
                    pending.append(key)  # its rest first, next tick
                break
        server.stats.stream_retention_trimmed += total
        return total
