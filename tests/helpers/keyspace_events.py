"""Record the keyspace notifications each command causes, on any server.

A subscriber PSUBSCRIBEs `__key*@*__:*` (plus a sentinel channel); after every
command the recorder publishes to the sentinel, so the events read before the
sentinel are exactly that command's, in order. Used to compare rillet and
Redis 8.2.3 event streams command by command.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from tests.helpers.wire import Wire, encode_command

SENTINEL = b"__sentinel__"
Event = tuple[bytes, bytes]  # (channel, message)


def parse_push(frame: bytes) -> list[bytes]:
    """The bulk strings of a flat pub/sub frame (`pmessage`, `message`...)."""
    out = []
    lines = frame.split(b"\r\n")
    i = 1
    while i < len(lines):
        if lines[i].startswith(b"$"):
            out.append(lines[i + 1])
            i += 2
        else:
            out.append(lines[i])
            i += 1
    return out


class Recorder:
    """A command connection, a subscribed one and a publisher on one server."""

    def __init__(self, port: int, flags: str = "KEA") -> None:
        self.port = port
        self.conn = Wire(port)
        self.sub = Wire(port)
        self.pub = Wire(port)  # its own connection: `conn` may be inside MULTI
        self.saved = parse_push(self.conn.call("CONFIG", "GET", "notify-keyspace-events"))[-1]
        assert self.conn.call("CONFIG", "SET", "notify-keyspace-events", flags) == b"+OK\r\n"
        self.sub.send_raw(encode_command("PSUBSCRIBE", "__key*@*__:*", SENTINEL))
        self.sub.read_reply()
        self.sub.read_reply()

    def drain(self) -> list[Event]:
        """The events published since the last drain, up to a fresh sentinel."""
        self.pub.call("PUBLISH", SENTINEL, "-")
        seen: list[Event] = []
        while True:
            parts = parse_push(self.sub.read_reply())
            assert parts[0] == b"pmessage", parts
            if parts[2] == SENTINEL:
                return seen
            seen.append((parts[2], parts[3]))

    def run(self, commands: Iterable[Sequence[bytes | str]]) -> list[tuple[list, bytes, list[Event]]]:
        """Each command with its reply and the events it caused."""
        out = []
        for argv in commands:
            reply = self.conn.call(*argv)
            out.append((list(argv), reply, self.drain()))
        return out

    def close(self) -> None:
        try:
            self.conn.call("CONFIG", "SET", "notify-keyspace-events", self.saved)
        finally:
            self.sub.close()
            self.pub.close()
            self.conn.close()


def record(port: int, commands: Iterable[Sequence[bytes | str]], setup: Sequence = (("FLUSHALL",),)
           ) -> list[tuple[list, bytes, list[Event]]]:
    rec = Recorder(port)
    try:
        for argv in setup:
            rec.conn.call(*argv)
        rec.drain()
        return rec.run(commands)
    finally:
        rec.close()


def show(events: list[Event]) -> list[str]:
    return [f"{c.decode(errors='replace')} {m.decode(errors='replace')}" for c, m in events]


if __name__ == "__main__":
    # python -m tests.helpers.keyspace_events PORT 'CMD a b' 'CMD ...': a quick look.
    import shlex
    import sys

    cmds = [shlex.split(line) for line in sys.argv[2:]]
    for argv, reply, events in record(int(sys.argv[1]), cmds):
        print(argv, reply[:60], show(events))
