"""Injected time: the engine never reads the wall clock itself.

`SystemClock` is what the server uses; `ManualClock` lets tests move time by hand
so idle times, XCLAIM min-idle and key expiry are testable without sleeping.
"""

from __future__ import annotations

import time


class Clock:
    def now_ms(self) -> int:
        raise NotImplementedError

    def now_us(self) -> int:
        raise NotImplementedError


class SystemClock(Clock):
    __slots__ = ()

    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000

    def now_us(self) -> int:
        return time.time_ns() // 1_000


class ManualClock(Clock):
    __slots__ = ("_ms",)

    def __init__(self, start_ms: int = 1_700_000_000_000) -> None:
        self._ms = start_ms

    def now_ms(self) -> int:
        return self._ms

    def now_us(self) -> int:
        return self._ms * 1000

    def advance(self, ms: int) -> None:
        self._ms += ms

    def set(self, ms: int) -> None:
        self._ms = ms
