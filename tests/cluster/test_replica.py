"""A node made a replica by CLUSTER REPLICATE, against Redis 8.2.3 given the same
nodes.conf: its node table, the gate's READONLY rule, and the commands a replica
refuses. Its master (B) is a line of nodes.conf that nobody listens for."""

from __future__ import annotations

import time

import pytest

from tests.cluster import support
from tests.helpers.wire import Wire

A = "a" * 40
B = "b" * 40


def nodes_conf(b_port: int) -> str:
    return (f"{A} :0@0,,tls-port=0,shard-id={'1' * 40} myself,master - 0 0 0 connected\n"
            f"{B} 127.0.0.1:{b_port}@{b_port + 10000},,tls-port=0,shard-id={'2' * 40} master"
            f" - 0 0 1 connected 0-16383\n"
            "vars currentEpoch 1 lastVoteEpoch 0\n")


@pytest.fixture(scope="module")
def pair():
    b_port = support.free_cluster_port()
    text = nodes_conf(b_port)
    both = support.start_pair(text)
    yield both
    both.close()


KEY = support.key_in(0, 16383, "r")


def test_replicate_then_read_only_reads(pair):
    pair.check("CLUSTER", "REPLICATE", A)
    pair.check("SET", KEY, "1")
    pair.check("CLUSTER", "REPLICATE", B)
    pair.check("CLUSTER", "REPLICATE", B)
    pair.check("CLUSTER", "NODES", normalise=support.sorted_nodes)
    pair.check("CLUSTER", "REPLICAS", B, normalise=support.mask_pings)
    pair.check("CLUSTER", "REPLICAS", A)
    pair.check("CLUSTER", "MYSHARDID")
    pair.check("CLUSTER", "SLOTS")
    pair.check("CLUSTER", "INFO", normalise=support.without_bus_stats)
    pair.check("GET", KEY)
    pair.check("READONLY")
    pair.check("GET", KEY)
    pair.check("SET", KEY, "1")
    pair.check("MULTI")
    pair.check("GET", KEY)
    pair.check("EXEC")
    pair.check("READWRITE")
    pair.check("GET", KEY)
    pair.check("SPUBLISH", KEY, "m")
    pair.check("CLUSTER", "SETSLOT", "1", "STABLE")
    pair.check("CLUSTER", "FAILOVER")
    pair.check("CLUSTER", "FORGET", B)
    pair.check("CLUSTER", "ADDSLOTS", "1")
    pair.check("CLUSTER", "RESET")
    pair.check("CLUSTER", "NODES")
    pair.check("ROLE", normalise=lambda raw: raw.split(b"\r\n")[0])


def test_replication_follows_cluster_replicate():
    # Two rillet nodes: C replicates A's data once CLUSTER REPLICATE names A.
    a_port, c_port = support.free_cluster_port(), support.free_cluster_port()
    a_line = f"{A} 127.0.0.1:{a_port}@{a_port + 10000},,tls-port=0,shard-id={'1' * 40}"
    a = support.start("rillet", port=a_port, dir=support.with_nodes_conf(
        f"{a_line.replace(f'127.0.0.1:{a_port}@{a_port + 10000}', ':0@0')} myself,master"
        " - 0 0 1 connected 0-16383\nvars currentEpoch 1 lastVoteEpoch 0\n"))
    c = support.start("rillet", port=c_port, dir=support.with_nodes_conf(
        f"{'c' * 40} :0@0,,tls-port=0,shard-id={'3' * 40} myself,master - 0 0 0 connected\n"
        f"{a_line} master - 0 0 1 connected 0-16383\nvars currentEpoch 1 lastVoteEpoch 0\n"))
    a_wire, c_wire = Wire(a_port), Wire(c_port)
    try:
        support.wait_state(a_wire, b"ok")
        assert a_wire.call("SET", KEY, "v") == b"+OK\r\n"
        assert c_wire.call("CLUSTER", "REPLICATE", A) == b"+OK\r\n"
        assert c_wire.call("READONLY") == b"+OK\r\n"
        deadline = time.monotonic() + 20
        while c_wire.call("GET", KEY) != b"$1\r\nv\r\n" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert c_wire.call("GET", KEY) == b"$1\r\nv\r\n"
        assert c_wire.call("SET", KEY, "w") == f"-MOVED {support_slot(KEY)} 127.0.0.1:{a_port}\r\n".encode()
        assert b"myself,slave " + A.encode() in c_wire.call("CLUSTER", "NODES")
    finally:
        a_wire.close()
        c_wire.close()
        a.stop()
        c.stop()


def support_slot(key: str) -> int:
    from rillet.cluster.keyslot import key_slot

    return key_slot(key.encode())
