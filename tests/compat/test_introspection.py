"""MONITOR, CLIENT REPLY, SLOWLOG and LATENCY against Redis 8.2.3 (raw bytes where they
are deterministic: MONITOR lines are compared with the time and address masked)."""

from __future__ import annotations

import re

import redis

from tests.helpers.wire import Wire


def test_client_reply(pair8):
    for wire in (pair8.ours, pair8.ref):
        wire.send_raw(b"CLIENT REPLY OFF\r\nSET a 1\r\nGET a\r\nCLIENT REPLY SKIP\r\nPING\r\n"
                      b"CLIENT REPLY ON\r\nGET a\r\n")
    assert pair8.ours.read_reply() == pair8.ref.read_reply() == b"+OK\r\n"
    assert pair8.ours.read_reply() == pair8.ref.read_reply() == b"$1\r\n1\r\n"
    pair8.check("CLIENT", "REPLY", "bogus")
    for wire in (pair8.ours, pair8.ref):
        wire.send_raw(b"CLIENT REPLY SKIP\r\nGET a\r\nPING\r\n")
    assert pair8.ours.read_reply() == pair8.ref.read_reply() == b"+PONG\r\n"


def test_slowlog_and_latency(pair8):
    pair8.check("SLOWLOG", "RESET")
    pair8.check("SLOWLOG", "LEN")
    pair8.check("SLOWLOG", "GET")
    pair8.check("SLOWLOG", "GET", "x")
    pair8.check("SLOWLOG", "GET", "-2")
    pair8.check("SLOWLOG", "BOGUS")
    pair8.check("LATENCY", "LATEST")
    pair8.check("LATENCY", "HISTORY", "command")
    pair8.check("LATENCY", "RESET")
    pair8.check("LATENCY", "DOCTOR")
    pair8.check("LATENCY", "BOGUS")
    pair8.check("LATENCY", "HISTORY")


def _monitor_lines(port: int) -> list[bytes]:
    mon, conn = Wire(port), Wire(port)
    try:
        assert mon.call("MONITOR") == b"+OK\r\n"
        conn.call("SET", "k", "a b\n\x01\"")
        conn.call("GET", "k")
        conn.call("EVAL", "return redis.call('get', KEYS[1])", "1", "k")
        conn.call("CONFIG", "GET", "maxclients")  # admin: not shown
        conn.call("MULTI")
        conn.call("INCR", "n")
        conn.call("EXEC")
        conn.call("PING", "end")
        lines = []
        while True:
            line = mon.read_reply()
            masked = re.sub(rb"^\+\d+\.\d{6} \[(\d+) [^\]]*\]", rb"+T [\1 addr]", line)
            if b"lua]" in line:
                masked = masked.replace(b"addr]", b"lua]")
            lines.append(masked)
            if b'"end"' in line:
                return lines
    finally:
        mon.close()
        conn.close()


def test_monitor(rillet_server, redis8_server):
    assert _monitor_lines(rillet_server.port) == _monitor_lines(redis8_server.port)


def test_slow_commands_are_logged(rillet_server):
    with Wire(rillet_server.port) as wire:
        wire.call("CONFIG", "SET", "slowlog-log-slower-than", "0")
        try:
            wire.call("SLOWLOG", "RESET")
            for _ in range(40):  # one call in 16 of a `fast` command is timed
                wire.call("ECHO", "x")
            wire.call("DBSIZE", "")  # a wrong arity: refused before it runs, not logged
            wire.call("KEYS", "no-such-*")  # not `fast`: every call is timed
            assert int(wire.call("SLOWLOG", "LEN")[1:-2]) >= 3
            logged = wire.call("SLOWLOG", "GET", "-1")
            assert b"ECHO" in logged and b"KEYS" in logged and b"DBSIZE" not in logged
        finally:
            wire.call("CONFIG", "SET", "slowlog-log-slower-than", "10000")


def _secrets_shown(port: int) -> tuple[list[bytes], set[tuple[bytes, ...]]]:
    """MONITOR's lines and SLOWLOG's distinct argument lists for commands carrying secrets."""
    mon, conn = Wire(port), Wire(port)
    admin = redis.Redis(port=port)
    commands = [
        ("AUTH", "redact-u", "pw1"),
        ("HELLO", "2", "AUTH", "redact-u", "pw1", "SETNAME", "n1"),
        ("MIGRATE", "127.0.0.1", "1", "", "0", "10", "AUTH2", "u", "p", "KEYS", "no-such-key"),
        ("MIGRATE", "127.0.0.1", "1", "", "0", "10", "COPY", "AUTH", "p", "KEYS", "no-such-key"),
        ("CONFIG", "SET", "maxmemory-samples", "5", "masterauth", "secret"),
        ("ACL", "GETUSER", "redact-u"),
    ]
    try:
        admin.execute_command("ACL", "SETUSER", "redact-u", "on", ">pw1", "+@all", "~*")
        admin.execute_command("CONFIG", "SET", "slowlog-log-slower-than", "0")
        admin.execute_command("SLOWLOG", "RESET")
        assert mon.call("MONITOR") == b"+OK\r\n"
        # rillet's slow log times one call in 16 of each command: 16 calls log one.
        for command in commands:
            for _ in range(16):
                conn.call(*command)
        conn.call("PING", "end")
        lines = []
        while not lines or b'"end"' not in lines[-1]:
            lines.append(re.sub(rb"^\+\d+\.\d{6} \[(\d+) [^\]]*\]", rb"+T [\1 addr]",
                                mon.read_reply()))
        admin.execute_command("CONFIG", "SET", "slowlog-log-slower-than", "10000",
                              "masterauth", "")
        entries = admin.execute_command("SLOWLOG", "GET", "-1")
        logged = {tuple(entry[3]) for entry in entries
                  if entry[3][0] in (b"AUTH", b"HELLO", b"MIGRATE", b"CONFIG", b"ACL")}
        admin.execute_command("ACL", "DELUSER", "redact-u")
        return sorted(set(lines)), logged
    finally:
        mon.close()
        conn.close()
        admin.close()


def test_monitor_and_slowlog_redact_secrets(rillet_server, redis8_server):
    ours = _secrets_shown(rillet_server.port)
    assert ours == _secrets_shown(redis8_server.port)
    assert not any(b"pw1" in line or b"secret" in line for line in ours[0])
    assert not any(b"pw1" in arg or b"secret" in arg for entry in ours[1] for arg in entry)
