"""Garbage-collector pauses with a large keyspace, in-process: Python's defaults against rillet's policy.

Loads N keys (half strings, half one-entry streams, plus one stream of N
entries) through the dispatcher, then runs three write loads while
gc.callbacks time every collection in CPU time (this thread's: what the
collection cost, whatever else the machine runs, so the figures compare across
loaded runs):

    updates   SET and XADD on existing keys
    new keys  XADD to a new key each time: one-entry streams are ~6 tracked
              objects each, the worst case for the collector
    group     the latency test's commands: XADD to one stream, XREADGROUP
              COUNT 10 and XACK every 10 entries

Settings: Python's default thresholds (700/10/10); rillet's thresholds alone
(gcpolicy.THRESHOLDS); and rillet's policy (gcpolicy.py: the thresholds, the
load frozen as persistence/loader.py does, each collection's survivors frozen,
the cron's freeze once a second and its sweep rule); `--gen0 N` adds the policy
with another young threshold. Printed per setting and load: collections by generation, the
pause distribution (CPU ms), the longest and total pause, and what one full
collection costs afterwards (what a sweep or an unfrozen gen2 collection costs).

    .venv/bin/python bench/gc_pauses.py [--keys 1000000] [--ops 300000] [--seconds 20]
        [--loads updates,group,new keys] [--gen0 N]

Redis has no collector, so there is no column for it: the figure to read is
the longest pause against the 2 ms latency target.
"""

from __future__ import annotations

import argparse
import gc
import time

from rillet import gcpolicy
from rillet.clock import ManualClock
from rillet.dispatch import Dispatcher
from rillet.state import ServerState

EDGES_MS = (0.1, 0.5, 1, 2, 5, 10, 50)


def load(keys: int) -> tuple[Dispatcher, object]:
    state = ServerState(clock=ManualClock())
    dispatcher = Dispatcher(state)
    client = state.new_client(None)
    run = dispatcher.execute
    for i in range(keys // 2):
        run(client, [b"SET", b"key:%d" % i, b"value-%d" % i])
    for i in range(keys // 2):
        run(client, [b"XADD", b"s:%d" % i, b"*", b"f", b"v"])
    for i in range(keys):
        run(client, [b"XADD", b"big", b"*", b"f", b"%d" % i])
    run(client, [b"XGROUP", b"CREATE", b"big", b"g", b"$"])
    return dispatcher, client


_created = [0]


def workload(kind: str, dispatcher: Dispatcher, client: object, ops: int, deadline: float,
             cron: gcpolicy.GcCron | None) -> int:
    """Run up to `ops` operations (or until `deadline`); returns how many ran.
    With `cron`, its tick every 1,000 operations, as the server's cron runs
    between requests (the tick itself decides when a second has passed)."""
    run = dispatcher.execute
    done = 0
    ids: list[bytes] = []
    if kind == "group":
        # Read from here on: each XREADGROUP gets the ten entries just added, which
        # XACK then acknowledges, so the PEL stays empty as in the latency test.
        run(client, [b"XGROUP", b"SETID", b"big", b"g", b"$"])
    for i in range(ops):
        if kind == "new keys":
            _created[0] += 1
            run(client, [b"XADD", b"new:%d" % _created[0], b"*", b"f", b"v"])
        elif kind == "updates":
            run(client, [b"SET", b"key:%d" % (i % 1000), b"x"])
            run(client, [b"XADD", b"big", b"*", b"f", b"v"])
        else:
            ids.append(run(client, [b"XADD", b"big", b"*", b"ts", b"%d" % i]))  # type: ignore[arg-type]
            if i % 10 == 9:
                run(client, [b"XREADGROUP", b"GROUP", b"g", b"c%d" % (i % 7), b"COUNT", b"10",
                             b"STREAMS", b"big", b">"])
                run(client, [b"XACK", b"big", b"g", *ids])
                ids = []
        done += 1
        if i % 1000 == 999:
            if cron is not None:
                cron.tick(time.monotonic())
            if time.monotonic() > deadline:
                break
    return done


def measure(label: str, kind: str, dispatcher: Dispatcher, client: object, ops: int,
            seconds: float, cron: gcpolicy.GcCron | None) -> None:
    pauses: list[tuple[int, float]] = []
    started = [0]

    def timer(phase: str, info: dict) -> None:
        if phase == "start":
            started[0] = time.thread_time_ns()
        else:
            pauses.append((info["generation"], (time.thread_time_ns() - started[0]) / 1e6))

    gc.callbacks.append(timer)
    try:
        began = time.thread_time()
        done = workload(kind, dispatcher, client, ops, time.monotonic() + seconds, cron)
        cpu = time.thread_time() - began
    finally:
        gc.callbacks.remove(timer)
    counts = "/".join(str(sum(1 for g, _ in pauses if g == gen)) for gen in (0, 1, 2))
    durations = sorted(ms for _, ms in pauses)
    hist = []
    for lo, hi in zip((0.0, *EDGES_MS), (*EDGES_MS, float("inf")), strict=True):
        n = sum(1 for d in durations if lo <= d < hi)
        if n:
            hist.append(f"{lo:g}-{hi:g}: {n}")
    frozen = gc.get_freeze_count()
    gcpolicy.stop()  # the policy's callback would freeze what this collection leaves
    gc.unfreeze()
    began = time.thread_time()
    gc.collect()
    full = (time.thread_time() - began) * 1e3
    print(f"  {label:<30} {done:>7,} ops in {cpu:5.1f} s CPU  gen0/1/2 {counts:>10}  longest "
          f"{max(durations, default=0):7.2f} ms  total {sum(durations):7.1f} ms  "
          f"[{', '.join(hist) or 'none'}]  (frozen {frozen:,}; one full collection "
          f"{full:.0f} ms)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--ops", type=int, default=300_000)
    parser.add_argument("--seconds", type=float, default=20.0,
                        help="CPU-time cap per measurement (the new-keys load is the slow one)")
    parser.add_argument("--gen0", type=int, action="append", default=[],
                        help="also rillet's policy with this gen0 threshold (repeatable)")
    parser.add_argument("--loads", default="updates,group,new keys",
                        help="comma-separated: updates, group, new keys")
    args = parser.parse_args()
    gc.disable()
    began = time.perf_counter()
    dispatcher, client = load(args.keys)
    print(f"loaded {args.keys:,} keys + a {args.keys:,}-entry stream in "
          f"{time.perf_counter() - began:.1f} s; {len(gc.get_objects()):,} tracked objects")
    gc.enable()
    settings = (("python default 700/10/10", (700, 10, 10), False),
                (f"thresholds {'/'.join(map(str, gcpolicy.THRESHOLDS))} only",
                 gcpolicy.THRESHOLDS, False),
                ("rillet policy (gcpolicy.py)", gcpolicy.THRESHOLDS, True))
    if args.gen0:
        settings += tuple((f"policy, gen0 threshold {n}", (n, *gcpolicy.THRESHOLDS[1:]), True)
                          for n in args.gen0)
    config = {"gc-freeze-interval": 1000, "gc-sweep-growth": 100}
    for kind in args.loads.split(","):
        print(f"{kind}:")
        for label, threshold, policy in settings:
            gc.collect()  # the load's objects are old now, as after a server's load
            gc.set_threshold(*threshold)
            cron = None
            if policy:
                gcpolicy.start()  # startup's and persistence/loader.py's freeze
                gc.set_threshold(*threshold)
                cron = gcpolicy.GcCron(config.__getitem__)
            try:
                measure(label, kind, dispatcher, client, args.ops, args.seconds, cron)
            finally:
                gcpolicy.stop()


if __name__ == "__main__":
    main()
