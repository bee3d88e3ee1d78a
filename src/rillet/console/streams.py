"""The keyspace's streams, and what the console shows of each.

Each database keeps the names of the keys it was given a stream under
(`Database.streams`, maintained as keys are added and deleted), so listing the
streams costs the streams, not the keyspace: no scan. The index is a superset (a
stream overwritten in place by SET stays until the key goes), so the value is
checked here. Everything here only reads: an expired stream is skipped, not
deleted.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from rillet.engine.groups import as_long_long, group_lag, groups_in_order
from rillet.engine.keyspace import Keyspace
from rillet.engine.stream import Stream


def live_streams(keyspace: Keyspace, now_ms: int) -> Iterator[tuple[int, bytes, Stream]]:
    """(db index, key, stream) of every live stream, by database."""
    for db in keyspace.dbs:
        if not db.streams:
            continue
        data, expires = db.data, db.expires
        for key in list(db.streams):
            value = data.get(key)
            if value.__class__ is not Stream:
                continue
            if expires:
                deadline = expires.get(key)
                if deadline is not None and deadline <= now_ms:
                    continue
            yield db.index, key, value


# --- what the console reads of one stream -------------------------------------------------


@dataclass
class ConsumerView:
    name: bytes
    pending: int
    idle_ms: int


@dataclass
class GroupView:
    name: bytes
    consumers: list[ConsumerView]
    pending: int
    last_delivered: tuple[int, int]
    entries_read: int | None
    lag: int | None  # None: Redis's nil lag (it cannot be known)
    oldest_pending: tuple[int, int] | None
    oldest_pending_idle_ms: int | None  # the longest time any pending entry has waited


@dataclass
class StreamView:
    db: int
    key: bytes
    length: int
    radix_tree_keys: int
    radix_tree_nodes: int
    last_generated: tuple[int, int]
    max_deleted: tuple[int, int]
    entries_added: int
    first: tuple[int, int] | None
    last: tuple[int, int] | None
    groups: list[GroupView] = field(default_factory=list)


def view_stream(db: int, key: bytes, stream: Stream, now_ms: int) -> StreamView:
    """What XINFO STREAM, GROUPS and CONSUMERS would say of `stream`, as one object."""
    length = stream.length
    view = StreamView(
        db=db, key=key, length=length,
        radix_tree_keys=stream.radix_tree_keys, radix_tree_nodes=stream.radix_tree_nodes,
        last_generated=tuple(stream.last_id), max_deleted=tuple(stream.max_deleted_id),  # type: ignore[arg-type]
        entries_added=stream.entries_added,
        first=tuple(stream.first_id) if length else None,  # type: ignore[arg-type]
        last=tuple(stream.last_valid_id()) if length else None,  # type: ignore[arg-type]
    )
    for group in groups_in_order(stream):
        oldest = group.pel.first()
        longest = group.idle_index.first()
        view.groups.append(GroupView(
            name=group.name,
            consumers=[ConsumerView(c.name, len(c.pel), c.idle_ms(now_ms))
                       for c in group.consumers_in_order()],
            pending=len(group.pel),
            last_delivered=tuple(group.last_id),  # type: ignore[arg-type]
            entries_read=None if group.entries_read is None else as_long_long(group.entries_read),
            lag=group_lag(stream, group),
            oldest_pending=oldest.id_pair if oldest is not None else None,
            oldest_pending_idle_ms=(max(0, now_ms - longest.delivery_time_ms)
                                    if longest is not None else None),
        ))
    return view
