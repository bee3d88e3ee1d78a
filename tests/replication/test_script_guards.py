"""Scripts and functions under min-replicas-to-write and on a read-only replica, byte for byte
against Redis 8.2.3.

A script that declares flags (a shebang, or a function) without `no-writes` is a
write command (Redis's getCommandFlags), so NOREPLICAS and READONLY refuse it
before it runs, whatever it would do, also through the _RO forms; a script
without a shebang is refused only at its first write, with the script's place.
"""

from __future__ import annotations

import hashlib

import pytest

from tests.helpers import servers
from tests.helpers.wire import Wire
from tests.replication import support

pytestmark = pytest.mark.needs_redis

LIBRARY = (
    "#!lua name=guards\n"
    "redis.register_function('w', function(k) return redis.call('set', k[1], 1) end)\n"
    "redis.register_function{function_name='noflags', callback=function() return 1 end}\n"
    "redis.register_function{function_name='ro', callback=function(k)"
    " return redis.call('get', k[1]) end, flags={'no-writes'}}\n"
)
MAY_WRITE = "#!lua\nreturn 1"
SHA = hashlib.sha1(MAY_WRITE.encode()).hexdigest()

CALLS: list[tuple] = [
    ("FCALL", "w", 1, "k"),
    ("FCALL", "noflags", 0),
    ("FCALL", "ro", 1, "k"),
    ("FCALL_RO", "ro", 1, "k"),
    ("FCALL_RO", "w", 1, "k"),
    ("EVAL", MAY_WRITE, 0),
    ("EVAL", "#!lua\nreturn redis.call('set', KEYS[1], 1)", 1, "k"),
    ("EVAL", "#!lua flags=allow-oom\nreturn 1", 0),
    ("EVAL", "#!lua flags=no-writes\nreturn 1", 0),
    ("EVAL", "#!lua flags=no-writes\nreturn redis.call('set', KEYS[1], 1)", 1, "k"),
    ("EVAL", "return 1", 0),
    ("EVAL", "return redis.call('set', KEYS[1], 1)", 1, "k"),
    ("EVAL", "return redis.pcall('set', KEYS[1], 1)['err']", 1, "k"),
    ("EVAL_RO", MAY_WRITE, 0),
    ("EVALSHA", SHA, 0),
    ("EVALSHA_RO", SHA, 0),
    ("EXISTS", "k"),
]


def _replies(port: int) -> list[bytes]:
    with Wire(port) as wire:
        return [wire.call(*call) for call in CALLS]


def _prepare(port: int) -> None:
    with Wire(port) as wire:
        assert wire.call("FUNCTION", "LOAD", LIBRARY) == b"$6\r\nguards\r\n"
        assert wire.call("SCRIPT", "LOAD", MAY_WRITE) == b"$40\r\n%s\r\n" % SHA.encode()


@pytest.fixture(scope="module")
def pair():
    yield from servers.own_pair8()


def test_noreplicas_refuses_scripts_that_may_write(pair):
    replies = []
    for handle in pair:
        _prepare(handle.port)
        handle.client().config_set("min-replicas-to-write", 1)
        replies.append(_replies(handle.port))
    ours, redis8 = replies
    assert ours == redis8
    assert ours[0] == b"-NOREPLICAS Not enough good replicas to write.\r\n"
    assert ours[-1] == b":0\r\n"  # nothing was written


def test_readonly_replica_refuses_scripts_that_may_write():
    if servers.redis8_binary() is None:
        pytest.skip("Redis 8.2.3 not available")
    replies = []
    for kind in ("rillet", "redis8"):
        master = support.start(kind)
        replica = None
        try:
            _prepare(master.port)
            replica = support.start(kind, "--replicaof", "127.0.0.1", str(master.port))
            support.wait_synced(master.client(), replica.client())
            with Wire(replica.port) as wire:
                wire.call("SCRIPT", "LOAD", MAY_WRITE)
            replies.append(_replies(replica.port))
        finally:
            if replica is not None:
                replica.stop()
            master.stop()
    ours, redis8 = replies
    assert ours == redis8
    assert ours[0] == b"-READONLY You can't write against a read only replica.\r\n"
