"""Naive models for consumer-group tests: a list-backed stream and a dict-backed group.

`ListStream` implements the slice of the Stream API that engine/groups.py
uses (range, get, last_id, first_id, entries_added, max_deleted_id, deleted_mark, length,
groups); `RealStream` gives the real Stream the same test conveniences. `GroupModel` restates XREADGROUP/XACK/XCLAIM/XAUTOCLAIM/XNACK/
DELCONSUMER semantics with plain dicts and full sorts, so the hypothesis
machine can compare the indexed engine against it step by step.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from typing import Any

from rillet.engine.ids import MAX_ID, MIN_ID, StreamID
from rillet.engine.stream import Stream

U64_MAX = (1 << 64) - 1
LLONG_MAX = (1 << 63) - 1


def _bump(count: int) -> int:
    # Redis caps delivery counters at LLONG_MAX (XNACK FATAL puts them there).
    return count + 1 if count < LLONG_MAX else count


class ListStream:
    """Just enough of a stream: sorted IDs, bodies, Redis's counters."""

    def __init__(self) -> None:
        self.ids: list[StreamID] = []
        self.bodies: dict[StreamID, list[bytes]] = {}
        self.last_id = MIN_ID
        self.max_deleted_id = MIN_ID
        self.deleted_mark = MIN_ID  # the engine's: the highest ID ever deleted
        self.entries_added = 0
        self.groups: dict[bytes, Any] = {}

    @property
    def length(self) -> int:
        return len(self.ids)

    @property
    def first_id(self) -> StreamID:
        return self.ids[0] if self.ids else MIN_ID

    def add(self, sid: StreamID, fields: list[bytes] | None = None) -> StreamID:
        assert sid > self.last_id
        self.ids.append(sid)
        self.bodies[sid] = fields if fields is not None else [b"f", b"%d-%d" % sid]
        self.last_id = sid
        self.entries_added += 1
        return sid

    def add_next(self) -> StreamID:
        last = self.last_id
        return self.add(StreamID(last.ms + 1, 0))

    def delete(self, sid: StreamID) -> bool:
        """XDEL of one ID."""
        if sid not in self.bodies:
            return False
        del self.bodies[sid]
        self.ids.pop(bisect_left(self.ids, sid))
        if sid > self.max_deleted_id:
            self.max_deleted_id = sid
        self.deleted_mark = max(self.deleted_mark, sid)
        return True

    def trim_to(self, maxlen: int) -> int:
        """Exact XTRIM MAXLEN: drops the oldest entries (max_deleted_id unchanged)."""
        drop = max(0, len(self.ids) - maxlen)
        for sid in self.ids[:drop]:
            del self.bodies[sid]
        del self.ids[:drop]
        return drop

    def range(self, start: StreamID, end: StreamID, count: int | None, reverse: bool) -> list:
        ids = [i for i in self.ids if start <= i <= end]
        if reverse:
            ids.reverse()
        if count:
            ids = ids[:count]
        return [(i, self.bodies[i]) for i in ids]

    def get(self, sid: StreamID) -> list[bytes] | None:
        return self.bodies.get(tuple(sid))  # type: ignore[call-overload]


class RealStream(Stream):
    """The real `engine.stream.Stream` with ListStream's test conveniences."""

    def add(self, sid: StreamID, fields: list[bytes] | None = None) -> StreamID:
        self.append(sid, fields if fields is not None else [b"f", b"%d-%d" % sid])
        return sid

    def add_next(self) -> StreamID:
        return self.add(StreamID(self.last_id.ms + 1, 0))

    def trim_to(self, maxlen: int) -> int:
        return self.trim_maxlen(maxlen)


STREAM_KINDS = (ListStream, RealStream)


class PendingModel:
    __slots__ = ("owner", "time", "count", "touch")

    def __init__(self, owner: bytes | None, time: int, count: int, touch: int) -> None:
        self.owner = owner
        self.time = time
        self.count = count
        self.touch = touch

    def as_tuple(self) -> tuple:
        return (self.owner, self.time, self.count)


class GroupModel:
    """One consumer group, the slow and obvious way."""

    def __init__(self, last_id: StreamID) -> None:
        self.last_id = last_id
        self.pel: dict[StreamID, PendingModel] = {}
        self.consumers: dict[bytes, dict[str, int]] = {}
        self._touch = 0

    # helpers
    def _tick(self) -> int:
        self._touch += 1
        return self._touch

    def _seen(self, name: bytes, now: int) -> None:
        if name not in self.consumers:
            self.consumers[name] = {"seen": now, "active": -1}
        self.consumers[name]["seen"] = now

    def _touch_entry(self, sid: StreamID, owner: bytes | None, time: int, count: int) -> None:
        self.pel[sid] = PendingModel(owner, time, count, self._tick())

    def sorted_pel(self) -> list[StreamID]:
        return sorted(self.pel)

    # operations
    def read_new(
        self, stream: Any, name: bytes, count: int | None, now: int, noack: bool
    ) -> list[StreamID]:
        self._seen(name, now)
        ids = [i for i, _ in stream.range(MIN_ID, MAX_ID, None, False) if i > self.last_id]
        if count:
            ids = ids[:count]
        for sid in ids:
            self.last_id = sid
            if not noack:
                self._touch_entry(sid, name, now, 1)
        if ids and not noack:
            self.consumers[name]["active"] = now
        return ids

    def read_history(
        self, stream: Any, name: bytes, after: StreamID, count: int | None, now: int
    ) -> list[tuple[StreamID, bool]]:
        self._seen(name, now)
        mine = [i for i in self.sorted_pel() if self.pel[i].owner == name and i > after]
        if count:
            mine = mine[:count]
        out = []
        for sid in mine:
            exists = stream.get(sid) is not None
            if exists:
                p = self.pel[sid]
                self._touch_entry(sid, name, now, _bump(p.count))
            out.append((sid, exists))
        return out

    def ack(self, ids: list[StreamID]) -> int:
        n = 0
        for sid in ids:
            if self.pel.pop(sid, None) is not None:
                n += 1
        return n

    def claim(
        self,
        stream: Any,
        name: bytes,
        min_idle: int,
        ids: list[StreamID],
        now: int,
        delivery_time: int | None = None,
        retry: int | None = None,
        force: bool = False,
        justid: bool = False,
        lastid: StreamID | None = None,
    ) -> tuple[list[StreamID], list[StreamID]]:
        self._seen(name, now)
        if lastid is not None and lastid > self.last_id:
            self.last_id = lastid
        if delivery_time is None or delivery_time < 0 or delivery_time > now:
            delivery_time = now
        claimed, deleted = [], []
        for sid in ids:
            p = self.pel.get(sid)
            if stream.get(sid) is None:
                if p is not None:
                    del self.pel[sid]
                    deleted.append(sid)
                continue
            if p is None:
                if not force:
                    continue
                count = retry if retry is not None else (1 if justid else 2)
            else:
                if p.owner is not None and min_idle > 0 and now - p.time < min_idle:
                    continue
                count = retry if retry is not None else (p.count if justid else _bump(p.count))
            self._touch_entry(sid, name, delivery_time, count)
            claimed.append(sid)
            self.consumers[name]["active"] = now
        return claimed, deleted

    def autoclaim(
        self,
        stream: Any,
        name: bytes,
        min_idle: int,
        start: StreamID,
        count: int,
        now: int,
        justid: bool,
    ) -> tuple[StreamID, list, list]:
        self._seen(name, now)
        ids = [i for i in self.sorted_pel() if i >= start]
        attempts = count * 10
        remaining = count
        claimed, deleted = [], []
        examined = 0
        for sid in ids:
            if not attempts or not remaining:
                break
            attempts -= 1
            examined += 1
            p = self.pel[sid]
            if stream.get(sid) is None:
                deleted.append(sid)
                remaining -= 1
                continue
            if min_idle > 0 and now - p.time < min_idle:
                continue
            self._touch_entry(sid, name, now, p.count if justid else _bump(p.count))
            claimed.append(sid)
            remaining -= 1
            self.consumers[name]["active"] = now
        for sid in deleted:
            del self.pel[sid]
        cursor = ids[examined] if examined < len(ids) else MIN_ID
        return cursor, claimed, deleted

    def read_claim(
        self, stream: Any, name: bytes, min_idle: int, count: int | None, now: int
    ) -> tuple[list, list]:
        self._seen(name, now)
        order = sorted(self.pel, key=lambda i: (self.pel[i].time, self.pel[i].touch))
        claimed, deleted = [], []
        for sid in order:
            if count and len(claimed) >= count:
                break
            p = self.pel[sid]
            if now - p.time < min_idle:
                break
            if stream.get(sid) is None:
                del self.pel[sid]
                deleted.append(sid)
                continue
            idle = -1 if p.owner is None else max(0, now - p.time)
            claimed.append((sid, idle, p.count))
            self._touch_entry(sid, name, now, _bump(p.count))
        if claimed:
            self.consumers[name]["active"] = now
        return claimed, deleted

    def nack(
        self,
        stream: Any,
        ids: list[StreamID],
        mode: str,
        retry: int | None = None,
        force: bool = False,
    ) -> int:
        n = 0
        for sid in ids:
            p = self.pel.get(sid)
            if p is None:
                if not force or stream.get(sid) is None:
                    continue
                count = retry if retry is not None else (LLONG_MAX if mode == "FATAL" else 0)
            elif retry is not None:
                count = retry
            elif mode == "SILENT":
                count = max(0, p.count - 1)
            elif mode == "FATAL":
                count = LLONG_MAX
            else:
                count = p.count
            self._touch_entry(sid, None, 0, count)
            n += 1
        return n

    def delete_consumer(self, name: bytes) -> int | None:
        if name not in self.consumers:
            return None
        del self.consumers[name]
        mine = [i for i, p in self.pel.items() if p.owner == name]
        for sid in mine:
            del self.pel[sid]
        return len(mine)

    def pending_range(
        self,
        start: StreamID,
        end: StreamID,
        count: int,
        now: int,
        name: bytes | None = None,
        min_idle: int = 0,
    ) -> list[StreamID]:
        out = []
        for sid in self.sorted_pel():
            p = self.pel[sid]
            if not start <= sid <= end:
                continue
            if name is not None and p.owner != name:
                continue
            if min_idle and now - p.time < min_idle:
                continue
            out.append(sid)
            if len(out) == count:
                break
        return out if count > 0 else []

    def summary(self) -> tuple:
        if not self.pel:
            return 0, None, None, []
        per: dict[bytes, int] = {}
        for p in self.pel.values():
            if p.owner is not None:
                per[p.owner] = per.get(p.owner, 0) + 1
        ids = self.sorted_pel()
        return len(ids), ids[0], ids[-1], sorted(per.items())

    def snapshot(self) -> dict[StreamID, tuple]:
        return {sid: p.as_tuple() for sid, p in self.pel.items()}

    def consumer_view(self) -> dict[bytes, tuple[int, int, int]]:
        counts: dict[bytes, int] = {name: 0 for name in self.consumers}
        for p in self.pel.values():
            if p.owner is not None:
                counts[p.owner] += 1
        return {n: (counts[n], c["seen"], c["active"]) for n, c in self.consumers.items()}


def engine_snapshot(group: Any) -> dict[StreamID, tuple]:
    """The engine group's PEL in GroupModel.snapshot() form."""
    out = {}
    for entry in group.pel:
        owner = entry.owner
        out[StreamID(*entry.id_pair)] = (owner, entry.delivery_time_ms, entry.delivery_count)
    return out


def engine_consumer_view(group: Any) -> dict[bytes, tuple[int, int, int]]:
    return {
        name: (len(c.pel), c.seen_time_ms, c.active_time_ms) for name, c in group.consumers.items()
    }


def sorted_insert(ids: list[StreamID], sid: StreamID) -> None:
    insort(ids, sid)
