"""Consumer groups: last-delivered-id, entries-read, PELs, consumers, lag.

The data model behind XGROUP, XREADGROUP, XACK, XPENDING, XCLAIM, XAUTOCLAIM,
XNACK, XINFO and the 8.2 reference policies (KEEPREF/DELREF/ACKED). It parses
and validates nothing; every operation takes `now_ms`, and either applies
completely or changes nothing. IDs are `StreamID`s; names are `bytes`.

API (a group lives in `stream.groups[name]`; `stream` is an `engine.stream.Stream`):

  create_group(stream, name, last_id, entries_read=None) -> ConsumerGroup | None
  destroy_group(stream, name) -> bool
  groups_in_order(stream) -> list[ConsumerGroup]          # XINFO order (bytewise)
  group_lag(stream, group) -> int | None                   # None = nil lag
  estimate_entries_read(stream, sid) -> int | None
  is_referenced(stream, sid) -> bool                       # ACKED policy
  remove_refs(stream, ids) -> int                          # DELREF policy

  ConsumerGroup
    set_id(last_id, entries_read=None)                     # XGROUP SETID
    create_consumer(name, now_ms) -> Consumer | None       # None if it exists
    delete_consumer(name) -> int | None                    # pending count
    consumers_in_order() -> list[Consumer]
    read_new(stream, consumer, count, now_ms, noack=False, with_fields=True) -> Delivery  # '>'
    read_history(stream, consumer, after, count, now_ms) -> Delivery      # other IDs
    read_claim(stream, consumer, min_idle_ms, count, now_ms) -> ClaimResult  # CLAIM
    ack(ids) -> int
    claim(stream, consumer, min_idle_ms, ids, now_ms, ...) -> ClaimResult  # XCLAIM
    autoclaim(stream, consumer, min_idle_ms, start, count, now_ms, justid=False)
    nack(stream, ids, mode, retry_count=None, force=False) -> int          # XNACK
    pending_summary() -> (count, min_id, max_id, [(name, count)])
    pending_range(start, end, count, now_ms, consumer=None, min_idle_ms=0)
    check_invariants()

`count` arguments take 0 or None for "no limit", as Redis's COUNT 0 does.
Reads and claims return the touched `PendingEntry` objects in order, so the
command layer can propagate them as XCLAIM ... TIME t RETRYCOUNT n FORCE JUSTID.
"""

from __future__ import annotations

from typing import Any

from rillet.engine.ids import MAX_ID, MIN_ID, StreamID
from rillet.engine.pel import (
    MAX_ID_KEY,
    SEQ_BITS,
    SEQ_MASK,
    TOUCH_BITS,
    PendingEntry,
    SortedIndex,
    id_key,
)

U64_MAX = (1 << 64) - 1
LLONG_MAX = (1 << 63) - 1

# XAUTOCLAIM examines at most this many PEL entries per requested COUNT.
AUTOCLAIM_ATTEMPTS_FACTOR = 10

NACK_SILENT = "SILENT"
NACK_FAIL = "FAIL"
NACK_FATAL = "FATAL"


_tuple_new = tuple.__new__


def _bump(count: int) -> int:
    # Redis never lets a delivery counter pass LLONG_MAX (XNACK FATAL sets it there).
    return count + 1 if count < LLONG_MAX else count


def _sid(key: int) -> StreamID:
    return _tuple_new(StreamID, (key >> SEQ_BITS, key & SEQ_MASK))


class Consumer:
    """A named consumer: its own PEL (by ID) and the two XINFO timestamps.

    `seen_time_ms` is the last attempted interaction (any XREADGROUP, XCLAIM or
    XAUTOCLAIM naming it) and `active_time_ms` the last successful one (an
    entry delivered into its PEL or claimed), -1 until then: Redis 7.2+'s
    `idle` and `inactive` in XINFO CONSUMERS.
    """

    # Compiled, Consumer and ConsumerGroup are extension types (groups.pxd): the
    # compiled bodies read their fields as C struct fields (commands/_groups.pyx, ...).
    __slots__ = ("name", "pel", "seen_time_ms", "active_time_ms")

    def __init__(self, name: bytes, now_ms: int) -> None:
        self.name = name
        self.pel = SortedIndex()
        self.seen_time_ms = now_ms
        self.active_time_ms = -1

    def idle_ms(self, now_ms: int) -> int:
        idle = now_ms - self.seen_time_ms
        return idle if idle > 0 else 0

    def inactive_ms(self, now_ms: int) -> int:
        # Redis reports -1 before the first success and does not clamp otherwise.
        return -1 if self.active_time_ms == -1 else now_ms - self.active_time_ms

    def __repr__(self) -> str:
        return f"Consumer({self.name!r}, pending={len(self.pel)})"


class Delivery:
    """What an XREADGROUP read produced for one stream."""

    __slots__ = ("entries", "ids", "touched", "consumer_created")

    def __init__(self, consumer_created: bool) -> None:
        # (id, fields) per entry; fields is None for a history entry whose
        # stream entry was deleted (the reply shows a nil body). Empty when
        # read_new was asked for IDs only.
        self.entries: list[tuple[StreamID, Any]] = []
        # The delivered IDs in order (read_new only).
        self.ids: list[StreamID] = []
        # PEL entries created or updated, in reply order (none for NOACK).
        self.touched: list[PendingEntry] = []
        self.consumer_created = consumer_created


class ClaimResult:
    """What XCLAIM, XAUTOCLAIM or XREADGROUP CLAIM did."""

    __slots__ = (
        "claimed",
        "prior",
        "touched",
        "deleted",
        "dropped",
        "cursor",
        "consumer_created",
        "last_id_moved",
    )

    def __init__(self, consumer_created: bool) -> None:
        self.claimed: list[tuple[StreamID, Any]] = []  # (id, fields), reply order
        # XREADGROUP CLAIM only: (idle_ms, delivery_count) of each claimed entry
        # as they were before this claim, for the reply's two extra fields.
        self.prior: list[tuple[int, int]] = []
        self.touched: list[PendingEntry] = []
        # IDs found in the PEL whose stream entry is gone: removed from the PEL.
        self.deleted: list[StreamID] = []
        # The PendingEntry objects behind `deleted`, as they were when removed
        # (owner, delivery time, count): the command layer propagates their
        # removal as Redis does (XCLAIM for the old owner, or XACK if unowned).
        self.dropped: list[PendingEntry] = []
        self.cursor: StreamID = MIN_ID  # XAUTOCLAIM's next start, 0-0 at the end
        self.consumer_created = consumer_created
        self.last_id_moved = False  # XCLAIM LASTID raised the group's last_id


class ConsumerGroup:
    """One consumer group of a stream.

    Every pending entry sits in three `SortedIndex`es: `pel` (group, by ID),
    its owner's `Consumer.pel` (by ID) and `idle_index` (by delivery time,
    oldest first), so "idle for at least N ms, longest first" is a walk from
    the front of `idle_index`. Entries released by XNACK have no owner and
    delivery time 0, which puts them first in `idle_index` in release order:
    Redis 8.8's "NACK zone".
    """

    __slots__ = (
        "name",
        "last_id",
        "entries_read",
        "pel",
        "idle_index",
        "consumers",
        "nacked_count",
        "_touch_seq",
        "_names_sorted",
        # RILLET.XDEADLETTER (engine/stream_policy.py): deliveries allowed, and where
        # entries past them go; 0 and None without the policy.
        "max_deliveries",
        "dead_letter_key",
    )

    def __init__(self, name: bytes, last_id: StreamID, entries_read: int | None = None) -> None:
        self.name = name
        self.last_id = last_id
        # The logical read counter; None is Redis's SCG_INVALID_ENTRIES_READ.
        self.entries_read = entries_read
        self.pel = SortedIndex()
        self.idle_index = SortedIndex()
        self.consumers: dict[bytes, Consumer] = {}
        self.nacked_count = 0
        self._touch_seq = 0
        self._names_sorted: list[bytes] | None = None
        self.max_deliveries = 0
        self.dead_letter_key: bytes | None = None

    def __repr__(self) -> str:
        return (
            f"ConsumerGroup({self.name!r}, last_id={self.last_id}, "
            f"entries_read={self.entries_read}, pending={len(self.pel)})"
        )

    # --- XGROUP -------------------------------------------------------------
    def set_id(self, last_id: StreamID, entries_read: int | None = None) -> None:
        """XGROUP SETID: the PEL is untouched; entries_read is reset (None = invalid)."""
        self.last_id = last_id
        self.entries_read = entries_read

    def consumer(self, name: bytes) -> Consumer | None:
        return self.consumers.get(name)

    def create_consumer(self, name: bytes, now_ms: int) -> Consumer | None:
        """XGROUP CREATECONSUMER: the new consumer, or None if the name exists."""
        if name in self.consumers:
            return None
        consumer = self.consumers[name] = Consumer(name, now_ms)
        self._names_sorted = None
        return consumer

    def delete_consumer(self, name: bytes) -> int | None:
        """XGROUP DELCONSUMER: drop the consumer and its pending entries.

        Returns how many entries it had pending, or None if there was no such
        consumer. Its entries leave the group PEL too, as in Redis.
        """
        consumer = self.consumers.pop(name, None)
        if consumer is None:
            return None
        self._names_sorted = None
        pending = len(consumer.pel)
        for entry in consumer.pel:
            self.pel.pop(entry.key)
            self.idle_index.pop(entry.tkey)
        consumer.pel.clear()
        return pending

    def consumers_in_order(self) -> list[Consumer]:
        """Consumers in XINFO/XPENDING order: bytewise by name (Redis keeps them in a rax)."""
        names = self._names_sorted
        if names is None:
            names = self._names_sorted = sorted(self.consumers)
        consumers = self.consumers
        return [consumers[n] for n in names]

    # --- persistence -------------------------------------------------------
    def restore_pending(self, records: list[tuple[int, Consumer | None, int, int]]) -> None:
        """Fill the empty PELs from (id key, owner or None, delivery ms, count) records.

        Records come in idle order (oldest delivery first; ties in the order
        they were touched), which becomes the touch order. Owners must be
        consumers of this group. Raises ValueError on a duplicate ID.
        """
        if self.pel:
            raise ValueError("restore_pending needs an empty PEL")
        entries = [PendingEntry(key, (time_ms << TOUCH_BITS) | touch,
                                None if owner is None else owner.name, count)
                   for touch, (key, owner, time_ms, count) in enumerate(records)]
        for _, owner, _, _ in records:
            if owner is not None and self.consumers.get(owner.name) is not owner:
                raise ValueError("PEL entry owned by a consumer of another group")
        by_time = sorted(entries, key=lambda entry: entry.tkey)
        self.idle_index.fill_sorted([entry.tkey for entry in by_time], by_time)
        entries.sort(key=lambda entry: entry.key)
        keys = [entry.key for entry in entries]
        if any(a == b for a, b in zip(keys, keys[1:], strict=False)):
            raise ValueError("duplicate ID in a consumer group PEL")
        self.pel.fill_sorted(keys, entries)
        per_owner: dict[bytes, list[PendingEntry]] = {}
        nacked = 0
        for entry in entries:
            owner_name = entry.owner
            if owner_name is None:
                nacked += 1
            else:
                per_owner.setdefault(owner_name, []).append(entry)
        for consumer in self.consumers.values():
            mine = per_owner.get(consumer.name)
            if mine:
                consumer.pel.fill_sorted([entry.key for entry in mine], mine)
        self._touch_seq = len(entries)
        self.nacked_count = nacked

    def pending_in_idle_order(self) -> list[PendingEntry]:
        """Every pending entry, oldest delivery first (what restore_pending takes back)."""
        return list(self.idle_index)

    # --- XREADGROUP ---------------------------------------------------------
    def read_new(
        self,
        stream: Any,
        consumer_name: bytes,
        count: int | None,
        now_ms: int,
        noack: bool = False,
        with_fields: bool = True,
    ) -> Delivery:
        """XREADGROUP with '>': deliver entries after last_id to the consumer.

        Advances last_id and entries_read entry by entry (Redis 8.2 rules),
        and files each entry in the PEL unless `noack`. An entry already in
        the PEL (the group was moved back with SETID) changes owner and
        restarts with delivery count 1. NOACK reads do not count as activity.
        Without `with_fields` only `ids` is filled: the caller encodes the
        entries itself (they are stream.range(ids[0], ids[-1], len(ids))).
        """
        consumer, created = self._consumer_for(consumer_name, now_ms)
        out = Delivery(created)
        last = self.last_id
        if last[1] != U64_MAX:
            start = _tuple_new(StreamID, (last[0], last[1] + 1))
        elif last[0] != U64_MAX:
            start = _tuple_new(StreamID, (last[0] + 1, 0))
        else:
            return out
        if with_fields:
            items = stream.range(start, MAX_ID, count or None, False)
            ids = [item[0] for item in items]
            out.entries = items
        else:
            ids = stream.range_ids(start, MAX_ID, count or None)
        if not ids:
            return out
        out.ids = ids
        touched = out.touched
        pel = self.pel
        first_id = stream.first_id  # a property walk on Stream: once per call
        # New IDs beyond every pending one (the usual case) need no PEL lookup.
        top = pel.last_key()
        if top is None:
            top = -1
        for sid in ids:
            self._advance_to(stream, sid, first_id)
            if noack:
                continue
            key = id_key(sid)
            entry = pel.get(key) if key <= top else None
            if entry is None:
                entry = self._add(key, consumer, now_ms, 1)
            else:
                self._set_owner(entry, consumer)
                self._retime(entry, now_ms)
                entry.delivery_count = 1
            touched.append(entry)
        if touched:
            consumer.active_time_ms = now_ms
        return out

    def read_history(
        self, stream: Any, consumer_name: bytes, after: StreamID, count: int | None, now_ms: int
    ) -> Delivery:
        """XREADGROUP with an explicit ID: the consumer's own PEL after `after`.

        Each entry still in the stream is redelivered: delivery time = now,
        delivery count + 1. Entries deleted from the stream come back with a
        None body and are left as they are. Redis does not count a history
        read as activity (active_time is unchanged).
        """
        consumer, created = self._consumer_for(consumer_name, now_ms)
        out = Delivery(created)
        # Redis's streamIncrID wraps the maximum ID to 0-0; so do we.
        lo = (id_key(after) + 1) & MAX_ID_KEY
        for entry in consumer.pel.range_values(lo, MAX_ID_KEY, count or None):
            sid = _sid(entry.key)
            body = stream.get(sid)
            out.entries.append((sid, body))
            if body is not None:
                self._retime(entry, now_ms)
                entry.delivery_count = _bump(entry.delivery_count)
                out.touched.append(entry)
        return out

    def read_claim(
        self, stream: Any, consumer_name: bytes, min_idle_ms: int, count: int | None, now_ms: int
    ) -> ClaimResult:
        """The claim phase of XREADGROUP ... CLAIM min-idle-time (Redis 8.4).

        Claims for the consumer the pending entries idle for at least
        `min_idle_ms`, longest idle first (entries released by XNACK before
        all others), up to `count`. Each claim works like XAUTOCLAIM without
        JUSTID: new owner, delivery time = now, delivery count + 1; NOACK does
        not apply. `prior` keeps each entry's idle time and delivery count from
        before the claim, which is what the reply reports ("the number of
        times this entry was previously delivered"); an entry released by
        XNACK reports idle -1, as XPENDING shows it. Entries whose stream
        entry is gone are removed from the PEL and listed in `deleted`, as
        XAUTOCLAIM does. The caller reads new entries with the rest of COUNT.
        """
        consumer, created = self._consumer_for(consumer_name, now_ms)
        out = ClaimResult(created)
        threshold = now_ms - max(min_idle_ms, 0)
        if threshold < 0:
            return out
        # Entries re-timed during this loop get a touch sequence beyond the
        # bound, so the walk never meets an entry twice.
        bound = (threshold << TOUCH_BITS) | (self._touch_seq - 1 if self._touch_seq else 0)
        idle_index = self.idle_index
        while not count or len(out.claimed) < count:
            entry = idle_index.first()
            if entry is None or entry.tkey > bound:
                break
            sid = _sid(entry.key)
            body = stream.get(sid)
            if body is None:
                self._drop(entry)
                out.deleted.append(sid)
                out.dropped.append(entry)
                continue
            out.prior.append((entry.idle_ms(now_ms), entry.delivery_count))
            self._set_owner(entry, consumer)
            self._retime(entry, now_ms)
            entry.delivery_count = _bump(entry.delivery_count)
            out.claimed.append((sid, body))
            out.touched.append(entry)
        if out.touched:
            consumer.active_time_ms = now_ms
        return out

    # --- XACK ---------------------------------------------------------------
    def ack(self, ids: Any) -> int:
        """XACK: remove the IDs from the PEL; returns how many were pending."""
        acked = 0
        pel, idle_index, consumers = self.pel, self.idle_index, self.consumers
        for sid in ids:
            key = id_key(sid)
            entry = pel.pop(key)
            if entry is None:
                continue
            idle_index.pop(entry.tkey)
            owner = entry.owner
            if owner is None:
                self.nacked_count -= 1
            else:
                consumers[owner].pel.pop(key)
            acked += 1
        return acked

    # --- XCLAIM / XAUTOCLAIM ------------------------------------------------
    def claim(
        self,
        stream: Any,
        consumer_name: bytes,
        min_idle_ms: int,
        ids: Any,
        now_ms: int,
        *,
        delivery_time_ms: int | None = None,
        retry_count: int | None = None,
        force: bool = False,
        justid: bool = False,
        last_id: StreamID | None = None,
    ) -> ClaimResult:
        """XCLAIM. `delivery_time_ms` is what IDLE (now - idle) or TIME resolved to.

        Follows Redis 7+: LASTID only ever raises last_id; an out-of-range
        delivery time becomes now; an ID whose stream entry is gone is dropped
        from the PEL (listed in `deleted`) and not claimed; FORCE creates a
        missing PEL entry for an existing stream entry (its count starts at 1
        and is then bumped like any other unless JUSTID, as in Redis); the
        min-idle test applies only to entries that have an owner; RETRYCOUNT
        sets the count, otherwise it grows by one unless JUSTID. The consumer
        is created if needed even when nothing is claimed.
        """
        consumer, created = self._consumer_for(consumer_name, now_ms)
        out = ClaimResult(created)
        if last_id is not None and last_id > self.last_id:
            self.last_id = last_id
            out.last_id_moved = True
        if delivery_time_ms is None or delivery_time_ms < 0 or delivery_time_ms > now_ms:
            delivery_time_ms = now_ms
        if retry_count is not None and retry_count < 0:
            retry_count = None
        pel = self.pel
        for sid in ids:
            key = id_key(sid)
            entry = pel.get(key)
            if entry is None and not force:
                continue
            body = stream.get(sid)
            if body is None:
                if entry is not None:
                    self._drop(entry)
                    out.deleted.append(sid)
                    out.dropped.append(entry)
                continue
            if entry is None:
                count = retry_count if retry_count is not None else (1 if justid else 2)
                entry = self._add(key, consumer, delivery_time_ms, count)
            else:
                if entry.owner is not None and min_idle_ms > 0:
                    if now_ms - entry.delivery_time_ms < min_idle_ms:
                        continue
                self._set_owner(entry, consumer)
                self._retime(entry, delivery_time_ms)
                if retry_count is not None:
                    entry.delivery_count = retry_count
                elif not justid:
                    entry.delivery_count = _bump(entry.delivery_count)
            out.claimed.append((sid, body))
            out.touched.append(entry)
            consumer.active_time_ms = now_ms
        return out

    def autoclaim(
        self,
        stream: Any,
        consumer_name: bytes,
        min_idle_ms: int,
        start: StreamID,
        count: int,
        now_ms: int,
        justid: bool = False,
    ) -> ClaimResult:
        """XAUTOCLAIM: one page of the group PEL from `start`.

        Examines at most 10 * COUNT entries. Entries idle for less than
        `min_idle_ms` are skipped; entries whose stream entry is gone are
        removed from the PEL, listed in `deleted` and, as in Redis, count
        against COUNT. `cursor` is the next entry after the last one examined,
        or 0-0 when the scan reached the end of the PEL.
        """
        consumer, created = self._consumer_for(consumer_name, now_ms)
        out = ClaimResult(created)
        attempts = count * AUTOCLAIM_ATTEMPTS_FACTOR
        remaining = count
        doomed: list[PendingEntry] = []
        # Claims re-file entries in the consumer PELs and the idle index but
        # never in the group PEL, so one lazy walk over it stays valid;
        # deleted entries leave the group PEL after the walk.
        walk = self.pel.iter_values(id_key(start))
        at_end = False
        # Fetching a body costs far more than the rest of a step, and most
        # entries of a scan are skipped as too young. A pending entry after
        # every deleted ID (deleted_mark: XDEL raises it, XSETID's MAXDELETEDID
        # cannot lower it) and not before the first live entry cannot have been
        # removed (KEEPREF trims cut a prefix, DELREF/ACKED never remove a
        # pending entry), so such an entry is tested for idleness before its
        # body is fetched. Below that, a deleted entry is reported whatever its
        # idle time, as Redis checks existence first.
        if stream.length:
            surely_alive_above = max(id_key(stream.max_deleted_id), id_key(stream.deleted_mark),
                                     id_key(stream.first_id) - 1)
        else:
            surely_alive_above = MAX_ID_KEY
        threshold = now_ms - min_idle_ms if min_idle_ms > 0 else None
        while attempts and remaining:
            attempts -= 1
            entry = next(walk, None)
            if entry is None:
                at_end = True
                break
            if (
                threshold is not None
                and entry.key > surely_alive_above
                and (entry.tkey >> TOUCH_BITS) > threshold
            ):
                continue
            sid = _sid(entry.key)
            body = stream.get(sid)
            if body is None:
                doomed.append(entry)
                out.deleted.append(sid)
                remaining -= 1
                continue
            if min_idle_ms > 0 and now_ms - entry.delivery_time_ms < min_idle_ms:
                continue
            self._set_owner(entry, consumer)
            self._retime(entry, now_ms)
            if not justid:
                entry.delivery_count = _bump(entry.delivery_count)
            out.claimed.append((sid, body))
            out.touched.append(entry)
            remaining -= 1
            consumer.active_time_ms = now_ms
        if not at_end:
            following = next(walk, None)
            if following is not None:
                out.cursor = _sid(following.key)
        out.dropped = doomed
        for entry in doomed:
            self._drop(entry)
        return out

    # --- XNACK (Redis 8.8) --------------------------------------------------
    def nack(
        self,
        stream: Any,
        ids: Any,
        mode: str,
        retry_count: int | None = None,
        force: bool = False,
    ) -> int:
        """XNACK: release pending entries back to the group; returns how many.

        Per redis.io: each entry in the group PEL loses its owner, gets
        delivery time 0 (so it is claimable at once, by any min-idle-time) and
        joins the end of the NACK zone at the front of the idle index. Its
        delivery count drops by one for SILENT (never below 0: our choice, the
        docs do not say), stays for FAIL, becomes LLONG_MAX for FATAL;
        RETRYCOUNT overrides the mode. An entry already released is released
        again (moved to the end of the zone, count adjusted again). IDs not in
        the PEL are ignored, unless FORCE and the stream entry exists: then an
        unowned entry is created with count 0 (LLONG_MAX for FATAL, or
        RETRYCOUNT) and counted in the result. Entries deleted from the stream
        but still pending are released like any other.
        """
        released = 0
        pel = self.pel
        for sid in ids:
            key = id_key(sid)
            entry = pel.get(key)
            if entry is None:
                if not force or stream.get(sid) is None:
                    continue
                if retry_count is not None:
                    count = retry_count
                else:
                    count = LLONG_MAX if mode == NACK_FATAL else 0
                self._add(key, None, 0, count)
                released += 1
                continue
            self._set_owner(entry, None)
            self._retime(entry, 0)
            if retry_count is not None:
                entry.delivery_count = retry_count
            elif mode == NACK_SILENT:
                if entry.delivery_count > 0:
                    entry.delivery_count -= 1
            elif mode == NACK_FATAL:
                entry.delivery_count = LLONG_MAX
            released += 1
        return released

    # --- XPENDING -----------------------------------------------------------
    def pending_summary(
        self,
    ) -> tuple[int, StreamID | None, StreamID | None, list[tuple[bytes, int]]]:
        """XPENDING key group: total, smallest and largest ID, per-consumer counts.

        Consumers with nothing pending are left out; released (XNACKed)
        entries count in the total only.
        """
        total = len(self.pel)
        if not total:
            return 0, None, None, []
        first, last = self.pel.first_key(), self.pel.last_key()
        assert first is not None and last is not None
        per_consumer = [(c.name, len(c.pel)) for c in self.consumers_in_order() if c.pel]
        return total, _sid(first), _sid(last), per_consumer

    def pending_range(
        self,
        start: StreamID,
        end: StreamID,
        count: int,
        now_ms: int,
        consumer_name: bytes | None = None,
        min_idle_ms: int = 0,
    ) -> list[PendingEntry]:
        """XPENDING key group [IDLE n] start end count [consumer], in ID order.

        O(log P + count) without IDLE; with IDLE the walk skips younger
        entries, as Redis's does. An unknown consumer gives an empty list.
        """
        if count <= 0:
            return []
        if consumer_name is None:
            index = self.pel
        else:
            consumer = self.consumers.get(consumer_name)
            if consumer is None:
                return []
            index = consumer.pel
        lo, hi = id_key(start), id_key(end)
        if not min_idle_ms:
            return index.range_values(lo, hi, count)
        out: list[PendingEntry] = []
        for entry in index.iter_values(lo, hi):
            if now_ms - entry.delivery_time_ms >= min_idle_ms:
                out.append(entry)
                if len(out) == count:
                    break
        return out

    def lag(self, stream: Any) -> int | None:
        return group_lag(stream, self)

    # --- internals ----------------------------------------------------------
    def _consumer_for(self, name: bytes, now_ms: int) -> tuple[Consumer, bool]:
        consumer = self.consumers.get(name)
        created = consumer is None
        if consumer is None:
            consumer = self.consumers[name] = Consumer(name, now_ms)
            self._names_sorted = None
        consumer.seen_time_ms = now_ms
        return consumer, created

    def _advance_to(self, stream: Any, sid: StreamID, first_id: StreamID) -> None:
        # Redis 8.2 streamReplyWithRange: keep counting while the counter is
        # valid and nothing ahead was deleted, otherwise re-derive it.
        entries_read = self.entries_read
        if (
            entries_read is not None
            and self.last_id >= first_id
            and not range_has_tombstones(stream, self.last_id)
        ):
            self.entries_read = entries_read + 1
        elif stream.entries_added:
            self.entries_read = estimate_entries_read(stream, sid, first_id)
        self.last_id = sid

    def _next_tkey(self, time_ms: int) -> int:
        seq = self._touch_seq
        self._touch_seq = seq + 1
        return (time_ms << TOUCH_BITS) | seq

    def _add(self, key: int, consumer: Consumer | None, time_ms: int, count: int) -> PendingEntry:
        if consumer is None:
            entry = PendingEntry(key, self._next_tkey(time_ms), None, count)
            self.nacked_count += 1
        else:
            entry = PendingEntry(key, self._next_tkey(time_ms), consumer.name, count)
            consumer.pel.insert(key, entry)
        self.pel.insert(key, entry)
        self.idle_index.insert(entry.tkey, entry)
        return entry

    def _drop(self, entry: PendingEntry) -> None:
        self.pel.pop(entry.key)
        self.idle_index.pop(entry.tkey)
        owner = entry.owner
        if owner is None:
            self.nacked_count -= 1
        else:
            self.consumers[owner].pel.pop(entry.key)

    def _retime(self, entry: PendingEntry, time_ms: int) -> None:
        index = self.idle_index
        index.pop(entry.tkey)
        entry.tkey = self._next_tkey(time_ms)
        index.insert(entry.tkey, entry)

    def _set_owner(self, entry: PendingEntry, consumer: Consumer | None) -> None:
        owner = entry.owner
        name = None if consumer is None else consumer.name
        if owner == name:
            return
        if owner is None:
            self.nacked_count -= 1
        else:
            self.consumers[owner].pel.pop(entry.key)
        if consumer is None:
            self.nacked_count += 1
        else:
            consumer.pel.insert(entry.key, entry)
        entry.owner = name

    # --- checking -----------------------------------------------------------
    def check_invariants(self) -> None:
        """Assert that the three indexes agree (tests call this after every step)."""
        self.pel.check()
        self.idle_index.check()
        assert len(self.pel) == len(self.idle_index)
        owned = 0
        for name, consumer in self.consumers.items():
            assert consumer.name == name
            consumer.pel.check()
            for entry in consumer.pel:
                assert entry.owner == name
                assert self.pel.get(entry.key) is entry
            owned += len(consumer.pel)
        assert owned + self.nacked_count == len(self.pel)
        nacked = 0
        for entry in self.pel:
            assert self.idle_index.get(entry.tkey) is entry
            assert entry.delivery_count >= 0
            assert entry.tkey >> TOUCH_BITS >= 0
            owner = entry.owner
            if owner is None:
                nacked += 1
            else:
                assert self.consumers[owner].pel.get(entry.key) is entry
        assert nacked == self.nacked_count
        assert self._touch_seq >= len(self.idle_index)
        if self._names_sorted is not None:
            assert self._names_sorted == sorted(self.consumers)


# --- stream-wide operations ----------------------------------------------------
def create_group(
    stream: Any, name: bytes, last_id: StreamID, entries_read: int | None = None
) -> ConsumerGroup | None:
    """XGROUP CREATE with a resolved ID ('$' is the caller's stream.last_id).

    Returns None if the group exists (BUSYGROUP).
    """
    if name in stream.groups:
        return None
    group = stream.groups[name] = ConsumerGroup(name, last_id, entries_read)
    return group


def destroy_group(stream: Any, name: bytes) -> bool:
    """XGROUP DESTROY; True if there was such a group."""
    group = stream.groups.pop(name, None)
    if group is None:
        return False
    return True


def groups_in_order(stream: Any) -> list[ConsumerGroup]:
    """Groups in XINFO order: bytewise by name (Redis keeps them in a rax)."""
    groups = stream.groups
    return [groups[name] for name in sorted(groups)]


def as_long_long(value: int) -> int:
    """A counter as Redis shows it: entries-added, entries-read and lag are C long
    longs that wrap past INT64_MAX (XSETID ENTRIESADDED and XGROUP ENTRIESREAD can
    put them there). rillet keeps the unwrapped counts (persistence writes them as
    they are) and wraps what it reports."""
    return ((value + (1 << 63)) & ((1 << 64) - 1)) - (1 << 63)


def range_has_tombstones(stream: Any, start: StreamID | None, end: StreamID | None = None) -> bool:
    """Redis's streamRangeHasTombstones: may [start, end] hold a deleted entry?"""
    max_deleted = stream.max_deleted_id
    if not stream.length or (max_deleted[0] == 0 and max_deleted[1] == 0):
        return False
    if start is not None and max_deleted < start:
        return False
    if end is not None and max_deleted > end:
        return False
    return True


def estimate_entries_read(
    stream: Any, sid: StreamID, first_id: StreamID | None = None
) -> int | None:
    """Redis's streamEstimateDistanceFromFirstEverEntry: the logical read
    counter of `sid`, or None (SCG_INVALID_ENTRIES_READ) when it cannot be known.
    `first_id` may pass in stream.first_id when the caller already has it.
    """
    entries_added = stream.entries_added
    if not entries_added:
        return 0
    last_id = stream.last_id
    if not stream.length and sid <= last_id:
        return entries_added
    max_deleted = stream.max_deleted_id
    if (sid[0] or sid[1]) and sid < max_deleted:
        return None  # a deletion lies between sid and the end of the stream
    if sid == last_id:
        return entries_added
    if sid > last_id:
        return None
    if first_id is None:
        first_id = stream.first_id
    if (max_deleted[0] == 0 and max_deleted[1] == 0) or max_deleted < first_id:
        if sid < first_id:
            return entries_added - stream.length
        if sid == first_id:
            return entries_added - stream.length + 1
    return None


def group_lag(stream: Any, group: ConsumerGroup) -> int | None:
    """Redis 8.2 streamReplyWithCGLag: entries not yet delivered, or None (nil)."""
    entries_added = stream.entries_added
    if not entries_added or not stream.length:
        return 0
    first_id = stream.first_id
    if group.last_id < first_id and stream.max_deleted_id < first_id:
        # Everything left in the stream is after the group: all of it is lag.
        return stream.length
    if group.entries_read is not None and not range_has_tombstones(stream, group.last_id):
        return as_long_long(entries_added - group.entries_read)
    entries_read = estimate_entries_read(stream, group.last_id)
    if entries_read is None:
        return None
    return as_long_long(entries_added - entries_read)


def is_referenced(stream: Any, sid: StreamID) -> bool:
    """Does any consumer group still need `sid`? (the ACKED policy's test)

    As in Redis 8.2 (checked against 8.2.3): an entry is referenced while it
    is pending in some group's PEL, or lies after some group's last-delivered
    ID, i.e. has not been delivered to every group yet. That holds even for
    an ID that is not in the stream. With no groups nothing is referenced.
    """
    key = id_key(sid)
    for group in stream.groups.values():
        if sid > group.last_id or group.pel.get(key) is not None:
            return True
    return False


def remove_refs(stream: Any, ids: Any) -> int:
    """DELREF: drop the IDs from every group's PEL; returns how many PEL entries went.

    Redis 8.2.3 does this whether or not the stream entry still exists.
    """
    removed = 0
    groups = list(stream.groups.values())
    for sid in ids:
        key = id_key(sid)
        for group in groups:
            entry = group.pel.get(key)
            if entry is not None:
                group._drop(entry)
                removed += 1
    return removed
