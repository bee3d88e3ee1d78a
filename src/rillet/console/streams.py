"""Finding the keyspace's streams without a full scan, and reading what the console shows of them.

`StreamFinder` follows each database's insertion order (`Database.keys_since`, the
SCAN cursors): it looks at every key once, when it is new, and keeps the names of
those that are streams. A stream only comes into being as a new key (XADD,
XGROUP CREATE MKSTREAM, RESTORE, COPY, RENAME and MOVE all add the key anew; a
value never turns into a stream in place), so following new keys finds them all;
a known name whose value is no longer a stream is dropped when next read. SWAPDB
exchanges databases' contents, cursors and all: the finder notices the new dict
and starts that database over. Each call walks at most `budget` keys, so a large
keyspace is caught up over several calls without holding the event loop.

Everything here only reads: an expired stream is skipped, not deleted.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from rillet.engine.groups import as_long_long, group_lag, groups_in_order
from rillet.engine.keyspace import Database, Keyspace
from rillet.engine.stream import Stream


class _DbWalk:
    __slots__ = ("data", "cursor", "streams")

    def __init__(self, data: dict) -> None:
        self.data = data  # the dict walked: SWAPDB hands the database another one
        self.cursor = 0
        self.streams: dict[bytes, None] = {}


class StreamFinder:
    def __init__(self, keyspace: Keyspace) -> None:
        self.keyspace = keyspace
        self._walks: dict[int, _DbWalk] = {}

    def advance(self, budget: int) -> bool:
        """Look at up to `budget` keys not seen yet; True when every database is caught up."""
        caught_up = True
        for db in self.keyspace.dbs:
            walk = self._walks.get(db.index)
            if walk is None or walk.data is not db.data:
                if not db.data and walk is None:
                    continue  # never used: nothing to follow yet
                walk = self._walks[db.index] = _DbWalk(db.data)
            if budget <= 0:
                caught_up = False
                break
            cursor, keys = db.keys_since(walk.cursor, budget)
            walk.cursor = cursor
            budget -= len(keys)
            data = db.data
            streams = walk.streams
            for key in keys:
                if data.get(key).__class__ is Stream:
                    streams[key] = None
            if budget <= 0 and db.keys_since(cursor, 1)[1]:
                caught_up = False
        return caught_up

    def streams(self, now_ms: int) -> Iterator[tuple[Database, bytes, Stream]]:
        """The live streams found so far, by database, then in the order they were found."""
        for db in self.keyspace.dbs:
            walk = self._walks.get(db.index)
            if walk is None or walk.data is not db.data:
                continue
            data, expires = db.data, db.expires
            gone = []
            for key in walk.streams:
                value = data.get(key)
                if value.__class__ is not Stream:
                    gone.append(key)
                    continue
                deadline = expires.get(key) if expires else None
                if deadline is not None and deadline <= now_ms:
                    continue
                yield db, key, value  # type: ignore[misc]
            for key in gone:
                del walk.streams[key]


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
