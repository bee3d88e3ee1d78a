"""Quick persistence figures, rillet beside redis-server with the same flags.

    .venv/bin/python bench/persistence_figures.py [--entries 1000000] [--only load,stall,aof]

- load:  time from process start until a data command stops answering -LOADING,
         for a snapshot and for an AOF holding N stream entries (N string keys
         while the stream commands are not there yet); the AOF after a clean
         stop (rillet compacts it into a base then) and after SIGKILL (replay).
- stall: the longest PING round trip while BGSAVE and BGREWRITEAOF run on N entries.
- aof:   redis-benchmark XADD (or SET) with appendfsync always / everysec, -P 1 and -P 64.
The full, repeated comparison lives in bench/run (sections aof, load, bgsave).
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src"))

from rillet import launch  # noqa: E402


def command(port: int, *args: str, timeout: float = 60.0) -> bytes:
    payload = b"*%d\r\n" % len(args) + b"".join(
        b"$%d\r\n%s\r\n" % (len(a.encode()), a.encode()) for a in args)
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(payload)
        data = b""
        while not data.endswith(b"\r\n"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
        return data


def start(kind: str, *flags: str, again: launch.Server | None = None,
          probe: str = "PING") -> tuple[launch.Server, float]:
    """Start (`again`: in that server's dir, on its port); seconds until `probe` answers
    something other than -LOADING."""
    port = again.port if again else launch.free_port()
    workdir = again.dir if again else tempfile.mkdtemp(prefix=f"pf-{kind}-")
    argv = again.argv if again else (
        launch.rillet_argv(port, workdir, *flags) if kind == "rillet"
        else launch.redis_argv(launch.REDIS7_PATH, port, workdir, *flags))
    began = time.perf_counter()
    proc = launch.spawn(argv, workdir, launch.rillet_env(), os.path.join(workdir, "stdout"))
    server = launch.Server(kind, port, proc, workdir, argv)
    while True:
        try:
            reply = command(port, *probe.split())
            if not reply.startswith(b"-LOADING"):
                return server, time.perf_counter() - began
        except OSError:
            pass
        if not server.alive() or time.perf_counter() - began > 300:
            why = f"{kind} exited" if not server.alive() else "not ready after 300 s"
            server.cleanup(kill=True)
            raise RuntimeError(why)
        time.sleep(0.005)


def has_xadd(port: int) -> bool:
    return b"xadd" in command(port, "COMMAND", "INFO", "XADD").lower()


def fill(server: launch.Server, entries: int, streams: bool) -> None:
    args = ["XADD", "s", "*", "field", "value-__rand_int__"] if streams else \
        ["SET", "key:__rand_int__", "value"]
    extra = [] if streams else ["-r", str(entries * 10)]
    subprocess.run(["redis-benchmark", "-p", str(server.port), "-q", "-n", str(entries), "-P",
                    "64", "-c", "20", *extra, *args], capture_output=True, check=True)


def wait_idle(port: int, field: str) -> None:
    while f"{field}:1".encode() in command(port, "INFO", "persistence"):
        time.sleep(0.02)


def section_load(entries: int) -> None:
    print(f"\n## restart time, {entries} entries (process start to first non-LOADING reply)")
    # aof: clean stop (SIGTERM) then start; aof-crash: SIGKILL, so the AOF is replayed.
    for source in ("snapshot", "aof", "aof-crash"):
        flags = ["--save", ""] + (["--appendonly", "yes", "--appendfsync", "no"]
                                  if source.startswith("aof") else ["--appendonly", "no"])
        for kind in ("redis", "rillet"):
            server, _ = start(kind, *flags)
            try:
                streams = has_xadd(server.port)
                fill(server, entries, streams)
                probe = "XLEN s" if streams else "DBSIZE"
                if source == "snapshot":
                    command(server.port, "SAVE")
                if source == "aof-crash":
                    server.proc.kill()
                    server.proc.wait()
                else:
                    server.stop(120)
                server, seconds = start(kind, again=server, probe=probe)
                what = "stream entries" if streams else "string keys"
                print(f"{source:9} {kind:6}: {seconds * 1000:8.0f} ms  ({what})")
            finally:
                server.cleanup(kill=True)


def section_stall(entries: int) -> None:
    print(f"\n## longest PING round trip during a background job, {entries} entries")
    for kind in ("redis", "rillet"):
        server, _ = start(kind, "--save", "", "--appendonly", "yes", "--appendfsync", "everysec")
        try:
            fill(server, entries, has_xadd(server.port))
            for job, field in (("BGSAVE", "rdb_bgsave_in_progress"),
                               ("BGREWRITEAOF", "aof_rewrite_in_progress")):
                worst = [0.0]
                stop = threading.Event()

                def pinger(worst=worst, stop=stop, port=server.port):
                    with socket.create_connection(("127.0.0.1", port)) as sock:
                        while not stop.is_set():
                            began = time.perf_counter()
                            sock.sendall(b"*1\r\n$4\r\nPING\r\n")
                            sock.recv(64)
                            worst[0] = max(worst[0], time.perf_counter() - began)
                            time.sleep(0.001)

                thread = threading.Thread(target=pinger, daemon=True)
                thread.start()
                time.sleep(0.2)
                worst[0] = 0.0
                began = time.perf_counter()
                command(server.port, job)
                time.sleep(0.05)
                wait_idle(server.port, field)
                took = time.perf_counter() - began
                stop.set()
                thread.join(5)
                print(f"{job:12} {kind:6}: worst PING {worst[0] * 1000:6.1f} ms"
                      f" (job {took * 1000:.0f} ms)")
        finally:
            server.cleanup(kill=True)


def section_aof(requests: int) -> None:
    print("\n## AOF write throughput (redis-benchmark, 50 clients)")
    for policy in ("everysec", "always"):
        for pipeline in (1, 64):
            row = []
            for kind in ("redis", "rillet"):
                server, _ = start(kind, "--save", "", "--appendonly", "yes", "--appendfsync", policy)
                try:
                    args = ["XADD", "s", "*", "f", "v"] if has_xadd(server.port) else \
                        ["SET", "k:__rand_int__", "v"]
                    count = requests if pipeline == 64 else requests // 10
                    done = subprocess.run(
                        ["redis-benchmark", "-p", str(server.port), "-q", "-n", str(count), "-P",
                         str(pipeline), "-c", "50", "-r", "100000", *args],
                        capture_output=True, text=True, check=True)
                    line = done.stdout.replace("\r", "\n").strip().splitlines()[-1]
                    rate = float(line.split(":")[1].split("requests")[0])
                    row.append((kind, rate, args[0]))
                finally:
                    server.cleanup(kill=True)
            (_, redis_rate, _), (_, ours, name) = row
            print(f"{name} {policy:8} -P {pipeline:2}: redis {redis_rate:9.0f}/s  rillet "
                  f"{ours:9.0f}/s  ratio {ours / redis_rate:.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=1_000_000)
    parser.add_argument("--requests", type=int, default=500_000)
    parser.add_argument("--only", default="load,stall,aof")
    args = parser.parse_args()
    sections = args.only.split(",")
    if "load" in sections:
        section_load(args.entries)
    if "stall" in sections:
        section_stall(args.entries)
    if "aof" in sections:
        section_aof(args.requests)
    return 0


if __name__ == "__main__":
    sys.exit(main())
