"""Per-key access data (Redis's LRU clock and LFU counter) and eviction candidates.

Each key has Redis's 24-bit `lru` field in `Database.access`: under an LRU
policy (and noeviction, random, ttl) the LRU clock, seconds mod 2**24, of the
last access; under an LFU policy (minutes mod 2**16) << 8 | a logarithmic
counter (evict.c: LFULogIncr, LFUDecrAndReturn). Switching policy at run time
reinterprets the field, as in Redis.

`EvictionPool` is evict.c's pool: each call samples `maxmemory-samples` keys
per database, keeps the best 16 candidates across calls, and gives the one
with the highest idle score (LRU: idle time; LFU: 255 - frequency; TTL: the
sooner it expires, the higher). Sampling draws from each database's SCAN
order list, O(samples), never a copy of the keyspace.
"""

from __future__ import annotations

import random
from bisect import insort

LRU_CLOCK_MAX = (1 << 24) - 1
LFU_INIT_VAL = 5
POOL_SIZE = 16

ALLKEYS_POLICIES = ("allkeys-lru", "allkeys-lfu", "allkeys-random", "allkeys-lrm")
VOLATILE_POLICIES = ("volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl",
                     "volatile-lrm")


class LfuParams:
    """lfu-log-factor, lfu-decay-time and the current LFU minute clock, shared by all dbs."""

    __slots__ = ("log_factor", "decay_time", "minutes")

    def __init__(self, log_factor: int = 10, decay_time: int = 1) -> None:
        self.log_factor = log_factor
        self.decay_time = decay_time
        self.minutes = 0


def lru_clock(now_ms: int) -> int:
    return (now_ms // 1000) & LRU_CLOCK_MAX


def lfu_minutes(now_ms: int) -> int:
    return (now_ms // 60000) & 65535


def lfu_new(params: LfuParams) -> int:
    return (params.minutes << 8) | LFU_INIT_VAL


def lfu_decayed(field: int, params: LfuParams) -> int:
    """LFUDecrAndReturn: the counter less one per lfu-decay-time minutes since its last access."""
    last = field >> 8
    counter = field & 255
    if params.decay_time:
        now = params.minutes
        elapsed = now - last if now >= last else 65535 - last + now
        periods = elapsed // params.decay_time
        if periods:
            counter = 0 if periods > counter else counter - periods
    return counter


def lfu_touch(field: int, params: LfuParams) -> int:
    """updateLFU: decay, then a logarithmic increment (p = 1 / ((c - 5) * factor + 1))."""
    counter = lfu_decayed(field, params)
    if counter < 255:
        base = counter - LFU_INIT_VAL
        if base < 0:
            base = 0
        if random.random() < 1.0 / (base * params.log_factor + 1):
            counter += 1
    return (params.minutes << 8) | counter


def idle_ms(field: int, lru_now: int) -> int:
    """estimateObjectIdleTime: ms since the access the LRU field records."""
    if lru_now >= field:
        return (lru_now - field) * 1000
    return (lru_now + (LRU_CLOCK_MAX - field)) * 1000


def set_lru_or_lfu(db, key: bytes, freq: int, idle_s: int) -> None:
    """objectSetLRUOrLFU (RESTORE's FREQ / IDLETIME): -1 leaves the field as it is."""
    if db.lfu is not None:
        if freq >= 0:
            db.access[key] = (db.lfu.minutes << 8) | freq
    elif idle_s >= 0:
        absolute = db.lru_now - idle_s
        if absolute < 0:
            absolute += LRU_CLOCK_MAX
        db.access[key] = absolute


def sample_keys(db, count: int, volatile: bool) -> list[bytes]:
    """Up to `count` distinct live keys of `db` at random (with a TTL if `volatile`)."""
    keys, seqs, seq_of = db._scan_keys, db._scan_seqs, db._seq_of
    n = len(keys)
    found: dict[bytes, None] = {}
    if not n:
        return []
    expires = db.expires
    tries = count * (8 if volatile else 3)
    draw = random.random
    for _ in range(tries):
        i = int(draw() * n)
        key = keys[i]
        if seq_of.get(key) != seqs[i]:
            continue  # a dead slot of the SCAN order
        if volatile and key not in expires:
            continue
        found[key] = None
        if len(found) >= count:
            break
    if volatile and not found and expires:
        # Keys with a TTL are rare among the keys: draw from them directly.
        found = dict.fromkeys(random.sample(list(expires), min(count, len(expires))))
    return list(found)


class EvictionPool:
    """evict.c's EVPOOL: the best candidates seen so far, (score, db index, key), ascending."""

    __slots__ = ("entries",)

    def __init__(self) -> None:
        self.entries: list[tuple[int, int, bytes]] = []

    def clear(self) -> None:
        self.entries.clear()

    def populate(self, db, policy: str, samples: int, lfu: LfuParams) -> None:
        """evictionPoolPopulate: score `samples` keys of `db`, keep the best POOL_SIZE."""
        volatile = policy.startswith("volatile")
        entries = self.entries
        access = db.access
        present = {(index, key) for _, index, key in entries}
        for key in sample_keys(db, samples, volatile):
            if policy.endswith(("lru", "lrm")):  # LRM: the same clock, of modifications
                score = idle_ms(access.get(key, db.lru_now), db.lru_now)
            elif policy.endswith("lfu"):
                score = 255 - lfu_decayed(access.get(key, 0), lfu)
            else:  # volatile-ttl: the sooner it expires, the better a candidate
                score = (1 << 64) - db.expires[key]
            if (db.index, key) in present:
                continue
            if len(entries) >= POOL_SIZE:
                if score <= entries[0][0]:
                    continue
                del entries[0]
            insort(entries, (score, db.index, key))

    def best(self) -> tuple[int, bytes] | None:
        """The highest-scored candidate, taken out of the pool."""
        if not self.entries:
            return None
        _, index, key = self.entries.pop()
        return index, key
