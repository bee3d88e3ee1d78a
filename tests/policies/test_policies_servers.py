"""Stream policies across real servers: a Redis 8.2.3 replica of a rillet master ends
in the same state, the snapshot loads in Redis 8.2.3 (and keeps the policies in
rillet), the AOF keeps them across a restart, and FAILOVER hands them to the
promoted rillet replica, which enforces them.

Retention is driven by explicit IDs in the past (the servers' clocks are real):
nothing here waits for time to pass.
"""

from __future__ import annotations

import shutil
import tempfile
import time

import pytest

from tests.helpers import servers
from tests.replication import support

needs8 = pytest.mark.skipif(servers.redis8_binary() is None, reason="needs Redis 8.2.3")


def _old(ms_ago: int, seq: int = 0) -> str:
    return f"{int(time.time() * 1000) - ms_ago}-{seq}"


def _workload(m) -> None:
    """Both policies at work on a master: every effect they have."""
    for i in range(5):
        m.xadd("sensor", {"t": i}, id=_old(60_000 - i))
    m.execute_command("RILLET.XRETENTION", "sensor", 30_000)
    m.xadd("sensor", {"t": "now"})
    # The five aged entries share the new one's node: the cron trims them, within a second.
    support.wait_until(lambda: m.xlen("sensor") == 1, 10, "the retention cycle")
    for i in range(4):
        m.xadd("jobs", {"job": i})
    m.xgroup_create("jobs", "workers", "0")
    m.execute_command("RILLET.XDEADLETTER", "jobs", "workers", 1, "jobs:dead")
    m.xreadgroup("workers", "alice", {"jobs": ">"})
    assert m.xreadgroup("workers", "alice", {"jobs": "0"}, count=1) == [[b"jobs", []]]
    assert m.xclaim("jobs", "workers", "bob", 0, [_id(m, 1)]) == []
    assert m.execute_command("XAUTOCLAIM", "jobs", "workers", "carol", 0, "0-0", "JUSTID")[1] == []


def _id(m, index: int) -> bytes:
    return m.xrange("jobs")[index][0]


def _content(c) -> dict:
    out = {}
    for key in (b"sensor", b"jobs", b"jobs:dead"):
        info = c.xinfo_stream(key)
        out[key] = (c.xrange(key), {k: info[k] for k in (
            "length", "last-generated-id", "max-deleted-entry-id", "entries-added",
            "recorded-first-entry-id")})
    groups = c.xinfo_groups("jobs")
    out[b"groups"] = [(g["name"], g["pending"], g["last-delivered-id"], g["entries-read"])
                      for g in groups]
    out[b"pending"] = c.xpending_range("jobs", "workers", "-", "+", 100)
    return out


@needs8
def test_redis8_replicas_of_rillet_master_end_in_the_same_state():
    """One replica streamed the policies' effects, one got them by full sync."""
    master = support.start("rillet")
    replicas = []
    try:
        m = master.client()
        replicas.append(support.start("redis8", "--replicaof", "127.0.0.1", str(master.port)))
        support.wait_synced(m, replicas[0].client())
        _workload(m)
        replicas.append(support.start("redis8", "--replicaof", "127.0.0.1", str(master.port)))
        streamed, synced = (replica.client() for replica in replicas)
        support.wait_synced(m, streamed, synced)  # offsets agree: the RILLET.* refused counted too
        assert _content(streamed) == _content(synced) == _content(m)
        assert m.xlen("sensor") == 1 and m.xlen("jobs:dead") == 4 and m.xlen("jobs") == 4
        assert "retention-ms" in m.xinfo_stream("sensor")
        assert "retention-ms" not in streamed.xinfo_stream("sensor")
        m.xadd("sensor", {"t": "after"})  # the links go on
        support.wait_synced(m, streamed, synced)
        assert streamed.xlen("sensor") == synced.xlen("sensor") == 2
    finally:
        for replica in replicas:
            replica.stop()
        master.stop()


@needs8
def test_snapshot_and_dump_load_in_redis8_and_keep_policies_in_rillet():
    master = support.start("rillet")
    try:
        m = master.client()
        _workload(m)
        expected = _content(m)
        payload = m.dump("jobs")
        m.save()
        redis_dir = tempfile.mkdtemp(prefix="redis8-policies-")
        shutil.copy(f"{master.dir}/dump.rdb", f"{redis_dir}/dump.rdb")
    finally:
        master.stop()
    redis8 = support.start("redis8", dir=redis_dir)
    try:
        r = redis8.client()
        assert _content(r) == expected
        assert r.restore("copy", 0, payload) and r.xrange("copy") == r.xrange("jobs")
    finally:
        redis8.stop()
    again = servers.start_rillet(dir=master.dir)
    try:
        c = again.client()
        assert _content(c) == expected
        assert c.xinfo_stream("sensor")["retention-ms"] == 30_000
        assert c.xinfo_groups("jobs")[0]["dead-letter-key"] == b"jobs:dead"
        assert c.restore("copy", 0, payload)
        assert c.xinfo_groups("copy")[0]["max-deliveries"] == 1
    finally:
        again.stop()


def test_aof_keeps_policies_across_restart_and_rewrite():
    server = servers.start_rillet("--appendonly", "yes")
    try:
        c = server.client()
        c.xadd("s", {"f": "v"})
        c.xgroup_create("s", "g", "0")
        c.execute_command("RILLET.XRETENTION", "s", 86_400_000)
        c.bgrewriteaof()
        support.wait_until(lambda: c.info("persistence")["aof_rewrite_in_progress"] == 0, 20, "rewrite")
        c.execute_command("RILLET.XDEADLETTER", "s", "g", 3, "d")  # in the incr file
    finally:
        server.stop()
    again = servers.start_rillet("--appendonly", "yes", dir=server.dir)
    try:
        c = again.client()
        assert c.xinfo_stream("s")["retention-ms"] == 86_400_000
        group = c.xinfo_groups("s")[0]
        assert group["max-deliveries"] == 3 and group["dead-letter-key"] == b"d"
    finally:
        again.stop()


def test_failover_promotes_a_replica_that_keeps_and_enforces_the_policies():
    master = support.start("rillet")
    replica = support.start("rillet", "--replicaof", "127.0.0.1", str(master.port))
    try:
        m, r = master.client(), replica.client()
        support.wait_synced(m, r)
        m.xadd("q", {"job": 1}, id="1-0")
        m.xgroup_create("q", "g", "0")
        m.execute_command("RILLET.XDEADLETTER", "q", "g", 1, "q:dead")
        m.xreadgroup("g", "alice", {"q": ">"})
        m.xadd("s", {"t": 0}, id=_old(90_000))
        m.execute_command("RILLET.XRETENTION", "s", 60_000)
        support.wait_synced(m, r)
        assert r.xlen("s") == 1  # a replica leaves trimming to its master
        assert m.execute_command("FAILOVER", "TO", "127.0.0.1", replica.port, "TIMEOUT", 5000)
        support.wait_until(lambda: support.info(r)["role"] == "master"
                           and support.info(m)["master_failover_state"] == "no-failover", 10, "switch")
        assert r.xinfo_stream("s")["retention-ms"] == 60_000
        assert r.xinfo_groups("q")[0]["dead-letter-key"] == b"q:dead"
        assert r.xreadgroup("g", "alice", {"q": "0"}) == [[b"q", []]]  # its 2nd delivery: dead
        r.xadd("s", {"t": 1})
        support.wait_until(lambda: r.xlen("s") == 1, 10, "the new master's retention cycle")
        assert r.xlen("q:dead") == 1
        support.wait_synced(r, m)
        assert m.xlen("s") == 1 and m.xrange("q:dead") == r.xrange("q:dead")
    finally:
        replica.stop()
        master.stop()


def test_client_helpers(r, redis8_server):
    from datetime import timedelta

    import redis

    from rillet import client as rc

    job = r.xadd("jobs", {"job": "1"})  # (an ID like 1-0 would be past the retention below)
    r.xgroup_create("jobs", "workers", "0")
    assert rc.retention_ms(r, "jobs") is None and rc.dead_letter_policy(r, "jobs", "workers") is None
    rc.set_retention(r, "jobs", timedelta(days=7))
    rc.set_dead_letter(r, "jobs", "workers", 1, "jobs:dead")
    assert rc.retention_ms(r, "jobs") == 604_800_000
    assert rc.dead_letter_policy(r, "jobs", "workers") == (1, b"jobs:dead")
    r.xreadgroup("workers", "alice", {"jobs": ">"})
    r.xreadgroup("workers", "alice", {"jobs": "0"})
    [(entry_id, fields)] = r.xrange("jobs:dead")
    letter = rc.DeadLetter.from_fields(entry_id, fields)
    assert (letter.fields, letter.stream, letter.source_id, letter.group, letter.consumer,
            letter.deliveries) == ({b"job": b"1"}, b"jobs", job, b"workers", b"alice", 1)
    rc.clear_retention(r, "jobs")
    rc.clear_dead_letter(r, "jobs", "workers")
    assert rc.retention_ms(r, "jobs") is None and rc.dead_letter_policy(r, "jobs", "workers") is None
    with pytest.raises(redis.ResponseError, match="max-deliveries must be a positive integer"):
        rc.set_dead_letter(r, "jobs", "workers", 0, "d")
    with pytest.raises(redis.ResponseError, match="unknown command"):
        rc.set_retention(redis8_server.client(), "jobs", 1000)  # not a rillet server


def test_demo_readings_stream_has_retention(r, redis8_server):
    from rillet.pipelines.demo import _keep_recent

    r.xadd("sensors", {"sensor-id": "sensor-1", "temperature": "20.00"})
    assert "trimmed" in _keep_recent(r, "sensors", 600)
    assert r.xinfo_stream("sensors")["retention-ms"] == 600_000
    ref = redis8_server.client()
    ref.xadd("sensors", {"t": "1"})
    assert "not set" in _keep_recent(ref, "sensors", 600)  # the demo runs against Redis too
    ref.delete("sensors")
