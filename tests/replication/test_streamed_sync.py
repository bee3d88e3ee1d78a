"""The full-sync payload on the wire, as a Redis replica sees it: streamed between
`$EOF:<mark>` and the mark to replicas with `capa eof` (nothing after the mark until
their first ACK), `$<len>` to the others and under `repl-diskless-sync no`."""

from __future__ import annotations

import os
import socket

import pytest

from tests.replication import support

pytestmark = pytest.mark.slow

BIG = 1_200_000  # above the RDB writer's 1 MiB flush: part of the payload leaves early


@pytest.fixture(scope="module")
def master():
    # Each key's save waits 0.3 s: a sync lasts over a second, so the master's
    # once-a-second keepalive would land inside the payload if it were sent there,
    # and a second replica can attach while the child runs.
    handle = support.start("rillet", env=dict(os.environ, RILLET_KEY_SAVE_DELAY_US="300000"))
    client = handle.client()
    client.set("big", os.urandom(BIG))
    pipe = client.pipeline(transaction=False)
    for i in range(3000):
        pipe.xadd("s", {"i": str(i), "v": f"value-{i % 7}"})
    pipe.execute()
    client.hset("h", mapping={"a": "1", "b": "2"})
    yield handle, client
    handle.stop()


class FakeReplica:
    def __init__(self, port: int, eof: bool) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.buf = b""
        self.call(b"REPLCONF listening-port 1\r\n")
        if eof:
            self.call(b"REPLCONF capa eof capa psync2\r\n")
        self.sock.sendall(b"PSYNC ? -1\r\n")
        words = self.line().split()
        assert words[0] == b"+FULLRESYNC", words
        self.offset = int(words[2])

    def call(self, command: bytes) -> None:
        self.sock.sendall(command)
        assert self.line() == b"+OK"

    def fill(self) -> None:
        data = self.sock.recv(1 << 20)
        assert data, "the master closed the link"
        self.buf += data

    def line(self) -> bytes:
        while b"\r\n" not in self.buf:
            self.fill()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def payload(self) -> tuple[bytes, bytes]:
        """(the header's kind, b"EOF" or b"len"; the payload)."""
        header = self.line().lstrip(b"\n")  # newlines before it are keepalives
        if header.startswith(b"$EOF:"):
            mark = header[5:]
            assert len(mark) == 40
            while mark not in self.buf:
                self.fill()
            payload, rest = self.buf.split(mark, 1)
            assert rest == b""  # nothing follows the mark before our first ACK
            self.buf = b""
            return b"EOF", payload
        size = int(header[1:])
        while len(self.buf) < size:
            self.fill()
        payload, self.buf = self.buf[:size], self.buf[size:]
        return b"len", payload

    def read_until(self, needle: bytes) -> None:
        while needle not in self.buf:
            self.fill()

    def close(self) -> None:
        self.sock.close()


def _check_payload(payload: bytes) -> None:
    from rillet.persistence import rdb
    from rillet.state import ServerState

    state = ServerState()
    rdb.load_keyspace(state, payload)  # verifies the CRC: one stray byte fails it
    db = state.keyspace[0]
    assert len(db.get(b"big")) == BIG
    assert db.get(b"s").length == 3000
    assert len(db.data) == 3


@pytest.mark.parametrize(("eof", "diskless", "kind"), [
    (True, "yes", b"EOF"),
    (False, "yes", b"len"),
    (True, "no", b"len"),
])
def test_payload_form_and_the_stream_after_it(master, eof, diskless, kind):
    _, client = master
    client.config_set("repl-diskless-sync", diskless)
    replica = FakeReplica(client.connection_pool.connection_kwargs["port"], eof)
    try:
        got, payload = replica.payload()
        assert got == kind
        _check_payload(payload)
        client.xadd("s", {"after": "sync"})  # (trimmed below: the count stays 3000)
        if kind == b"EOF":
            # The write waits for the replica's first ACK: nothing may follow the mark
            # in what a Redis replica reads with it.
            support.wait_until(lambda: support.info(client)["slave0"]["state"] == "online",
                               10, "the replica listed online")
            replica.sock.settimeout(0.3)
            with pytest.raises(socket.timeout):
                replica.fill()
            replica.sock.settimeout(30)
            replica.sock.sendall(b"REPLCONF ACK %d\r\n" % replica.offset)
        replica.read_until(b"after")
    finally:
        replica.close()
        client.xtrim("s", maxlen=3000, approximate=False)
        client.config_set("repl-diskless-sync", "yes")
    support.wait_until(lambda: support.info(client)["connected_slaves"] == 0, 10, "detach")


def test_replica_attaching_during_a_streamed_sync_gets_the_whole_payload(master):
    _, client = master
    port = client.connection_pool.connection_kwargs["port"]
    first = FakeReplica(port, eof=True)
    try:
        second = FakeReplica(port, eof=True)  # while the child runs (a second per key)
        try:
            assert second.offset == first.offset
            payloads = [first.payload()[1], second.payload()[1]]
            assert payloads[0] == payloads[1]
            _check_payload(payloads[0])
        finally:
            second.close()
    finally:
        first.close()
    support.wait_until(lambda: support.info(client)["connected_slaves"] == 0, 10, "detach")
