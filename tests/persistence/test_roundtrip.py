"""Round trips through a real server: DEBUG RELOAD, restarts from the AOF, a rewrite, a snapshot.

Each test fills a keyspace, takes DEBUG DIGEST, goes through one way of
saving and loading, and compares the digest (plus a few direct reads).
"""

from __future__ import annotations

import os
import time

import pytest

from tests.helpers.wire import encode_command
from tests.persistence.support import digest, shutdown

FAR_MS = 4_000_000_000_000


def fill(client, tag: str = "") -> None:
    """Strings with and without TTLs, in two databases, binary keys and values."""
    pipe = client.pipeline(transaction=False)
    for i in range(200):
        pipe.set(f"s{tag}:{i}", f"value-{i}" * (i % 5))
    for i in range(30):
        pipe.set(f"ttl{tag}:{i}", i, pxat=FAR_MS + i)
    pipe.set(b"bin\x00\xff" + tag.encode(), bytes(range(256)))
    pipe.incrby(f"counter{tag}", 41)
    pipe.execute()
    client.execute_command("SELECT", 5)
    client.set(f"db5{tag}", "five")
    client.execute_command("SELECT", 0)
    with client.pipeline(transaction=True) as tx:
        tx.incr(f"counter{tag}")
        tx.append(f"s{tag}:1", "+tx")
        tx.execute()


def wait_for(client, field: str, value: str, timeout_s: float = 20.0) -> dict:
    deadline = time.monotonic() + timeout_s
    while True:
        info = client.info("persistence")
        if str(info.get(field)) == value:
            return info
        if time.monotonic() > deadline:
            raise AssertionError(f"{field} never became {value}: {info}")
        time.sleep(0.05)


def wait_rewrite_done(client) -> dict:
    wait_for(client, "aof_rewrite_scheduled", "0")
    return wait_for(client, "aof_rewrite_in_progress", "0")


def test_debug_reload_keeps_everything(node_factory):
    node = node_factory().start()
    client = node.client()
    fill(client)
    before = digest(client)
    assert before != "0" * 40
    assert client.execute_command("DEBUG", "RELOAD") in (b"OK", "OK", True)
    assert digest(client) == before
    assert client.pttl("ttl:3") > 0
    assert client.execute_command("DEBUG", "RELOAD", "NOSAVE") in (b"OK", "OK", True)
    assert digest(client) == before


def test_restart_from_the_aof(node_factory):
    node = node_factory("--appendonly", "yes", "--appendfsync", "always").start()
    client = node.client()
    fill(client)
    client.delete("s:7")
    client.expire("s:8", 100000)
    before = digest(client)
    node.kill()  # no shutdown hook: only what the AOF holds survives
    node.start()
    client = node.client()
    assert digest(client) == before
    assert client.get("s:7") is None
    assert client.ttl("s:8") > 0
    assert client.execute_command("DEBUG", "LOADAOF") in (b"OK", "OK", True)
    assert digest(client) == before


def test_restart_after_a_rewrite_keeps_writes_made_during_it(node_factory):
    node = node_factory("--appendonly", "yes", "--appendfsync", "everysec")
    # A slow child: the rewrite is still running while the next writes arrive.
    node.start(env={"RILLET_KEY_SAVE_DELAY_US": "3000"})
    client = node.client()
    fill(client)
    assert client.bgrewriteaof() in (True, b"Background append only file rewriting started")
    assert client.info("persistence")["aof_rewrite_in_progress"] == 1
    fill(client, tag="during")
    info = wait_rewrite_done(client)
    assert info["aof_last_bgrewrite_status"] == "ok" and info["aof_rewrites"] == 1
    fill(client, tag="after")
    before = digest(client)
    names = sorted(os.listdir(node.aof_dir))
    assert names == ["appendonly.aof.2.base.rdb", "appendonly.aof.2.incr.aof",
                     "appendonly.aof.manifest"]
    node.stop()  # SIGTERM: fsyncs the AOF
    node.start()
    assert digest(node.client()) == before


def test_restart_from_a_snapshot(node_factory):
    node = node_factory().start()
    client = node.client()
    fill(client)
    before = digest(client)
    last = client.lastsave()
    time.sleep(1.05)  # LASTSAVE has a one-second resolution
    assert client.save() is True
    assert client.lastsave() > last
    assert client.info("persistence")["rdb_changes_since_last_save"] == 0
    client.set("not-saved", "1")
    node.kill()
    node.start()
    client = node.client()
    assert digest(client) == before
    assert client.get("not-saved") is None


def test_bgsave_and_shutdown_save(node_factory):
    node = node_factory().start()
    client = node.client()
    fill(client)
    assert client.execute_command("BGSAVE") in (True, b"Background saving started")
    info = wait_for(client, "rdb_bgsave_in_progress", "0")
    assert info["rdb_last_bgsave_status"] == "ok" and info["rdb_saves"] == 1
    client.set("after-bgsave", "1")
    before = digest(client)
    assert shutdown(node, "SAVE") == 0
    node.start()
    assert digest(node.client()) == before


def test_shutdown_nosave_and_sigterm_with_save_points(node_factory):
    node = node_factory().start("--save", "3600 1")
    client = node.client()
    client.set("k", "1")
    assert shutdown(node, "NOSAVE") == 0
    assert not os.path.exists(os.path.join(node.dir, "dump.rdb"))
    node.start("--save", "3600 1")
    client = node.client()
    client.set("k", "2")
    node.stop()  # SIGTERM with save points configured: save, as Redis does
    assert os.path.exists(os.path.join(node.dir, "dump.rdb"))
    node.start()
    assert node.client().get("k") == b"2"


def test_config_set_appendonly_yes_at_runtime(node_factory):
    node = node_factory().start()
    client = node.client()
    fill(client)
    client.config_set("appendonly", "yes")
    wait_for(client, "aof_enabled", "1")
    wait_rewrite_done(client)
    fill(client, tag="later")
    before = digest(client)
    node.kill()
    node.start("--appendonly", "yes")
    client = node.client()
    assert digest(client) == before
    client.config_set("appendonly", "no")
    assert client.info("persistence")["aof_enabled"] == 0
    client.set("after-off", "1")  # not in the AOF any more
    node.kill()
    node.start("--appendonly", "yes")
    assert digest(node.client()) == before


def test_appendonly_yes_loads_an_existing_snapshot_first_time(node_factory):
    node = node_factory().start()
    client = node.client()
    fill(client)
    before = digest(client)
    client.save()
    node.stop()
    node.start("--appendonly", "yes")
    assert digest(node.client()) == before
    node.kill()  # the data now lives in the AOF base
    os.unlink(os.path.join(node.dir, "dump.rdb"))
    node.start("--appendonly", "yes")
    assert digest(node.client()) == before


def test_save_rules_trigger_a_background_save(node_factory):
    node = node_factory().start("--save", "1 3")
    client = node.client()
    for i in range(3):
        client.set(f"k{i}", i)
    info = wait_for(client, "rdb_saves", "1", timeout_s=10)
    assert info["rdb_changes_since_last_save"] == 0
    assert os.path.exists(os.path.join(node.dir, "dump.rdb"))


def test_child_errors_and_scheduling(node_factory):
    node = node_factory("--appendonly", "yes")
    node.start(env={"RILLET_KEY_SAVE_DELAY_US": "2000"})
    client = node.client()
    fill(client)
    client.bgrewriteaof()
    with pytest.raises(Exception, match="already in progress"):
        client.bgrewriteaof()
    with pytest.raises(Exception, match="Another child process is active"):
        client.execute_command("BGSAVE")  # redis-py's bgsave() adds SCHEDULE
    assert client.execute_command("BGSAVE", "SCHEDULE") in (True, b"Background saving scheduled")
    with pytest.raises(Exception, match="syntax error"):
        client.execute_command("BGSAVE", "LATER")
    wait_for(client, "rdb_saves", "1")
    assert client.info("persistence")["aof_rewrites"] == 1
    client.execute_command("BGSAVE")
    assert client.bgrewriteaof() in (True, b"Background append only file rewriting scheduled")
    assert client.info("persistence")["aof_rewrite_scheduled"] == 1
    with pytest.raises(Exception, match="Background save already in progress"):
        client.save()
    wait_for(client, "aof_rewrites", "2")


def test_truncated_aof_then_more_writes_then_reload(node_factory):
    node = node_factory("--appendonly", "yes", "--appendfsync", "always").start()
    client = node.client()
    for i in range(20):
        client.set(f"k{i}", i)
    node.kill()
    incr = os.path.join(node.aof_dir, "appendonly.aof.1.incr.aof")
    size = os.path.getsize(incr)
    os.truncate(incr, size - 5)  # cut the last SET
    node.start()
    client = node.client()
    assert client.dbsize() == 19
    assert "Truncating the AOF" in node.log()
    client.set("k19", "again")
    node.kill()
    node.start()
    client = node.client()
    assert client.dbsize() == 20 and client.get("k19") == b"again"


def test_corrupt_aof_refuses_to_start(node_factory):
    node = node_factory("--appendonly", "yes", "--appendfsync", "always").start()
    client = node.client()
    for i in range(10):
        client.set(f"k{i}", i)
    node.kill()
    incr = os.path.join(node.aof_dir, "appendonly.aof.1.incr.aof")
    data = bytearray(open(incr, "rb").read())
    offset = data.index(b"*3\r\n$3\r\nSET\r\n$2\r\nk5")
    data[offset] = ord("!")
    open(incr, "wb").write(bytes(data))
    node.start(wait=False)
    assert node.handle.proc.wait(20) == 1
    assert f"offset {offset}" in node.log()
    assert "check-aof --fix" in node.log()


def test_clean_shutdown_compacts_a_large_aof(node_factory):
    node = node_factory("--appendonly", "yes").start()
    client = node.client()
    pipe = client.pipeline(transaction=False)
    for i in range(20000):
        pipe.set(f"key:{i}", "v" * 40)
    pipe.execute()
    before = digest(client)
    node.stop()
    assert "AOF compacted into appendonly.aof.2.base.rdb" in node.log()
    names = sorted(os.listdir(node.aof_dir))
    assert names == ["appendonly.aof.2.base.rdb", "appendonly.aof.2.incr.aof",
                     "appendonly.aof.manifest"]
    assert os.path.getsize(os.path.join(node.aof_dir, "appendonly.aof.2.incr.aof")) == 0
    node.start()
    client = node.client()
    assert digest(client) == before
    client.set("one-more", "1")
    node.kill()
    node.start()
    assert node.client().get("one-more") == b"1"


@pytest.mark.parametrize("pure", [False, True], ids=["compiled", "pure"])
def test_replay_in_batches_matches_the_live_keyspace(node_factory, pure):
    """The loader runs an AOF's commands in batches (through the compiled command loop
    when built): a log crossing its batch and yield boundaries, with transactions,
    SELECTs, a failing command and a PING in it, loads to the live server's digest."""
    node = node_factory("--appendonly", "yes", "--appendfsync", "always").start()
    client = node.client()
    fill(client)
    pipe = client.pipeline(transaction=False)
    for i in range(3000):  # several of the loader's 512-command slices
        pipe.set(f"k:{i}", i)
        if i % 700 == 0:
            pipe.execute_command("SELECT", 1 + i % 3)
            pipe.hset(f"h:{i}", mapping={"a": i, "b": "x"})
            pipe.execute_command("SELECT", 0)
    pipe.execute()
    for i in range(5):
        with client.pipeline(transaction=True) as tx:
            tx.incr("counter")
            tx.lpush("list", i)
            tx.execute()
    client.xadd("s", {"f": "v"}, id="1-1")
    client.set("after-xadd", "1")
    client.xadd("s", {"f": "w"}, id="2-1")
    client.set("big", b"v" * 150_000)  # longer than the loader's 64 KiB read
    client.set("after-big", "1")
    extra = [("INCR", "s:1"), ("SET", "tail", "1"), ("MULTI",), ("SET", "t", "2"), ("EXEC",)]
    with pytest.raises(Exception, match="not an integer"):
        client.execute_command(*extra[0])
    client.set("tail", "1")
    with client.pipeline(transaction=True) as tx:
        tx.set("t", "2")
        tx.execute()
    before = digest(client)
    used = client.info("memory")["used_memory"]
    node.kill()
    # A PING and a failing command (never written by the server) replay as no-ops;
    # the rest again, to the same values. An annotation line (Redis's aof-timestamp)
    # sends the loader to its general reader and then its exact walk.
    manifest = open(os.path.join(node.aof_dir, "appendonly.aof.manifest")).read()
    incr = [line.split()[1] for line in manifest.splitlines() if "type i" in line][-1]
    def resp(*commands):
        return b"".join(encode_command(*cmd) for cmd in commands)

    raw = resp(("PING",), *extra[:2]) + b"#TS:1700000000\r\n" + resp(*extra[2:])
    with open(os.path.join(node.aof_dir, incr), "ab") as handle:
        handle.write(raw)
    node.start(env={"RILLET_PURE": "1"} if pure else {})
    client = node.client()
    assert digest(client) == before
    # fill's 232 in db 0, the 3000, list, s, after-xadd, big, after-big, tail, t
    assert client.dbsize() == 232 + 3000 + 7
    assert "Truncating" not in node.log()
    # Measured in one pass once asked (not key by key while loading): the same figure.
    assert client.info("memory")["used_memory"] == used
