"""The replication link: partial resync, backlog overrun, PSYNC2 after a promotion, bad PSYNCs."""

from __future__ import annotations

import socket

import pytest
import redis

from tests.replication import support


@pytest.fixture
def pair():
    master = support.start("rillet")
    replica = support.start("rillet", "--replicaof", "127.0.0.1", str(master.port))
    m, r = master.client(), replica.client()
    support.wait_synced(m, r)
    yield master, replica, m, r
    replica.stop()
    master.stop()


def _xadd(client, n: int, key: str = "s", size: int = 10) -> None:
    pipe = client.pipeline(transaction=False)
    for i in range(n):
        pipe.xadd(key, {"i": str(i), "pad": "x" * size})
    pipe.execute()


def test_roles_info_and_readonly(pair):
    master, replica, m, r = pair
    _xadd(m, 10)
    support.wait_synced(m, r)
    assert r.xlen("s") == 10
    mi, ri = support.info(m), support.info(r)
    assert mi["role"] == "master" and mi["connected_slaves"] == 1
    assert mi["slave0"]["state"] == "online" and mi["slave0"]["port"] == replica.port
    assert ri["role"] == "slave" and ri["master_link_status"] == "up"
    assert ri["master_port"] == master.port and ri["slave_read_only"] == 1
    assert ri["master_replid"] == mi["master_replid"]
    assert ri["slave_repl_offset"] == mi["master_repl_offset"]
    with pytest.raises(redis.ResponseError, match="^You can't write against a read only replica.$"):
        r.xadd("s", {"a": "1"})
    with pytest.raises(redis.ReadOnlyError):
        r.execute_command("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    assert r.execute_command("ROLE")[:3] == [b"slave", b"127.0.0.1", master.port]
    role = m.execute_command("ROLE")
    assert role[0] == b"master" and role[2][0][1] == str(replica.port).encode()


def test_partial_resync_after_client_kill(pair):
    master, replica, m, r = pair
    _xadd(m, 50)
    support.wait_synced(m, r)
    before = support.stats(m)
    assert m.execute_command("CLIENT", "KILL", "TYPE", "replica") == 1
    _xadd(m, 50)  # written while the link is down: the backlog keeps them
    support.wait_synced(m, r)
    after = support.stats(m)
    assert after["sync_partial_ok"] == before["sync_partial_ok"] + 1
    assert after["sync_full"] == before["sync_full"]
    assert r.xrange("s") == m.xrange("s")


def test_backlog_overrun_means_full_sync(pair):
    master, replica, m, r = pair
    m.config_set("repl-backlog-size", 16384)
    _xadd(m, 5)
    support.wait_synced(m, r)
    before = support.stats(m)
    m.execute_command("CLIENT", "KILL", "TYPE", "replica")
    _xadd(m, 300, size=200)  # ~70 kB: more than the backlog holds
    support.wait_synced(m, r)
    after = support.stats(m)
    assert after["sync_full"] == before["sync_full"] + 1
    assert r.xrange("s") == m.xrange("s")


def test_promotion_keeps_chain_partial(pair):
    """A replica's sub-replica and its old master continue partially after a promotion (PSYNC2)."""
    master, replica, m, r = pair
    sub = support.start("rillet", "--replicaof", "127.0.0.1", str(replica.port))
    try:
        s = sub.client()
        _xadd(m, 20)
        support.wait_synced(m, r)
        support.wait_synced(r, s)
        assert s.xlen("s") == 20
        old_id = support.info(m)["master_replid"]
        assert r.execute_command("REPLICAOF", "NO", "ONE") in (True, b"OK")
        ri = support.info(r)
        assert ri["role"] == "master" and ri["master_replid2"] == old_id
        _xadd(r, 5)
        support.wait_synced(r, s)
        assert s.xlen("s") == 25
        m.execute_command("REPLICAOF", "127.0.0.1", str(replica.port))
        support.wait_synced(r, s, m)
        assert m.xlen("s") == 25
        stats = support.stats(r)
        # The sub-replica (after the ID change) and the old master both continued.
        assert stats["sync_full"] == 1 and stats["sync_partial_ok"] == 2
    finally:
        sub.stop()


def _psync(port: int, replid: str, offset: int) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(b"PSYNC %s %d\r\n" % (replid.encode(), offset))
        data = b""
        while b"\r\n" not in data:
            chunk = sock.recv(4096)
            if not chunk:
                break
            data += chunk
        return data.split(b"\r\n", 1)[0]


def test_bad_psync_gets_full_sync(pair):
    master, replica, m, r = pair
    _xadd(m, 5)
    fields = support.info(m)
    replid, offset = fields["master_replid"], fields["master_repl_offset"]
    assert _psync(master.port, "f" * 40, offset + 1).startswith(b"+FULLRESYNC ")
    assert _psync(master.port, replid, offset + 1000).startswith(b"+FULLRESYNC ")
    assert _psync(master.port, replid, 0).startswith(b"+FULLRESYNC ")
    assert _psync(master.port, replid, offset + 1) == b"+CONTINUE"
    stats = support.stats(m)
    assert stats["sync_partial_err"] == 3


def test_replicaof_errors_and_no_one(pair):
    master, replica, m, r = pair
    with pytest.raises(redis.ResponseError, match="^Invalid master port$"):
        r.execute_command("REPLICAOF", "127.0.0.1", "70000")
    assert r.execute_command("REPLICAOF", "127.0.0.1", str(master.port)) == \
        b"OK Already connected to specified master"
    assert r.execute_command("SLAVEOF", "NO", "ONE") in (True, b"OK")
    r.xadd("s", {"a": "1"})  # writable now
    assert support.info(r)["role"] == "master"


def test_client_kill_type_master_reconnects_partially(pair):
    master, replica, m, r = pair
    _xadd(m, 10)
    support.wait_synced(m, r)
    before = support.stats(m)
    assert r.execute_command("CLIENT", "KILL", "TYPE", "master") == 1
    _xadd(m, 10)
    support.wait_synced(m, r)
    after = support.stats(m)
    assert after["sync_partial_ok"] == before["sync_partial_ok"] + 1
    assert after["sync_full"] == before["sync_full"]
    assert r.xlen("s") == 20


def test_replica_leaves_expiry_to_its_master(pair):
    """A due key reads as missing on the replica but stays until the master's DEL (Redis 7+)."""
    master, replica, m, r = pair
    m.xadd("soon", {"a": "1"})
    m.pexpire("soon", 400)
    support.wait_synced(m, r)
    master.stop(sig_kill=True)  # no DEL will ever come
    support.wait_until(lambda: not r.exists("soon"), 10, "the key to read as expired")
    assert r.dbsize() == 1  # still there: a replica does not expire keys itself
    assert r.xrange("soon") == []
    r.execute_command("REPLICAOF", "NO", "ONE")
    support.wait_until(lambda: r.dbsize() == 0, 10, "the promoted replica to expire it")


def test_output_buffer_limit_disconnects_a_replica_that_stops_reading(pair):
    master, replica, m, r = pair
    replica.stop()  # (a real replica could trip such a low limit too)
    support.wait_until(lambda: support.info(m)["connected_slaves"] == 0, 10, "detach")
    m.config_set("client-output-buffer-limit", "normal 0 0 0 replica 65536 65536 0")
    before = support.stats(m)
    fake = socket.socket()
    fake.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connecting: a small window
    fake.connect(("127.0.0.1", master.port))
    try:
        fake.sendall(b"REPLCONF listening-port 1\r\n")
        fake.recv(100)
        fake.sendall(b"PSYNC ? -1\r\n")
        support.wait_until(lambda: support.info(m).get("slave0", {}).get("state") == "online",
                           10, "attach")
        # The kernel's socket buffers take a few MB before the master's own grows.
        for _ in range(60):
            _xadd(m, 100, size=4000)
            if support.info(m)["connected_slaves"] == 0:
                break
        support.wait_until(lambda: support.info(m)["connected_slaves"] == 0, 20,
                           "the stalled replica to be dropped")
        assert support.info(m, "stats")["client_output_buffer_limit_disconnections"] >= 1
    finally:
        fake.close()
    assert support.stats(m)["sync_full"] == before["sync_full"] + 1

def _fake_master(payload_header: bytes, payload: bytes):
    """A master that answers the handshake, then sends `payload_header + payload` and dies."""
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    served = threading.Event()

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            buf = b""
            while b"PSYNC" not in buf:
                data = conn.recv(4096)
                if not data:
                    return
                buf += data
                # The replica sends one command at a time: answer what this read holds.
                replies = b""
                for word in (b"PING", b"listening-port", b"capa"):
                    if word in data:
                        replies += b"+PONG\r\n" if word == b"PING" else b"+OK\r\n"
                conn.sendall(replies)
            conn.sendall(b"+FULLRESYNC " + b"a" * 40 + b" 1000\r\n" + payload_header + payload)
        served.set()
        listener.close()

    threading.Thread(target=serve, daemon=True).start()
    return listener.getsockname()[1], served


@pytest.mark.parametrize("case", ["dies mid-payload", "damaged payload"])
def test_master_failing_during_full_sync_leaves_nothing_half_loaded(pair, case):
    master, replica, m, r = pair
    _xadd(m, 10)
    support.wait_synced(m, r)
    if case == "dies mid-payload":
        port, served = _fake_master(b"$100000\r\n", b"REDIS0012")
    else:
        body = b"REDIS0012" + b"\xff" * 52
        port, served = _fake_master(b"$%d\r\n" % len(body), body)
    r.execute_command("REPLICAOF", "127.0.0.1", str(port))
    assert served.wait(10)
    support.wait_until(lambda: support.info(r)["master_sync_in_progress"] == 0
                       and support.info(r)["master_link_status"] == "down", 10, "sync to fail")
    if case == "dies mid-payload":
        assert r.xlen("s") == 10  # the old data stays until a payload is whole
    else:
        assert r.dbsize() == 0  # a payload that does not load leaves an empty dataset
    r.execute_command("REPLICAOF", "127.0.0.1", str(master.port))
    support.wait_synced(m, r)
    assert r.xlen("s") == 10


def test_failover_switches_roles_without_losing_writes(pair):
    master, replica, m, r = pair
    _xadd(m, 100)
    with pytest.raises(redis.ResponseError, match="^FAILOVER is not valid when server is a replica.$"):
        r.execute_command("FAILOVER")
    with pytest.raises(redis.ResponseError, match="^FAILOVER timeout must be greater than 0$"):
        m.execute_command("FAILOVER", "TIMEOUT", 0)
    with pytest.raises(redis.ResponseError, match="^FAILOVER target HOST and PORT is not a replica.$"):
        m.execute_command("FAILOVER", "TO", "127.0.0.1", 1)
    assert m.execute_command("FAILOVER", "TO", "127.0.0.1", replica.port, "TIMEOUT", 5000) in (True, b"OK")
    support.wait_until(lambda: support.info(r)["role"] == "master"
                       and support.info(m)["role"] == "slave"
                       and support.info(m)["master_failover_state"] == "no-failover", 10, "switch")
    support.wait_synced(r, m)
    assert m.xlen("s") == r.xlen("s") == 100
    with pytest.raises(redis.ResponseError, match="^You can't write against a read only replica.$"):
        m.xadd("s", {"a": "1"})
    r.xadd("s", {"a": "1"})
    support.wait_synced(r, m)
    assert m.xlen("s") == 101
    stats = support.stats(r)
    assert stats["sync_partial_ok"] == 1 and stats["sync_full"] == 0
    with pytest.raises(redis.ResponseError, match="^No failover in progress.$"):
        r.execute_command("FAILOVER", "ABORT")


def test_failover_pauses_writes_and_abort_releases_them(pair):
    """While FAILOVER waits for its target, writers wait; ABORT lets them through."""
    import threading

    master, replica, m, r = pair
    replica.stop()  # a replica that never acknowledges: a connection that sent PSYNC
    fake = socket.create_connection(("127.0.0.1", master.port))
    try:
        fake.sendall(b"PSYNC ? -1\r\n")
        support.wait_until(lambda: support.info(m)["connected_slaves"] == 1, 10, "attach")
        m.xadd("s", {"a": "0"})
        assert m.execute_command("FAILOVER") in (True, b"OK")
        assert support.info(m)["master_failover_state"] == "waiting-for-sync"
        result = {}
        writer = threading.Thread(target=lambda: result.setdefault("id", m.xadd("s", {"a": "1"})))
        writer.start()
        support.wait_until(lambda: support.info(m, "clients")["blocked_clients"] == 1, 10,
                           "the write to wait")
        assert m.xlen("s") == 1  # reads go on
        assert m.execute_command("FAILOVER", "ABORT") in (True, b"OK")
        writer.join(10)
        assert result.get("id") and m.xlen("s") == 2
        assert support.info(m)["master_failover_state"] == "no-failover"
    finally:
        fake.close()


def test_failover_pause_holds_whatever_may_replicate(pair):
    """As Redis's write pause: EXEC holding a write, PUBLISH and a script that may write
    wait too; a `no-writes` script and reads do not."""
    master, replica, m, r = pair
    replica.stop()
    fake = socket.create_connection(("127.0.0.1", master.port))
    conns = [redis.Connection(port=master.port) for _ in range(4)]
    try:
        fake.sendall(b"PSYNC ? -1\r\n")
        support.wait_until(lambda: support.info(m)["connected_slaves"] == 1, 10, "attach")
        # A write the fake replica never acknowledges: the failover waits for it to catch
        # up until the ABORT (with equal offsets it could go on and demote the master).
        m.set("ahead", "1")
        tx = conns[0]
        tx.send_command("MULTI")
        assert tx.read_response() == b"OK"
        tx.send_command("SET", "x", "1")
        assert tx.read_response() == b"QUEUED"
        assert m.execute_command("FAILOVER") in (True, b"OK")
        tx.send_command("EXEC")
        conns[1].send_command("PUBLISH", "ch", "hi")
        conns[2].send_command("EVAL", "return redis.call('set', 'y', '1')", 0)
        conns[3].send_command("EVAL", "#!lua\nreturn redis.call('set', 'z', '1')", 0)
        support.wait_until(lambda: support.info(m, "clients")["blocked_clients"] == 4, 10,
                           "the four to wait")
        assert m.eval("#!lua flags=no-writes\nreturn redis.call('get', 'x')", 0) is None
        assert m.exists("x", "y", "z") == 0
        assert m.execute_command("FAILOVER", "ABORT") in (True, b"OK")
        assert tx.read_response() == [b"OK"]
        assert conns[1].read_response() == 0
        assert conns[2].read_response() == b"OK"
        assert conns[3].read_response() == b"OK"
        assert m.exists("x", "y", "z") == 3
    finally:
        for conn in conns:
            conn.disconnect()
        fake.close()


def test_sub_replica_starts_in_the_db_its_stream_has_selected(pair):
    """A replica's full sync passes on the db its master's stream is in (repl-stream-db)."""
    master, replica, m, r = pair
    m3 = master.client(db=3)
    m3.xadd("s", {"a": "1"})  # the stream now has SELECT 3, and will not repeat it
    support.wait_synced(m, r)
    sub = support.start("rillet", "--replicaof", "127.0.0.1", str(replica.port))
    try:
        s = sub.client()
        support.wait_synced(r, s)
        m3.xadd("s", {"a": "2"})
        support.wait_synced(m, r)
        support.wait_synced(r, s)
        assert sub.client(db=3).xlen("s") == 2
        assert s.dbsize() == 0
    finally:
        sub.stop()


@pytest.mark.parametrize("persist", [["--appendonly", "yes"], ["--save", "3600 1"]])
def test_replica_restart_continues_partially(persist):
    master = support.start("rillet")
    replica = support.start("rillet", "--replicaof", "127.0.0.1", str(master.port), *persist)
    try:
        m = master.client()
        support.wait_synced(m, replica.client())
        _xadd(m, 30)
        support.wait_synced(m, replica.client())
        before = support.stats(m)
        replica.client().shutdown()
        replica.proc.wait(30)
        _xadd(m, 5)  # written while the replica is down
        replica = support.start("rillet", "--replicaof", "127.0.0.1", str(master.port), *persist,
                                dir=replica.dir)
        r = replica.client()
        support.wait_synced(m, r)
        after = support.stats(m)
        assert after["sync_partial_ok"] == before["sync_partial_ok"] + 1
        assert after["sync_full"] == before["sync_full"]
        assert r.xrange("s") == m.xrange("s")
    finally:
        replica.stop()
        master.stop()


def test_publish_reaches_subscribers_on_replicas(pair):
    master, replica, m, r = pair
    sub = r.pubsub()
    sub.subscribe("news")
    assert sub.get_message(timeout=5)["type"] == "subscribe"
    m.publish("news", "hello")
    message = None
    for _ in range(50):
        message = sub.get_message(timeout=0.2)
        if message is not None:
            break
    assert message is not None and message["data"] == b"hello"
    sub.close()


def test_blocked_xread_on_the_replica_wakes_on_replicated_writes(pair):
    """A client blocked in XREAD on a replica is served by the batch that applies the
    entry: a plain XADD, then one inside a transaction (woken at its EXEC)."""
    import threading

    master, replica, m, r = pair
    m.xadd("s", {"f": "0"})
    support.wait_synced(m, r)
    for step in range(2):
        got: list = []
        last = r.xrange("s")[-1][0]
        reader = threading.Thread(
            target=lambda last=last, got=got: got.append(
                replica.client().xread({"s": last}, block=30000)))
        reader.start()
        support.wait_until(lambda: support.info(r, "clients")["blocked_clients"] == 1,
                           what="the reader blocked on the replica")
        if step == 0:
            added = m.xadd("s", {"f": "1"})
        else:
            pipe = m.pipeline(transaction=True)
            pipe.xadd("s", {"f": "2"})
            pipe.xadd("s", {"f": "3"})
            added = pipe.execute()[0]
        reader.join(30)
        assert not reader.is_alive()
        assert got[0][0][1][0][0] == added
