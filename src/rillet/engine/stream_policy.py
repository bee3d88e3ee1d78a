"""Stream policies no Redis has: retention by age and dead-letter streams (issue #30).

The data lives on the engine's objects, so RENAME, MOVE, COPY, DEL, SWAPDB and
FLUSH carry or drop it with the value: `Stream.retention_ms` (0 = none) and
`ConsumerGroup.max_deliveries` / `ConsumerGroup.dead_letter_key` (0 / None = none).
This module is the policies' pure logic; commands/policies.py applies it and
says what happened as plain Redis commands (docs/streams-policies.md).

    cutoff = retention_cutoff(retention_ms, now_ms)     # IDs below it are too old
    removed, minid = trim_expired(stream, now_ms, budget)  # XTRIM key MINID = minid
    snapshot = at_limit(entries, max_deliveries)         # before a delivery moves them
    dead_letter_fields(fields, key, sid, group, consumer, deliveries) -> fields
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rillet.engine.ids import StreamID
from rillet.engine.pel import PendingEntry

_tuple_new = tuple.__new__

# The fields a dead-lettered entry gets after its own (documented in
# docs/streams-policies.md; clients parse them by name).
FIELD_STREAM = b"rillet-stream"
FIELD_ID = b"rillet-id"
FIELD_GROUP = b"rillet-group"
FIELD_CONSUMER = b"rillet-consumer"
FIELD_DELIVERIES = b"rillet-deliveries"


def retention_cutoff(retention_ms: int, now_ms: int) -> StreamID | None:
    """The smallest ID young enough to stay: an entry is kept while now - ms < retention.

    None when no ID can be too old yet (the clock is within `retention_ms` of 0).
    """
    edge = now_ms - retention_ms + 1
    return _tuple_new(StreamID, (edge, 0)) if edge > 0 else None


def trim_expired(stream: Any, now_ms: int, budget: int,
                 exact: bool = True) -> tuple[int, StreamID | None]:
    """Remove the entries older than `stream.retention_ms` as XTRIM MINID does (KEEPREF).

    Whole nodes go first, at most about `budget` entries of them (the `~` LIMIT
    rule), then, if `exact`, the entries of the one node that straddles the
    cutoff, so a call does bounded work and the rest waits for the next write or
    cycle. Returns (entries removed, minid): `XTRIM key MINID = minid` replays
    exactly what went (every live entry below the first one left), None when
    nothing did.
    """
    cutoff = retention_cutoff(stream.retention_ms, now_ms)
    nodes = stream.nodes
    if cutoff is None or not nodes:
        return 0, None
    head = nodes[0]
    # A node's master ID is at most its first entry's: the common case, nothing
    # old enough, costs one comparison.
    if (head.ms0, head.seq0) >= cutoff:
        return 0, None
    removed = stream.trim_minid(cutoff, True, budget)
    nodes = stream.nodes
    if exact and nodes and (len(nodes) < 2 or (nodes[1].ms0, nodes[1].seq0) >= cutoff):
        removed += stream.trim_minid(cutoff)  # within the first node only
    if not removed:
        return 0, None
    first = stream.first_entry()
    return removed, cutoff if first is None else first[0]


# What an entry at the limit was, by its ID key: (owner, deliveries so far).
Snapshot = dict[int, tuple[bytes | None, int]]


def at_limit(entries: Iterable[PendingEntry], max_deliveries: int) -> Snapshot:
    """The entries already delivered `max_deliveries` times, as they were before a
    delivery touches them (which moves them to its consumer and counts it): those
    it must dead-letter instead, and the consumer that failed them."""
    return {entry.key: (entry.owner, entry.delivery_count)
            for entry in entries if entry.delivery_count >= max_deliveries}


def dead_letter_fields(fields: list[bytes], key: bytes, sid: bytes, group: bytes,
                       consumer: bytes | None, deliveries: int) -> list[bytes]:
    """The dead letter's fields: the entry's own, then where it came from."""
    return [*fields, FIELD_STREAM, key, FIELD_ID, sid, FIELD_GROUP, group,
            FIELD_CONSUMER, b"" if consumer is None else consumer,
            FIELD_DELIVERIES, b"%d" % deliveries]
