"""CLIENT PAUSE against Redis 8.2.3: which scripts a WRITE pause holds, and expiry paused.

A WRITE pause holds writes and may-replicate commands; EVAL, EVALSHA and FCALL count as
such unless their script declares flags without `write` (Redis's scriptFlagsToCmdFlags:
a `no-writes` script runs, as EVAL_RO does). Expiry is paused too (PAUSE_ACTION_EXPIRE):
a key past its TTL reads as missing but stays (DBSIZE, INFO keyspace, no `expired_keys`)
until the pause ends. Waits are bounded; outcomes are compared, not timings.
"""

from __future__ import annotations

import hashlib
import re
import time

import pytest

from tests.helpers.wire import Wire, encode_command

NO_WRITES = "#!lua flags=no-writes\nreturn redis.call('get', KEYS[1])"
DECLARED_WRITE = "#!lua\nreturn redis.call('get', KEYS[1])"
PLAIN = "return redis.call('get', KEYS[1])"
LIBRARY = ("#!lua name=pauselib\n"
           "redis.register_function{function_name='pause_ro', flags={'no-writes'},"
           " callback=function(keys) return redis.call('get', keys[1]) end}\n"
           "redis.register_function('pause_rw', function(keys) return redis.call('get', keys[1]) end)")

RUN = [
    ("EVAL", NO_WRITES, "1", "k"),
    ("EVALSHA", hashlib.sha1(NO_WRITES.encode()).hexdigest(), "1", "k"),
    ("EVAL_RO", PLAIN, "1", "k"),
    ("FCALL", "pause_ro", "1", "k"),
    ("FCALL_RO", "pause_ro", "1", "k"),
    ("MULTI",), ("EVAL", NO_WRITES, "1", "k"), ("EXEC",),
]
HELD = [
    ("EVAL", DECLARED_WRITE, "1", "k"),
    ("EVAL", PLAIN, "1", "k"),
    ("FCALL", "pause_rw", "1", "k"),
    ("EVALSHA", "0" * 40, "1", "k"),  # unknown: no flags to go by
]

_BLOCKED = re.compile(rb"blocked_clients:(\d+)")


def _wait(condition, limit_s: float = 5.0) -> None:
    deadline = time.monotonic() + limit_s
    while not condition():
        assert time.monotonic() < deadline, "condition never met"
        time.sleep(0.01)


def _scripts_under_pause(port: int) -> tuple[list[bytes], list[bytes]]:
    admin, client = Wire(port, timeout=5.0), Wire(port, timeout=5.0)
    try:
        admin.call("FLUSHALL")
        admin.call("SET", "k", "v")
        admin.call("SCRIPT", "LOAD", NO_WRITES)
        admin.call("FUNCTION", "LOAD", "REPLACE", LIBRARY)
        admin.call("CLIENT", "PAUSE", "60000", "WRITE")
        ran = [client.call(*command) for command in RUN]
        held = []
        for command in HELD:
            client.send_raw(encode_command(*command))
            _wait(lambda: int(_BLOCKED.search(admin.call("INFO", "clients")).group(1)) == 1)
            admin.call("CLIENT", "UNPAUSE")
            held.append(client.read_reply())
            admin.call("CLIENT", "PAUSE", "60000", "WRITE")
        return ran, held
    finally:
        admin.call("CLIENT", "UNPAUSE")
        admin.call("FUNCTION", "DELETE", "pauselib")
        admin.close()
        client.close()


def test_write_pause_runs_no_writes_scripts(pair8, rillet_server, redis8_server):
    ours = _scripts_under_pause(rillet_server.port)
    ref = _scripts_under_pause(redis8_server.port)
    assert ours == ref
    assert ours[0][0] == b"$1\r\nv\r\n"


def _expired_keys(wire: Wire) -> int:
    return int(re.search(rb"expired_keys:(\d+)", wire.call("INFO", "stats")).group(1))


def _expiry_under_pause(port: int) -> list[object]:
    admin, client = Wire(port, timeout=5.0), Wire(port, timeout=5.0)
    try:
        admin.call("FLUSHALL")
        before = _expired_keys(admin)
        admin.send_raw(b"".join(encode_command(*command) for command in [
            ("MULTI",), ("SET", "k", "v", "PX", "50"), ("SET", "k2", "v", "PX", "50"),
            ("CLIENT", "PAUSE", "60000", "WRITE"), ("EXEC",)]))
        for _ in range(5):
            admin.read_reply()
        _wait(lambda: client.call("GET", "k") == b"$-1\r\n")
        time.sleep(0.3)  # several active expiry cycles (hz 10) that must not run
        seen: list[object] = [client.call(*command) for command in [
            ("GET", "k"), ("EXISTS", "k", "k2"), ("TTL", "k"), ("TYPE", "k2"), ("DBSIZE",),
            ("KEYS", "*"), ("SCAN", "0")]]
        seen.append(re.findall(rb"db0:keys=\d+,expires=\d+", client.call("INFO", "keyspace")))
        seen.append(client.call("RANDOMKEY") in (b"$1\r\nk\r\n", b"$2\r\nk2\r\n"))  # kept keys: one of them
        seen.append(_expired_keys(admin) - before)
        admin.call("CLIENT", "UNPAUSE")
        seen += [client.call("GET", "k"), client.call("GET", "k2"), client.call("DBSIZE")]
        seen.append(_expired_keys(admin) - before)
        return seen
    finally:
        admin.call("CLIENT", "UNPAUSE")
        admin.close()
        client.close()


def test_expiry_waits_for_the_pause(pair8, rillet_server, redis8_server):
    ours = _expiry_under_pause(rillet_server.port)
    ref = _expiry_under_pause(redis8_server.port)
    assert ours == ref
    assert ours[4] == b":2\r\n" and ours[9] == 0 and ours[-1] == 2


@pytest.mark.parametrize("mode", ["WRITE", "ALL"])
def test_expiry_resumes_when_the_pause_times_out(pair8, rillet_server, redis8_server, mode):
    """A pause that ends by its timeout, with no command to notice: active expiry resumes."""
    for port in (rillet_server.port, redis8_server.port):
        with Wire(port, timeout=5.0) as admin:
            admin.call("FLUSHALL")
            admin.send_raw(b"".join(encode_command(*command) for command in [
                ("MULTI",), ("SET", "k", "v", "PX", "50"), ("CLIENT", "PAUSE", "300", mode), ("EXEC",)]))
            for _ in range(4):
                admin.read_reply()
            time.sleep(1.0)
            # INFO keyspace (not a key lookup, which would expire it lazily).
            _wait(lambda a=admin: b"db0:" not in a.call("INFO", "keyspace"))
