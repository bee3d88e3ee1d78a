"""FUNCTION LOAD/LIST/DELETE/FLUSH/STATS/RESTORE and FCALL/FCALL_RO against Redis 8.2.3."""

from __future__ import annotations

import re
import time

from tests.helpers.wire import Wire, encode_command

LIB = """#!lua name=mylib
redis.register_function('echo_arg', function(keys, args) return args[1] end)
redis.register_function{function_name='getkey', callback=function(keys, args)
  return redis.call('get', keys[1]) end, flags={'no-writes'}, description='reads a key'}
redis.register_function('setkey', function(keys, args) return redis.call('set', keys[1], args[1]) end)
redis.register_function('boom', function(keys, args) return redis.call('incr', keys[1]) end)
redis.register_function('bad_global', function(keys, args) return foo end)
"""

BAD_LIBRARIES = [
    "return 1",
    "#!lua\nreturn 1",
    "#!lua name=x\nreturn 1",
    "#!lua name=x foo=bar\nreturn 1",
    "#!luax name=x\nreturn 1",
    "#!lua name=x y\nreturn 1",
    "#!lua name=a-b\nredis.register_function('a', function() return 1 end)",
    "#!lua name=x\nredis.register_function('a', function() return 1 end)\nredis.call('ping')",
    "#!lua name=x\nredis.register_function('a b', function() return 1 end)",
    "#!lua name=x\nredis.register_function('a', 1)",
    "#!lua name=x\nredis.register_function('a', function() end, 3)",
    "#!lua name=x\nredis.register_function{function_name='a', callback=function() end, flags={'bad'}}",
    "#!lua name=x\nredis.register_function{function_name='a', callback=function() end, foo=1}",
    "#!lua name=x\nredis.register_function('a', function() end)\nredis.register_function('a', function() end)",
    "#!lua name=x\nlocal a = foo",
    "#!lua name=x\nerror('boom')",
    "#!lua name=x\nretur",
    "#!lua name=x2\nredis.register_function('echo_arg', function() return 1 end)",
]


def test_functions(pair8):
    pair8.check("FUNCTION", "FLUSH")
    pair8.check("FUNCTION", "LOAD", LIB)
    pair8.check("FUNCTION", "LOAD", LIB)
    pair8.check("FUNCTION", "LOAD", "REPLACE", LIB)
    for code in BAD_LIBRARIES:
        pair8.check("FUNCTION", "LOAD", code)
    pair8.check("FUNCTION", "STATS")
    pair8.check("FCALL", "echo_arg", "0", "hello")
    pair8.check("FCALL", "nosuch", "0")
    pair8.check("FCALL", "echo_arg", "abc")
    pair8.check("FCALL", "echo_arg", "-1")
    pair8.check("FCALL", "echo_arg", "5", "a")
    pair8.check("FCALL", "setkey", "1", "k", "v")
    pair8.check("FCALL", "getkey", "1", "k")
    pair8.check("FCALL_RO", "getkey", "1", "k")
    pair8.check("FCALL_RO", "setkey", "1", "k", "v")
    pair8.check("SET", "str", "abc")
    pair8.check("FCALL", "boom", "1", "str")
    pair8.check("FCALL", "bad_global", "0")
    pair8.check("FUNCTION", "LIST", "bogus")
    pair8.check("FUNCTION", "LIST", "LIBRARYNAME")
    pair8.check("FUNCTION", "LIST", "WITHCODE", "WITHCODE")
    pair8.check("FUNCTION", "LIST", "LIBRARYNAME", "nomatch*")
    pair8.check("FUNCTION", "RESTORE", "xxx")
    pair8.check("FUNCTION", "RESTORE", "xxx", "bogus")
    pair8.check("FUNCTION", "DELETE", "nosuch")
    pair8.check("FUNCTION", "DELETE", "mylib")
    pair8.check("FCALL", "echo_arg", "0", "hello")
    pair8.check("FUNCTION", "LIST")
    pair8.check("FUNCTION", "KILL")
    pair8.check("FUNCTION", "FLUSH", "bad")


def test_function_list_one_function(pair8):
    pair8.check("FUNCTION", "FLUSH")
    code = "#!lua name=one\nredis.register_function{function_name='f', callback=function() return 1 end," \
           " flags={'no-writes'}, description='d'}"
    pair8.check("FUNCTION", "LOAD", code)
    pair8.check("FUNCTION", "LIST")
    pair8.check("FUNCTION", "LIST", "WITHCODE", "LIBRARYNAME", "o*")
    pair8.check("HELLO", "3", normalise=lambda raw: b"")
    pair8.check("FUNCTION", "LIST", "WITHCODE")
    pair8.check("FUNCTION", "STATS")


def test_dump_restore_round_trip(rillet_server):
    from tests.helpers.wire import Wire

    with Wire(rillet_server.port) as wire:
        wire.call("FUNCTION", "FLUSH")
        assert wire.call("FUNCTION", "LOAD", LIB) == b"$5\r\nmylib\r\n"
        raw = wire.call("FUNCTION", "DUMP")
        payload = raw.split(b"\r\n", 1)[1][:-2]
        assert wire.call("FUNCTION", "RESTORE", payload) == b"-ERR Library 'mylib' already exists\r\n"
        assert wire.call("FUNCTION", "FLUSH") == b"+OK\r\n"
        assert wire.call("FUNCTION", "RESTORE", payload) == b"+OK\r\n"
        assert wire.call("FCALL", "echo_arg", "0", "x") == b"$1\r\nx\r\n"
        assert wire.call("FUNCTION", "RESTORE", payload, "REPLACE") == b"+OK\r\n"
        assert wire.call("FUNCTION", "RESTORE", payload, "FLUSH") == b"+OK\r\n"
        assert wire.call("FUNCTION", "RESTORE", payload[:-1] + b"x") == (
            b"-ERR DUMP payload version or checksum are wrong\r\n")


def test_dump_payload_is_redis(pair8):
    """FUNCTION DUMP's payload is Redis's byte for byte, and each server restores the
    other's (redis-cli --cluster add-node copies functions so); bad payloads' errors."""
    pair8.check("FUNCTION", "FLUSH")
    pair8.check("FUNCTION", "DUMP")
    pair8.check("FUNCTION", "LOAD", LIB)
    ours, ref = pair8.both("FUNCTION", "DUMP")
    assert ours == ref
    payload = ours.split(b"\r\n", 1)[1][:-2]
    pair8.check("FUNCTION", "FLUSH")
    pair8.check("FUNCTION", "RESTORE", payload)
    pair8.check("FCALL", "echo_arg", "0", "x")
    from rillet.persistence.rdb_format import crc64

    for body in (b"\x00\x03abc", b"\xf5\x0f", b"\xf6\x03abc"):
        body += b"\x0c\x00"
        pair8.check("FUNCTION", "RESTORE", body + crc64(0, body).to_bytes(8, "little"))
    pair8.check("FUNCTION", "FLUSH")


def test_function_load_options(pair8):
    """functionLoadCommand: every word before the code is REPLACE (repeats allowed), else
    "Unknown option given". Found by the command fuzzer."""
    code = "#!lua name=optlib\nredis.register_function('optf', function() return 1 end)"
    pair8.check("FUNCTION", "LOAD", "x", code)
    pair8.check("FUNCTION", "LOAD", "x", "y", code)
    pair8.check("FUNCTION", "LOAD", "REPLACE", "x", code)
    pair8.check("FUNCTION", "LOAD", code)
    pair8.check("FUNCTION", "LOAD", "REPLACE", "replace", code)
    pair8.check("FUNCTION", "LOAD", "REPLACE", code, "extra")
    pair8.check("FUNCTION", "DELETE", "optlib")


def test_function_restore_arguments(pair8):
    """More than one word after the payload: Redis's subcommand syntax error. Found by the
    command fuzzer."""
    pair8.check("FUNCTION", "RESTORE", "0", "REPLACE", "REPLACE")
    pair8.check("FUNCTION", "restore", "0", "x", "y")
    pair8.check("FUNCTION", "RESTORE", "0", "x")
    pair8.check("FUNCTION", "RESTORE", "0", "FLUSH")


def test_function_names_ignore_case(pair8):
    """Redis's function namespace ignores case: FCALL TEST finds `test` (FCALL_RO too), a
    library cannot add `TEST` beside another's `test`, FUNCTION RESTORE APPEND neither;
    library names and FUNCTION LIST keep their spelling."""
    pair8.check("FUNCTION", "FLUSH")
    pair8.check("FUNCTION", "LOAD", "#!lua name=cased\n"
                "redis.register_function('Mixed', function() return 1 end)\n"
                "redis.register_function{function_name='ro', callback=function() return 2 end,"
                " flags={'no-writes'}}")
    for name in ("Mixed", "MIXED", "mixed", "mIxEd"):
        pair8.check("FCALL", name, "0")
        pair8.check("FCALL_RO", name, "0")
    pair8.check("FCALL_RO", "RO", "0")
    pair8.check("FUNCTION", "LOAD", "#!lua name=other\nredis.register_function('mixed', function() return 3 end)")
    pair8.check("FUNCTION", "LOAD", "REPLACE", "#!lua name=cased\nredis.register_function('MIXED', function() return 4 end)")
    pair8.check("FCALL", "mixed", "0")
    pair8.check("FUNCTION", "DELETE", "CASED")
    pair8.check("FUNCTION", "LIST")
    restored = []
    for conn in (pair8.ours, pair8.ref):
        payload = conn.call("FUNCTION", "DUMP").split(b"\r\n", 1)[1][:-2]
        conn.call("FUNCTION", "FLUSH")
        conn.call("FUNCTION", "LOAD", "#!lua name=third\nredis.register_function('Mixed', function() return 5 end)")
        restored.append(conn.call("FUNCTION", "RESTORE", payload, "APPEND"))
    assert restored[0] == restored[1] == b"-ERR Function MIXED already exists\r\n"
    pair8.check("FCALL", "MIXED", "0")
    pair8.check("FUNCTION", "FLUSH")


BUSY_LIB = "#!lua name=busylib\nredis.register_function('test', function() local a = 1 while true do a = a + 1 end end)"
BUSY_EVAL = "local a = 1 while true do a = a + 1 end"


def _busy_session(port: int) -> list[bytes]:
    """A busy FCALL found the way Redis's tests and tools find it (FUNCTION STATS shows its
    command), then killed; the wrong KILL for each kind first; a busy EVAL likewise."""
    admin, runner = Wire(port, timeout=10.0), Wire(port, timeout=10.0)
    seen: list[bytes] = []

    def wait_busy() -> None:
        deadline = time.monotonic() + 10
        while not admin.call("PING").startswith(b"-BUSY"):
            assert time.monotonic() < deadline, "never busy"
            time.sleep(0.01)

    try:
        admin.call("FUNCTION", "LOAD", "REPLACE", BUSY_LIB)
        admin.call("CONFIG", "SET", "busy-reply-threshold", "50")
        for name in ("test", "TEST"):
            runner.send_raw(encode_command("FCALL", name, "0"))
            wait_busy()
            stats = admin.call("FUNCTION", "STATS")
            seen.append(re.sub(rb"duration_ms\r\n:\d+", b"duration_ms\r\n:N", stats))
            seen.append(admin.call("SCRIPT", "KILL"))
            seen.append(admin.call("FUNCTION", "KILL"))
            seen.append(runner.read_reply())
            seen.append(admin.call("PING"))
        runner.send_raw(encode_command("EVAL", BUSY_EVAL, "0"))
        wait_busy()
        seen += [admin.call("FUNCTION", "STATS"), admin.call("FUNCTION", "KILL"), admin.call("SCRIPT", "KILL"),
                 runner.read_reply(), admin.call("FUNCTION", "KILL")]
        return seen
    finally:
        admin.call("CONFIG", "SET", "busy-reply-threshold", "5000")
        admin.call("FUNCTION", "DELETE", "busylib")
        admin.close()
        runner.close()


def test_busy_function_stats_and_kill(pair8, rillet_server, redis8_server):
    ours = _busy_session(rillet_server.port)
    ref = _busy_session(redis8_server.port)
    assert ours == ref
    assert b"command\r\n*3\r\n$5\r\nFCALL\r\n$4\r\ntest\r\n$1\r\n0\r\n" in ours[0]
