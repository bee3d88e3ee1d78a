"""busproto against a real Redis 8.2.3 cluster node.

The test plays a cluster node of its own: it MEETs Redis over the bus with packets
busproto encodes, accepts the link Redis opens back, answers Redis's PINGs with
PONGs, and decodes everything Redis sends. Redis accepting it as a connected master
with the slots it claims, and acting on its FAIL, UPDATE and PUBLISH messages, is
the proof that the wire format is Redis's.
"""

from __future__ import annotations

import os
import selectors
import socket
import tempfile
import threading
import time
from collections.abc import Callable
from typing import TypeVar

import pytest

from rillet.cluster import busproto as bp
from tests.cluster import support
from tests.helpers import servers

pytestmark = pytest.mark.needs_redis
T = TypeVar("T")

WAIT_S = 20.0
FAKE_ID = "f" * 8 + "0123456789abcdef0123456789abcdef"
FAKE_SHARD = "5" * 40
THIRD_ID = "c" * 40  # gossiped, then failed
FOURTH_ID = "d" * 40  # gossiped, then given slots by UPDATE, then forgotten
SLOTS = bp.SLOTS
OURS = range(8192, SLOTS)


def _until(check: Callable[[], T], what: str, timeout_s: float = WAIT_S) -> T:
    return support.until(check, what, timeout_s, interval_s=0.05)


class FakeNode:
    """A cluster node made of busproto: a listening bus port, an outbound link to
    Redis, a thread answering PING and MEET with PONG and keeping all it decodes."""

    def __init__(self, redis_bus_port: int, node_id: str = FAKE_ID,
                 slots: range = OURS) -> None:
        self.node_id = node_id
        self.myslots = bp.slots_bitmap(slots)
        self.config_epoch = 1
        self.current_epoch = 1
        self.client_port = servers.free_port()  # where no one listens: nobody asks
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.cport = self.listener.getsockname()[1]
        self.received: list[tuple[str, bp.Message, bytes]] = []
        self.errors: list[BaseException] = []
        self._lock = threading.Lock()
        self._sel = selectors.DefaultSelector()
        self._bufs: dict[socket.socket, bytearray] = {}
        self._names: dict[socket.socket, str] = {}
        self._socks: dict[int, socket.socket] = {}
        self._stop = threading.Event()
        self.out = socket.create_connection(("127.0.0.1", redis_bus_port), timeout=5)
        self._watch(self.out, "out")
        self._sel.register(self.listener, selectors.EVENT_READ)
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _watch(self, sock: socket.socket, name: str) -> None:
        sock.settimeout(5)  # selected before reading, so a recv never waits
        self._bufs[sock] = bytearray()
        self._names[sock] = name
        self._socks[sock.fileno()] = sock
        self._sel.register(sock, selectors.EVENT_READ)

    def message(self, kind: int, body: bp.Body = None, **fields) -> bp.Message:
        fields = {"current_epoch": self.current_epoch, "config_epoch": self.config_epoch,
                  "myslots": self.myslots, "port": self.client_port, "cport": self.cport,
                  "flags": bp.NodeFlag.MASTER, "mflags": bytes([bp.MFlag0.EXT_DATA, 0, 0]),
                  **fields}
        return bp.Message(kind, self.node_id, body, **fields)

    def ping_body(self, gossip: list[bp.Gossip] | None = None) -> bp.PingBody:
        return bp.PingBody(gossip or [], [bp.HostnameExt("fake.example"),
                                          bp.HumanNodenameExt("fakey"),
                                          bp.ShardIdExt(FAKE_SHARD)])

    def send(self, msg: bp.Message, sock: socket.socket | None = None) -> None:
        (sock or self.out).sendall(bp.encode(msg))

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                for key, _ in self._sel.select(0.05):
                    if key.fileobj is self.listener:
                        conn, _ = self.listener.accept()
                        self._watch(conn, f"in{len(self._names)}")
                    else:
                        self._read(self._socks[key.fd])
        except BaseException as exc:  # reported by wait(), which the test calls
            self.errors.append(exc)

    def _read(self, sock: socket.socket) -> None:
        data = sock.recv(65536)
        if not data:
            self._sel.unregister(sock)
            sock.close()
            return
        buf = self._bufs[sock]
        buf += data
        while (length := bp.packet_length(buf)) is not None and len(buf) >= length:
            raw = bytes(buf[:length])
            del buf[:length]
            msg = bp.decode(raw)
            with self._lock:
                self.received.append((self._names[sock], msg, raw))
            if msg.type in (bp.MsgType.PING, bp.MsgType.MEET):
                self.send(self.message(bp.MsgType.PONG, self.ping_body()), sock)

    def wait(self, match: Callable[[bp.Message], bool], what: str, after: int = 0,
             resend: bp.Message | None = None) -> tuple[str, bp.Message, bytes]:
        """The first message from index `after` on that `match`es; `resend` goes out
        again every half second meanwhile (for what Redis says only now and then)."""
        sent = [time.monotonic()]

        def find():
            if self.errors:
                raise self.errors[0]
            if resend is not None and time.monotonic() - sent[0] > 0.5:
                self.send(resend)
                sent[0] = time.monotonic()
            with self._lock:
                return next((item for item in self.received[after:] if match(item[1])), None)
        found = _until(find, what)
        assert found is not None
        return found

    def mark(self) -> int:
        with self._lock:
            return len(self.received)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        for sock in list(self._bufs):
            sock.close()
        self.listener.close()


def _nodes(client) -> dict[str, list[str]]:
    text = client.execute_command("CLUSTER", "NODES").decode()
    return {line.split()[0]: line.split() for line in text.splitlines() if line}


def _flags(client, node_id: str) -> set[str]:
    line = _nodes(client).get(node_id)
    return set(line[2].split(",")) if line else set()


def _cluster_redis(*extra: str):
    """A cluster-enabled Redis 8.2.3 on a port pair of its own, and a client."""
    binary = servers.redis8_binary()
    if binary is None:
        pytest.skip("Redis 8.2.3 not available")
    port = support.free_cluster_port()
    workdir = tempfile.mkdtemp(prefix="redis8-cluster-")
    redis = servers.start_redis(
        binary, "--cluster-enabled", "yes", "--cluster-config-file",
        os.path.join(workdir, "nodes.conf"), "--cluster-node-timeout", "15000", *extra,
        kind="redis8", port=port, dir=workdir)
    return redis, redis.client()


@pytest.fixture(scope="module")
def cluster():
    redis, client = _cluster_redis("--cluster-announce-hostname", "redis-a.example",
                                   "--cluster-announce-human-nodename", "alpha")
    fake = None
    try:
        client.execute_command("CLUSTER", "ADDSLOTSRANGE", 0, 8191)
        fake = FakeNode(redis.port + 10000)
        pong = _join(redis, client, fake)
        yield redis, client, fake, pong
    finally:
        if fake is not None:
            fake.close()
        client.close()
        redis.stop()


def _join(redis, client, fake: FakeNode) -> bp.Message:
    """MEET, the handshake, then a PING on our link: Redis's PONG to it."""
    myid = client.execute_command("CLUSTER", "MYID").decode()
    fake.send(fake.message(bp.MsgType.MEET, fake.ping_body()))
    _, pong, raw = fake.wait(lambda m: m.type == bp.MsgType.PONG, "Redis's PONG to our MEET")
    assert pong.sender == myid
    assert bp.encode(pong) == raw
    # Redis connects to our bus port with a PING; the thread's PONG ends the handshake.
    fake.wait(lambda m: m.type == bp.MsgType.PING, "Redis's PING on its own link")
    _until(lambda: "handshake" not in _flags(client, fake.node_id)
           and _flags(client, fake.node_id), "the handshake to end")
    mark = fake.mark()
    fake.send(fake.message(bp.MsgType.PING, fake.ping_body()))
    _, pong, raw = fake.wait(lambda m: m.type == bp.MsgType.PONG and m.body.extensions,
                             "a PONG with extensions", after=mark)
    return pong


def test_redis_accepts_our_node_and_we_read_its_packets(cluster) -> None:
    redis, client, fake, pong = cluster
    myid = client.execute_command("CLUSTER", "MYID").decode()

    assert pong.sender == myid and pong.slaveof is None
    assert bp.bitmap_slots(pong.myslots) == list(range(8192))
    assert pong.port == redis.port and pong.cport == redis.port + 10000
    assert pong.flags & bp.NodeFlag.MASTER and pong.flags & bp.NodeFlag.MYSELF
    assert pong.mflags[0] & bp.MFlag0.EXT_DATA
    exts = {type(ext): ext for ext in pong.body.extensions}
    assert exts[bp.HostnameExt].hostname == "redis-a.example"
    assert exts[bp.HumanNodenameExt].nodename == "alpha"
    assert bp.is_node_id(exts[bp.ShardIdExt].shard_id)
    assert exts[bp.ShardIdExt].shard_id == client.execute_command("CLUSTER", "MYSHARDID").decode()
    assert len(exts[bp.InternalSecretExt].secret) == 40

    # Redis's view of us: a connected master, out of handshake, with our slots, our
    # hostname and our shard id; the 16384 slots covered, so the cluster is ok.
    line = _until(lambda: (ln := _nodes(client).get(FAKE_ID)) and ln[7] == "connected"
                  and ln[8:] == ["8192-16383"] and ln, "our node connected with its slots")
    assert line[1] == f"127.0.0.1:{fake.client_port}@{fake.cport},fake.example"
    assert set(line[2].split(",")) == {"master"}
    assert line[6] == "1"  # our config epoch
    _until(lambda: b"cluster_state:ok" in client.execute_command("CLUSTER", "INFO"),
           "cluster_state:ok")
    # nodes.conf keeps what our extensions said: shard id and human nodename.
    client.execute_command("CLUSTER", "SAVECONFIG")
    with open(os.path.join(redis.dir, "nodes.conf")) as conf:
        ours = next(ln for ln in conf if ln.startswith(FAKE_ID))
    assert f"shard-id={FAKE_SHARD}" in ours and "nodename=fakey" in ours

    # Every packet Redis sent us decodes, and encodes back to the same bytes.
    with fake._lock:
        received = list(fake.received)
    assert {m.type for _, m, _ in received} >= {bp.MsgType.PING, bp.MsgType.PONG}
    for _, msg, raw in received:
        assert bp.encode(msg) == raw


def test_publish_both_ways(cluster) -> None:
    redis, client, fake, _ = cluster
    _until(lambda: (ln := _nodes(client).get(FAKE_ID)) and ln[7] == "connected", "our node")
    sub = client.pubsub()
    try:
        sub.subscribe("bus-news")
        channel = next(f"sch{i}" for i in range(1000)
                       if client.execute_command("CLUSTER", "KEYSLOT", f"sch{i}") < 8192)
        sub.ssubscribe(channel)
        for _ in range(2):
            assert sub.get_message(timeout=5)["type"] in ("subscribe", "ssubscribe")
        fake.send(fake.message(bp.MsgType.PUBLISH, bp.PublishBody(b"bus-news", b"from the bus")))
        fake.send(fake.message(bp.MsgType.PUBLISHSHARD, bp.PublishBody(channel.encode(), b"shard")))
        got = [sub.get_message(timeout=5) for _ in range(2)]
    finally:
        sub.close()
    assert [(m["type"], m["channel"], m["data"]) for m in got] == [
        ("message", b"bus-news", b"from the bus"), ("smessage", channel.encode(), b"shard")]

    # PUBLISH on Redis goes to every node over the bus.
    mark = fake.mark()
    client.publish("to-fake", "payload\0bytes")
    _, msg, _ = fake.wait(lambda m: m.type == bp.MsgType.PUBLISH, "Redis's bus PUBLISH", mark)
    assert msg.body == bp.PublishBody(b"to-fake", b"payload\0bytes")
    assert msg.sender == client.execute_command("CLUSTER", "MYID").decode()


def test_gossip_update_fail_and_forget(cluster) -> None:
    redis, client, fake, _ = cluster
    _until(lambda: (ln := _nodes(client).get(FAKE_ID)) and ln[7] == "connected", "our node")
    dead = [servers.free_port() for _ in range(2)]
    gossip = [bp.Gossip(THIRD_ID, 0, 0, "127.0.0.1", dead[0], dead[0] + 1, bp.NodeFlag.MASTER),
              bp.Gossip(FOURTH_ID, 0, 0, "127.0.0.1", dead[1], dead[1] + 1, bp.NodeFlag.MASTER)]
    fake.send(fake.message(bp.MsgType.PING, fake.ping_body(gossip)))
    _until(lambda: THIRD_ID in _nodes(client) and FOURTH_ID in _nodes(client),
           "Redis to learn the gossiped nodes")
    assert _nodes(client)[THIRD_ID][1].startswith(f"127.0.0.1:{dead[0]}@{dead[0] + 1}")

    # UPDATE: the fourth node serves 16000-16383 under a newer epoch than ours.
    moved = bp.slots_bitmap(range(16000, SLOTS))
    mark = fake.mark()
    fake.send(fake.message(bp.MsgType.UPDATE, bp.UpdateBody(7, FOURTH_ID, moved)))
    _until(lambda: _nodes(client)[FOURTH_ID][8:] == ["16000-16383"],
           "the UPDATE's slots to move")
    assert _nodes(client)[FOURTH_ID][6] == "7"
    assert _nodes(client)[FAKE_ID][8:] == ["8192-15999"]
    # Our PINGs still claim them under epoch 1: Redis tells us with an UPDATE of its own.
    fake.send(fake.message(bp.MsgType.PING, fake.ping_body()))
    _, update, raw = fake.wait(lambda m: m.type == bp.MsgType.UPDATE, "Redis's UPDATE", mark)
    assert update.body == bp.UpdateBody(7, FOURTH_ID, moved)
    assert bp.encode(update) == raw
    fake.myslots = bp.slots_bitmap(range(8192, 16000))

    # FAIL: Redis flags the third node as failed on our word.
    fake.send(fake.message(bp.MsgType.FAIL, bp.FailBody(THIRD_ID)))
    _until(lambda: "fail" in _flags(client, THIRD_ID), "the FAIL to be applied")

    # CLUSTER FORGET: Redis gossips the forgotten node in its ping extensions.
    client.execute_command("CLUSTER", "FORGET", FOURTH_ID)
    mark = fake.mark()

    def forgotten(m: bp.Message) -> bool:
        return m.type in bp.PING_TYPES and any(
            isinstance(e, bp.ForgottenNodeExt) for e in m.body.extensions)
    fake.send(fake.message(bp.MsgType.PING, fake.ping_body()))
    _, msg, raw = fake.wait(forgotten, "a forgotten-node extension", mark)
    ext = next(e for e in msg.body.extensions if isinstance(e, bp.ForgottenNodeExt))
    assert ext.name == FOURTH_ID and 0 < ext.ttl <= 60
    assert bp.encode(msg) == raw

    # Redis gossips the third node to us now (picked at random, so not in every
    # packet); its packets still encode back exactly.
    ping = fake.message(bp.MsgType.PING, fake.ping_body())
    fake.send(ping)
    _, msg, raw = fake.wait(lambda m: m.type in bp.PING_TYPES and any(
        g.nodename == THIRD_ID for g in m.body.gossip), "gossip about the third node",
        resend=ping)
    third = next(g for g in msg.body.gossip if g.nodename == THIRD_ID)
    assert (third.ip, third.port, third.cport) == ("127.0.0.1", dead[0], dead[0] + 1)
    assert third.flags & bp.NodeFlag.FAIL and third.flags & bp.NodeFlag.MASTER
    with fake._lock:
        received = list(fake.received)
    for _, msg, raw in received:
        assert bp.encode(msg) == raw


def test_manual_failover_of_our_node() -> None:
    """A Redis replica of our node fails it over: MFSTART, our PAUSED offset, its
    FAILOVER_AUTH_REQUEST, our FAILOVER_AUTH_ACK, and it is master of our slots."""
    redis, client = _cluster_redis()
    fake = None
    try:
        fake = FakeNode(redis.port + 10000, "e" * 40, range(SLOTS))
        _join(redis, client, fake)
        _until(lambda: (ln := _nodes(client).get(fake.node_id)) and ln[8:] == ["0-16383"],
               "our slots")
        myid = client.execute_command("CLUSTER", "MYID").decode()
        mark = fake.mark()
        client.execute_command("CLUSTER", "REPLICATE", fake.node_id)
        _, ping, raw = fake.wait(lambda m: m.type == bp.MsgType.PING and m.slaveof is not None,
                                 "a PING from our replica", mark)
        assert ping.slaveof == fake.node_id and ping.flags & bp.NodeFlag.SLAVE
        assert bp.bitmap_slots(ping.myslots) == list(range(SLOTS))  # its master's, ours
        assert bp.encode(ping) == raw

        mark = fake.mark()
        client.execute_command("CLUSTER", "FAILOVER")
        _, mfstart, raw = fake.wait(lambda m: m.type == bp.MsgType.MFSTART, "MFSTART", mark)
        assert mfstart.sender == myid and mfstart.body is None and len(raw) == bp.HEADER_LEN
        # Paused at offset 0, which is where a replica that never synced stands.
        fake.send(fake.message(bp.MsgType.PING, fake.ping_body(), offset=0,
                               mflags=bytes([bp.MFlag0.EXT_DATA | bp.MFlag0.PAUSED, 0, 0])))
        _, request, raw = fake.wait(lambda m: m.type == bp.MsgType.FAILOVER_AUTH_REQUEST,
                                    "FAILOVER_AUTH_REQUEST", mark)
        assert request.mflags[0] & bp.MFlag0.FORCEACK and len(raw) == bp.HEADER_LEN
        assert request.current_epoch > fake.current_epoch and request.slaveof == fake.node_id
        fake.send(fake.message(bp.MsgType.FAILOVER_AUTH_ACK, current_epoch=request.current_epoch))

        _until(lambda: client.execute_command("ROLE")[0] == b"master", "the failover")
        line = _until(lambda: (ln := _nodes(client)[myid]) and ln[8:] == ["0-16383"] and ln,
                      "its slots")
        assert set(line[2].split(",")) == {"myself", "master"}
        assert int(line[6]) == request.current_epoch
    finally:
        if fake is not None:
            fake.close()
        client.close()
        redis.stop()
