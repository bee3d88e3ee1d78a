"""File formats in-process: RDB snapshot round trips and damage, manifest, RESP log scanning."""

from __future__ import annotations

import os
import random

import pytest

from rillet.engine import groups as groups_engine
from rillet.engine.ids import StreamID
from rillet.engine.stream import Stream
from rillet.persistence import aoflog
from rillet.persistence.aoflog import Manifest, ManifestError, parse_manifest
from rillet.persistence.digest import keyspace_digest
from rillet.persistence.loader import LoadError, LoadProgress, load_snapshot
from rillet.persistence.rdb import save_to_path
from rillet.state import ServerState


def _load(path: str) -> ServerState:
    state = ServerState()
    for _ in load_snapshot(state, path, LoadProgress()):
        pass
    return state


def _stream_with_everything(state: ServerState, seed: int = 1) -> Stream:
    """Nodes of mixed shapes, tombstones, an exact trim, groups with a varied PEL."""
    rng = random.Random(seed)
    stream = Stream(limits=state.keyspace.stream_limits)
    for i in range(1, 1500):
        if i % 7:
            fields = [b"a", b"%d" % i]
        else:
            fields = [b"b", b"x", b"c", b"y" * rng.randrange(60)]
        stream.append(StreamID(1000 + i // 3, i), fields)
    for i in range(1, 1500, 13):
        stream.delete(StreamID(1000 + i // 3, i))
    stream.trim_maxlen(1100)
    group = groups_engine.create_group(stream, b"g1", StreamID(0, 0), 0)
    group.read_new(stream, b"alice", 300, 5000)
    delivery = group.read_new(stream, b"bob", 200, 6000)
    group.ack([entry[0] for entry in delivery.entries[:50]])
    ids = [entry[0] for entry in delivery.entries[60:80]]
    group.claim(stream, b"carol", 0, ids, 7000, delivery_time_ms=6500, retry_count=4)
    group.create_consumer(b"dave", 8000)
    groups_engine.create_group(stream, b"g2", stream.last_id, None)
    return stream


def test_snapshot_round_trip_keeps_layout_groups_and_ttls(tmp_path):
    state = ServerState()
    stream = _stream_with_everything(state)
    db0, db3 = state.keyspace[0], state.keyspace[3]
    db0.set(b"s", stream)
    db0.set(b"str", b"hello")
    db0.set_expire(b"str", 10**13)
    db0.set(b"bin", bytes(range(256)) * 3)
    db3.set(b"empty", Stream(limits=state.keyspace.stream_limits))
    before = keyspace_digest(state)
    path = str(tmp_path / "dump.rdb")
    keys, size = save_to_path(state, path)
    assert keys == 4 and size == os.path.getsize(path)

    loaded = _load(path)
    assert keyspace_digest(loaded) == before
    assert loaded.keyspace[0].expires[b"str"] == 10**13
    again = loaded.keyspace[0].get(b"s")
    again.check_invariants()
    for group in again.groups.values():
        group.check_invariants()
    assert len(again._nodes) == len(stream._nodes)  # one listpack per node
    for name, group in stream.groups.items():
        other = again.groups[name]
        assert (other.last_id, other.entries_read) == (group.last_id, group.entries_read)
        assert [(e.key, e.delivery_time_ms, e.delivery_count, e.owner)
                for e in other.idle_index] == [
            (e.key, e.delivery_time_ms, e.delivery_count, e.owner)
            for e in group.idle_index]
        assert [(c.name, c.seen_time_ms, c.active_time_ms) for c in other.consumers.values()] \
            == [(c.name, c.seen_time_ms, c.active_time_ms) for c in group.consumers.values()]
    # Both keep working the same way afterwards.
    for target in (stream, again):
        target.append(StreamID(99999, 1), [b"a", b"z"])
        target.groups[b"g1"].read_new(target, b"erin", 10, 9000)
    assert keyspace_digest(loaded) == keyspace_digest(state)


def test_snapshot_skips_expired_keys(tmp_path):
    state = ServerState()
    db = state.keyspace[0]
    db.set(b"old", b"1")
    db.set_expire(b"old", 1)
    db.set(b"new", b"2")
    path = str(tmp_path / "dump.rdb")
    save_to_path(state, path)
    loaded = _load(path)
    assert list(loaded.keyspace[0].data) == [b"new"]


@pytest.mark.parametrize("where", ["magic", "middle", "crc", "truncated"])
def test_damaged_snapshot_is_refused(tmp_path, where):
    state = ServerState()
    for i in range(50):
        state.keyspace[0].set(b"k%d" % i, b"v" * i)
    path = str(tmp_path / "dump.rdb")
    save_to_path(state, path)
    data = bytearray(open(path, "rb").read())
    if where == "magic":
        data[0] ^= 0xFF
    elif where == "middle":
        data[len(data) // 2] ^= 0x01
    elif where == "crc":
        data[-1] ^= 0x01
    else:
        data = data[: len(data) - 10]
    open(path, "wb").write(bytes(data))
    with pytest.raises(LoadError) as error:
        _load(path)
    # Redis's own lines name the fault, not the file (tests/persistence/test_bad_files.py).
    expected = {"crc": "Wrong RDB checksum", "truncated": "Short read"}.get(where, "")
    assert expected in str(error.value)


def test_digest_ignores_insertion_order():
    one, two = ServerState(), ServerState()
    for i in range(20):
        one.keyspace[0].set(b"k%d" % i, b"%d" % i)
    for i in reversed(range(20)):
        two.keyspace[0].set(b"k%d" % i, b"%d" % i)
    assert keyspace_digest(one) == keyspace_digest(two) != "0" * 40
    two.keyspace[0].set(b"k3", b"changed")
    assert keyspace_digest(one) != keyspace_digest(two)
    assert keyspace_digest(ServerState()) == "0" * 40


def test_manifest_round_trip_and_errors():
    manifest = Manifest()
    manifest.new_base("appendonly.aof")
    manifest.new_incr("appendonly.aof")
    manifest.new_incr("appendonly.aof")
    text = manifest.render().decode()
    assert text.splitlines() == [
        "file appendonly.aof.1.base.rdb seq 1 type b",
        "file appendonly.aof.1.incr.aof seq 1 type i",
        "file appendonly.aof.2.incr.aof seq 2 type i",
    ]
    again = parse_manifest(text)
    assert [info.name for info in again.files()] == [info.name for info in manifest.files()]
    assert (again.base_seq, again.incr_seq) == (1, 2)
    for bad in ("", "file x seq 1\n", "file a/b seq 1 type i\n",
                "file a seq 2 type i\nfile b seq 1 type i\n",
                "file a seq 1 type b\nfile b seq 2 type b\n", "file a seq 1 type z\n"):
        with pytest.raises(ManifestError):
            parse_manifest(bad)


def test_manifest_quotes_odd_names():
    manifest = Manifest()
    manifest.incr.append(aoflog.AofFileInfo("my file.aof", 1, "i"))
    assert parse_manifest(manifest.render().decode()).incr[0].name == "my file.aof"


def _log(*commands: list[bytes]) -> bytes:
    return b"".join(aoflog.encode_command(list(argv)) for argv in commands)


def test_scan_valid_truncated_corrupt_and_open_multi():
    good = _log([b"SET", b"a", b"1"], [b"MULTI"], [b"SET", b"b", b"2"], [b"EXEC"])
    result = aoflog.scan(good)
    assert result.valid and result.commands == 4 and result.ok_up_to == len(good)

    cut = aoflog.scan(good[:-3])
    assert cut.status == aoflog.TRUNCATED
    first = len(aoflog.encode_command([b"SET", b"a", b"1"]))
    assert cut.ok_up_to == first and cut.open_multi_at == first

    open_multi = aoflog.scan(good[: len(good) - len(aoflog.encode_command([b"EXEC"]))])
    assert open_multi.status == aoflog.TRUNCATED and open_multi.ok_up_to == first

    damaged = bytearray(good)
    damaged[first] = ord("x")
    bad = aoflog.scan(bytes(damaged))
    assert bad.status == aoflog.CORRUPT and bad.error_offset == first
    assert f"offset {first}" in bad.message

    annotated = b"#TS:1700000000\r\n" + good
    assert aoflog.scan(annotated).valid


def test_encode_matches_redis_framing():
    assert aoflog.encode_command([b"SET", b"k", b""]) == b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n"
    assert aoflog.encode_select(12) == b"*2\r\n$6\r\nSELECT\r\n$2\r\n12\r\n"


def test_command_form_rebuilds_strings_and_ttls():
    from rillet.persistence.rewrite import keyspace_commands, keyspace_resp
    from tests.persistence.support import InProcess

    source = InProcess()
    source.run("SET", "a", "1")
    source.run("SET", "b", "2", "PXAT", 4_000_000_000_000)
    source.run("SELECT", "4")
    source.run("SET", "c", bytes(range(256)))
    target = InProcess()
    for db_index, argv in keyspace_commands(source.state):
        target.run("SELECT", db_index)
        assert not isinstance(target.run(*argv), Exception)
    assert target.digest() == source.digest()
    assert aoflog.scan(b"".join(keyspace_resp(source.state))).commands == 6


def test_command_form_rebuilds_streams_and_groups():
    from rillet.persistence.rewrite import keyspace_commands
    from tests.persistence.support import InProcess

    source = InProcess()
    if source.run("XADD", "probe", "1-1", "a", "1").__class__.__name__ == "ReplyError":
        pytest.skip("stream commands are not available")
    for i in range(1, 300):
        source.run("XADD", "s", f"{100 + i}-{i}", "f", str(i), *(["g", "x"] if i % 3 else []))
    for i in range(1, 300, 7):
        source.run("XDEL", "s", f"{100 + i}-{i}")
    source.run("XGROUP", "CREATE", "s", "g1", "0")
    source.run("XREADGROUP", "GROUP", "g1", "alice", "COUNT", "50", "STREAMS", "s", ">")
    source.run("XREADGROUP", "GROUP", "g1", "bob", "COUNT", "20", "STREAMS", "s", ">")
    source.run("XACK", "s", "g1", "102-2", "103-3")
    source.run("XCLAIM", "s", "g1", "carol", "0", "110-10", "TIME", "1700000000000",
               "RETRYCOUNT", "4")
    source.run("XNACK", "s", "g1", "SILENT", "IDS", "1", "111-11")
    source.run("XGROUP", "CREATECONSUMER", "s", "g1", "dave")
    source.run("XGROUP", "CREATE", "s", "g2", "$")
    source.run("XADD", "e", "1-1", "a", "1")
    source.run("XDEL", "e", "1-1")
    target = InProcess()
    for db_index, argv in keyspace_commands(source.state):
        target.run("SELECT", db_index)
        reply = target.run(*argv)
        assert reply.__class__.__name__ != "ReplyError", (argv[:3], reply)
    assert target.digest() == source.digest()



@pytest.mark.parametrize("compiled", [False, True], ids=["python", "compiled"])
def test_aof_feed_encodes_every_argument_kind_like_encode_command(compiled, monkeypatch):
    """The AOF's sink (_aofenc's EffectStream, or aoflog's) encodes any argument kind alike."""
    from rillet.persistence import aof

    if compiled and aof._aofenc is None:
        pytest.skip("the compiled AOF encoder is not built")
    if not compiled:
        monkeypatch.setattr(aof, "EffectStream", aoflog.EffectStream)
    writer = aof.AofWriter("/nonexistent", "appendonly.aof", ServerState().config, lambda: None)
    plain = [b"XADD", b"s", b"1-1", b"f", b"\r\n\x00", b"", b"x" * 100_000]
    mixed = [b"SET", bytearray(b"k"), memoryview(b"v")]
    as_tuple = (b"DEL", b"k")
    writer.stream([(0, plain), (3, mixed)])
    writer.stream([(3, as_tuple), (0, [b"PING"])])
    assert bytes(writer.buf) == (
        aoflog.encode_select(0) + aoflog.encode_command(plain)
        + aoflog.encode_select(3) + aoflog.encode_command(mixed)
        + aoflog.encode_command(list(as_tuple))
        + aoflog.encode_select(0) + aoflog.encode_command([b"PING"])
    )
    assert writer.selected_db == 0
