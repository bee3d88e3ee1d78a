"""RDB as rillet's files: SAVE/DEBUG RELOAD/AOF base write RDB, files in rillet's old
private format are refused, damaged dumps are refused with an offset, check-rdb."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

import pytest

from rillet.persistence import rdb
from rillet.state import ServerState
from tests.helpers import servers
from tests.persistence.rdb_support import content, populate
from tests.persistence.support import digest


def _fill(client) -> None:
    client.set("a", "1")
    client.set("b", "x" * 100, px=80_000_000)
    for i in range(200):
        client.xadd("st", {"f": i}, id=f"{i + 1}-0")
    client.xdel("st", "5-0")
    client.xgroup_create("st", "g", id="0")
    client.xreadgroup("g", "c", {"st": ">"}, count=7)


def test_save_writes_rdb_and_restart_loads_it(node_factory):
    node = node_factory().start()
    client = node.client()
    _fill(client)
    before = digest(client)
    client.save()
    with open(os.path.join(node.dir, "dump.rdb"), "rb") as handle:
        assert handle.read(9) == b"REDIS0012"
    node.restart()
    assert digest(node.client()) == before


def test_debug_reload_keeps_everything(node_factory):
    node = node_factory().start()
    client = node.client()
    _fill(client)
    before = digest(client)
    assert client.execute_command("DEBUG", "RELOAD") in (b"OK", "OK", True)
    assert digest(client) == before
    assert client.xpending("st", "g")["pending"] == 7


def test_old_private_snapshot_is_refused_as_not_rdb(node_factory):
    # rillet's retired format (docs/compat.md): header, one string key, EOF, CRC-32.
    node = node_factory()
    with open(os.path.join(node.dir, "dump.rdb"), "wb") as handle:
        handle.write(b"RILLETDB0001\x00\x03\x00\x00\x00old\x05\x00\x00\x00value\xff\0\0\0\0")
    node.start(wait=False)
    assert node.handle.proc.wait(20) == 1
    assert "wrong signature" in node.log()


@pytest.mark.parametrize("damage", ["truncate", "flip"])
def test_damaged_dump_refused_with_offset(node_factory, damage):
    node = node_factory().start()
    client = node.client()
    _fill(client)
    client.save()
    node.kill()
    path = os.path.join(node.dir, "dump.rdb")
    data = bytearray(open(path, "rb").read())
    if damage == "truncate":
        data = data[: len(data) // 2]
    else:
        data[len(data) // 2] ^= 0x5A
    open(path, "wb").write(bytes(data))
    seen = len(node.log())
    node.start(wait=False)
    assert node.handle.proc.wait(20) == 1
    log = node.log()[seen:]
    # Redis's words for the two (tests/persistence/test_bad_files.py compares them).
    if damage == "truncate":
        assert "Short read or OOM loading DB. Unrecoverable error, aborting now." in log
        assert "Unexpected EOF reading RDB file" in log
    else:
        assert "Wrong RDB checksum expected: (" in log
        assert "-> RDB CRC error" in log
    assert "Internal error in RDB reading offset" in log
    assert "Ready to accept connections" not in log


def test_rdb_load_is_all_or_nothing():
    state = ServerState()
    state.keyspace[0].set(b"k", b"v")
    data = rdb.dump_keyspace(state)
    target = ServerState()
    with pytest.raises(rdb.RDBError):
        rdb.load_keyspace(target, data[:-3])
    assert not target.keyspace[0].data


def test_aof_base_is_rdb(node_factory):
    node = node_factory("--appendonly", "yes").start()
    client = node.client()
    _fill(client)
    client.bgrewriteaof()
    deadline = time.monotonic() + 20
    while client.info("persistence")["aof_rewrite_in_progress"]:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    bases = [name for name in os.listdir(node.aof_dir) if ".base." in name]
    assert bases and bases[0].endswith(".rdb")
    with open(os.path.join(node.aof_dir, bases[0]), "rb") as handle:
        assert handle.read(5) == b"REDIS"
    before = digest(client)
    node.restart()
    assert digest(node.client()) == before


@pytest.mark.slow
@pytest.mark.skipif(servers.redis8_binary() is None, reason="needs Redis 8.2.3")
def test_redis8_loads_rillets_aof_with_rdb_base(node_factory, tmp_path):
    node = node_factory("--appendonly", "yes").start()
    client = node.client()
    populate(client, 2, streams=2)
    client.bgrewriteaof()
    deadline = time.monotonic() + 20
    while client.info("persistence")["aof_rewrite_in_progress"]:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    client.set("after-rewrite", "in the incr file")
    client.xadd("stream:0", {"late": "entry"})
    expected = content(client)
    node.stop()
    shutil.copytree(node.aof_dir, tmp_path / "appendonlydir")
    handle = servers.start_redis(servers.redis8_binary(), "--appendonly", "yes",
                                 dir=str(tmp_path))
    try:
        assert content(handle.client()) == expected
    finally:
        handle.stop()


LIBRARY = "#!lua name=preamble\nredis.register_function('one', function() return 1 end)"


@pytest.mark.slow
@pytest.mark.skipif(servers.redis8_binary() is None, reason="needs Redis 8.2.3")
def test_aof_without_rdb_preamble_is_commands_and_loads_in_both(node_factory, tmp_path):
    node = node_factory("--appendonly", "yes", "--aof-use-rdb-preamble", "no").start()
    client = node.client()
    assert client.config_get("aof-use-rdb-preamble") == {"aof-use-rdb-preamble": "no"}
    populate(client, 2, streams=2)
    client.function_load(LIBRARY)
    client.bgrewriteaof()
    deadline = time.monotonic() + 60
    while client.info("persistence")["aof_rewrite_in_progress"]:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    client.xadd("stream:0", {"late": "entry"})
    expected, before = content(client), digest(client)
    bases = [name for name in os.listdir(node.aof_dir) if ".base." in name]
    assert len(bases) == 1 and bases[0].endswith(".base.aof"), bases
    with open(os.path.join(node.aof_dir, bases[0]), "rb") as handle:
        body = handle.read()
    assert body.startswith(b"*3\r\n$8\r\nFUNCTION\r\n$4\r\nLOAD\r\n")
    node.restart()
    assert digest(node.client()) == before
    assert node.client().fcall("one", 0) == 1
    node.stop()
    shutil.copytree(node.aof_dir, tmp_path / "appendonlydir")
    handle = servers.start_redis(servers.redis8_binary(), "--appendonly", "yes",
                                 dir=str(tmp_path))
    try:
        assert content(handle.client()) == expected
        assert handle.client().fcall("one", 0) == 1
    finally:
        handle.stop()


def test_aof_rdb_preamble_is_the_default(node_factory):
    node = node_factory("--appendonly", "yes").start()
    assert node.client().config_get("aof-use-rdb-preamble") == {"aof-use-rdb-preamble": "yes"}
    assert [name for name in os.listdir(node.aof_dir) if ".base." in name][0].endswith(".base.rdb")


def test_check_rdb_cli(tmp_path):
    state = ServerState()
    state.keyspace[0].set(b"k", b"v")
    path = tmp_path / "dump.rdb"
    path.write_bytes(rdb.dump_keyspace(state))
    env = dict(os.environ)
    ok = subprocess.run([sys.executable, "-m", "rillet", "check-rdb", str(path)],
                        capture_output=True, text=True, env=env, timeout=60)
    assert ok.returncode == 0 and "RDB looks OK" in ok.stdout and "1 keys read" in ok.stdout
    path.write_bytes(path.read_bytes()[:-12])
    bad = subprocess.run([sys.executable, "-m", "rillet", "check-rdb", str(path)],
                         capture_output=True, text=True, env=env, timeout=60)
    assert bad.returncode == 1 and "RDB ERROR DETECTED" in bad.stdout and "offset" in bad.stdout
