"""The keyspace: numbered databases mapping keys to values, with expiry.

Values are `bytes` (strings) or engine objects (`Stream`). Expiry is lazy on
lookup plus an active sampling pass the server runs on a timer; both report
deletions through `on_expire` so they can be propagated as DEL effects.
SCAN cursors are insertion sequence numbers, so a key present for the whole
scan is returned exactly once however the keyspace changes meanwhile.
"""

from __future__ import annotations

import random
from bisect import bisect_left
from collections.abc import Callable, Iterator

from rillet.clock import Clock
from rillet.compiled import as_slots
from rillet.engine.eviction import LfuParams, lfu_new, lfu_touch
from rillet.engine.memory import KEY_OVERHEAD, key_size, value_size
from rillet.engine.stream import NodeLimits, Stream


class Database:
    __slots__ = (
        "index",
        "data",
        "expires",
        "clock",
        "on_expire",
        "expire_mode",
        "expiry_paused",
        "_seq_of",
        "_scan_keys",
        "_scan_seqs",
        "_next_seq",
        "_dead",
        "encodings",
        "sizes",
        "used",
        "pending",
        "access",
        "lru_now",
        "lfu",
        "lrm",
        "in_use",
        "on_new",
        "on_overwrite",
        "streams",
        "on_set_expire",
        "avg_ttl",
    )

    def __init__(self, index: int, clock: Clock) -> None:
        self.index = index
        self.data: dict[bytes, object] = {}
        self.expires: dict[bytes, int] = {}
        self.clock = clock
        self.on_expire: Callable[[Database, bytes], None] | None = None
        # 0: expire due keys. On a replica (Redis 7+), which leaves expiry to its
        # master's DELs: 1 = a due key reads as missing but stays; 2 = it is
        # still there (set while the master's stream is applied).
        self.expire_mode = 0
        # CLIENT PAUSE (WRITE or ALL) pauses expiry, as Redis's PAUSE_ACTION_EXPIRE:
        # a due key reads as missing but stays, uncounted, until the pause ends.
        self.expiry_paused = False
        # INFO keyspace's avg_ttl (ms): Redis's estimate, a running average of the
        # TTLs active expiry samples.
        self.avg_ttl = 0
        self._seq_of: dict[bytes, int] = {}
        self._scan_keys: list[bytes] = []
        self._scan_seqs: list[int] = []
        self._next_seq = 1
        self._dead = 0
        # Strings whose OBJECT ENCODING is not the one their content implies (Redis
        # reports `raw` after APPEND/SETRANGE, `embstr` for INCRBYFLOAT's "3"),
        # until the key is next set.
        self.encodings: dict[bytes, bytes] = {}
        # Memory accounting (engine/memory.py): each key's estimated cost when last
        # measured, their sum, and the keys changed since (measured on demand:
        # `measure`). A write command's key is marked pending by the server's
        # key_modified; nothing is measured per write. Keys loaded without a
        # command are found by `measured` (sizes then has fewer keys than data).
        self.sizes: dict[bytes, int] = {}
        self.used = 0
        self.pending: dict[bytes, None] = {}
        # Per key, Redis's 24-bit LRU/LFU field (engine/eviction.py): the LRU clock
        # of the last access, or under an LFU policy (minutes << 8) | counter.
        # `lru_now` is the current value for an access, kept by the server's cron;
        # `lfu` says which of the two an access records.
        self.access: dict[bytes, int] = {}
        self.lru_now = 0
        self.lfu: LfuParams | None = None
        # Under a Redis 8.6 LRM policy (volatile-lrm, allkeys-lrm) the LRU clock is
        # of the last modification: reads leave it, writes (ServerState.key_modified,
        # `set`) stamp it; the compiled bodies leave such a db to the Python ones.
        self.lrm = False
        # The databases that ever held a key (shared by a Keyspace's databases):
        # memory accounting looks only at these.
        self.in_use: dict[Database, None] = {}
        # Keyspace notifications' `new` and `overwritten`/`type_changed` (set only
        # while notify-keyspace-events enables them): (db, key) and (db, key, old, new).
        self.on_new: Callable[[Database, bytes], None] | None = None
        self.on_overwrite: Callable[[Database, bytes, object, object], None] | None = None
        # Every key that was given a Stream (for the web console, which lists streams
        # without scanning the keyspace). A superset: a stream overwritten in place by
        # another type (SET) stays until the key is deleted, so readers check the value.
        self.streams: dict[bytes, None] = {}

        # A writable replica's: (db, key) when its own clients give a key a TTL (set
        # while expire_mode is 1; the master's stream applies in mode 2). The compiled
        # SET with a TTL leaves a db with this hook to the Python body.
        self.on_set_expire: Callable[[Database, bytes], None] | None = None

    # --- lookups ------------------------------------------------------------
    def get(self, key: bytes) -> object | None:
        """The live value of `key`, expiring it first if its time has come."""
        if self.expires and key in self.expires and self._expire_if_due(key):
            return None
        value = self.data.get(key)
        if value is not None:
            # Redis's lookupKey updates the key's LRU clock / LFU counter.
            lfu = self.lfu
            if lfu is not None:
                self.access[key] = lfu_touch(self.access.get(key, 0), lfu)
            elif not self.lrm:
                self.access[key] = self.lru_now
        return value

    def peek(self, key: bytes) -> object | None:
        """Like `get`, without recording an access (Redis's LOOKUP_NOTOUCH: OBJECT, TYPE, TTL)."""
        if self.expires and key in self.expires and self._expire_if_due(key):
            return None
        return self.data.get(key)

    def exists(self, key: bytes) -> bool:
        return self.get(key) is not None

    def __len__(self) -> int:
        return len(self.data)

    def keys(self) -> Iterator[bytes]:
        now = self.clock.now_ms()
        expires = self.expires
        for key in list(self.data):
            deadline = expires.get(key)
            if deadline is not None and deadline <= now:
                continue
            yield key

    # --- mutation -----------------------------------------------------------
    def set(self, key: bytes, value: object, keep_ttl: bool = False) -> None:
        if value.__class__ is Stream:
            self.streams[key] = None
        if key not in self.data:
            self._remember(key)
            self.access[key] = self.lru_now if self.lfu is None else lfu_new(self.lfu)
            if self.on_new is not None:
                self.on_new(self, key)  # Redis's dbAdd: the `new` event
        elif self.lfu is None:
            self.access[key] = self.lru_now  # a new object; under LFU the counter stays (dbSetValue)
        self.data[key] = value
        if not keep_ttl and self.expires:
            self.expires.pop(key, None)
        if self.encodings:
            self.encodings.pop(key, None)

    def set_key(self, key: bytes, value: object, keep_ttl: bool = False) -> None:
        """Redis's setKey: the key gets a whole new value (SET, GETSET, MSET...), an
        `overwritten` event if it existed; `set` is for changes in place (INCR, APPEND)."""
        if self.on_overwrite is not None:
            old = self.data.get(key)
            if old is not None:
                self.on_overwrite(self, key, old, value)
        self.set(key, value, keep_ttl)

    def delete(self, key: bytes) -> bool:
        if self.get(key) is None:
            return False
        self._forget(key)
        return True

    def drop(self, key: bytes) -> None:
        """Remove `key` now, expired or not (eviction)."""
        self._forget(key)

    def _forget(self, key: bytes) -> None:
        del self.data[key]
        self.used -= self.sizes.pop(key, 0)
        self.access.pop(key, None)
        self.expires.pop(key, None)
        self._seq_of.pop(key, None)
        if self.encodings:
            self.encodings.pop(key, None)
        if self.streams:
            self.streams.pop(key, None)
        self._dead += 1
        if self._dead > 64 and self._dead > len(self._scan_keys) // 2:
            self._compact_scan_order()

    def rename(self, old: bytes, new: bytes) -> None:
        value = self.data[old]
        deadline = self.expires.get(old)
        encoding = self.encodings.get(old)
        access = self.access.get(old)
        self._forget(old)
        if new in self.data:
            self._forget(new)
        self.set(new, value)
        if deadline is not None:
            self.set_expire(new, deadline)  # (a writable replica remembers the new name's TTL)
        if encoding is not None:
            self.encodings[new] = encoding
        if access is not None:
            self.access[new] = access  # Redis moves the object: its LRU/LFU field goes along

    def swap_contents(self, other: Database) -> None:
        """SWAPDB: exchange every key (and TTL, SCAN order) with `other`; indexes stay."""
        self.in_use[self] = None
        self.in_use[other] = None
        for slot in ("data", "expires", "_seq_of", "_scan_keys", "_scan_seqs", "_next_seq", "_dead", "encodings",
                     "sizes", "used", "pending", "access", "streams", "avg_ttl"):
            mine, theirs = getattr(self, slot), getattr(other, slot)
            setattr(self, slot, theirs)
            setattr(other, slot, mine)

    def flush(self) -> None:
        self.data.clear()
        self.expires.clear()
        self._seq_of.clear()
        self._scan_keys.clear()
        self._scan_seqs.clear()
        self._dead = 0
        self.encodings.clear()
        self.sizes.clear()
        self.used = 0
        self.pending.clear()
        self.access.clear()
        self.streams.clear()
        self.avg_ttl = 0

    # --- memory -------------------------------------------------------------
    def measure(self) -> int:
        """Re-estimate the keys changed since the last call; returns the database's total."""
        pending = self.pending
        if pending:
            data = self.data
            sizes = self.sizes
            used = self.used
            for key in pending:
                value = data.get(key)
                old = sizes.get(key, 0)
                if value is None:
                    if old:
                        del sizes[key]
                        used -= old
                    continue
                new = KEY_OVERHEAD + len(key) + value_size(value)
                sizes[key] = new
                used += new - old
            self.used = used
            pending.clear()
        return self.used

    def forget_sizes(self) -> None:
        """Measure every key anew when next asked (`measured`), as after a snapshot
        load: for keys that came in bulk (an AOF replayed), one pass then costs less
        than one per key now."""
        self.sizes.clear()
        self.used = 0
        self.pending.clear()

    def remeasure(self) -> int:
        """Every key measured anew: after a load (RDB, full sync), whose keys no
        command signalled. `sizes` then covers every key again."""
        sizes: dict[bytes, int] = {}
        used = 0
        for key, value in self.data.items():
            size = sizes[key] = key_size(key, value)
            used += size
        self.sizes = sizes
        self.used = used
        self.pending.clear()
        return used

    def measured(self) -> int:
        """The total with every key counted: pending ones measured, and all of them
        if some key arrived unsignalled (loading: `sizes` then misses keys)."""
        if self.pending:
            self.measure()
        if len(self.sizes) != len(self.data):
            return self.remeasure()
        return self.used

    # --- expiry -------------------------------------------------------------
    def set_expire(self, key: bytes, deadline_ms: int) -> None:
        self.expires[key] = deadline_ms
        if self.on_set_expire is not None and self.expire_mode == 1:
            self.on_set_expire(self, key)

    def persist(self, key: bytes) -> bool:
        return self.expires.pop(key, None) is not None

    def ttl_ms(self, key: bytes) -> int | None:
        """Remaining ms, or None when the key has no expiry."""
        deadline = self.expires.get(key)
        if deadline is None:
            return None
        return max(0, deadline - self.clock.now_ms())

    def _expire_if_due(self, key: bytes) -> bool:
        if self.expires[key] > self.clock.now_ms():
            return False
        if self.expire_mode or self.expiry_paused:
            # Kept: missing to readers, except to a master's stream (mode 2).
            return self.expire_mode != 2
        self._drop_expired(key)
        return True

    def expire_due(self, key: bytes) -> bool:
        """Expire `key` if it has a TTL that has passed, whatever expire_mode says
        (a writable replica's own keys: replication's OwnExpiries); True if it did."""
        deadline = self.expires.get(key)
        if deadline is None or deadline > self.clock.now_ms():
            return False
        self._drop_expired(key)
        return True

    def _drop_expired(self, key: bytes) -> None:
        self._forget(key)
        if self.on_expire is not None:
            self.on_expire(self, key)

    def active_expire(self, samples: int = 20, max_rounds: int = 16) -> int:
        """Redis's active expiry: sample keys with a TTL, repeat while >25% were due."""
        removed = 0
        if self.expire_mode or self.expiry_paused:
            return 0  # a replica (its master sends the DELs), or paused
        for _ in range(max_rounds):
            if not self.expires:
                self.avg_ttl = 0
                break
            keys = random.sample(list(self.expires), min(samples, len(self.expires)))
            due = [k for k in keys if k in self.expires and self._expire_if_due(k)]
            removed += len(due)
            now = self.clock.now_ms()
            ttls = [ttl for k in keys if k in self.expires and (ttl := self.expires[k] - now) > 0]
            if ttls:
                # Redis's activeExpireCycle: the new figure weighs 2%.
                average = sum(ttls) // len(ttls)
                self.avg_ttl = average if not self.avg_ttl else (
                    self.avg_ttl // 50 * 49 + average // 50)
            if len(due) * 4 <= len(keys):
                break
        return removed

    # --- SCAN ---------------------------------------------------------------
    def _remember(self, key: bytes) -> None:
        if self not in self.in_use:
            self.in_use[self] = None
        seq = self._next_seq
        self._next_seq += 1
        self._seq_of[key] = seq
        self._scan_keys.append(key)
        self._scan_seqs.append(seq)

    def _compact_scan_order(self) -> None:
        live = [(s, k) for k, s in zip(self._scan_keys, self._scan_seqs, strict=True)
                if self._seq_of.get(k) == s]
        self._scan_seqs = [s for s, _ in live]
        self._scan_keys = [k for _, k in live]
        self._dead = 0

    def scan(self, cursor: int, count: int) -> tuple[int, list[bytes]]:
        """Up to `count` live keys from `cursor` on; returns (next cursor or 0, keys)."""
        start = bisect_left(self._scan_seqs, cursor)
        keys: list[bytes] = []
        i = start
        n = len(self._scan_keys)
        seq_of = self._seq_of
        while i < n and len(keys) < count:
            key = self._scan_keys[i]
            if seq_of.get(key) == self._scan_seqs[i]:
                keys.append(key)
            i += 1
        if i >= n:
            return 0, keys
        return self._scan_seqs[i], keys

    def random_key(self) -> bytes | None:
        tries = 100
        # The names once: a key a try deletes (expired) stays in the list and is skipped.
        names = list(self.data)
        while self.data:
            key = random.choice(names)
            if self.get(key) is not None:
                return key
            if key in self.data and len(self.expires) == len(self.data):
                # Due keys kept (a replica, a pause) may be all there is: as Redis's
                # randomKey, after 100 tries one of them is the answer.
                tries -= 1
                if not tries:
                    return key
        return None


class Keyspace:
    """All databases of one server."""

    __slots__ = ("dbs", "stream_limits")

    def __init__(self, count: int, clock: Clock) -> None:
        self.dbs = [Database(i, clock) for i in range(count)]
        in_use: dict[Database, None] = {}
        for db in self.dbs:
            db.in_use = in_use
        # stream-node-max-entries/-bytes, shared by every stream of the server
        # (the server's config updates this one object on CONFIG SET).
        self.stream_limits = NodeLimits()

    def __getitem__(self, index: int) -> Database:
        return self.dbs[index]

    def __len__(self) -> int:
        return len(self.dbs)

    def flush_all(self) -> None:
        for db in self.dbs:
            db.flush()


# (Compiled: an extension type, engine/keyspace.pxd; its fields read as slots from Python.)
as_slots(Database)
