"""nodes.conf: Redis's format written atomically, read back at restart with the same
node id, and the files of Redis 8.2.3 and rillet readable by each other."""

from __future__ import annotations

import os
import shutil
import time

import pytest

from rillet.clock import ManualClock
from rillet.cluster import state as cs
from rillet.cluster.state import ClusterState, ConfigFileError
from tests.cluster import support
from tests.helpers.wire import Wire

REDIS_FILE = (
    "30af3d2c92137071598cb29554234745bd95c00c :17001@27001,,tls-port=0,"
    "shard-id=f97fc4027e213eee1f61e0dfb311ef599fc1092f myself,master - 0 0 3 connected"
    " 0-100 [5->-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb] [200-<-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb]\n"
    "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb 127.0.0.1:7002@17002,host-b,tls-port=0,nodename=bee,"
    "shard-id=2222222222222222222222222222222222222222 master,fail? - 1700000000000 1700000000001"
    " 4 disconnected 200 300-16383\n"
    "cccccccccccccccccccccccccccccccccccccccc 127.0.0.1:7003@17003,,tls-port=0,"
    "shard-id=2222222222222222222222222222222222222222 slave,nofailover"
    " bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb 0 0 4 disconnected\n"
    "vars currentEpoch 4 lastVoteEpoch 2\n"
)


def _loaded(tmp_path, text: str, **ports) -> ClusterState:
    path = tmp_path / "nodes.conf"
    path.write_text(text)
    cluster = ClusterState(ManualClock(), str(path), **ports)
    assert cluster.load()
    return cluster


def test_redis_file_read_and_written_back_the_same(tmp_path):
    cluster = _loaded(tmp_path, REDIS_FILE, port=17001, cport=27001)
    assert cluster.myself.name == "30af3d2c92137071598cb29554234745bd95c00c"
    assert cluster.current_epoch == 4 and cluster.last_vote_epoch == 2
    b = cluster.lookup("b" * 40)
    c = cluster.lookup("c" * 40)
    assert b is not None and c is not None
    # (MIGRATE_TO, never shown: a master that has a replica, as Redis's clusterNodeAddSlave)
    assert b.flags & ~cs.MIGRATE_TO == cs.MASTER | cs.PFAIL and b.hostname == "host-b" and b.human_nodename == "bee"
    assert c.master is b and b.replicas == [c] and c.flags & cs.NOFAILOVER
    assert cluster.slots[5] is cluster.myself and cluster.migrating[5] is b
    assert cluster.slots[200] is b and cluster.importing[200] is b
    assert cluster.myself.numslots == 101 and b.numslots == 16384 - 300 + 1
    # The times are when we read it, not the file's (Redis: ping_sent = mstime()).
    now = cluster.clock.now_ms()
    expected = REDIS_FILE.replace("1700000000000 1700000000001", f"{now} {now}")
    assert cluster.config_text() == expected
    cluster.save()
    assert (tmp_path / "nodes.conf").read_text() == expected
    assert [p.name for p in tmp_path.iterdir()] == ["nodes.conf"]  # no temp file left


def test_a_fresh_table_round_trips(tmp_path):
    clock = ManualClock()
    cluster = ClusterState(clock, str(tmp_path / "nodes.conf"), port=7000, cport=17000)
    peer = cluster.add_peer("d" * 40, "127.0.0.1", 7001)
    cluster.assign_slots(cluster.myself, range(0, 100))
    cluster.assign_slots(peer, [100, 101, 5000])
    cluster.migrating[7] = peer
    assert cluster.start_handshake("127.0.0.1", 7005, 17005) is True
    cluster.save()
    again = ClusterState(clock, cluster.path, port=7000, cport=17000)
    assert again.load()
    assert again.myself.name == cluster.myself.name
    assert again.myself.shard_id == cluster.myself.shard_id
    # Nodes still in handshake are not written (Redis: the HANDSHAKE filter).
    assert len(again.nodes) == 2 and "handshake" not in again.config_text()
    assert again.config_text() == cluster.config_text()


@pytest.mark.parametrize("text", [
    "abc :0@0 myself,master - 0 0 0 connected\n",
    f"{'a' * 40} :0@0 myself,master - 0 0\n",
    f"{'a' * 40} :0@0 myself,wizard - 0 0 0 connected\n",
    f"{'a' * 40} :0@0 master - 0 0 0 connected\n",
    f"{'a' * 40} nowhere myself,master - 0 0 0 connected\n",
    f"{'a' * 40} :0@0 myself,master - 0 0 0 connected 5-16384\n",
    # Not numbers, an open quote: refused, not a ValueError's traceback at start.
    f"{'a' * 40} :0@0 myself,master - x 0 0 connected\n",
    f"{'a' * 40} :x@0 myself,master - 0 0 0 connected\n",
    f"{'a' * 40} :0@0 myself,master - 0 0 0 connected 1-x\n",
    f"{'a' * 40} :0@0 myself,master - 0 0 0 connected [x->-{'b' * 40}]\n",
    f"{'a' * 40} :0@0 myself,master - 0 0 0 connected\nvars currentEpoch x\n",
    f"{'a' * 40} :0@0 myself,master - 0 0 0 \"connected\n",
])
def test_a_file_redis_would_refuse(tmp_path, text):
    path = tmp_path / "nodes.conf"
    path.write_text(text)
    with pytest.raises(ConfigFileError):
        ClusterState(ManualClock(), str(path)).load()


def test_no_file_or_an_empty_one(tmp_path):
    cluster = ClusterState(ManualClock(), str(tmp_path / "nodes.conf"))
    assert not cluster.load()
    (tmp_path / "nodes.conf").write_text("")
    assert not cluster.load()


def test_state_waits_its_delays():
    clock = ManualClock()
    cluster = ClusterState(clock, node_timeout_ms=15000)
    assert not cluster.update_state()
    clock.advance(3000)
    assert not cluster.update_state()  # no slots: a minority of none
    cluster.assign_slots(cluster.myself, range(cs.SLOTS))
    assert not cluster.update_state()  # the rejoin delay (min(timeout, 5 s)) runs
    clock.advance(4999)
    assert not cluster.update_state()
    clock.advance(1)
    assert cluster.update_state() and cluster.size == 1
    cluster.unassign_slots([5])
    assert not cluster.update_state()  # down at once
    cluster.require_full_coverage = False
    assert cluster.update_state()


def test_a_handshake_that_never_completes_goes():
    clock = ManualClock()
    cluster = ClusterState(clock, node_timeout_ms=500)
    assert cluster.start_handshake("::1", 7000, 17000) is True
    assert cluster.start_handshake("0:0::1", 7000, 17000) is False  # the same, normalised
    assert cluster.start_handshake("localhost", 7000, 17000) is None
    clock.advance(1000)
    cluster.cron()
    assert len(cluster.nodes) == 2
    clock.advance(1)
    cluster.cron()
    assert list(cluster.nodes.values()) == [cluster.myself]


def test_failure_detection_needs_a_majority_of_masters():
    clock = ManualClock()
    cluster = ClusterState(clock, node_timeout_ms=1000)
    cluster.update_state()  # the first call starts the writable delay (the cron's, at start)
    peers = [cluster.add_peer(c * 40, "127.0.0.1", 7000 + i) for i, c in enumerate("bcd")]
    for i, node in enumerate([cluster.myself, *peers]):
        cluster.assign_slots(node, range(i * 4096, (i + 1) * 4096))
    clock.advance(3000)
    cluster.update_state()
    assert cluster.size == 4
    failing = peers[0]
    assert not cluster.mark_failed(failing)  # not even PFAIL
    cluster.set_node_flags(failing, cs.PFAIL)
    cluster.add_failure_report(failing, peers[1])
    assert not cluster.mark_failed(failing)  # myself + 1 of 4 masters
    cluster.add_failure_report(failing, peers[2])
    assert cluster.failure_reports(failing) == 2
    assert cluster.mark_failed(failing) and failing.failed and not failing.flags & cs.PFAIL
    clock.advance(2001)
    assert cluster.failure_reports(failing) == 0  # reports expire after 2 node timeouts


def _wait_file(path: str) -> None:
    deadline = time.monotonic() + 10
    while not os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.05)


def test_restart_keeps_the_node(tmp_path):
    workdir = str(tmp_path)
    node = support.start("rillet", dir=workdir)
    wire = Wire(node.port)
    try:
        name = support.myid(wire)
        assert wire.call("CLUSTER", "ADDSLOTSRANGE", "0", "99") == b"+OK\r\n"
        assert wire.call("CLUSTER", "SETSLOT", "5", "MIGRATING", name) == b"+OK\r\n"
        assert wire.call("CLUSTER", "BUMPEPOCH") == b"+BUMPED 1\r\n"
        assert wire.call("CLUSTER", "MEET", "127.0.0.1", "1") == b"+OK\r\n"
        before = wire.call("CLUSTER", "NODES")
    finally:
        wire.close()
        node.stop()
    text = (tmp_path / "nodes.conf").read_text()
    assert text.startswith(name.decode()) and "handshake" not in text
    node = support.start("rillet", port=node.port, dir=workdir)
    wire = Wire(node.port)
    try:
        assert support.myid(wire) == name
        after = wire.call("CLUSTER", "NODES")
        mine = [line for line in before.split(b"\n") if name in line]
        assert mine and mine[0] in after and b"[5->-" in mine[0]
        assert b"handshake" in before and b"handshake" not in after
        assert b"cluster_current_epoch:1" in wire.call("CLUSTER", "INFO")
    finally:
        wire.close()
        node.stop()


@pytest.mark.parametrize("writer,reader", [("redis8", "rillet"), ("rillet", "redis8")])
def test_each_reads_the_others_file(tmp_path, writer, reader):
    os.makedirs(tmp_path / "w")
    first = support.start(writer, dir=str(tmp_path / "w"))
    wire = Wire(first.port)
    try:
        name = support.myid(wire)
        wire.call("CLUSTER", "ADDSLOTSRANGE", "0", "99", "1000", "1000")
        wire.call("CLUSTER", "SETSLOT", "50", "MIGRATING", name)
        wire.call("CLUSTER", "BUMPEPOCH")
        assert wire.call("CLUSTER", "SAVECONFIG") == b"+OK\r\n"
        written = wire.call("CLUSTER", "NODES")
    finally:
        wire.close()
        first.stop()
    os.makedirs(tmp_path / "r")
    shutil.copy(tmp_path / "w" / "nodes.conf", tmp_path / "r" / "nodes.conf")
    second = support.start(reader, port=first.port, dir=str(tmp_path / "r"))
    wire = Wire(second.port)
    try:
        assert support.myid(wire) == name
        assert wire.call("CLUSTER", "NODES") == written
        assert b"cluster_my_epoch:1" in wire.call("CLUSTER", "INFO")
    finally:
        wire.close()
        second.stop()


def test_replicaof_is_refused_at_start():
    from rillet.cli import parse_server_args
    from rillet.config import ConfigError

    with pytest.raises(ConfigError, match="^replicaof directive not allowed in cluster mode$"):
        parse_server_args(["--cluster-enabled", "yes", "--replicaof", "127.0.0.1", "6379"])
    assert parse_server_args(["--replicaof", "127.0.0.1", "6379"])["replicaof"]
