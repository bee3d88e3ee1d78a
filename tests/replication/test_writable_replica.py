"""A writable replica (replica-read-only no) expires the TTLs its own clients set, side by
side with Redis 8.2.3; keys with a TTL from its master still wait for the master's DEL."""

from __future__ import annotations

import time

import pytest

from tests.helpers import servers
from tests.replication import support

KINDS = ["rillet", pytest.param("redis8", marks=pytest.mark.needs_redis)]


@pytest.mark.parametrize("kind", KINDS)
def test_writable_replica_expires_its_own_ttls(kind):
    if kind == "redis8" and servers.redis8_binary() is None:
        pytest.skip("Redis 8.2.3 not available")
    master = support.start(kind)
    replica = support.start(kind, "--replicaof", "127.0.0.1", str(master.port),
                            "--replica-read-only", "no")
    try:
        m, r = master.client(), replica.client()
        support.wait_synced(m, r)
        m.set("from-master", "v", px=300)
        support.wait_synced(m, r)
        master.stop(sig_kill=True)  # no DEL will come for it
        r.set("own-set", "v", px=300)
        r.set("own-expire", "v")
        r.pexpire("own-expire", 300)
        r.eval("redis.call('set', KEYS[1], 'v', 'px', 300)", 1, "own-script")
        r.set("own-later", "v", ex=1000)
        r.set("plain", "v")
        r1 = replica.client(db=1)
        r1.set("own-db1", "v", px=300)
        assert support.info(r, "stats")["slave_expires_tracked_keys"] == 5
        support.wait_until(lambda: r.dbsize() == 3 and r1.dbsize() == 0, 10,
                           "the replica's own keys to expire")
        time.sleep(0.3)  # (a few cron ticks more: nothing else goes)
        assert r.dbsize() == 3  # from-master stays (reads as expired), own-later, plain
        assert sorted(r.keys()) == [b"own-later", b"plain"]
        assert support.info(r, "stats")["slave_expires_tracked_keys"] == 1
        assert support.info(r, "stats")["expired_keys"] == 4
        r.flushall()  # forgets them all (Redis's emptyData)
        assert support.info(r, "stats")["slave_expires_tracked_keys"] == 0
    finally:
        replica.stop()
        master.stop()


def test_writable_replica_expires_a_renamed_own_ttl():
    """RENAME keeps the replica's own TTL its own (as Redis 7; Redis 8.2.3 forgets it:
    docs/compat.md)."""
    master = support.start("rillet")
    replica = support.start("rillet", "--replicaof", "127.0.0.1", str(master.port),
                            "--replica-read-only", "no")
    try:
        m, r = master.client(), replica.client()
        support.wait_synced(m, r)
        r.set("k", "v", px=300)
        r.rename("k", "k2")
        support.wait_until(lambda: support.info(r, "stats")["expired_keys"] == 1, 10,
                           "the renamed key to expire")
        assert r.dbsize() == 0
        assert support.info(r, "stats")["slave_expires_tracked_keys"] == 0
    finally:
        replica.stop()
        master.stop()


@pytest.mark.parametrize("kind", KINDS)
def test_writable_replica_own_expiry_obeys_active_expire_not_pause(kind):
    """DEBUG SET-ACTIVE-EXPIRE 0 stops the replica's own expiry; CLIENT PAUSE WRITE does
    not (Redis 8.2.3's expireSlaveKeys does not look at the pause)."""
    if kind == "redis8" and servers.redis8_binary() is None:
        pytest.skip("Redis 8.2.3 not available")
    master = support.start(kind)
    replica = support.start(kind, "--replicaof", "127.0.0.1", str(master.port),
                            "--replica-read-only", "no", "--enable-debug-command", "yes")
    try:
        m, r = master.client(), replica.client()
        support.wait_synced(m, r)

        def expired() -> int:
            return int(support.info(r, "stats")["expired_keys"])

        r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 0)
        r.set("k", "v", px=100)
        time.sleep(0.5)  # (well past the TTL: many cron ticks)
        assert expired() == 0 and r.dbsize() == 1
        r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 1)
        support.wait_until(lambda: expired() == 1, 10, "the key to expire")
        r.set("k2", "v", px=100)
        r.execute_command("CLIENT", "PAUSE", 60000, "WRITE")
        support.wait_until(lambda: expired() == 2, 10, "the key to expire while paused")
        r.execute_command("CLIENT", "UNPAUSE")
        assert r.dbsize() == 0
    finally:
        replica.stop()
        master.stop()
