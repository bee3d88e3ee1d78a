"""One big legal command must not stop the other clients: rillet beside Redis 8.2.3 in one run.

For each big command (an RPUSH of 1,048,576 elements, about 7 MB; an XADD of
1,048,576 field-value pairs) the script prints the command's own time (from its
first byte sent to its reply) and the longest round trip of another client's
PINGs, sent one at a time every ~10 ms while it runs, for both servers and the
ratio. Then `SETRANGE k 536870911 x`, `SETBIT k 4294967295 1`, a BITFIELD
SET at the same end and a SET of a 512 MB value (each a 512 MB string from
nothing): the server's RSS before and at its peak. Target (issue 26): the PING max under 3×
Redis's, and no second copy of a 512 MB value.

    .venv/bin/python bench/big_commands.py [--args 1048576] [--reps 1] [--only rpush,xadd,setrange]
        [--baseline /path/to/other/checkout/src]   # a third column: rillet from that tree
"""

from __future__ import annotations

import argparse
import socket
import statistics
import sys
import threading
import time

import psutil

from rillet.bench.client import encode_command
from rillet.bench.servers import ServerUnavailable, baseline_kind, server_kinds, start_server

# Each makes a 512 MB string (proto-max-bulk-len's default) where there was none.
GROWERS = [("SETRANGE", "k", "536870911", "x"), ("SETBIT", "k", "4294967295", "1"),
           ("BITFIELD", "k", "SET", "u8", "4294967288", "255"), ("SET", "k", "<512 MB>")]


def _grower(command: tuple[str, ...]) -> bytes:
    if command[-1] == "<512 MB>":  # the value itself sent: the parser's big-argument read
        return b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$536870912\r\n" + bytes(1 << 29) + b"\r\n"
    return encode_command(command)


def _big(kind: str, n: int) -> bytes:
    if kind == "rpush":
        return encode_command([b"RPUSH", b"list", *[b"%d" % (i % 10) for i in range(n)]])
    fields: list[bytes] = []
    for i in range(n):
        fields += (b"%d" % i, b"v")
    return encode_command([b"XADD", b"stream", b"*", *fields])


class Pinger(threading.Thread):
    """PINGs one at a time every ~10 ms on a connection of its own; the round trips in ms."""

    def __init__(self, port: int) -> None:
        super().__init__(daemon=True)
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.stop = threading.Event()
        self.rtts: list[float] = []

    def run(self) -> None:
        while not self.stop.is_set():
            t0 = time.perf_counter()
            self.sock.sendall(b"*1\r\n$4\r\nPING\r\n")
            got = b""
            while not got.endswith(b"\r\n"):
                got += self.sock.recv(64)
            self.rtts.append((time.perf_counter() - t0) * 1000)
            time.sleep(0.01)
        self.sock.close()


class RssSampler(threading.Thread):
    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.process = psutil.Process(pid)
        self.stop = threading.Event()
        self.peak = self.process.memory_info().rss

    def run(self) -> None:
        while not self.stop.is_set():
            self.peak = max(self.peak, self.process.memory_info().rss)
            time.sleep(0.002)


def big_command(kind, payload: bytes) -> dict:
    server = start_server(kind)
    try:
        client = server.client(timeout_s=300)
        pinger = Pinger(server.port)
        pinger.start()
        time.sleep(0.1)  # a few PINGs on the idle server first
        t0 = time.perf_counter()
        client.sock.sendall(payload)
        reply = client.read_reply()
        took = time.perf_counter() - t0
        pinger.stop.set()
        pinger.join()
        if isinstance(reply, Exception):
            raise ServerUnavailable(f"the big command failed: {reply}")
        client.close()
        return {"seconds": took, "ping_max_ms": max(pinger.rtts), "pings": len(pinger.rtts)}
    finally:
        server.cleanup()


def grow(kind, payload: bytes) -> dict:
    server = start_server(kind)
    try:
        client = server.client(timeout_s=300)
        sampler = RssSampler(server.pid)
        before = sampler.peak
        sampler.start()
        t0 = time.perf_counter()
        client.sock.sendall(payload)
        reply = client.read_reply()
        took = time.perf_counter() - t0
        time.sleep(0.05)
        sampler.stop.set()
        sampler.join()
        client.close()
        if isinstance(reply, Exception):
            raise ServerUnavailable(f"the command failed: {reply}")
        return {"seconds": took, "rss_before_mb": before / 2**20, "rss_peak_mb": sampler.peak / 2**20}
    finally:
        server.cleanup()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--args", type=int, default=1 << 20,
                        help="RPUSH elements and XADD field-value pairs")
    parser.add_argument("--reps", type=int, default=1, help="interleaved repetitions (medians)")
    parser.add_argument("--only", default="rpush,xadd,setrange")
    parser.add_argument("--baseline", default="", help="src dir of another rillet checkout")
    args = parser.parse_args()
    kinds = [k for k in server_kinds(include_redis8=True) if k.name in ("rillet", "redis8")]
    if args.baseline:
        kinds.append(baseline_kind(args.baseline))
    only = args.only.split(",")
    for name in ("rpush", "xadd"):
        if name not in only:
            continue
        payload = _big(name, args.args)
        print(f"\n{name.upper()} with {args.args:,} {'elements' if name == 'rpush' else 'field pairs'}"
              f" ({len(payload) / 2**20:.1f} MB), PINGs every 10 ms on another connection,"
              f" {args.reps} rep(s), medians\n")
        results: dict[str, list[dict]] = {k.name: [] for k in kinds}
        for _ in range(args.reps):
            for kind in kinds:
                try:
                    results[kind.name].append(big_command(kind, payload))
                except ServerUnavailable as error:
                    print(f"{kind.label}: n/a: {error}")
        med = {k: {f: statistics.median(r[f] for r in rs) for f in rs[0]} for k, rs in results.items() if rs}
        print("| server | command s | PINGs | PING max ms |")
        print("|---|---|---|---|")
        for kind in kinds:
            if kind.name in med:
                m = med[kind.name]
                print(f"| {kind.label} | {m['seconds']:.2f} | {m['pings']:.0f} | {m['ping_max_ms']:.1f} |")
        if "rillet" in med and "redis8" in med:
            r, s = med["rillet"], med["redis8"]
            print(f"| rillet / redis | {r['seconds'] / s['seconds']:.2f}× | |"
                  f" {r['ping_max_ms'] / s['ping_max_ms']:.2f}× (target < 3×) |")
    if "setrange" in only:
        print("\nA new 512 MB string from nothing: server RSS\n")
        print("| command | server | command s | RSS before MB | RSS peak MB |")
        print("|---|---|---|---|---|")
        for command in GROWERS:
            shown = " ".join(command)
            payload = _grower(command)
            peaks = {}
            for kind in kinds:
                try:
                    m = grow(kind, payload)
                except ServerUnavailable as error:
                    print(f"| {shown} | {kind.label} | n/a: {error} |")
                    continue
                peaks[kind.name] = m["rss_peak_mb"]
                print(f"| {shown} | {kind.label} | {m['seconds']:.2f} | {m['rss_before_mb']:.0f}"
                      f" | {m['rss_peak_mb']:.0f} |")
            if "rillet" in peaks and "redis8" in peaks:
                print(f"| {shown} | rillet / redis | | | {peaks['rillet'] / peaks['redis8']:.2f}× |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
