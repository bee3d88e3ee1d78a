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
