"""Clients get -LOADING while the dataset loads; INFO reports progress; then all is there."""

from __future__ import annotations

import time

import pytest

from tests.helpers.wire import Wire
from tests.persistence.support import digest


@pytest.mark.slow
@pytest.mark.parametrize("source", ["snapshot", "aof"])
def test_loading_replies_and_progress(node_factory, source):
    args = ("--appendonly", "yes") if source == "aof" else ()
    node = node_factory(*args).start()
    client = node.client()
    pipe = client.pipeline(transaction=False)
    for i in range(3000):
        pipe.set(f"key:{i}", i)
    pipe.execute()
    before = digest(client)
    if source == "aof":
        client.bgrewriteaof()  # the keys go to the base: a snapshot file, loaded key by key
        while client.info("persistence")["aof_rewrite_in_progress"]:
            time.sleep(0.05)
        node.stop()
    else:
        client.save()
        node.kill()
    seen = len(node.log())
    # Slow loading down (Redis's key-load-delay) so it can be watched.
    node.start(env={"RILLET_KEY_LOAD_DELAY_US": "500"})
    assert "Ready to accept connections" not in node.log()[seen:]
    # Raw replies: redis-py would retry a LOADING error until it went away.
    with Wire(node.port) as wire:
        assert wire.call("GET", "key:1") == b"-LOADING Redis is loading the dataset in memory\r\n"
        assert wire.call("SET", "key:1", "x").startswith(b"-LOADING")
    client = node.client()
    info = client.info("persistence")
    assert info["loading"] == 1
    assert info["loading_total_bytes"] > 0
    assert 0 <= float(info["loading_loaded_perc"]) <= 100
    deadline = time.monotonic() + 30
    while client.info("persistence")["loading"]:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert client.ping() is True
    # As Redis: ready once loaded (the flag and the line change in one step).
    log = node.log()[seen:]
    assert log.index("DB loaded from") < log.index("Ready to accept connections")
    assert client.dbsize() == 3000
    assert digest(client) == before
    assert client.info("persistence")["rdb_last_load_keys_loaded"] == 3000


def test_unreadable_snapshot_refuses_to_start(node_factory):
    node = node_factory().start()
    client = node.client()
    client.set("a", "1")
    client.save()
    node.kill()
    path = f"{node.dir}/dump.rdb"
    data = bytearray(open(path, "rb").read())
    data[20] ^= 0xFF
    open(path, "wb").write(bytes(data))
    node.start(wait=False)
    assert node.handle.proc.wait(20) == 1
    assert "wrong checksum" in node.log()
    # The damaged file was not replaced by an empty one on the way out.
    assert open(path, "rb").read() == bytes(data)
