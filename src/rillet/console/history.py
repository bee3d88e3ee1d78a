"""Throughput over the last few minutes, for the page's sparklines.

Sampled on the listener's timer (every `PERIOD_MS`), so a page opened now already
shows the recent past: commands per second for the server, entries added per
second for each stream. A stream's series starts when it is first seen and goes
when it does.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

PERIOD_MS = 2000
POINTS = 90  # three minutes at PERIOD_MS


class History:
    def __init__(self, points: int = POINTS) -> None:
        self.points = points
        self.last_ms: int | None = None
        self._commands: int | None = None
        self.ops: deque[float] = deque(maxlen=points)
        self._added: dict[tuple[int, bytes], int] = {}
        self.streams: dict[tuple[int, bytes], deque[float]] = {}

    def sample(self, now_ms: int, commands: int,
               streams: Iterable[tuple[tuple[int, bytes], int]]) -> None:
        """One point: the total commands processed and each stream's entries-added."""
        last = self.last_ms
        seconds = (now_ms - last) / 1000 if last is not None else 0
        if seconds > 0 and self._commands is not None:
            self.ops.append(max(0, commands - self._commands) / seconds)
        added: dict[tuple[int, bytes], int] = {}
        for name, entries_added in streams:
            added[name] = entries_added
            before = self._added.get(name)
            if before is None or seconds <= 0:
                continue
            series = self.streams.get(name)
            if series is None:
                series = self.streams[name] = deque(maxlen=self.points)
            series.append(max(0, entries_added - before) / seconds)
        for name in self.streams.keys() - added.keys():
            del self.streams[name]
        self._added = added
        self._commands = commands
        self.last_ms = now_ms
