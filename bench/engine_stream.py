"""Micro-benchmark of the stream engine: XADD-path CPU and memory per entry.

Loads N entries `sensor-id <i % 1000> temperature <%.2f>` (the issue's memory
workload) into a `Stream` and prints:
  - µs per append, and per next_id + append (the engine's share of an XADD);
  - µs per range(COUNT 10) at random positions;
  - bytes per entry by tracemalloc, and by RSS in a fresh process (no tracemalloc);
  - with --redis, redis-server's used_memory per entry for the same load, same run.

Usage: .venv/bin/python bench/engine_stream.py [--entries 1000000] [--redis PATH|auto]
Timings are process CPU time (best of --reps) so a busy machine distorts them less.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
import tracemalloc

from rillet import launch
from rillet.engine.ids import MAX_ID, StreamID
from rillet.engine.stream import Stream

CHUNK = 10_000
BASE_MS = 1_700_000_000_000


def sensor_chunk(start: int, count: int, rnd: random.Random) -> list[list[bytes]]:
    # Fresh bytes objects per entry, as the RESP parser hands them to XADD.
    return [
        [b"sensor-id", b"%d" % (i % 1000), b"temperature", b"%.2f" % rnd.uniform(-20.0, 40.0)]
        for i in range(start, start + count)
    ]


def rss_bytes() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def load(stream: Stream, entries: int, with_next_id: bool) -> float:
    """Append `entries` sensor entries; return CPU seconds spent in the engine only."""
    rnd = random.Random(1)
    spent = 0.0
    append, next_id = stream.append, stream.next_id
    for start in range(0, entries, CHUNK):
        chunk = sensor_chunk(start, min(CHUNK, entries - start), rnd)
        if with_next_id:
            now = BASE_MS + start // 1000
            t0 = time.process_time()
            for fields in chunk:
                append(next_id(None, None, now), fields)
            spent += time.process_time() - t0
        else:
            ids = [
                StreamID(BASE_MS + (start + j) // 1000, (start + j) % 1000)
                for j in range(len(chunk))
            ]
            t0 = time.process_time()
            for sid, fields in zip(ids, chunk, strict=True):
                append(sid, fields)
            spent += time.process_time() - t0
    return spent


def bench_cpu(entries: int, reps: int) -> dict:
    best_append = best_xadd = float("inf")
    stream = Stream()
    for _ in range(reps):
        stream = Stream()
        best_append = min(best_append, load(stream, entries, with_next_id=False))
        stream = Stream()
        best_xadd = min(best_xadd, load(stream, entries, with_next_id=True))
    rnd = random.Random(2)
    last = stream.last_id
    starts = [StreamID(rnd.randint(BASE_MS, last.ms), 0) for _ in range(20_000)]
    t0 = time.process_time()
    for start in starts:
        stream.range(start, MAX_ID, 10)
    range_s = time.process_time() - t0
    return {
        "append_us": best_append / entries * 1e6,
        "next_id_append_us": best_xadd / entries * 1e6,
        "range_count10_us": range_s / len(starts) * 1e6,
    }


def bench_tracemalloc(entries: int) -> float:
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    stream = Stream()
    load(stream, entries, with_next_id=True)
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    assert stream.length == entries
    return (after - before) / entries


def bench_rss_child(entries: int) -> None:
    gc.collect()
    before = rss_bytes()
    stream = Stream()
    load(stream, entries, with_next_id=True)
    gc.collect()
    after = rss_bytes()
    print(
        json.dumps({"rss_per_entry": (after - before) / entries, "nodes": stream.radix_tree_keys})
    )


def bench_redis(binary: str, entries: int) -> float:
    port, workdir = launch.free_port(), tempfile.mkdtemp(prefix="rillet-bench-")
    server = launch.Server.start("redis", launch.redis_argv(binary, port, workdir), port, workdir,
                                 log=None, replies=launch.PONG)
    try:
        import hiredis

        conn = socket.create_connection((launch.LOOPBACK, port), timeout=30)
        reader = hiredis.Reader()

        def call_many(commands: list[list[bytes]]) -> list:
            payload = b"".join(
                b"*%d\r\n" % len(cmd) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in cmd)
                for cmd in commands
            )
            conn.sendall(payload)
            replies: list = []
            while len(replies) < len(commands):
                reply = reader.gets()
                if reply is False:
                    reader.feed(conn.recv(1 << 20))
                else:
                    replies.append(reply)
            return replies

        def used_memory() -> int:
            info = call_many([[b"INFO", b"memory"]])[0]
            for line in info.split(b"\r\n"):
                if line.startswith(b"used_memory:"):
                    return int(line.split(b":")[1])
            raise RuntimeError("no used_memory")

        before = used_memory()
        rnd = random.Random(1)
        for start in range(0, entries, CHUNK):
            chunk = sensor_chunk(start, min(CHUNK, entries - start), rnd)
            call_many([[b"XADD", b"s", b"*", *fields] for fields in chunk])
        return (used_memory() - before) / entries
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=1_000_000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--redis", default=None, help="redis-server binary, or 'auto'")
    parser.add_argument("--rss-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rss_child:
        bench_rss_child(args.entries)
        return

    print(f"entries: {args.entries:,} (sensor-id <i % 1000> temperature <%.2f>)")
    cpu = bench_cpu(args.entries, args.reps)
    print(f"append:            {cpu['append_us']:.3f} µs/entry (CPU, best of {args.reps})")
    print(f"next_id + append:  {cpu['next_id_append_us']:.3f} µs/entry")
    print(f"range COUNT 10:    {cpu['range_count10_us']:.2f} µs/call")
    print(f"tracemalloc:       {bench_tracemalloc(args.entries):.1f} B/entry")
    child = subprocess.run(
        [sys.executable, __file__, "--rss-child", "--entries", str(args.entries)],
        capture_output=True, text=True, check=True, env=os.environ,
    )  # fmt: skip
    rss = json.loads(child.stdout.strip().splitlines()[-1])
    print(f"RSS (fresh proc):  {rss['rss_per_entry']:.1f} B/entry ({rss['nodes']:,} nodes)")
    if args.redis:
        binary = args.redis
        if binary == "auto":
            binary = launch.redis7_binary() or launch.REDIS7_PATH
        print(f"redis-server:      {bench_redis(binary, args.entries):.1f} B/entry (used_memory)")


if __name__ == "__main__":
    main()
