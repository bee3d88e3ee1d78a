"""One big legal command, arriving over many reads, while another client keeps talking.

A 200k-argument RPUSH and an XADD of 100k field pairs are fed to an in-process
server in uneven partial reads, with another connection's PING between every
two of them. The PINGs are answered at once (the half-read command holds no
one up), the big commands' results are whole, the parser's buffer holds no
more than about a read, and its Python per-argument step runs a bounded
number of times per read, not once per argument: the canonical arguments of a
half-read command are the compiled scan's (resp/_multibulk.pyx `bulks`), as a
small command's are.
"""

from __future__ import annotations

import random

import pytest

from rillet.resp import parser as parser_module
from rillet.server.connection import ClientConnection
from rillet.server.server import Server
from tests.helpers.transport import FakeTransport, TurnLoop
from tests.helpers.wire import encode_command as cmd

PING = cmd("PING")


@pytest.fixture
def counted(monkeypatch):
    """How often the Python parser reads a "$<length>" line (once per argument it parses)."""
    calls = [0]
    original = parser_module._string2ll

    def counting(raw: bytes) -> int | None:
        calls[0] += 1
        return original(raw)

    monkeypatch.setattr(parser_module, "_string2ll", counting)
    return calls


def _connect(server: Server) -> ClientConnection:
    conn = ClientConnection(server)
    conn.connection_made(FakeTransport())
    return conn


def _feed_with_pings(big: ClientConnection, other: ClientConnection, payload: bytes,
                     bounded: bool = True) -> int:
    """`payload` in uneven reads (a cut anywhere: inside a length line, a payload, a CRLF),
    the other client's PING answered between every two; the number of reads."""
    rng = random.Random(26)
    reads = 0
    pos = 0
    while pos < len(payload):
        size = rng.randint(1, 128 * 1024)
        big.data_received(payload[pos : pos + size])
        pos += size
        reads += 1
        slow = big.parser._slow
        # The parser holds this read and the unparsed tail of the one before (part
        # of one small argument), never the whole command: a buffer growing with
        # every read is reallocated, and copied, again and again.
        assert slow is None or not bounded or len(slow.buf) <= size + 64
        other.transport.writes.clear()
        other.data_received(PING)
        assert other.transport.writes == [b"+PONG\r\n"]
        if pos < len(payload):
            assert big.transport.writes == []  # (the big command is not whole yet)
    return reads


def _per_argument_steps_bound(reads: int, args: int) -> int:
    # The compiled scan leaves the Python step one argument per read (the one
    # cut by the read's end) plus the command's own header; without it (RILLET_PURE)
    # the Python step parses every argument.
    return args + 2 if parser_module._scan is None else 2 * reads + 2


def test_big_rpush_over_many_reads(counted):
    server = Server()
    big, other = _connect(server), _connect(server)
    elements = [b"%d" % i for i in range(200_000)]
    payload = cmd("RPUSH", "list", *elements)
    reads = _feed_with_pings(big, other, payload)
    assert reads > 20
    assert big.transport.writes == [b":200000\r\n"]
    assert counted[0] <= _per_argument_steps_bound(reads, len(elements) + 2)
    big.transport.writes.clear()
    big.data_received(cmd("LLEN", "list") + cmd("LRANGE", "list", "0", "2")
                      + cmd("LINDEX", "list", "-1") + cmd("LINDEX", "list", "123456"))
    assert b"".join(big.transport.writes) == (
        b":200000\r\n*3\r\n$1\r\n0\r\n$1\r\n1\r\n$1\r\n2\r\n$6\r\n199999\r\n$6\r\n123456\r\n")


def test_big_xadd_over_many_reads(counted):
    server = Server()
    big, other = _connect(server), _connect(server)
    fields = []
    for i in range(100_000):
        fields += (b"f%d" % i, b"v" * (i % 7))
    payload = cmd("XADD", "s", "5-1", *fields)
    reads = _feed_with_pings(big, other, payload)
    assert big.transport.writes == [b"$3\r\n5-1\r\n"]
    assert counted[0] <= _per_argument_steps_bound(reads, len(fields) + 4)
    big.transport.writes.clear()
    big.data_received(cmd("XLEN", "s") + cmd("XRANGE", "s", "-", "+"))
    entry = b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in fields)
    assert b"".join(big.transport.writes) == (
        b":1\r\n*1\r\n*2\r\n$3\r\n5-1\r\n*200000\r\n" + entry)


def test_a_big_command_cut_between_any_two_reads_parses_as_one_read():
    """Arguments Redis reads though they are not canonical (any byte after a length
    line's CR, any two after a payload) take the Python step; the rest stays compiled."""
    args = [b"RPUSH", b"k"] + [b"%d" % i for i in range(5000)]
    parts = [b"*%d\r\n" % len(args)]
    for i, arg in enumerate(args):
        line_end = b"\rx" if i % 997 == 5 else b"\r\n"
        tail = b"xy" if i % 1009 == 7 else b"\r\n"
        parts.append(b"$%d%s%s%s" % (len(arg), line_end, arg, tail))
    payload = b"".join(parts) + PING
    whole, error = parser_module.RequestParser().feed(payload)
    assert error is None
    assert whole == [args, [b"PING"]]
    rng = random.Random(7)
    for _ in range(20):
        parser = parser_module.RequestParser()
        got, pos = [], 0
        while pos < len(payload):
            size = rng.randint(1, 4000)
            commands, error = parser.feed(payload[pos : pos + size])
            assert error is None
            got += commands
            pos += size
        assert got == whole


def test_a_big_argument_is_read_into_place():
    """A value of many reads is written into its argument as it arrives, as Redis's
    big-argument read does: the parser's buffer stays about a read long and the
    value is never a buffer plus a copy of it."""
    server = Server()
    big, other = _connect(server), _connect(server)
    value = bytes(range(256)) * (8 * 1024)  # 2 MB
    # (The Python parser alone, RILLET_PURE, holds the value in its buffer until whole.)
    reads = _feed_with_pings(big, other, cmd("SET", "k", value), bounded=parser_module._scan is not None)
    assert reads > 10
    assert big.transport.writes == [b"+OK\r\n"]
    big.transport.writes.clear()
    big.data_received(cmd("GET", "k"))
    assert b"".join(big.transport.writes) == b"$2097152\r\n" + value + b"\r\n"
    parser = parser_module.RequestParser(max_query_buffer=1024 * 1024)
    # What has arrived of the argument counts against the query buffer limit.
    _, error = parser.feed(cmd("SET", "k", value)[:700_000])
    assert error is None and parser.pending_size >= 699_000
    _, error = parser.feed(b"x" * 400_000)
    assert error is not None and error.message == "" and "max query buffer" in error.log


class _PausableTransport(FakeTransport):
    def __init__(self) -> None:
        super().__init__()
        self.reading = True
        self.pauses = 0

    def pause_reading(self) -> None:
        self.reading = False
        self.pauses += 1

    def resume_reading(self) -> None:
        self.reading = True


def test_a_big_command_is_read_once_per_loop_turn():
    """Redis reads a client once per event-loop turn: while a big command is half read,
    each read pauses the client's reading until the next turn, so the other clients'
    reads come between. Small commands, and a small one cut by a read, never pause."""
    server = Server()
    server.loop = loop = TurnLoop()
    try:
        conn = ClientConnection(server)
        conn.connection_made(_PausableTransport())
        transport = conn.transport
        small = cmd("SET", "k", "v") * 50
        conn.data_received(small + small[:7])
        conn.data_received(small[7:])
        assert transport.pauses == 0
        payload = cmd("RPUSH", "list", *[b"%d" % i for i in range(100_000)])
        reads = 0
        for pos in range(0, len(payload), 64 * 1024):
            assert transport.reading  # (a paused transport delivers nothing)
            conn.data_received(payload[pos : pos + 64 * 1024])
            reads += 1
            loop.end_turn()
        assert transport.reading
        # Every read once the half-read command held more than YIELD_PENDING.
        assert reads - 6 <= transport.pauses < reads
        assert transport.writes[-1] == b":100000\r\n"
    finally:
        server.loop = None


def test_over_a_socket_the_big_commands_reads_pause_and_resume(rillet_server):
    """The same through uvloop: a big command sent in parts with PINGs between, then one
    sent whole (read in many reads, each yielding the loop turn) and a PING behind it."""
    from tests.helpers.wire import Wire

    with Wire(rillet_server.port) as big, Wire(rillet_server.port) as other:
        payload = cmd("RPUSH", "big:list", *[b"%d" % i for i in range(200_000)])
        step = len(payload) // 8 + 1
        for pos in range(0, len(payload), step):
            big.send_raw(payload[pos : pos + step])
            assert other.call("PING") == b"+PONG\r\n"
        assert big.read_reply() == b":200000\r\n"
        fields = [b"%d" % (i // 2) for i in range(200_000)]
        big.send_raw(cmd("XADD", "big:stream", "1-1", *fields))
        assert other.call("PING") == b"+PONG\r\n"
        assert big.read_reply() == b"$3\r\n1-1\r\n"
        assert big.call("LLEN", "big:list") == b":200000\r\n"
        assert big.call("LINDEX", "big:list", "-1") == b"$6\r\n199999\r\n"
        assert big.call("XLEN", "big:stream") == b":1\r\n"
        entry = big.call("XRANGE", "big:stream", "-", "+")
        assert entry.startswith(b"*1\r\n*2\r\n$3\r\n1-1\r\n*200000\r\n$1\r\n0\r\n$1\r\n0\r\n")
        assert entry.endswith(b"$5\r\n99999\r\n$5\r\n99999\r\n")
        assert big.call("DEL", "big:list", "big:stream") == b":2\r\n"
