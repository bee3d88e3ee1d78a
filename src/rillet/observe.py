"""Watching the server run: MONITOR's feed and the slow log (no I/O).

MONITOR lines are Redis's replicationFeedMonitors format: the time, the db
and the client's address (`lua` for a script's commands), then every
argument quoted as sdscatrepr quotes it. The slow log keeps the most recent
`slowlog-max-len` commands slower than `slowlog-log-slower-than` microseconds;
rillet times one call in 16 of each command (Dispatcher.call), so only the
timed calls can enter it.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass

_ESCAPES = {0x5C: b"\\\\", 0x22: b'\\"', 0x0A: b"\\n", 0x0D: b"\\r", 0x09: b"\\t", 0x07: b"\\a",
            0x08: b"\\b"}

# Redis's SLOWLOG_ENTRY_MAX_ARGC and SLOWLOG_ENTRY_MAX_STRING.
SLOWLOG_MAX_ARGC = 32
SLOWLOG_MAX_STRING = 128


def repr_arg(raw: bytes) -> bytes:
    """sdscatrepr: a quoted string, non-printable bytes as \\xHH."""
    out = bytearray(b'"')
    for byte in raw:
        escaped = _ESCAPES.get(byte)
        if escaped is not None:
            out += escaped
        elif 0x20 <= byte < 0x7F:
            out.append(byte)
        else:
            out += b"\\x%02x" % byte
    out += b'"'
    return bytes(out)


def monitor_line(db_index: int, origin: str, argv: list[bytes], now: float | None = None) -> bytes:
    """One MONITOR line, framed as a status reply."""
    now = time.time() if now is None else now
    seconds = int(now)
    micros = int((now - seconds) * 1_000_000)
    args = b" ".join(repr_arg(a) for a in argv)
    return b"+%d.%06d [%d %s] %s\r\n" % (seconds, micros, db_index, origin.encode(), args)


@dataclass
class SlowEntry:
    id: int
    timestamp: int
    duration_us: int
    argv: list[bytes]
    addr: bytes
    name: bytes


class Slowlog:
    def __init__(self) -> None:
        self.entries: deque[SlowEntry] = deque()
        self.next_id = 0

    def add(self, argv: list[bytes], duration_us: int, addr: str, name: bytes, max_len: int) -> None:
        shown = argv[:SLOWLOG_MAX_ARGC]
        if len(argv) > SLOWLOG_MAX_ARGC:
            shown = argv[:SLOWLOG_MAX_ARGC - 1] + [
                b"... (%d more arguments)" % (len(argv) - SLOWLOG_MAX_ARGC + 1)]
        shown = [a if len(a) <= SLOWLOG_MAX_STRING else
                 a[:SLOWLOG_MAX_STRING] + b"... (%d more bytes)" % (len(a) - SLOWLOG_MAX_STRING)
                 for a in shown]
        self.entries.appendleft(SlowEntry(self.next_id, int(time.time()), duration_us, shown,
                                          addr.encode(), name))
        self.next_id += 1
        while len(self.entries) > max(max_len, 0):
            self.entries.pop()

    def reset(self) -> None:
        self.entries.clear()
