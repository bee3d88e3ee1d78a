"""Micro-benchmark of the consumer-group engine: per-call cost as the PEL grows.

For PEL sizes 10k / 100k / 1M it times, per call: XACK of one ID, XPENDING
`- + 10` and a random 10-entry page, XAUTOCLAIM COUNT 10 (all entries idle
enough, and none idle enough: a full 100-entry scan), XREADGROUP CLAIM COUNT
10, and a history read COUNT 10; it also reports memory per pending entry and
a full gc.collect() with the PEL alive, and one XADD 10 + XREADGROUP COUNT 10
+ XACK 10 cycle beside the backlog. The figures should stay flat with P.

    .venv/bin/python bench/engine_pel.py [--sizes 10000,100000,1000000] [--calls 2000]
"""

from __future__ import annotations

import argparse
import gc
import random
import time
import tracemalloc

from rillet.engine.groups import create_group
from rillet.engine.ids import MAX_ID, MIN_ID, StreamID
from rillet.engine.stream import Stream

T0 = 1_700_000_000_000
CONSUMERS = [b"consumer-%d" % i for i in range(8)]


def build(size: int, measure_memory: bool) -> tuple[Stream, object, float | None]:
    stream = Stream()
    for i in range(size):
        stream.append(StreamID(T0 + i // 4, i % 4), [b"field", b"value-%d" % i])
    group = create_group(stream, b"bench", MIN_ID)
    assert group is not None
    if measure_memory:
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
    per_consumer = size // len(CONSUMERS) + 1
    now = T0 + size
    for name in CONSUMERS:
        # Deliveries 100 at a time, like a fleet of consumers reading COUNT 100.
        remaining = per_consumer
        while remaining > 0:
            got = group.read_new(stream, name, min(100, remaining), now)
            if not got.entries:
                break
            remaining -= len(got.entries)
            now += 1
    bytes_per_entry = None
    if measure_memory:
        after = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        bytes_per_entry = (after - before) / len(group.pel)
    return stream, group, bytes_per_entry


def per_call_us(fn, calls: int) -> float:
    start = time.perf_counter_ns()
    for i in range(calls):
        fn(i)
    return (time.perf_counter_ns() - start) / calls / 1000


def bench_size(size: int, calls: int, measure_memory: bool) -> dict[str, float | None]:
    t = time.perf_counter()
    stream, group, bpe = build(size, measure_memory)
    build_s = time.perf_counter() - t
    rng = random.Random(size)
    pending_ids = [StreamID(*e.id_pair) for e in group.pel.range_values(0, limit=None)]
    now = T0 + size + 1_000_000
    row: dict[str, float | None] = {"build_s": build_s, "bytes_per_entry": bpe}

    starts = [rng.choice(pending_ids) for _ in range(calls)]
    row["xpending_head"] = per_call_us(
        lambda i: group.pending_range(MIN_ID, MAX_ID, 10, now), calls
    )
    row["xpending_page"] = per_call_us(
        lambda i: group.pending_range(starts[i], MAX_ID, 10, now), calls
    )
    row["history_10"] = per_call_us(
        lambda i: group.read_history(stream, CONSUMERS[i % 8], starts[i], 10, now), calls
    )
    row["autoclaim_10"] = per_call_us(
        lambda i: group.autoclaim(stream, CONSUMERS[i % 8], 1000, starts[i], 10, now), calls
    )
    # Everything was just re-timed to `now` or delivered recently: nothing is
    # idle for an hour, so each call examines its full 10 * COUNT = 100 entries.
    row["autoclaim_scan"] = per_call_us(
        lambda i: group.autoclaim(stream, b"x", 3_600_000, starts[i], 10, now), calls
    )
    later = now + 10_000
    row["readclaim_10"] = per_call_us(
        lambda i: group.read_claim(stream, CONSUMERS[i % 8], 5_000, 10, later), calls
    )
    # The steady state of a healthy consumer: XADD 10, XREADGROUP COUNT 10,
    # XACK those 10, with the big PEL as a backlog beside it.
    next_ms = [stream.last_id.ms + 1]

    def cycle(i: int) -> None:
        for _ in range(10):
            stream.append(StreamID(next_ms[0], 0), [b"field", b"value"])
            next_ms[0] += 1
        got = group.read_new(stream, CONSUMERS[i % 8], 10, later)
        group.ack([sid for sid, _ in got.entries])

    row["cycle_10"] = per_call_us(cycle, calls)
    ack_ids = rng.sample(pending_ids, min(calls, len(pending_ids) // 5))
    row["xack"] = per_call_us(lambda i: group.ack((ack_ids[i],)), len(ack_ids))
    t = time.perf_counter()
    gc.collect()
    row["gc_collect_ms"] = (time.perf_counter() - t) * 1000
    group.check_invariants() if size <= 100_000 else None
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--no-memory", action="store_true", help="skip tracemalloc (faster)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    cols = [
        ("xack", "XACK 1 id"),
        ("xpending_head", "XPENDING - + 10"),
        ("xpending_page", "XPENDING page 10"),
        ("autoclaim_10", "XAUTOCLAIM 10"),
        ("autoclaim_scan", "XAUTOCLAIM scan 100"),
        ("readclaim_10", "XREADGROUP CLAIM 10"),
        ("history_10", "history read 10"),
        ("cycle_10", "XADD+READ+XACK 10"),
    ]
    print("per-call cost in microseconds (engine only, no parsing or RESP)")
    print(f"{'pending':>9} | " + " | ".join(f"{label:>19}" for _, label in cols)
          + " | bytes/entry | gc.collect ms | build s")  # fmt: skip
    for size in sizes:
        row = bench_size(size, args.calls, not args.no_memory)
        bpe = row["bytes_per_entry"]
        cells = " | ".join(f"{row[key]:>19.2f}" for key, _ in cols)
        memory = f"{bpe:>11.0f}" if bpe is not None else " " * 11
        print(
            f"{size:>9} | {cells} | {memory} | {row['gc_collect_ms']:>13.0f} | {row['build_s']:>7.1f}"
        )
        gc.collect()


if __name__ == "__main__":
    main()
