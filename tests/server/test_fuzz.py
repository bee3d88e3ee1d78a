"""Bounded fuzzing over real sockets: random bytes, mutated RESP and random-argument commands.

A dedicated server takes the abuse. After every batch a separate client must still
get its replies, and at the end the server must be alive with no handler bug in
its log (the dispatcher logs "internal error" with a traceback for those).
The loop is seeded and bounded by count and by time.
"""

from __future__ import annotations

import os
import random
import socket
import time

import pytest

import rillet.commands  # noqa: F401  (registers every command)
from rillet.commands import table
from tests.helpers import servers
from tests.helpers.wire import Wire, encode_command

SEED = 20240611
MAX_CASES = 1500
MAX_SECONDS = 12.0

# Issue-2 commands, with arguments drawn from values their parsers treat specially.
# Commands that would reconfigure or stop the server, kill other clients or reset the
# statistics the test reads are left out.
COMMANDS = [
    "PING", "ECHO", "HELLO", "AUTH", "SELECT", "RESET", "QUIT", "CLIENT ID", "CLIENT SETNAME",
    "CLIENT GETNAME", "CLIENT SETINFO", "CLIENT INFO", "CLIENT LIST", "INFO", "CONFIG GET",
    "DBSIZE", "DEL", "UNLINK", "EXISTS", "TYPE", "KEYS", "SCAN", "RENAME",
    "RENAMENX", "FLUSHDB", "TIME", "MULTI", "EXEC", "DISCARD", "WATCH", "UNWATCH",
    "FUNCTION FLUSH", "GET", "SET", "MGET", "INCR", "INCRBY", "DECR", "DECRBY", "EXPIRE",
    "PEXPIRE", "EXPIREAT", "PEXPIREAT", "TTL", "PTTL", "PERSIST", "COMMAND", "COMMAND COUNT",
    "COMMAND INFO", "COMMAND DOCS", "COMMAND LIST", "COMMAND GETKEYS", "OBJECT ENCODING",
    "MEMORY USAGE", "SETNX", "GETDEL", "MSET", "APPEND", "STRLEN", "RANDOMKEY", "EXPIRETIME",
    "CLIENT NO-EVICT", "CLIENT HELP", "CONFIG HELP", "COMMAND HELP", "LASTSAVE", "NOSUCH",
]
ARGS = [
    "k", "key", "k2", "", "0", "1", "-1", "2", "3", "10", "100", "1.5", "x", " 1", "+1", "01",
    "9223372036854775807", "-9223372036854775808", "9223372036854775808", "18446744073709551615",
    "NX", "XX", "GT", "LT", "EX", "PX", "EXAT", "PXAT", "GET", "KEEPTTL", "MATCH", "COUNT",
    "TYPE", "string", "stream", "*", "?", "[", "\\", "ASYNC", "SYNC", "ID", "SKIPME", "yes", "no",
    "LIB-NAME", "LIB-VER", "AUTH", "SETNAME", "default", "FILTERBY", "PATTERN", "ACLCAT",
    "MODULE", "SAMPLES", "maxclients", "*max*", "all", "everything", "default", "server",
    "a b", "é", "\x00", "\r\n", "x" * 300,
]


def _arity(words: list[str]) -> int:
    spec = table.lookup(words[0].encode())
    if spec is not None and len(words) > 1:
        spec = spec.subcommands.get(words[1].lower().encode(), spec)
    return spec.arity if spec is not None else -1


def random_command(rng: random.Random) -> list[bytes]:
    words = rng.choice(COMMANDS).split()
    arity = _arity(words)
    # Mostly a valid argument count, so the handlers' own parsing gets exercised.
    if rng.random() < 0.8:
        count = arity - len(words) if arity > 0 else -arity - len(words) + rng.randint(0, 4)
    else:
        count = rng.choice([0, 1, 2, 3, 5])
    words += [rng.choice(ARGS) for _ in range(max(0, count))]
    return [w.encode() for w in words]


def mutate(data: bytes, rng: random.Random) -> bytes:
    data = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(6)
        pos = rng.randrange(len(data) + 1)
        if op == 0 and data:  # flip a byte
            data[min(pos, len(data) - 1)] = rng.randrange(256)
        elif op == 1:  # insert protocol-ish bytes
            data[pos:pos] = rng.choice([
                b"*", b"$", b"\r\n", b"-1", b"0", b"99999999", b"+", b":", b"\x00", b'"', b"'",
                b"*3000000000\r\n", b"$-1\r\n", b"*1\r\n", b"%1\r\n", b"%1\r\n*1\r\n", b"~2\r\n",
                b"|1\r\n", b">1\r\n", b"#t\r\n", b"_\r\n", b",1.5\r\n", b"(1\r\n", b"=5\r\ntxt:a\r\n",
                b"!3\r\nERR\r\n", b"-ERR x\r\n", b"+OK\r\n",
            ])
        elif op == 2:  # delete a run
            del data[pos : pos + rng.randint(1, 8)]
        elif op == 3:  # truncate
            del data[pos:]
        elif op == 4:  # duplicate a slice
            data[pos:pos] = data[max(0, pos - 10) : pos]
        else:  # change a length digit
            digits = [i for i, b in enumerate(data) if 48 <= b <= 57]
            if digits:
                data[rng.choice(digits)] = rng.choice(b"0123456789")
    return bytes(data)


# Complete RESP3 values of every type, to stand where a bulk argument should be.
TYPED_ELEMENTS = [
    b"+OK\r\n", b"-ERR x\r\n", b":1\r\n", b"_\r\n", b"#t\r\n", b",1.5\r\n", b"(12\r\n",
    b"=5\r\ntxt:a\r\n", b"!3\r\nERR\r\n", b"*1\r\n$1\r\na\r\n", b"~1\r\n$1\r\na\r\n",
    b">1\r\n$1\r\na\r\n", b"%1\r\n$1\r\na\r\n$1\r\nb\r\n", b"%1\r\n*1\r\n$1\r\na\r\n$1\r\nb\r\n",
    b"|1\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n", b"$-1\r\n", b"*-1\r\n", b"*0\r\n",
]


def typed_command(rng: random.Random) -> bytes:
    """A multibulk whose elements are sometimes not bulk strings (hiredis accepts them)."""
    args = random_command(rng)
    out = [b"*%d\r\n" % len(args)]
    for arg in args:
        if rng.random() < 0.3:
            out.append(rng.choice(TYPED_ELEMENTS))
        else:
            out.append(b"$%d\r\n%s\r\n" % (len(arg), arg))
    return b"".join(out)


def random_payload(rng: random.Random) -> bytes:
    kind = rng.randrange(6)
    if kind == 5:
        return b"".join(typed_command(rng) for _ in range(rng.randint(1, 4)))
    if kind == 0:
        return bytes(rng.randrange(256) for _ in range(rng.randint(1, 200)))
    commands = b"".join(encode_command(*random_command(rng)) for _ in range(rng.randint(1, 8)))
    if kind == 1:
        return commands  # well-formed, random arguments
    if kind == 2:
        return mutate(commands, rng)
    if kind == 3:  # inline commands, sometimes with quotes
        line = b" ".join(rng.choice([a, b'"' + a + b'"', b"'" + a + b"'"])
                         for a in random_command(rng) if b"\r" not in a and b"\n" not in a)
        return mutate(line + b"\r\n", rng) if rng.random() < 0.5 else line + b"\r\n"
    return rng.choice([b"*", b"$", b"\r\n", b"*1\r\n", b"$4\r\n", b"PING", b" ", b"\x00"]) * rng.randint(1, 500)


def run_case(port: int, data: bytes, rng: random.Random) -> bytes:
    """Send `data` on a fresh connection, maybe in pieces, then half-close and read all.

    The server answers what it can, then closes on EOF (or earlier, on a protocol
    error), so every byte is processed before the next case starts.
    """
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        pieces = [data]
        if len(data) > 1 and rng.random() < 0.5:  # dribble the payload in random pieces
            cut = sorted(rng.sample(range(1, len(data)), min(len(data) - 1, rng.randint(1, 5))))
            pieces = [data[a:b] for a, b in zip([0, *cut], [*cut, len(data)], strict=True)]
        try:
            for piece in pieces:
                sock.sendall(piece)
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass  # closed early by a protocol error: fine
        received = b""
        while True:
            try:
                chunk = sock.recv(1 << 16)
            except ConnectionResetError:
                return received
            if not chunk:
                return received
            received += chunk


@pytest.fixture(scope="module")
def victim():
    handle = servers.start_rillet()
    yield handle
    handle.stop()


def test_fuzz_keeps_serving_other_clients(victim):
    rng = random.Random(SEED)
    canary = Wire(victim.port, timeout=10)
    started = time.monotonic()
    cases = replies = 0
    try:
        while cases < MAX_CASES and time.monotonic() - started < MAX_SECONDS:
            replies += len(run_case(victim.port, random_payload(rng), rng)) > 0
            cases += 1
            if cases % 25 == 0:
                assert canary.call("PING") == b"+PONG\r\n", f"after {cases} cases"
                assert canary.call("ECHO", "still here") == b"$10\r\nstill here\r\n"
        assert victim.alive()
        with Wire(victim.port) as fresh:
            assert fresh.call("PING") == b"+PONG\r\n"
            assert fresh.call("SET", "after-fuzz", "ok") == b"+OK\r\n"
            assert fresh.call("GET", "after-fuzz") == b"$2\r\nok\r\n"
        assert canary.call("PING") == b"+PONG\r\n"
        stats = canary.call("INFO", "stats").decode()
    finally:
        canary.close()
    processed = int(stats.split("total_commands_processed:")[1].split("\r")[0])
    assert processed > cases  # the fuzz reached the command handlers, not just the parser
    assert cases >= 100
    with open(os.path.join(victim.dir, "server.log"), encoding="utf-8", errors="replace") as f:
        log = f.read()
    assert "internal error" not in log and "Traceback" not in log, log[-3000:]
