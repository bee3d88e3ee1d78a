"""Opening many connections, and restarting from a small AOF, rillet beside Redis 8.2.3.

    .venv/bin/python bench/accept_restart.py [--only connections,restart] [--reps 3]
        [--connections 5000] [--keys 100000] [--servers rillet,redis8] [--baseline SRC]

- connections: `--connections` sockets connect at once (non-blocking), each sends PING
  once connected, and the time runs until the last PONG (all kept open to the end);
  then the same one after the other (connect, PING, PONG, next). Wall time, and the
  server's CPU for the whole burst (load-independent; from /proc), per connection.
  Targets (issue 28): the burst ≤ 3× Redis's time.
- restart: `--keys` string keys written with redis-benchmark into an AOF
  (appendonly yes, appendfsync everysec), the server stopped with SIGKILL (the AOF
  is replayed, not a compacted base), and the time from process start until
  DBSIZE answers something other than -LOADING; a second client PINGs every
  millisecond meanwhile ("under load"). Also the server's CPU until then (interpreter start,
  imports, loading: the load-independent part). Target (issue 28): ≤ 2× Redis's
  time. rillet runs with its bytecode cached, as installed (PYTHONPYCACHEPREFIX).

Reps are interleaved (rillet, redis, rillet, redis…), medians; each rep a fresh
server. Prints the machine's load average beside the figures: on a shared machine
only the ratios within one run mean something.
"""

from __future__ import annotations

import argparse
import os
import selectors
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from rillet import launch
from rillet.bench.procinfo import cpu_seconds
from rillet.bench.servers import (
    ServerKind,
    ServerUnavailable,
    baseline_kind,
    free_port,
    measure_interleaved,
    server_kinds,
    start_server,
)

PING = b"*1\r\n$4\r\nPING\r\n"


def burst(port: int, count: int) -> list[socket.socket]:
    """`count` connections at once, each PINGing when connected; returns them open."""
    selector = selectors.DefaultSelector()
    socks = []
    for _ in range(count):
        sock = socket.socket()
        sock.setblocking(False)
        sock.connect_ex(("127.0.0.1", port))
        selector.register(sock, selectors.EVENT_WRITE, len(socks))
        socks.append(sock)
    answered = 0
    deadline = time.monotonic() + 120
    while answered < count:
        if time.monotonic() > deadline:
            raise RuntimeError(f"only {answered} of {count} connections answered")
        for key, _ in selector.select(1):
            sock = socks[key.data]
            if key.events == selectors.EVENT_WRITE:
                error = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                if error:
                    raise RuntimeError(f"connect failed: {os.strerror(error)}")
                sock.sendall(PING)
                selector.modify(sock, selectors.EVENT_READ, key.data)
            else:
                reply = sock.recv(64)
                if reply != b"+PONG\r\n":
                    raise RuntimeError(f"unexpected reply {reply!r}")
                selector.unregister(sock)
                answered += 1
    selector.close()
    return socks


def one_by_one(port: int, count: int) -> list[socket.socket]:
    socks = []
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", port))
        sock.sendall(PING)
        if sock.recv(64) != b"+PONG\r\n":
            raise RuntimeError("no PONG")
        socks.append(sock)
    return socks


def close_all(socks: list[socket.socket]) -> None:
    for sock in socks:
        sock.close()


def measure_connections(kind: ServerKind, count: int) -> dict[str, float]:
    server = start_server(kind, persistence=["--maxclients", str(count + 100)])
    try:
        out: dict[str, float] = {}
        for mode, opener in (("burst", burst), ("serial", one_by_one)):
            cpu0 = cpu_seconds(server.pid)
            began = time.perf_counter()
            socks = opener(server.port, count)
            out[f"{mode} s"] = time.perf_counter() - began
            out[f"{mode} server us/conn"] = (cpu_seconds(server.pid) - cpu0) / count * 1e6
            with server.client() as client:
                listed = client.call("CLIENT", "LIST").count(b"\n")
            if listed < count:
                raise RuntimeError(f"CLIENT LIST shows {listed} clients, expected > {count}")
            close_all(socks)
            # The server must have let go of them before the next mode counts.
            with server.client() as client:
                deadline = time.monotonic() + 30
                while client.call("CLIENT", "LIST").count(b"\n") > 1 and time.monotonic() < deadline:
                    time.sleep(0.05)
        return out
    finally:
        server.cleanup()


def _dbsize_or_loading(port: int) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(b"*1\r\n$6\r\nDBSIZE\r\n")
        data = b""
        while not data.endswith(b"\r\n"):
            chunk = sock.recv(4096)
            if not chunk:
                break
            data += chunk
        return data


class Pinger:
    """A client that keeps trying to connect and PINGs every millisecond while the
    server restarts."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.stop = threading.Event()
        self.pings = 0
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.is_set():
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=5) as sock:
                    while not self.stop.is_set():
                        sock.sendall(PING)
                        if not sock.recv(64):
                            break
                        self.pings += 1
                        time.sleep(0.001)  # a steady client, not a flood
            except OSError:
                time.sleep(0.002)

    def close(self) -> None:
        self.stop.set()
        self.thread.join(10)


def measure_restart(kind: ServerKind, keys: int) -> dict[str, float]:
    persistence = ["--appendonly", "yes", "--appendfsync", "everysec"]
    workdir = tempfile.mkdtemp(prefix=f"restart-{kind.name}-")
    try:
        server = start_server(kind, persistence=persistence, workdir=workdir)
        try:
            subprocess.run(
                ["redis-benchmark", "-p", str(server.port), "-q", "-n", str(keys), "-P", "64",
                 "-c", "20", "-r", str(keys * 100), "SET", "key:__rand_int__", "value"],
                capture_output=True, check=True, timeout=300)
            with server.client() as client:
                written = int(client.call("DBSIZE"))
                # everysec: let the last second's writes reach the file before the kill.
                time.sleep(1.2)
            server.proc.send_signal(signal.SIGKILL)
            server.proc.wait(30)
        finally:
            server.stop()
        port = free_port()
        argv = kind.command(port, workdir, persistence)
        # rillet: this checkout first on the path (a baseline's command line sets its own).
        env = launch.rillet_env() if kind.binary is None else dict(os.environ)
        pinger = Pinger(port)
        began = time.perf_counter()
        with open(os.path.join(workdir, "restart.log"), "ab") as log:
            proc = subprocess.Popen(argv, cwd=workdir, stdout=log, stderr=subprocess.STDOUT, env=env)
        try:
            while True:
                try:
                    reply = _dbsize_or_loading(port)
                    if reply.startswith(b":"):
                        seconds = time.perf_counter() - began
                        cpu = cpu_seconds(proc.pid)
                        break
                except OSError:
                    pass
                if proc.poll() is not None:
                    raise ServerUnavailable(f"{kind.name} exited while loading")
                if time.perf_counter() - began > 120:
                    raise ServerUnavailable(f"{kind.name} not loaded after 120 s")
                time.sleep(0.002)
            loaded = int(reply[1:])
            if loaded != written:
                raise RuntimeError(f"{kind.name} loaded {loaded} keys of {written}")
        finally:
            pinger.close()
            proc.terminate()
            proc.wait(30)
        return {"restart s": seconds, "server CPU until loaded s": cpu}
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def table(title: str, kinds: list[ServerKind], results: dict[str, list[dict[str, float]]]) -> None:
    names = [kind.name for kind in kinds if results.get(kind.name)]
    if not names:
        return
    labels = {kind.name: kind.label for kind in kinds}
    print(f"\n## {title} (medians of {min(len(results[n]) for n in names)})\n")
    ratio = len(names) > 1
    print("| figure | " + " | ".join(labels[n] for n in names) + (" | ratio |" if ratio else " |"))
    print("|---|" + "---|" * (len(names) + ratio))
    for figure in results[names[0]][0]:
        medians = [statistics.median(rep[figure] for rep in results[n]) for n in names]
        cells = [f"{m:.3f}" if m < 100 else f"{m:,.0f}" for m in medians]
        tail = f" | {medians[0] / medians[-1]:.2f}x |" if ratio and medians[-1] else (" | |" if ratio else " |")
        print(f"| {figure} | " + " | ".join(cells) + tail)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="connections,restart")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--connections", type=int, default=5000)
    parser.add_argument("--keys", type=int, default=100_000)
    parser.add_argument("--servers", default="rillet,redis8",
                        help="of rillet, redis (Debian 7.0), redis8 (8.2.3); the last is the ratio's base")
    parser.add_argument("--baseline", metavar="SRC", help="another rillet checkout's src/ as a column")
    args = parser.parse_args()
    wanted = args.servers.split(",")
    available = {kind.name: kind for kind in server_kinds(include_redis8="redis8" in wanted)}
    kinds = [available[name] for name in wanted if name in available]
    if args.baseline:
        kinds.insert(1, baseline_kind(args.baseline))
    # As an installed server: its modules' bytecode cached (written by each server's
    # first start, read by the restart), whatever this shell says.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ.setdefault("PYTHONPYCACHEPREFIX", tempfile.mkdtemp(prefix="bench-pycache-"))
    print(f"load average before: {' '.join(f'{v:.2f}' for v in os.getloadavg())} on {os.cpu_count()} cores")
    sections = args.only.split(",")
    if "connections" in sections:
        results = measure_interleaved(kinds, args.reps, lambda k: measure_connections(k, args.connections))
        table(f"{args.connections} connections, each PING → PONG, kept open", kinds, results)
    if "restart" in sections:
        results = measure_interleaved(kinds, args.reps, lambda k: measure_restart(k, args.keys))
        table(f"restart from an AOF of {args.keys} keys (kill -9, start, until DBSIZE answers)",
              kinds, results)
    print(f"\nload average after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
