"""Garbage-collector pauses with a large keyspace, in-process, with and without gc.freeze.

Loads N keys (half strings, half one-entry streams, plus one stream of N
entries) through the dispatcher, then runs a write load (SET, XADD) while
gc.callbacks time every collection. Printed per setting: collections by
generation, the longest and the total pause, and what a forced full
collection costs. Settings: Python's default thresholds, the server's
(server.configure_interpreter: 50,000/20/100), and the server's after
gc.freeze() (what the cron does every gc-freeze-interval ms).

    .venv/bin/python bench/gc_pauses.py [--keys 1000000] [--ops 300000]

Redis has no collector, so there is no column for it: the figure to read is
the longest pause against the 2 ms latency target.
"""

from __future__ import annotations

import argparse
import gc
import time

from rillet.clock import ManualClock
from rillet.dispatch import Dispatcher
from rillet.state import ServerState


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
    return dispatcher, client


_created = [0]


def workload(dispatcher: Dispatcher, client: object, ops: int, create: bool,
             freeze_every: int) -> None:
    """SET and XADD on existing keys, or (`create`) XADD to new keys: one-entry
    streams are ~10 tracked objects each, the worst case for the collector.
    `freeze_every` ops, gc.freeze() as the server's cron does once a second."""
    run = dispatcher.execute
    for i in range(ops):
        if create:
            _created[0] += 1
            run(client, [b"XADD", b"new:%d" % _created[0], b"*", b"f", b"v"])
        else:
            run(client, [b"SET", b"key:%d" % (i % 1000), b"x"])
            run(client, [b"XADD", b"big", b"*", b"f", b"v"])
        if freeze_every and i % freeze_every == 0:
            gc.freeze()


def measure(label: str, dispatcher: Dispatcher, client: object, ops: int, create: bool = False,
            freeze_every: int = 0) -> None:
    pauses: dict[int, list[float]] = {0: [], 1: [], 2: []}
    started: list[float] = [0.0]

    def timer(phase: str, info: dict) -> None:
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            pauses[info["generation"]].append(time.perf_counter() - started[0])

    gc.callbacks.append(timer)
    try:
        began = time.perf_counter()
        workload(dispatcher, client, ops, create, freeze_every)
        elapsed = time.perf_counter() - began
    finally:
        gc.callbacks.remove(timer)
    every = [p for gen in pauses.values() for p in gen]
    counts = "/".join(str(len(pauses[g])) for g in (0, 1, 2))
    began = time.perf_counter()
    gc.collect()
    full = time.perf_counter() - began
    print(f"{label:<34} gen0/1/2 {counts:>12}  longest {max(every, default=0) * 1e3:7.2f} ms"
          f"  total {sum(every) * 1e3:8.1f} ms of {elapsed:5.1f} s"
          f"  gc.collect() {full * 1e3:7.1f} ms  tracked {len(gc.get_objects()):,}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--ops", type=int, default=300_000)
    args = parser.parse_args()
    gc.disable()
    began = time.perf_counter()
    dispatcher, client = load(args.keys)
    print(f"loaded {args.keys:,} keys + a {args.keys:,}-entry stream in "
          f"{time.perf_counter() - began:.1f} s")
    gc.enable()
    gc.collect()  # the load's objects are old now, as after a server's load
    print("updates (SET and XADD on existing keys):")
    for label, threshold, frozen in (("python default 700/10/10", (700, 10, 10), False),
                                     ("server 50000/20/100", (50_000, 20, 100), False),
                                     ("server + gc.freeze() after load", (50_000, 20, 100), True)):
        gc.set_threshold(*threshold)
        if frozen:
            gc.freeze()
        measure(label, dispatcher, client, args.ops)
        gc.unfreeze()
    print("new keys (XADD to a new key each time):")
    for label, threshold, every in (("python default 700/10/10", (700, 10, 10), 0),
                                    ("server 50000/20/100", (50_000, 20, 100), 0),
                                    ("server + freeze every 100k ops", (50_000, 20, 100), 100_000),
                                    ("10000/10/100 + freeze every 100k", (10_000, 10, 100), 100_000)):
        gc.set_threshold(*threshold)
        gc.freeze()
        measure(label, dispatcher, client, args.ops, create=True, freeze_every=every)
        gc.unfreeze()


if __name__ == "__main__":
    main()
