"""`redis-cli --cluster add-node` of a node of the other kind, then `--cluster reshard`
of 200 slots to it while a redis-py RedisCluster client keeps writing: every write the
client saw acknowledged is readable afterwards (the client follows MOVED and ASK)."""

from __future__ import annotations

import itertools
import threading
import time

import pytest

from rillet.cluster.keyslot import key_slot
from tests.cluster.test_bus import _agree, _cli, _start, _stop, _until
from tests.helpers import servers

pytestmark = [pytest.mark.slow, pytest.mark.needs_redis]

MOVED = 200  # redis-cli takes the source's lowest slots: 0-199
WRITING_S = 40.0  # bounds the writer if the test fails to stop it
LIBRARY = "#!lua name=addnode_l\nredis.register_function('addnode_f', function() return 7 end)"


class Writer(threading.Thread):
    """SETs on keys of the moving slots and XADDs to streams there, recording each
    acknowledged one, until stopped."""

    def __init__(self, port: int) -> None:
        super().__init__(daemon=True)
        from redis.cluster import ClusterNode, RedisCluster

        self.client = RedisCluster(startup_nodes=[ClusterNode("127.0.0.1", port)],
                                   decode_responses=True)
        self.keys = [f"w{n}" for n in range(60000) if key_slot(f"w{n}".encode()) < MOVED]
        self.streams = [k for k in (f"s{n}" for n in range(20000))
                        if key_slot(k.encode()) < MOVED][:5]
        self.acked: dict[str, str] = {}
        self.ids: dict[str, list[str]] = {stream: [] for stream in self.streams}
        self.failed = 0
        self.writes = 0
        self.stopping = threading.Event()

    def run(self) -> None:
        deadline = time.monotonic() + WRITING_S
        for n in itertools.count():
            if self.stopping.is_set() or time.monotonic() > deadline:
                break
            self.writes = n
            key = self.keys[n % len(self.keys)]
            try:
                if n % 4 == 3:
                    stream = self.streams[n % len(self.streams)]
                    self.ids[stream].append(self.client.xadd(stream, {"n": n}))
                elif self.client.set(key, str(n)):
                    self.acked[key] = str(n)
            except Exception:  # noqa: BLE001 - a write not acknowledged is not counted
                self.failed += 1
                if n % 4 != 3:  # it may have landed: the key's value is unknown now
                    self.acked.pop(key, None)

    def stop(self) -> None:
        self.stopping.set()
        self.join(timeout=30)
        assert not self.is_alive()


@pytest.mark.parametrize("base,added", [("rillet", "redis8"), ("redis8", "rillet")])
def test_add_node_and_reshard_while_writing(base, added):
    if servers.redis8_binary() is None:
        pytest.skip("Redis 8.2.3 not available")
    pytest.importorskip("redis")
    nodes = _start([base, base, added])
    writer = None
    try:
        a, b, new = nodes
        assert a.call("CLUSTER", "MEET", "127.0.0.1", b.port) == b"+OK\r\n"
        assert a.call("CLUSTER", "ADDSLOTSRANGE", 0, 8191) == b"+OK\r\n"
        assert b.call("CLUSTER", "ADDSLOTSRANGE", 8192, 16383) == b"+OK\r\n"
        _until(lambda: _agree([a, b]), "two masters agreeing")
        # add-node copies the cluster's functions to the new node (FUNCTION DUMP/RESTORE).
        for node in (a, b):
            assert node.call("FUNCTION", "LOAD", LIBRARY) == b"$9\r\naddnode_l\r\n"
        report = _cli("--cluster", "add-node", f"127.0.0.1:{new.port}", f"127.0.0.1:{a.port}")
        assert "[OK] New node added correctly." in report, report
        _until(lambda: _agree(nodes), "three nodes agreeing after add-node")

        writer = Writer(a.port)
        writer.start()
        _until(lambda: len(writer.acked) >= 50, "the writer's first writes")
        before = writer.writes
        report = _cli("--cluster", "reshard", f"127.0.0.1:{a.port}", "--cluster-from", a.id,
                      "--cluster-to", new.id, "--cluster-slots", str(MOVED), "--cluster-yes")
        assert "[OK] All 16384 slots covered." in report, report
        assert writer.writes > before and writer.is_alive()  # it wrote during the move
        view = _until(lambda: _agree(nodes), "the nodes agreeing after the reshard")
        after = writer.writes
        _until(lambda: writer.writes > after + 100, "writes after the reshard")
        writer.stop()
        assert view[new.id][3:] == [f"0-{MOVED - 1}"]
        assert view[a.id][3:] == [f"{MOVED}-8191"]

        client = writer.client
        assert writer.acked
        assert {key: client.get(key) for key in writer.acked} == writer.acked
        for stream, ids in writer.ids.items():
            stored = [entry_id for entry_id, _ in client.xrange(stream)]
            assert set(ids) <= set(stored) and len(stored) <= len(ids) + writer.failed
        # The moved keys (and the library) now live on the added node.
        assert int(new.call("DBSIZE").split(b":")[1]) >= len(writer.acked) + len(writer.ids)
        assert new.call("FCALL", "addnode_f", 0) == b":7\r\n"
        report = _cli("--cluster", "check", f"127.0.0.1:{new.port}")
        assert "[OK] All nodes agree about slots configuration." in report
    finally:
        if writer is not None:
            writer.stopping.set()
            writer.join(timeout=30)
            writer.client.close()
        _stop(nodes)
