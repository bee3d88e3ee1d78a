"""The server's policy for CPython's cyclic garbage collector: keep it out of the latency tail.

Redis has no collector; a Python server has one, and a full collection walks
every tracked object: with 1M keys (5M objects) that is ~2 s of CPU
(bench/gc_pauses.py). Reference counting frees almost everything the server
drops; the collector is only needed for reference cycles. The policy:

- young collections once 10,000 more container objects are alive
  (`THRESHOLDS`), so a collection walks ~10,000 objects at most (< 1.5 ms);
- what startup built (imports, configuration) and what a dataset load made
  (persistence/loader.py) is frozen: `gc.freeze()` moves it to the permanent
  generation, which collections never walk;
- after every collection its survivors are frozen too (a gc.callbacks hook):
  they were alive when it ran, its garbage is gone, and no collection walks
  them again. The older generations stay empty: no full collection ever walks
  the keyspace, each object is examined once;
- every `gc-freeze-interval` ms (a rillet parameter, default 1000, 0 = never)
  the cron freezes whatever is young, so at a low allocation rate (the seeds'
  latency test) no collection runs at all;
- frozen objects are still freed by reference counting, but a cycle among
  them that becomes garbage is not. The server's own cycles are cut where they
  die (a closed connection, server/connection.py; an error reply's traceback,
  dispatch.py). As a bound on what an unnoticed cycle can leak, once objects
  amounting to `gc-sweep-growth` percent of the frozen set (default 100, 0 =
  never; and SWEEP_MIN_GROWTH at least) have been frozen since the last sweep, the cron
  unfreezes, runs one full collection and freezes the survivors: a pause as
  long as a full collection, at most once per doubling of the heap (CPython's
  own rule runs one at 25%). A sweep that finds garbage logs it: a cycle to cut.
"""

from __future__ import annotations

import gc
import logging
import time
from collections.abc import Callable

log = logging.getLogger("rillet")

# gen0: a young collection once 10,000 more container objects are alive than at
# the last one (Python's default, 700, ran them dozens of times a second under
# load). Its cost grows with the survivors: creating keys, where all survive,
# the longest took 1.45 ms of CPU at 10,000 and 7.5 ms at 50,000 (beside 1M
# keys; 0.75 and 4.6 ms beside 20,000: bench/gc_pauses.py). gen1 and gen2:
# freezing the survivors keeps those generations empty, so their collections
# cost what a young one does.
THRESHOLDS = (10_000, 10, 10)


# A sweep walks every object (~0.4 µs each): none for less growth than this, so a
# small server does not pause tens of ms for a few thousand new objects.
SWEEP_MIN_GROWTH = 100_000


class _Baseline:
    """The sweep rule's state: the frozen objects after the last sweep or load, and how
    many have been frozen since. Counted as they are frozen, because counting the
    frozen set (gc.get_freeze_count) walks all of it: ~0.5 s at 5M objects."""

    frozen = 0
    added = 0
    sweeping = False


_baseline = _Baseline()


def rebase() -> None:
    """What is frozen now is the live baseline (after a dataset load: it is all data).
    Walks the frozen set once: at startup, after a load, after a sweep."""
    _baseline.frozen = gc.get_freeze_count()
    _baseline.added = 0


def freeze() -> None:
    """gc.freeze(), counting what it moves: the unfrozen objects, young ones only
    (each collection's survivors are frozen at once), so the count is cheap."""
    _baseline.added += len(gc.get_objects())
    gc.freeze()


def _freeze_survivors(phase: str, info: dict) -> None:
    """After each collection, freeze what it left: those objects were alive when it ran
    (its garbage is gone), and no later collection walks them again. So the older
    generations stay empty and every collection is a young one over at most
    THRESHOLDS[0] objects; each object is examined once."""
    if phase == "stop" and not _baseline.sweeping:
        freeze()


def start() -> None:
    """Interpreter settings for a server process, then freeze what startup built."""
    gc.set_threshold(*THRESHOLDS)
    gc.collect()
    gc.freeze()
    rebase()
    if _freeze_survivors not in gc.callbacks:
        gc.callbacks.append(_freeze_survivors)


def stop() -> None:
    """Undo start()'s callback (tests)."""
    if _freeze_survivors in gc.callbacks:
        gc.callbacks.remove(_freeze_survivors)


def sweep() -> int:
    """One full collection over the frozen objects too; the survivors frozen again.

    Returns the unreachable objects found (cycles that died after being frozen)."""
    began = time.perf_counter()
    _baseline.sweeping = True  # no counting freeze from the callback: all is unfrozen
    gc.unfreeze()
    try:
        found = gc.collect()
    finally:
        gc.freeze()
        _baseline.sweeping = False
    rebase()
    took_ms = (time.perf_counter() - began) * 1000
    if found:
        log.warning("GC sweep: %d unreachable objects among the frozen ones (%.0f ms, %d frozen)",
                    found, took_ms, _baseline.frozen)
    else:
        log.info("GC sweep: nothing unreachable (%.0f ms, %d frozen)", took_ms, _baseline.frozen)
    return found


class GcCron:
    """The cron's part: freeze every `gc-freeze-interval` ms, sweep on growth."""

    __slots__ = ("_config", "_last_freeze")

    def __init__(self, config: Callable[[str], int]) -> None:
        self._config = config
        self._last_freeze = 0.0

    def tick(self, now_s: float) -> int | None:
        """Freeze when due; returns what a sweep found, None when none ran."""
        interval_ms = int(self._config("gc-freeze-interval"))
        if not interval_ms or (now_s - self._last_freeze) * 1000 < interval_ms:
            return None
        self._last_freeze = now_s
        freeze()
        growth = int(self._config("gc-sweep-growth"))
        # Frozen since the last sweep, gross (what has been freed since is not known
        # without a walk): as CPython's own rule counts objects promoted to gen2.
        if growth and _baseline.added > max(_baseline.frozen * growth // 100, SWEEP_MIN_GROWTH):
            return sweep()
        return None
