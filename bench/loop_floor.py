"""What the event loop itself costs: PING through a bare uvloop server, rillet and redis-server.

The floor is a uvloop Protocol that answers each PING in a read with +PONG in
one write and does nothing else (no parsing beyond counting, no dispatch): no
Python server can spend less per read. A second floor does the same as a
BufferedProtocol reading into one reusable buffer (get_buffer/buffer_updated),
to show whether that interface would lower the loop's per-read cost. Its server CPU per request, beside
rillet's and redis-server's in the same run (redis-benchmark PING_MBULK, -c 50,
-P 64 and -P 1, interleaved repetitions, medians), shows how much of rillet's
per-read cost is the loop's and how much is rillet's.

    .venv/bin/python bench/loop_floor.py [--requests 400000] [--reps 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys

FLOOR_TEMPLATE = f"{sys.executable} {__file__} --serve --port {{port}}"
BUFFERED_TEMPLATE = f"{sys.executable} {__file__} --serve --buffered --port {{port}}"


def serve(port: int, buffered: bool) -> None:
    import asyncio

    import uvloop

    class Floor(asyncio.Protocol):
        def connection_made(self, transport):
            self.transport = transport
            self.tail = b""

        def data_received(self, data):
            # A PING may be split between reads: 3 bytes of the last read are kept.
            data = self.tail + data
            pings = data.count(b"PING")
            self.tail = data[-3:]
            out = b"+PONG\r\n" * pings
            if b"CONFIG" in data:  # redis-benchmark asks for save/appendonly first
                out += b"*0\r\n" * data.count(b"CONFIG")
            if out:
                self.transport.write(out)

    class BufferedFloor(asyncio.BufferedProtocol):
        def connection_made(self, transport):
            self.transport = transport
            self.buffer = bytearray(65536)
            self.view = memoryview(self.buffer)
            self.tail = b""

        def get_buffer(self, sizehint):
            return self.view

        def buffer_updated(self, nbytes):
            data = self.tail + self.buffer[:nbytes]
            pings = data.count(b"PING")
            self.tail = data[-3:]
            out = b"+PONG\r\n" * pings
            if b"CONFIG" in data:
                out += b"*0\r\n" * data.count(b"CONFIG")
            if out:
                self.transport.write(out)

    async def main():
        loop = asyncio.get_running_loop()
        server = await loop.create_server(BufferedFloor if buffered else Floor, "127.0.0.1", port)
        async with server:
            await server.serve_forever()

    uvloop.run(main())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--buffered", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--requests", type=int, default=400_000)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    if args.serve:
        serve(args.port, args.buffered)
        return

    from rillet.bench.redisbench import run_redis_benchmark
    from rillet.bench.servers import ServerKind, server_kinds, start_server

    kinds = [ServerKind("floor", "bare uvloop", template=FLOOR_TEMPLATE),
             ServerKind("floor-buf", "uvloop buffered", template=BUFFERED_TEMPLATE),
             *server_kinds(False)]
    servers = {kind.name: start_server(kind) for kind in kinds}
    results: dict[tuple[str, int], list] = {}
    try:
        for _ in range(args.reps):
            for pipeline in (64, 1):
                requests = args.requests if pipeline > 1 else args.requests // 8
                for name, server in servers.items():
                    result = run_redis_benchmark(server.port, server.pid, requests=requests,
                                                 pipeline=pipeline, tests="ping_mbulk")
                    results.setdefault((name, pipeline), []).append(result)
    finally:
        for server in servers.values():
            server.cleanup()
    print(f"PING_MBULK, redis-benchmark -c 50, {args.reps} interleaved reps, medians")
    print(f"{'server':<14}{'-P':>4}{'req/s':>12}{'server us/op':>14}{'server cores':>14}")
    for pipeline in (64, 1):
        for name in servers:
            runs = results[(name, pipeline)]
            rps = statistics.median(r.rps for r in runs)
            us = statistics.median(r.server_us_per_op for r in runs)
            cores = statistics.median(r.server_cores for r in runs)
            print(f"{servers[name].kind.label:<14}{pipeline:>4}{rps:>12,.0f}{us:>14.2f}{cores:>14.2f}")


if __name__ == "__main__":
    main()
