"""maxmemory: `used_memory`, the OOM refusal and eviction (Redis's evict.c).

`used_memory` is `STARTUP_BYTES` plus the sum of every key's estimated cost
(engine/memory.py), kept per database and re-measured only for the keys
written since the last look (`Database.pending`), so the check before a
command costs a few dict operations however large the dataset.

`refuse` is Redis's processCommand step: performEvictions, then `-OOM` for a
DENYOOM command (or an EXEC holding one, or a script that declared flags
without allow-oom) if memory is still over the limit. The dispatcher runs it
before every command of a gated client, and before the commands that may grow
memory (`CommandSpec.oom_check`) of the others, the compiled fast path too;
the cron evicts as well while over the limit. With `maxmemory 0` it costs one
attribute read on DENYOOM commands.

An evicted key leaves through the one write path as a DEL effect (replicas,
AOF), with the `evicted` keyspace event, as Redis's
deleteEvictedKeyAndPropagate.
"""

from __future__ import annotations

import random
import time
from typing import TYPE_CHECKING, Protocol

from rillet.compiled import as_slots
from rillet.engine.eviction import (
    ALLKEYS_POLICIES,
    EvictionPool,
    LfuParams,
    lfu_minutes,
    lru_clock,
    sample_keys,
)
from rillet.notify import EVICTED

if TYPE_CHECKING:
    from rillet.engine.keyspace import Database
    from rillet.state import Client, ServerState


class SpecFlags(Protocol):
    """What the OOM check reads of a command (commands/table.py's CommandSpec)."""

    name: str
    flags: frozenset[str]

    @property
    def is_write(self) -> bool: ...

# What an empty server reports (Redis 8's used_memory_startup is ~0.9 MB); the
# interpreter's own heap is not counted, as Redis does not count its binary.
STARTUP_BYTES = 1024 * 1024

EVICT_OK, EVICT_RUNNING, EVICT_FAIL = 0, 1, 2
_CHECK_EVERY = 16  # keys evicted between two looks at the time limit (as evict.c)


def time_limit_us(tenacity: int) -> float:
    """evictionTimeLimitUs: maxmemory-eviction-tenacity as a time budget per call."""
    if tenacity <= 10:
        return 50.0 * tenacity
    if tenacity < 100:
        return 500.0 * 1.15 ** (tenacity - 10)
    return float("inf")


class Memory:
    """The server's memory accounting and eviction (ServerState.memory)."""

    __slots__ = ("state", "limit", "policy", "samples", "tenacity", "lfu", "pool",
                 "peak", "peak_time", "_next_db", "running", "exceeded_since_us",
                 "ignore_on_replica")

    def __init__(self, state: ServerState) -> None:
        self.state = state
        config = state.config
        self.lfu = LfuParams(config["lfu-log-factor"], config["lfu-decay-time"])
        self.pool = EvictionPool()
        self.peak = STARTUP_BYTES
        self.peak_time = 0.0  # unix seconds of the peak (INFO used_memory_peak_time)
        self._next_db = 0  # the random policies visit the databases in turn
        self.running = False  # eviction went past its time limit; the cron carries on
        self.exceeded_since_us = 0  # when memory went over the limit (0: not over)
        self.limit = 0
        self.policy = "noeviction"
        self.samples = 5
        self.tenacity = 10
        self.ignore_on_replica = True
        for name in ("maxmemory", "maxmemory-policy", "maxmemory-samples",
                     "maxmemory-eviction-tenacity", "lfu-log-factor", "lfu-decay-time",
                     "replica-ignore-maxmemory"):
            config.watch(name, lambda _value: self.configure())
        self.configure()

    def configure(self) -> None:
        config = self.state.config
        self.limit = int(config["maxmemory"])
        policy = str(config["maxmemory-policy"])
        if policy != self.policy:
            self.pool.clear()
        self.policy = policy
        self.samples = int(config["maxmemory-samples"])
        self.tenacity = int(config["maxmemory-eviction-tenacity"])
        self.lfu.log_factor = int(config["lfu-log-factor"])
        self.lfu.decay_time = int(config["lfu-decay-time"])
        self.ignore_on_replica = bool(config["replica-ignore-maxmemory"])
        lfu = self.lfu if "lfu" in policy else None
        lrm = policy.endswith("lrm")
        for db in self.state.keyspace.dbs:
            db.lfu = lfu
            db.lrm = lrm
        self.tick()

    def tick(self) -> None:
        """Redis's cron updates of the LRU clock and the LFU minute clock."""
        now_ms = self.state.clock.now_ms()
        lru = lru_clock(now_ms)
        self.lfu.minutes = lfu_minutes(now_ms)
        for db in self.state.keyspace.dbs:
            db.lru_now = lru

    def cron(self) -> None:
        self.tick()
        if self.limit:
            # Commands evict before DENYOOM commands only; this catches the rest
            # (a lowered maxmemory, a PEL grown by reads), as Redis's eviction timer.
            if self._may_evict():
                self.perform_evictions()
        elif not self.state._loading:  # (a replayed AOF's keys: see load_aof)
            # Nobody asks before each command: measure here, so the pending keys never pile up.
            for db in self.state.keyspace.dbs:
                if db.pending:
                    db.measure()

    # --- accounting ------------------------------------------------------------------
    def used(self) -> int:
        total = STARTUP_BYTES
        for db in self.state.keyspace.dbs[0].in_use:
            if db.pending:
                db.measure()
            # Keys that came without a command (loading) are missing from `sizes`.
            total += db.used if len(db.sizes) == len(db.data) else db.remeasure()
        if total > self.peak:
            self.peak = total
            self.peak_time = self.state.clock.now_ms() / 1000
        return total

    # --- processCommand's step ---------------------------------------------------------
    def _may_evict(self) -> bool:
        """isSafeToPerformEvictions: not while loading or a script is busy, not on a
        replica that ignores maxmemory (its master's DELs keep it in step), not while
        writes are paused (CLIENT PAUSE WRITE/ALL, a FAILOVER, a shutdown waiting for
        replicas: Redis's PAUSE_ACTION_EVICT, so nothing reaches the replicas meanwhile)."""
        state = self.state
        if state._loading or state._script_busy is not None:
            return False
        if state.pause_end_ms and state.clock.now_ms() < state.pause_end_ms:
            return False
        replication = state.replication
        if replication is None:
            return True
        if replication.failover.paused or replication.shutdown.waiting:
            return False
        return not (replication.master_host is not None and self.ignore_on_replica)

    def refuse(self, client: Client, spec: SpecFlags, argv: list[bytes]) -> bool:
        """True if `spec` must get -OOM: memory is over the limit after evicting what we may."""
        if not self._may_evict():
            return False
        state = self.state
        tracking = state.tracking
        tracking.before_command = True
        try:
            out = self.perform_evictions() == EVICT_FAIL
        finally:
            tracking.before_command = False
        state.pre_command_oom = out
        if not out:
            return False
        if "denyoom" in spec.flags:
            return True
        multi = client.multi
        if spec.name == "exec" and multi is not None:
            # Redis 8 refuses only DENYOOM commands while queuing (7.x refused any),
            # and an EXEC holding one.
            return any("denyoom" in queued.flags or script_denyoom(state, queued, queued_argv)
                       for queued, queued_argv in multi)
        return script_denyoom(state, spec, argv)

    def perform_evictions(self) -> int:
        """evict.c performEvictions: evict by the policy until under the limit."""
        limit = self.limit
        if not limit:
            return EVICT_OK
        used = self.used()
        if used <= limit:
            if self.running or self.exceeded_since_us:
                self.running = False
                self._exceeded(False)
            return EVICT_OK
        self._exceeded(True)
        if self.policy == "noeviction":
            return EVICT_FAIL
        started = time.perf_counter_ns()
        budget_ns = time_limit_us(self.tenacity) * 1000
        freed_keys = 0
        while used > limit:
            victim = self._random_victim() if self.policy.endswith("random") else self._pooled_victim()
            if victim is None:
                self.running = False
                return EVICT_FAIL  # nothing left that the policy may evict
            db, key = victim
            # Every key was measured by used() above: its recorded size is what goes.
            used -= self._evict(db, key)
            freed_keys += 1
            if freed_keys % _CHECK_EVERY == 0 and time.perf_counter_ns() - started > budget_ns:
                # Over the time budget: the cron goes on evicting (evict.c's timer proc).
                self.running = used > limit
                return EVICT_RUNNING if self.running else EVICT_OK
        self.running = False
        self._exceeded(False)
        return EVICT_OK

    def _exceeded(self, over: bool) -> None:
        now_us = time.monotonic_ns() // 1000
        if over:
            if not self.exceeded_since_us:
                self.exceeded_since_us = now_us
        elif self.exceeded_since_us:
            self.state.stats.eviction_exceeded_us += now_us - self.exceeded_since_us
            self.exceeded_since_us = 0

    def exceeded_times_ms(self) -> list[tuple[str, int]]:
        """INFO's total_/current_eviction_exceeded_time: time spent over maxmemory."""
        current = 0
        if self.exceeded_since_us:
            current = time.monotonic_ns() // 1000 - self.exceeded_since_us
        total = self.state.stats.eviction_exceeded_us + current
        return [("total_eviction_exceeded_time", total // 1000),
                ("current_eviction_exceeded_time", current // 1000)]

    def _candidate_dbs(self, volatile: bool) -> list[Database]:
        return [db for db in self.state.keyspace.dbs if (db.expires if volatile else db.data)]

    def _pooled_victim(self) -> tuple[Database, bytes] | None:
        volatile = self.policy not in ALLKEYS_POLICIES
        dbs = self.state.keyspace.dbs
        while True:
            candidates = self._candidate_dbs(volatile)
            if not candidates:
                return None
            for db in candidates:
                self.pool.populate(db, self.policy, self.samples, self.lfu)
            while True:
                best = self.pool.best()
                if best is None:
                    break  # every pooled key was gone: sample again
                index, key = best
                db = dbs[index]
                # The pool may hold keys deleted (or whose TTL went) since they were sampled.
                if key in db.data and (not volatile or key in db.expires):
                    return db, key

    def _random_victim(self) -> tuple[Database, bytes] | None:
        volatile = self.policy not in ALLKEYS_POLICIES
        dbs = self.state.keyspace.dbs
        for step in range(len(dbs)):
            db = dbs[(self._next_db + step) % len(dbs)]
            pool = db.expires if volatile else db.data
            if not pool:
                continue
            self._next_db = (self._next_db + step + 1) % len(dbs)
            keys = sample_keys(db, 1, volatile)
            if keys:
                return db, keys[0]
            return db, random.choice(list(pool))
        return None

    def _evict(self, db: Database, key: bytes) -> int:
        """deleteEvictedKeyAndPropagate: delete, DEL effect, WATCH/blocked signal, event.
        Returns the bytes the key was counted for."""
        state = self.state
        freed = db.sizes.get(key, 0)
        db.drop(key)
        state.publish([(db.index, [b"DEL", key])])
        state.key_modified(db.index, key, 0)
        state.notify(EVICTED, b"evicted", key, db.index)
        state.stats.evicted_keys += 1
        return freed


# The commands whose flags are their script's, when it declares some (Redis's getCommandFlags).
SCRIPT_COMMANDS = frozenset({"eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro"})


def _declared(state: ServerState, spec: SpecFlags, argv: list[bytes]) -> frozenset[str] | None:
    flags_of = state.script_flags
    if flags_of is None or spec.name not in SCRIPT_COMMANDS:
        return None
    return flags_of(spec.name, argv)


def script_denyoom(state: ServerState, spec: SpecFlags, argv: list[bytes]) -> bool:
    """EVAL/EVALSHA/FCALL (and their _RO forms) are DENYOOM when the script's flags
    say so (scriptFlagsToCmdFlags)."""
    flags = _declared(state, spec, argv)
    return flags is not None and "no-writes" not in flags and "allow-oom" not in flags


def script_writes(state: ServerState, spec: SpecFlags, argv: list[bytes]) -> bool:
    """EVAL/EVALSHA/FCALL (and their _RO forms) are writes when the script declares
    flags without `no-writes` (scriptFlagsToCmdFlags): READONLY, MISCONF and NOREPLICAS
    refuse it before it runs. A script without a shebang is judged at its writes."""
    flags = _declared(state, spec, argv)
    return flags is not None and "no-writes" not in flags


def writes(state: ServerState, client: Client, spec: SpecFlags, argv: list[bytes]) -> bool:
    """Redis's is_write_command: a write, a script declared to write, or EXEC of a
    transaction holding one (the queued commands' flags, c->mstate.cmd_flags)."""
    if spec.is_write or script_writes(state, spec, argv):
        return True
    multi = client.multi
    return spec.name == "exec" and multi is not None and any(
        queued.is_write or script_writes(state, queued, queued_argv) for queued, queued_argv in multi)


def _may_replicate(state: ServerState, spec: SpecFlags, argv: list[bytes]) -> bool:
    flags = _declared(state, spec, argv)
    if flags is not None:
        # Declared flags replace the command's: a `no-writes` script neither writes
        # nor may replicate (scriptFlagsToCmdFlags clears CMD_MAY_REPLICATE).
        return "no-writes" not in flags
    return spec.is_write or "may_replicate" in spec.flags


def may_replicate(state: ServerState, client: Client, spec: SpecFlags, argv: list[bytes]) -> bool:
    """Redis's is_may_replicate_command, what a write pause (CLIENT PAUSE WRITE,
    FAILOVER, a shutdown waiting for replicas) holds: a write or a may-replicate
    command (PUBLISH, EVAL, FCALL...), scripts going by their declared flags, or
    EXEC of a transaction holding one."""
    if _may_replicate(state, spec, argv):
        return True
    multi = client.multi
    return spec.name == "exec" and multi is not None and any(
        _may_replicate(state, queued, queued_argv) for queued, queued_argv in multi)


# (Compiled: an extension type, memory.pxd; its fields read as slots from Python.)
as_slots(Memory)
