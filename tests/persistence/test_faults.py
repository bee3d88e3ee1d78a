"""Injected disk faults: writes get -MISCONF, nothing unsaved is acknowledged, recovery.

Faults are armed with DEBUG PERSISTENCE-FAULT (persistence/disk.py): the next
N write/fsync operations on the AOF or snapshot files fail with ENOSPC or EIO.
"""

from __future__ import annotations

import threading
import time

import pytest
import redis

from tests.persistence.test_roundtrip import wait_for


def fault(client, *args) -> None:
    client.execute_command("DEBUG", "PERSISTENCE-FAULT", *args)


def wait_misconf(client, key: str, timeout_s: float = 10.0) -> str:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            client.set(key, "probe")
        except redis.ResponseError as error:
            if str(error).startswith("MISCONF"):
                return str(error)
            raise
        if time.monotonic() > deadline:
            raise AssertionError("writes were never refused")
        time.sleep(0.05)


class HeldWrite(threading.Thread):
    """A SET on its own connection whose reply may be held by the server."""

    def __init__(self, node, key: str, value: str) -> None:
        super().__init__(daemon=True)
        self.client = node.client(socket_timeout=30)
        self.key, self.value = key, value
        self.reply: object = None
        self.error: Exception | None = None

    def run(self) -> None:
        try:
            self.reply = self.client.set(self.key, self.value)
        except Exception as error:  # noqa: BLE001 - reported to the test
            self.error = error


def test_aof_write_error_gives_misconf_then_recovers(node_factory):
    """appendfsync everysec: writes are refused with MISCONF until the disk works again."""
    node = node_factory("--appendonly", "yes", "--appendfsync", "everysec").start()
    client = node.client()
    client.set("before", "1")
    fault(client, "aof", "-1", "ENOSPC", "WRITE")
    # The write that meets the fault is applied in memory but not acknowledged.
    held = HeldWrite(node, "during", "2")
    held.start()
    held.join(0.5)
    assert held.is_alive() and held.reply is None
    with pytest.raises(redis.ResponseError) as refused:
        client.set("refused", "x")
    assert str(refused.value) == "MISCONF Errors writing to the AOF file: No space left on device"
    assert client.get("before") == b"1"  # reads still work
    assert client.info("persistence")["aof_last_write_status"] == "err"
    fault(client, "CLEAR")
    held.join(10)
    assert held.reply is True and held.error is None
    wait_for(client, "aof_last_write_status", "ok")
    assert client.set("after", "3") is True
    node.kill()
    node.start()
    client = node.client()
    assert client.mget("before", "during", "after", "refused") == [b"1", b"2", b"3", None]


@pytest.mark.parametrize(("code", "op", "text"), [
    ("ENOSPC", "WRITE", "No space left on device"),
    ("EIO", "FSYNC", "Input/output error"),
])
def test_always_policy_exits_on_aof_error(node_factory, code, op, text):
    """appendfsync always, as Redis: the server exits; no error reply ever covers an applied write.

    The write that met the fault was applied in memory, and its reply held: its
    client sees the connection close (an unknown outcome, as after a crash),
    never an error for a write that a later save could keep.
    """
    node = node_factory("--appendonly", "yes", "--appendfsync", "always").start()
    client = node.client()
    client.set("before", "1")
    fault(client, "aof", "-1", code, op)
    held = HeldWrite(node, "during", "2")
    held.start()
    held.join(15)
    assert held.reply is None and isinstance(held.error, redis.ConnectionError)
    assert node.handle.proc.wait(15) == 1
    assert f"AOF fsync policy is 'always': {text}. Exiting..." in node.log()
    node.start()
    client = node.client()
    assert client.mget("before", "during") == [b"1", None]


def test_everysec_background_fsync_error(node_factory):
    node = node_factory("--appendonly", "yes", "--appendfsync", "everysec").start()
    client = node.client()
    fault(client, "aof", "-1", "EIO", "FSYNC")
    client.set("a", "1")  # written to the page cache and acknowledged, as in Redis
    message = wait_misconf(client, "b")
    assert message == "MISCONF Errors writing to the AOF file: Input/output error"
    fault(client, "CLEAR")
    deadline = time.monotonic() + 10
    while True:
        try:
            client.set("c", "3")
            break
        except redis.ResponseError:
            assert time.monotonic() < deadline
            time.sleep(0.1)
    node.stop()
    node.start()
    assert node.client().mget("a", "c") == [b"1", b"3"]


def test_failed_bgsave_stops_writes_until_a_save_works(node_factory):
    node = node_factory().start("--save", "3600 1000")
    client = node.client()
    client.set("a", "1")
    fault(client, "snapshot", "1", "ENOSPC")
    client.execute_command("BGSAVE")
    info = wait_for(client, "rdb_bgsave_in_progress", "0")
    assert info["rdb_last_bgsave_status"] == "err"
    with pytest.raises(redis.ResponseError) as refused:
        client.set("b", "2")
    assert str(refused.value).startswith("MISCONF Redis is configured to save RDB snapshots")
    # Redis's switch: off, writes go through despite the failed save; on again, refused.
    client.config_set("stop-writes-on-bgsave-error", "no")
    assert client.set("b", "1") is True
    client.config_set("stop-writes-on-bgsave-error", "yes")
    with pytest.raises(redis.ResponseError):
        client.set("b", "2")
    client.execute_command("BGSAVE")
    info = wait_for(client, "rdb_last_bgsave_status", "ok")
    assert client.set("b", "2") is True


def test_failed_save_keeps_the_old_snapshot(node_factory):
    node = node_factory().start()
    client = node.client()
    client.set("a", "1")
    client.save()
    client.set("a", "2")
    fault(client, "snapshot", "1", "ENOSPC")
    with pytest.raises(redis.ResponseError):
        client.save()
    node.kill()
    node.start()
    assert node.client().get("a") == b"1"


def test_failed_rewrite_keeps_the_aof(node_factory):
    node = node_factory("--appendonly", "yes").start()
    client = node.client()
    client.set("a", "1")
    # The new manifest cannot be written: the rewrite does not start.
    fault(client, "aof", "1", "ENOSPC", "WRITE")
    with pytest.raises(redis.ResponseError, match="Can't execute an AOF background rewriting"):
        client.bgrewriteaof()
    # The child cannot write the new base: the rewrite fails, the AOF goes on.
    fault(client, "snapshot", "1", "ENOSPC")
    client.bgrewriteaof()
    info = wait_for(client, "aof_rewrite_in_progress", "0")
    assert info["aof_last_bgrewrite_status"] == "err"
    assert info["aof_rewrites_consecutive_failures"] == 2
    client.set("b", "2")
    node.kill()
    node.start()
    assert node.client().mget("a", "b") == [b"1", b"2"]
