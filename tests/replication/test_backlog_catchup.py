"""A replica dropped at its output limit comes back partially, however far behind it is.

Redis (7.0+) shares the backlog with its replicas' output buffers: a partial
resync points the replica at its place in the backlog instead of copying the
missing bytes into its output buffer, so a backlog larger than
client-output-buffer-limit's replica class does not get the replica dropped
again as it catches up. rillet streams the missing backlog at the pace the
replica reads it; the same scenario runs against Redis 8.2.3 for comparison.
"""

from __future__ import annotations

import os
import signal
import time

import pytest

from tests.helpers import servers
from tests.replication import support

BATCH = 200  # XADDs per batch: ~100 kB with this padding
PAD = 480


def _xadd_batch(client, start: int) -> None:
    pipe = client.pipeline(transaction=False)
    for i in range(start, start + BATCH):
        pipe.xadd("s", {"i": str(i), "pad": "x" * PAD})
    pipe.execute()


ALWAYS = ("--appendonly", "yes", "--appendfsync", "always")  # the backlog waits for fsyncs


@pytest.mark.parametrize("kind,options", [
    ("rillet", ()), ("rillet", ALWAYS),
    pytest.param("redis8", (), marks=pytest.mark.needs_redis),
])
def test_replica_over_its_output_limit_resyncs_partially(kind, options):
    if kind == "redis8" and servers.redis8_binary() is None:
        pytest.skip("Redis 8.2.3 not available")
    master = support.start(kind, *options)
    replica = None
    stopped = False
    try:
        m = master.client()
        replica = support.start(kind, "--replicaof", "127.0.0.1", str(master.port))
        r = replica.client()
        m.config_set("repl-backlog-size", str(32 << 20))
        m.config_set("client-output-buffer-limit", "replica 1mb 512kb 2")
        _xadd_batch(m, 0)
        support.wait_synced(m, r)
        before = support.stats(m)
        dropped_before = support.info(m, "stats")["client_output_buffer_limit_disconnections"]

        os.kill(replica.proc.pid, signal.SIGSTOP)
        stopped = True
        # Write until the master drops the stopped replica: past the hard limit
        # for rillet; Redis raises a replica's hard limit to the backlog's size,
        # so its soft limit (over 512 kB for 2 s) does it. The kernel's socket
        # buffers take some MB first. At most ~16 MB: well inside the backlog.
        n = BATCH
        for _ in range(160):
            _xadd_batch(m, n)
            n += BATCH
            if support.info(m)["connected_slaves"] == 0:
                break
            time.sleep(0.05)
        assert support.info(m)["connected_slaves"] == 0, "the stopped replica was not dropped"
        assert support.info(m, "stats")["client_output_buffer_limit_disconnections"] > dropped_before
        for _ in range(40):  # ~4 MB more while it is away: more than one write's worth
            _xadd_batch(m, n)
            n += BATCH

        os.kill(replica.proc.pid, signal.SIGCONT)
        stopped = False
        for _ in range(20):  # writes arriving while it catches up come after the backlog
            _xadd_batch(m, n)
            n += BATCH
        support.wait_synced(m, r, timeout_s=60)

        after = support.stats(m)
        assert after["sync_full"] == before["sync_full"]
        assert after["sync_partial_ok"] == before["sync_partial_ok"] + 1
        assert support.info(r)["master_repl_offset"] == support.info(m)["master_repl_offset"]
        assert r.xlen("s") == m.xlen("s") == n
        assert r.xrange("s") == m.xrange("s")
    finally:
        if stopped and replica is not None:
            os.kill(replica.proc.pid, signal.SIGCONT)
        if replica is not None:
            replica.stop()
        master.stop()


# --- in process: the backlog's cursor, and the master pacing a replica's catch-up ---------


def test_cursor_reads_pieces_across_trims_and_compaction():
    from rillet.replication.backlog import Backlog

    backlog = Backlog(3000, 1, 0.0)
    stream = b""
    for n in range(400):  # small chunks: trimming drops thousands, the list is cut
        chunk = b"%05d" % n * 3
        backlog.append(chunk)
        stream += chunk
    start = len(stream) - 2000 + 1 + 7  # inside a chunk
    cursor = backlog.cursor(start)
    got = bytes(backlog.read(cursor, 100))
    assert 100 <= len(got) < 100 + 15 and stream[start - 1:].startswith(got)
    for n in range(400, 4000):
        chunk = b"%05d" % n * 3
        stream += chunk
        backlog.append(chunk)
        if n < 450:  # it keeps up for a while
            got += bytes(backlog.read(cursor, 500))
    assert backlog.dropped > 0  # (the cut happened)
    assert backlog.read(cursor, 500) is None  # then the backlog moved past it
    end = len(stream) + 1
    assert got == stream[start - 1:cursor.offset - 1]
    assert support.backlog_bytes(backlog, end - 100) == stream[-100:]
    tail = backlog.cursor(end)
    assert backlog.read(tail, 10) == b""
    one = Backlog(100, 1, 0.0)
    one.append(b"x" * 150)  # one chunk, larger than the backlog: read from `skip`
    assert support.backlog_bytes(one, 51) == b"x" * 100


class _Socket:
    """A transport with flow control: the peer reads when told to."""

    def __init__(self) -> None:
        self.protocol = None
        self.buffered: list[bytes] = []
        self.received = bytearray()
        self.high = 1 << 16
        self.paused = self.closing = False

    def write(self, data) -> None:
        self.buffered.append(bytes(data))
        if self.get_write_buffer_size() > self.high and not self.paused:
            self.paused = True
            self.protocol.pause_writing()

    def drain(self) -> None:
        for data in self.buffered:
            self.received += data
        self.buffered = []
        if self.paused:
            self.paused = False
            self.protocol.resume_writing()

    def get_write_buffer_size(self) -> int:
        return sum(map(len, self.buffered))

    def set_write_buffer_limits(self, high=None) -> None:
        self.high = high

    def get_extra_info(self, key, default=None):
        return {"peername": ("127.0.0.1", 1), "sockname": ("127.0.0.1", 2)}.get(key)

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass

    def is_closing(self) -> bool:
        return self.closing

    def close(self) -> None:
        self.closing = True

    abort = close


def _master_with_replica_conn():
    from rillet.config import Config
    from rillet.replication import attach
    from rillet.server.connection import ClientConnection
    from rillet.server.server import Server

    config = Config()
    config.set("client-output-buffer-limit", "replica 1mb 512kb 2")
    config.set("repl-backlog-size", str(32 << 20))
    server = Server(config)
    repl = attach(server)
    repl.create_backlog()
    conn = ClientConnection(server)
    sock = _Socket()
    sock.protocol = conn
    conn.connection_made(sock)
    return server, repl, conn, sock


def test_catch_up_goes_out_as_the_replica_reads_it_and_the_stream_follows():
    server, repl, conn, sock = _master_with_replica_conn()
    piece = b"*1\r\n$4\r\nPING\r\n" * 700  # ~10 kB per turn
    for _ in range(1000):  # 10 MB, all missed by the replica
        repl.feed_raw(piece)
    offset = 1 + 200 * len(piece)
    repl.master_side.psync(conn.client, repl.replid.encode(), offset)
    entry = repl.master_side.entries[conn.client.id]
    # Only about one transport's worth went out, not the 8 MB it misses: the
    # limit (1 MB) does not apply to it, and the replica is still there.
    assert conn.high_water < sock.get_write_buffer_size() <= conn.high_water + 300_000
    assert entry.catchup is not None and not sock.closing
    expected = bytearray(b"+CONTINUE\r\n")  # (no psync2 capa announced)
    expected += b"".join([piece] * 800)
    for n in range(100):  # the stream goes on as it reads
        repl.feed_raw(b"*2\r\n$4\r\nECHO\r\n$4\r\n%04d\r\n" % n)
        expected += b"*2\r\n$4\r\nECHO\r\n$4\r\n%04d\r\n" % n
        sock.drain()
        assert sock.get_write_buffer_size() <= conn.high_water + 300_000
    for _ in range(10):
        sock.drain()
    assert entry.catchup is None and sock.received == expected
    assert conn.client.obuf_class == "normal"  # until the backlog it was sent has left
    repl.master_side.cron(0)
    assert conn.client.obuf_class == "replica"
    repl.feed_raw(b"*1\r\n$4\r\nPING\r\n")
    assert sock.buffered == [b"*1\r\n$4\r\nPING\r\n"]  # straight to it now
    assert server.state.stats.output_buffer_limit_disconnections == 0


def test_a_replica_the_backlog_moves_past_while_it_catches_up_is_dropped():
    server, repl, conn, sock = _master_with_replica_conn()
    piece = b"x" * 10_000
    for _ in range(1000):
        repl.feed_raw(piece)
    repl.master_side.psync(conn.client, repl.replid.encode(), 1)
    assert conn.client.id in repl.master_side.entries
    repl.config.set("repl-backlog-size", str(1 << 20))  # it trims past what it reads
    repl.master_side.cron(0)
    assert sock.closing and conn.client.id not in repl.master_side.entries
    assert server.state.stats.output_buffer_limit_disconnections == 1
