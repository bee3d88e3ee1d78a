"""Throughput over the last few minutes, for the page's sparklines.

Sampled on the listener's timer (every `PERIOD_MS`), so a page opened now already
shows the recent past: commands per second for the server, entries added per
second for each stream. A stream's series starts when it is first seen and goes
when it does.

What it costs with many streams: a sample walks the streams `SAMPLE_STREAMS` a
loop turn (`sample_steps`), and a series is an array of doubles (POINTS x 8
bytes), kept for at most `MAX_SERIES` streams, the first seen: others show no
sparkline (their figures are unaffected). Per stream otherwise: its last
entries-added count.
"""

from __future__ import annotations

from array import array
from collections import deque
from collections.abc import Generator, Iterable

PERIOD_MS = 2000
POINTS = 90  # three minutes at PERIOD_MS
SAMPLE_STREAMS = 1000  # streams a loop turn in a sample
MAX_SERIES = 10_000  # streams with a sparkline: ~8 MB at most


class History:
    def __init__(self, points: int = POINTS, max_series: int = MAX_SERIES) -> None:
        self.points = points
        self.max_series = max_series
        self.last_ms: int | None = None
        self._commands: int | None = None
        self.ops: deque[float] = deque(maxlen=points)
        self._added: dict[tuple[int, bytes], int] = {}
        self.streams: dict[tuple[int, bytes], array[float]] = {}

    def sample(self, now_ms: int, commands: int,
               streams: Iterable[tuple[tuple[int, bytes], int]]) -> None:
        """One point at once (callers without a loop)."""
        for _ in self.sample_steps(now_ms, commands, streams):
            pass

    def sample_steps(self, now_ms: int, commands: int,
                     streams: Iterable[tuple[tuple[int, bytes], int]]) -> Generator[None, None, None]:
        """One point: the total commands processed and each stream's entries-added,
        SAMPLE_STREAMS streams a step."""
        last = self.last_ms
        seconds = (now_ms - last) / 1000 if last is not None else 0
        if seconds > 0 and self._commands is not None:
            self.ops.append(max(0, commands - self._commands) / seconds)
        self._commands = commands
        self.last_ms = now_ms
        before_all, series_all = self._added, self.streams
        added: dict[tuple[int, bytes], int] = {}
        step = 0
        for name, entries_added in streams:
            step += 1
            if step == SAMPLE_STREAMS:
                step = 0
                yield
            added[name] = entries_added
            before = before_all.get(name)
            if before is None or seconds <= 0:
                continue
            series = series_all.get(name)
            if series is None:
                if len(series_all) >= self.max_series:
                    continue
                series = series_all[name] = array("d")
            series.append(max(0, entries_added - before) / seconds)
            if len(series) > self.points:
                del series[0]
        for name in series_all.keys() - added.keys():
            del series_all[name]
        self._added = added
