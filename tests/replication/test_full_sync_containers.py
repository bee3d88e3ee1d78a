"""Full sync carries hashes, lists, sets and sorted sets (the payload is an RDB): rillet to
rillet, rillet to a Redis 8.2.3 replica, and a Redis 8.2.3 master to a rillet replica."""

from __future__ import annotations

import os

import pytest

from tests.helpers import servers
from tests.persistence.container_support import container_content, populate_containers
from tests.replication import support

pytestmark = pytest.mark.slow
needs8 = pytest.mark.skipif(servers.redis8_binary() is None, reason="needs Redis 8.2.3")


def _sync(master_kind: str, replica_kind: str) -> None:  # kinds as support.start takes them
    master = support.start(master_kind)
    try:
        m = master.client()
        populate_containers(m, 8)  # before the replica exists: only the full sync carries it
        replica = support.start(replica_kind, "--replicaof", "127.0.0.1", str(master.port))
        try:
            r = replica.client()
            support.wait_synced(m, r)
            assert container_content(r) == container_content(m)
            m.rpush("l:small", "streamed")  # and the link keeps going after the payload
            m.hset("h:lp", "streamed", "1")
            support.wait_synced(m, r)
            assert container_content(r) == container_content(m)
        finally:
            replica.stop()
    finally:
        master.stop()


def test_rillet_replica_of_rillet():
    _sync("rillet", "rillet")


@needs8
def test_redis8_replica_of_rillet():
    _sync("rillet", "redis8")


@needs8
def test_rillet_replica_of_redis8():
    _sync("redis8", "rillet")


def test_payload_is_rdb(tmp_path):
    from rillet.engine.lists import List
    from rillet.persistence import rdb
    from rillet.replication.payload import write_payload
    from rillet.state import ServerState

    state = ServerState()
    state.keyspace[0].set(b"l", List([b"a", b"b"]))
    path = str(tmp_path / "payload")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)  # (the master gives it a pipe)
    assert write_payload(state, fd, 0, "0" * 40, 0) == (tmp_path / "payload").stat().st_size
    data = (tmp_path / "payload").read_bytes()
    assert data.startswith(b"REDIS0012")
    target = ServerState()
    rdb.load_keyspace(target, data)
    assert target.keyspace[0].get(b"l").to_list() == [b"a", b"b"]
