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


def workload(dispatcher: Dispatcher, client: object, ops: int) -> None:
    run = dispatcher.execute
    for i in range(ops):
        run(client, [b"SET", b"key:%d" % (i % 1000), b"x"])
        run(client, [b"XADD", b"big", b"*", b"f", b"v"])


def measure(label: str, dispatcher: Dispatcher, client: object, ops: int) -> None:
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
        workload(dispatcher, client, ops)
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
    gc.set_threshold(700, 10, 10)
    measure("python default 700/10/10", dispatcher, client, args.ops)
    gc.set_threshold(50_000, 20, 100)
    measure("server 50000/20/100", dispatcher, client, args.ops)
    gc.freeze()
    measure("server 50000/20/100 + gc.freeze()", dispatcher, client, args.ops)
    gc.unfreeze()


if __name__ == "__main__":
    main()
