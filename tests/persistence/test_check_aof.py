"""`rillet check-aof [--fix]` on logs, snapshots and manifests."""

from __future__ import annotations

import os
import subprocess
import sys

from rillet.persistence import aoflog
from rillet.persistence.aoflog import Manifest

COMMANDS = [[b"SET", b"k%d" % i, b"v" * i] for i in range(10)]
LOG = b"".join(aoflog.encode_command(argv) for argv in COMMANDS)


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rillet", "check-aof", *args],
                          capture_output=True, text=True, timeout=60)


def test_valid_truncated_and_fixed(tmp_path):
    path = tmp_path / "appendonly.aof.1.incr.aof"
    path.write_bytes(LOG)
    done = run(str(path))
    assert done.returncode == 0 and "is valid" in done.stdout

    path.write_bytes(LOG[:-7])
    done = run(str(path))
    assert done.returncode == 1
    assert "not valid" in done.stdout and "--fix" in done.stdout
    assert os.path.getsize(path) == len(LOG) - 7  # not touched without --fix

    done = run("--fix", str(path))
    assert done.returncode == 0 and "Successfully truncated" in done.stdout
    keep = len(LOG) - len(aoflog.encode_command(COMMANDS[-1]))
    assert path.read_bytes() == LOG[:keep]
    assert run(str(path)).returncode == 0


def test_corruption_in_the_middle_is_cut_with_fix(tmp_path):
    path = tmp_path / "appendonly.aof"
    offset = len(b"".join(aoflog.encode_command(argv) for argv in COMMANDS[:4]))
    damaged = bytearray(LOG)
    damaged[offset] = ord("x")
    path.write_bytes(bytes(damaged))
    done = run(str(path))
    assert done.returncode == 1 and f"offset {offset}" in done.stdout
    assert run("--fix", str(path)).returncode == 0
    assert path.read_bytes() == LOG[:offset]


def test_unfinished_transaction_is_reverted(tmp_path):
    path = tmp_path / "appendonly.aof"
    tail = aoflog.encode_command([b"MULTI"]) + aoflog.encode_command([b"SET", b"x", b"1"])
    path.write_bytes(LOG + tail)
    done = run("--fix", str(path))
    assert done.returncode == 0 and "MULTI" in done.stdout
    assert path.read_bytes() == LOG


def test_manifest_checks_every_file_and_fixes_only_the_last(tmp_path):
    manifest = Manifest()
    first = manifest.new_incr("appendonly.aof")
    second = manifest.new_incr("appendonly.aof")
    (tmp_path / first.name).write_bytes(LOG)
    (tmp_path / second.name).write_bytes(LOG[:-3])
    path = tmp_path / "appendonly.aof.manifest"
    path.write_bytes(manifest.render())
    assert run(str(path)).returncode == 1
    assert run("--fix", str(path)).returncode == 0
    assert run(str(path)).returncode == 0

    (tmp_path / first.name).write_bytes(LOG[:-3])
    done = run("--fix", str(path))
    assert done.returncode == 1 and "not the last file" in done.stdout


def test_rdb_base_files_are_checked_by_checksum(tmp_path):
    from rillet.persistence.rdb import save_to_path
    from rillet.state import ServerState

    state = ServerState()
    state.keyspace[0].set(b"a", b"1")
    path = str(tmp_path / "appendonly.aof.1.base.rdb")
    save_to_path(state, path)
    assert run(path).returncode == 0
    data = bytearray(open(path, "rb").read())
    data[15] ^= 1
    open(path, "wb").write(bytes(data))
    done = run(path)
    assert done.returncode == 1 and "checksum" in done.stdout


def test_usage_errors():
    assert run().returncode == 2
    assert run("--fix").returncode == 2
    assert run("/nonexistent/file").returncode == 1


def _analyzed(text: str) -> str:
    return next(line for line in text.splitlines() if line.startswith("AOF analyzed:"))


def test_analyzed_line_as_redis_check_aof(tmp_path, capsys):
    """Byte for byte redis-check-aof's `AOF analyzed:` line (ok_up_to_line included)
    for every truncation of a log and a damaged byte at every offset."""
    import pytest

    from rillet.persistence import check
    from tests.helpers import servers

    binary = servers.redis8_binary()
    if binary is None:
        pytest.skip("Redis 8.2.3 not available")
    checker = tmp_path / "redis-check-aof"  # redis-server under that name
    checker.symlink_to(binary)
    log = b"".join(aoflog.encode_command(argv) for argv in (
        [b"SELECT", b"0"], [b"SET", b"k", b"a\r\nb"], [b"MULTI"], [b"INCR", b"n"], [b"EXEC"],
        [b"DEL", b"k"]))
    variants = [log[:cut] for cut in range(1, len(log) + 1)]
    # (MULTI damaged: redis-check-aof stops at the EXEC without it.)
    variants += [log[:at] + b"x" + log[at + 1:] for at in range(len(log))]
    variants.append(b"".join(aoflog.encode_command(argv) for argv in (
        [b"MULTI"], [b"SET", b"a", b"1"], [b"MULTI"], [b"SET", b"b", b"2"], [b"EXEC"])))
    path = tmp_path / "appendonly.aof"
    for data in variants:
        path.write_bytes(data)
        check.main([str(path)])
        ours = _analyzed(capsys.readouterr().out)
        done = subprocess.run([str(checker), str(path)], capture_output=True, text=True,
                              timeout=30)
        assert ours == _analyzed(done.stdout), data
