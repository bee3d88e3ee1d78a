"""Function libraries survive a restart from a snapshot and an AOF rewrite (their code
rides in the snapshot's aux fields, as Redis keeps them in the RDB)."""

from __future__ import annotations

import time

from tests.persistence.support import Node

LIB = "#!lua name=keep\nredis.register_function('kept', function(keys, args) return 'still here' end)"


def _wait_rewrite(client) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        info = client.info("persistence")
        if not info.get("aof_rewrite_in_progress") and not info.get("aof_rewrite_scheduled"):
            return
        time.sleep(0.05)
    raise AssertionError("the rewrite did not finish")


def test_library_survives_snapshot_restart():
    node = Node("--appendonly", "no").start()
    try:
        client = node.client()
        assert client.function_load(LIB) == b"keep"
        client.save()
        client.close()
        node.restart()
        client = node.client()
        assert client.fcall("kept", 0) == b"still here"
        client.close()
    finally:
        node.cleanup()


def test_library_survives_aof_rewrite():
    node = Node("--appendonly", "yes").start()
    try:
        client = node.client()
        client.function_load(LIB)
        client.bgrewriteaof()
        time.sleep(0.1)
        _wait_rewrite(client)
        client.close()
        node.restart()
        client = node.client()
        assert client.fcall("kept", 0) == b"still here"
        client.close()
    finally:
        node.cleanup()
