"""WAIT, WAITAOF, min-replicas-to-write, replica-serve-stale-data, failover without loss."""

from __future__ import annotations

import threading

import pytest
import redis

from tests.replication import support


def _pair(*master_args: str):
    master = support.start("rillet", *master_args)
    replica = support.start("rillet", "--replicaof", "127.0.0.1", str(master.port))
    m, r = master.client(), replica.client()
    support.wait_synced(m, r)
    yield master, replica, m, r
    replica.stop()
    master.stop()


@pytest.fixture
def pair():
    yield from _pair()


@pytest.fixture
def fsync_pair():
    """The master holds every reply until its AOF is fsynced (`appendfsync always`)."""
    yield from _pair("--appendonly", "yes", "--appendfsync", "always")


def test_wait(pair):
    master, replica, m, r = pair
    m.xadd("s", {"a": "1"})
    assert m.execute_command("WAIT", 1, 0) == 1
    assert m.execute_command("WAIT", 0, 0) == 1
    # Two replicas cannot be had: the timeout answers with the one there is.
    assert m.execute_command("WAIT", 2, 100) == 1
    with pytest.raises(redis.ResponseError, match="^WAIT cannot be used with replica instances"):
        r.execute_command("WAIT", 1, 0)
    with pytest.raises(redis.ResponseError, match="^timeout is negative$"):
        m.execute_command("WAIT", 1, -1)
    pipe = m.pipeline(transaction=True)
    pipe.xadd("s", {"b": "2"})
    pipe.execute_command("WAIT", 5, 0)  # inside MULTI: answers at once
    assert pipe.execute()[1] <= 1


def test_wait_under_fsync_always_with_concurrent_writers(fsync_pair):
    """4 clients each SET then WAIT 1: a healthy replica confirms every write.

    The replica's stream (and the GETACK WAIT asks for) is held behind the
    master's fsync like any reply; a GETACK queued while earlier stream bytes
    were still held was once never released, so WAIT answered 0 at its timeout.
    A client stops at its first 0, so a failing run lasts about one timeout.
    """
    master, replica, m, r = fsync_pair
    rounds = 100
    answers: list[list[int]] = [[] for _ in range(4)]

    def client(n: int) -> None:
        c = master.client()
        for i in range(rounds):
            c.set(f"k{n}", i)
            answers[n].append(c.execute_command("WAIT", 1, 5000))
            if answers[n][-1] == 0:
                return

    threads = [threading.Thread(target=client, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert [a.count(0) for a in answers] == [0] * 4
    assert [len(a) for a in answers] == [rounds] * 4
    assert {a for each in answers for a in each} == {1}


def test_waitaof_needs_appendonly(pair):
    master, replica, m, r = pair
    with pytest.raises(redis.ResponseError, match="^WAITAOF cannot be used when numlocal"):
        m.execute_command("WAITAOF", 1, 0, 0)
    m.xadd("s", {"a": "1"})
    assert m.execute_command("WAITAOF", 0, 1, 100) == [0, 0]  # no AOF on the replica


def test_min_replicas_to_write(pair):
    master, replica, m, r = pair
    m.config_set("min-replicas-to-write", 2)
    with pytest.raises(redis.ResponseError, match="^NOREPLICAS Not enough good replicas to write.$"):
        m.xadd("s", {"a": "1"})
    m.config_set("min-replicas-to-write", 1)
    m.xadd("s", {"a": "1"})


def test_stale_data_refused_when_link_down(pair):
    master, replica, m, r = pair
    r.config_set("replica-serve-stale-data", "no")
    master.stop(sig_kill=True)
    support.wait_until(lambda: support.info(r)["master_link_status"] == "down", 10, "link down")
    with pytest.raises(redis.ResponseError, match="^Link with MASTER is down"):
        r.xlen("s")
    assert support.info(r)["role"] == "slave"  # INFO is flagged stale: still answered


def test_failover_without_loss(pair):
    """kill -9 of the master under writes confirmed by WAIT 1: the promoted replica has them all."""
    master, replica, m, r = pair
    confirmed: list[bytes] = []
    for batch in range(40):
        pipe = m.pipeline(transaction=False)
        for i in range(25):
            pipe.xadd("s", {"batch": str(batch), "i": str(i)})
        ids = pipe.execute()
        if batch == 30:
            # Writes in flight, not yet confirmed, when the master dies.
            pipe = m.pipeline(transaction=False)
            for i in range(25):
                pipe.xadd("s", {"batch": "unconfirmed", "i": str(i)})
            pipe.execute()
            master.stop(sig_kill=True)
            break
        if m.execute_command("WAIT", 1, 2000) >= 1:
            confirmed += ids
    assert len(confirmed) == 30 * 25
    r.execute_command("REPLICAOF", "NO", "ONE")
    present = {entry[0] for entry in r.xrange("s")}
    assert not [i for i in confirmed if i not in present]
    r.xadd("s", {"after": "failover"})


def test_waitaof_counts_replicas_with_an_aof():
    master = support.start("rillet", "--appendonly", "yes", "--appendfsync", "always")
    replica = support.start("rillet", "--replicaof", "127.0.0.1", str(master.port))
    try:
        m, r = master.client(), replica.client()
        support.wait_synced(m, r)
        m.xadd("s", {"a": "1"})
        # The replica has no AOF: it never counts (as in Redis); the local AOF does.
        assert m.execute_command("WAITAOF", 1, 1, 300) == [1, 0]
        r.config_set("appendonly", "yes")
        support.wait_until(lambda: r.info("persistence")["aof_rewrite_in_progress"] == 0
                           and r.info("persistence")["aof_enabled"] == 1, 20, "replica AOF")
        m.xadd("s", {"a": "2"})
        assert m.execute_command("WAITAOF", 1, 1, 0) == [1, 1]
    finally:
        replica.stop()
        master.stop()
