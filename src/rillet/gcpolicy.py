"""The server's policy for CPython's cyclic garbage collector: keep it out of the latency tail.

Redis has no collector; a Python server has one, and a full collection walks
every tracked object: with 1M keys (5M objects) that is ~2 s of CPU
(bench/gc_pauses.py). Reference counting frees almost everything the server
drops; the collector is only needed for reference cycles. The policy:

- thresholds 50,000/20/100 (`THRESHOLDS`): young collections rarely, and then
  over few objects (the latency test's load runs none in 10 s; creating keys
  with ~10 objects each, one every 5,000 keys, a few ms each);
- everything alive once the server is up (imports, configuration) and after a
  dataset load (persistence/loader.py) is frozen: `gc.freeze()` moves it to the
  permanent generation, which collections never walk;
- every `gc-freeze-interval` ms (a rillet parameter, default 1000, 0 = never)
  the cron freezes again, so the keyspace built at run time never reaches a
  full collection either;
- frozen objects are still freed by reference counting, but a cycle among
  them that becomes garbage is not: the server's own cycles are cut where they
  die (a closed connection: server/connection.py; a stream's consumer groups
  are not yet, see docs/compat.md). As a bound on what an unnoticed cycle can
  leak, once the frozen set has grown by `gc-sweep-growth` percent (default
  100, 0 = never; and by at least 100,000 objects) since the last sweep, the cron unfreezes, runs one full
  collection, and freezes the survivors (a sweep: a pause as long as a full
  collection, at most once per doubling of the heap, as CPython's own rule
  does at 25%). Cyclic garbage found by a sweep is logged: it names a cycle to cut.
"""

from __future__ import annotations

import gc
import logging
import time
from collections.abc import Callable

log = logging.getLogger("rillet")

# gen0: 50,000 net container allocations between young collections (Python's
# default, 700, ran them dozens of times a second under load); gen1 and gen2:
# the multipliers, which freezing keeps from mattering.
THRESHOLDS = (50_000, 20, 100)


# A sweep walks every object (~0.4 µs each): none for less growth than this, so a
# small server does not pause tens of ms for a few thousand new objects.
SWEEP_MIN_GROWTH = 100_000


class _Baseline:
    """Frozen objects after the last sweep (or load): what the sweep rule compares with."""

    frozen = 0


_baseline = _Baseline()


def rebase() -> None:
    """What is frozen now is the live baseline (after a dataset load: it is all data)."""
    _baseline.frozen = gc.get_freeze_count()


def start() -> None:
    """Interpreter settings for a server process, then freeze what startup built."""
    gc.set_threshold(*THRESHOLDS)
    gc.collect()
    gc.freeze()
    rebase()


def sweep() -> int:
    """One full collection over the frozen objects too; the survivors frozen again.

    Returns the unreachable objects found (cycles that died after being frozen)."""
    began = time.perf_counter()
    gc.unfreeze()
    try:
        found = gc.collect()
    finally:
        gc.freeze()
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

    def __init__(self, config: Callable[[str], object]) -> None:
        self._config = config
        self._last_freeze = 0.0

    def tick(self, now_s: float) -> int | None:
        """Freeze when due; returns what a sweep found, None when none ran."""
        interval_ms = int(self._config("gc-freeze-interval"))  # type: ignore[call-overload]
        if not interval_ms or (now_s - self._last_freeze) * 1000 < interval_ms:
            return None
        self._last_freeze = now_s
        gc.freeze()  # O(1) in CPython: splices the generations' lists
        growth = int(self._config("gc-sweep-growth"))  # type: ignore[call-overload]
        if growth:
            base = _baseline.frozen
            if gc.get_freeze_count() - base > max(base * growth // 100, SWEEP_MIN_GROWTH):
                return sweep()
        return None
