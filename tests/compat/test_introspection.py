"""MONITOR, CLIENT REPLY, SLOWLOG and LATENCY against Redis 8.2.3 (raw bytes where they
are deterministic: MONITOR lines are compared with the time and address masked)."""

from __future__ import annotations

import re

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
            for _ in range(40):  # one call in 16 of each command is timed
                wire.call("ECHO", "x")
            assert int(wire.call("SLOWLOG", "LEN")[1:-2]) >= 1
            assert b"ECHO" in wire.call("SLOWLOG", "GET", "1")
        finally:
            wire.call("CONFIG", "SET", "slowlog-log-slower-than", "10000")
