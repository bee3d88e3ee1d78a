"""Redis Sentinel (Debian's redis-server in sentinel mode) managing rillet servers.

A master and two replicas, one Sentinel with quorum 1: kill -9 the master,
Sentinel promotes a replica and re-points the other, and redis-py's Sentinel
client writes to the new master. Also the minimal pub/sub Sentinel relies on,
byte for byte against Redis 8.2.3.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

import pytest

from tests.helpers import servers
from tests.helpers.wire import Wire
from tests.replication import support


def _sentinel_binary() -> str | None:
    """Debian's redis-sentinel; redis-server runs as Sentinel too (with --sentinel)."""
    binary = shutil.which("redis-sentinel") or servers.redis7_binary()
    return binary if binary and os.path.exists(binary) else None


@pytest.fixture
def sentinel_set():
    binary = _sentinel_binary()
    if binary is None:
        pytest.skip("redis-server (for sentinel mode) not available")
    master = support.start("rillet")
    replicas = [support.start("rillet", "--replicaof", "127.0.0.1", str(master.port))
                for _ in range(2)]
    for replica in replicas:
        support.wait_synced(master.client(), replica.client())
    workdir = tempfile.mkdtemp(prefix="sentinel-test-")
    port = servers.free_port()
    conf = os.path.join(workdir, "sentinel.conf")
    with open(conf, "w") as handle:
        handle.write(
            f"port {port}\nbind 127.0.0.1\ndir {workdir}\n"
            f"sentinel monitor mymaster 127.0.0.1 {master.port} 1\n"
            "sentinel down-after-milliseconds mymaster 1000\n"
            "sentinel failover-timeout mymaster 10000\n"
        )
    log = open(os.path.join(workdir, "sentinel.log"), "ab")  # noqa: SIM115
    proc = subprocess.Popen([binary, conf, "--sentinel"], stdout=log, stderr=subprocess.STDOUT)
    sentinel = servers.ServerHandle("sentinel", port, proc, workdir)
    try:
        servers.wait_ready(port, proc)
        yield master, replicas, sentinel
    finally:
        sentinel.stop()
        log.close()
        for replica in replicas:
            replica.stop()
        master.stop()


@pytest.mark.slow
def test_sentinel_promotes_a_replica_and_clients_follow(sentinel_set):
    from redis.sentinel import MasterNotFoundError, Sentinel

    master, replicas, sentinel = sentinel_set
    s = sentinel.client()
    # Sentinel found both replicas through INFO replication.
    support.wait_until(lambda: len(s.execute_command("SENTINEL", "REPLICAS", "mymaster")) == 2,
                       30, "sentinel to discover the replicas")
    client = Sentinel([("127.0.0.1", sentinel.port)], socket_timeout=2)
    writer = client.master_for("mymaster", socket_timeout=2)
    first = writer.xadd("s", {"before": "failover"})
    assert writer.execute_command("WAIT", 2, 5000) == 2
    master.stop(sig_kill=True)
    ports = {r.port for r in replicas}

    def promoted_one() -> bool:
        try:
            return client.discover_master("mymaster")[1] in ports
        except MasterNotFoundError:  # the old master is down, no new one yet
            return False

    support.wait_until(promoted_one, 60, "sentinel to fail over")
    new_port = client.discover_master("mymaster")[1]
    promoted = next(r for r in replicas if r.port == new_port)
    other = next(r for r in replicas if r.port != new_port)
    assert support.info(promoted.client())["role"] == "master"
    support.wait_until(lambda: support.info(other.client()).get("master_port") == new_port, 60,
                       "the other replica to follow the new master")
    writer = client.master_for("mymaster", socket_timeout=2)
    second = writer.xadd("s", {"after": "failover"})
    support.wait_synced(promoted.client(), other.client())
    assert [e[0] for e in other.client().xrange("s")] == [first, second]


@pytest.mark.needs_redis
def test_minimal_pubsub_matches_redis(rillet_server, redis8_server):
    replies = []
    for port in (rillet_server.port, redis8_server.port):
        with Wire(port) as sub, Wire(port) as pub:
            got = [sub.call("SUBSCRIBE", "__sentinel__:hello", "other")]
            got.append(sub.read_reply())
            got.append(pub.call("PUBLISH", "__sentinel__:hello", "hi"))
            got.append(sub.read_reply())
            got.append(pub.call("PUBLISH", "nobody", "hi"))
            # (Without arguments Redis goes through its channels in hash order.)
            got.append(sub.call("UNSUBSCRIBE", "other", "__sentinel__:hello"))
            got.append(sub.read_reply())
            got.append(sub.call("UNSUBSCRIBE"))
            replies.append(got)
    assert replies[0] == replies[1]
