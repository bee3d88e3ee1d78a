"""A small AOF cut at every byte offset, corrupted in the middle, split across files.

The oracle is the writing side: each command's effects are appended as one
unit, and the digest of the writer's keyspace is recorded at every unit
boundary. A cut file must load to the digest of the last whole unit before
the cut (a MULTI without its EXEC counts as not whole), and be truncated
there; without aof-load-truncated it must refuse unless the cut is on a
boundary.
"""

from __future__ import annotations

import os

import pytest

from rillet.persistence import aoflog
from rillet.persistence.aof import AofWriter
from rillet.persistence.aoflog import Manifest
from rillet.persistence.loader import LoadError, LoadProgress, load_aof, replay_log
from tests.persistence.support import InProcess

FAR = b"%d" % (4_000_000_000_000)


def _record_units():
    """Run commands, encode their effects like the AOF does; return (bytes, boundaries)."""
    source = InProcess()
    writer = AofWriter("/nonexistent", "appendonly.aof", source.state.config, lambda: None)
    boundaries = [(0, source.digest())]

    def sink(effects):
        writer.stream(effects)
        boundaries.append((len(writer.buf), source.digest()))

    source.state.effect_sinks[:] = [sink]
    source.run("SET", "a", "1")
    source.run("SET", "b", "hello", "PXAT", FAR)
    source.run("INCR", "n")
    source.run("MULTI")
    source.run("INCR", "n")
    source.run("SET", "c", "x" * 20)
    source.run("EXEC")
    source.run("SELECT", "2")
    source.run("SET", "a", "in db 2")
    source.run("APPEND", "a", "!")
    source.run("SELECT", "0")
    source.run("DEL", "a")
    source.run("MULTI")
    source.run("SET", "d", "4")
    source.run("EXEC")
    source.run("INCRBY", "n", "40")
    return bytes(writer.buf), boundaries


DATA, BOUNDARIES = _record_units()


def _expected(cut: int) -> tuple[int, str]:
    best = BOUNDARIES[0]
    for boundary in BOUNDARIES:
        if boundary[0] <= cut:
            best = boundary
    return best


def _replay(path: str, truncate_ok: bool) -> InProcess:
    target = InProcess()
    for _ in replay_log(target.state, target.dispatcher, path, truncate_ok, LoadProgress()):
        pass
    return target


def test_units_cover_the_whole_file():
    assert BOUNDARIES[-1][0] == len(DATA)
    assert aoflog.scan(DATA).valid
    assert len(BOUNDARIES) == 10  # MULTI/EXEC units publish once each


def test_cut_at_every_offset_loads_the_last_whole_unit(tmp_path):
    path = str(tmp_path / "appendonly.aof.1.incr.aof")
    for cut in range(len(DATA) + 1):
        with open(path, "wb") as handle:
            handle.write(DATA[:cut])
        boundary, digest = _expected(cut)
        loaded = _replay(path, truncate_ok=True)
        assert loaded.digest() == digest, f"cut at {cut}"
        size = os.path.getsize(path)
        # Cut back to a whole command: at least the unit boundary (a trailing
        # SELECT of the next unit may stay), never into a partial command.
        assert boundary <= size <= cut, f"cut at {cut}"
        assert aoflog.scan(open(path, "rb").read()).valid
        # Loading the repaired file again gives the same data, with no warning.
        assert _replay(path, truncate_ok=False).digest() == digest


def test_cut_without_aof_load_truncated_refuses_unless_on_a_boundary(tmp_path):
    path = str(tmp_path / "appendonly.aof.1.incr.aof")
    offsets = {b for b, _ in BOUNDARIES}
    for cut in range(0, len(DATA) + 1, 7):
        with open(path, "wb") as handle:
            handle.write(DATA[:cut])
        if cut in offsets:
            assert _replay(path, truncate_ok=False).digest() == _expected(cut)[1]
            continue
        # A cut between two whole commands of one unit (e.g. after MULTI) is
        # still a cut unit: the loader can only tell by the unfinished MULTI,
        # or a cut after a SELECT that is whole on its own.
        try:
            loaded = _replay(path, truncate_ok=False)
        except LoadError as error:
            assert "appendonly.aof.1.incr.aof" in str(error)
            assert "aof-load-truncated" in str(error)
            assert os.path.getsize(path) == cut  # refused: nothing was cut
        else:
            assert loaded.digest() == _expected(cut)[1], f"cut at {cut}"


def test_corruption_in_the_middle_names_the_offset(tmp_path):
    path = str(tmp_path / "appendonly.aof.1.incr.aof")
    offset = BOUNDARIES[4][0]
    damaged = bytearray(DATA)
    damaged[offset] = ord("?")
    with open(path, "wb") as handle:
        handle.write(bytes(damaged))
    with pytest.raises(LoadError) as error:
        _replay(path, truncate_ok=True)
    assert f"offset {offset}" in str(error.value)
    assert "check-aof --fix" in str(error.value)
    assert os.path.getsize(path) == len(DATA)  # untouched


def test_bad_bulk_length_in_the_middle_is_corruption(tmp_path):
    path = str(tmp_path / "appendonly.aof.1.incr.aof")
    damaged = DATA.replace(b"$5\r\nhello", b"$9\r\nhello", 1)
    with open(path, "wb") as handle:
        handle.write(damaged)
    with pytest.raises(LoadError):
        _replay(path, truncate_ok=True)


def test_only_the_last_file_may_be_truncated(tmp_path):
    directory = str(tmp_path)
    manifest = Manifest()
    first = manifest.new_incr("appendonly.aof")
    second = manifest.new_incr("appendonly.aof")
    cut = BOUNDARIES[5][0] + 3
    with open(os.path.join(directory, first.name), "wb") as handle:
        handle.write(DATA[:cut])
    with open(os.path.join(directory, second.name), "wb") as handle:
        handle.write(aoflog.encode_command([b"SET", b"z", b"26"]))
    target = InProcess()
    with pytest.raises(LoadError) as error:
        for _ in load_aof(target.state, target.dispatcher, directory, manifest, True,
                          LoadProgress()):
            pass
    assert first.name in str(error.value) and "not the last" in str(error.value)

    # Cut the last file instead: it loads, minus the cut command.
    with open(os.path.join(directory, first.name), "wb") as handle:
        handle.write(DATA)
    with open(os.path.join(directory, second.name), "wb") as handle:
        handle.write(aoflog.encode_command([b"SET", b"z", b"26"])[:-4])
    target = InProcess()
    for _ in load_aof(target.state, target.dispatcher, directory, manifest, True,
                      LoadProgress()):
        pass
    assert target.digest() == BOUNDARIES[-1][1]


def test_replay_does_not_expire_keys_mid_load(tmp_path):
    # The writer saw `k` alive when it appended to it; replay must too, even
    # though its TTL has passed by now, or the APPEND would build a new key.
    path = str(tmp_path / "appendonly.aof.1.incr.aof")
    log = b"".join(aoflog.encode_command(argv) for argv in (
        [b"SET", b"k", b"old", b"PXAT", b"1000"],
        [b"APPEND", b"k", b"+new"],
        [b"SET", b"other", b"1"],
    ))
    with open(path, "wb") as handle:
        handle.write(log)
    from rillet.persistence.loader import expiry_suspended

    target = InProcess()
    with expiry_suspended(target.state):
        for _ in replay_log(target.state, target.dispatcher, path, False, LoadProgress()):
            pass
        assert target.state.keyspace[0].data[b"k"] == b"old+new"
    # After loading, the key is past its TTL and goes away.
    assert target.state.keyspace[0].get(b"k") is None
