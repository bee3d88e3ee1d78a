"""Watching the server run: MONITOR's feed and the slow log (no I/O).

MONITOR lines are Redis's replicationFeedMonitors format: the time, the db
and the client's address (`lua` for a script's commands), then every
argument quoted as sdscatrepr quotes it. The slow log keeps the most recent
`slowlog-max-len` commands slower than `slowlog-log-slower-than` microseconds
(Dispatcher.timed; a blocked command once, when it is unblocked).
"""

from __future__ import annotations

import sys
import time
from collections import deque
from dataclasses import dataclass
from functools import partial
from typing import Protocol

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


# --- timing a call for the slow log --------------------------------------------------------
#
# Every call is timed, for the slow log and the latency monitor, but a `fast` command's
# calls other than the one in TIMING_SAMPLE that feeds the histogram and commandstats
# (Dispatcher.call) are wanted only if they take `ServerState.slow_ns` or more. Two reads
# of the precise monotonic clock cost ~70 ns here (a sixth of a pipelined PING); the
# coarse one (the last tick's time) costs ~7 ns a read, and is good to within its
# resolution (clock_getres: 1-4 ms). So those calls read the coarse clock when slow_ns
# is at least COARSE_SLOW_NS, twice that resolution (Redis's default 10 ms slow log
# threshold is); below it, or with no coarse clock, they read the precise one.

# Python names no CLOCK_MONOTONIC_COARSE; Linux's is 6 (linux/time.h).
_COARSE = getattr(time, "CLOCK_MONOTONIC_COARSE", 6 if sys.platform.startswith("linux") else None)


_NEVER = (1 << 63) - 1  # above any slow_ns (at most 1 << 62)


def _coarse_slow_ns() -> int:
    try:
        return 2 * round(time.clock_getres(_COARSE) * 1e9) if _COARSE is not None else _NEVER
    except (AttributeError, OSError):
        return _NEVER


COARSE_SLOW_NS = _coarse_slow_ns()


# The coarse monotonic clock, in ns (the precise one where there is none).
coarse_ns = (partial(time.clock_gettime_ns, _COARSE) if _COARSE is not None
             else time.perf_counter_ns)


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


# --- LATENCY HISTOGRAM (Redis 7's per-command latency histograms) ------------------------
#
# Redis records every call's duration in an HDR histogram (1 us .. 1 s, two significant
# digits) and LATENCY HISTOGRAM walks it in power-of-two steps from 1024 ns. rillet keeps
# only those steps: bucket k holds the calls up to step k's upper bound, in Redis's
# reporting units. Only the timed calls (one in TIMING_SAMPLE, Dispatcher.timed) are
# recorded, so the histogram is a sample scaled to the call count when reported.

HISTOGRAM_BUCKETS = 31  # 1024 ns << 30 exceeds Redis's 1 s maximum
_MIN_NS = 1024
_MAX_NS = 1_000_000_000
# The upper bound of step k: the highest value HDR (2 significant digits) holds
# as equivalent to 1024 << k, and the usec Redis prints for it.
_STEP_NS = [(_MIN_NS << k) + (1 << (k + 3)) - 1 for k in range(HISTOGRAM_BUCKETS)]
_STEP_US = [ns // 1000 for ns in _STEP_NS]


def _bucket(us: int) -> int:
    # Redis times in whole microseconds and records them in ns, clamped to its range.
    ns = min(max(us * 1000, _MIN_NS), _MAX_NS)
    k = max(0, ((ns - 1) // _MIN_NS).bit_length())
    return k - 1 if k and ns <= _STEP_NS[k - 1] else k


def _small_buckets(limit: int) -> bytes:
    """The bucket of each duration under `limit` us, looked up rather than computed."""
    out = bytearray()
    for k, ns in enumerate(_STEP_NS):
        top = min(limit, ns // 1000 + 1)
        out += bytes([k]) * max(0, top - len(out))
    return bytes(out)


SMALL_US = _small_buckets(4096)


def bucket_top_ns(k: int) -> int:
    """The highest duration (ns) that bucket `k` holds."""
    return _STEP_NS[k]


class Timed(Protocol):
    """What the latency histograms read of a command (commands/table.py's CommandSpec)."""

    calls: int
    latency_histogram: list[int] | None


def record_latency(spec: Timed, elapsed_ns: int) -> None:
    """One timed call of `spec` (a CommandSpec) into its histogram."""
    us = elapsed_ns // 1000
    histogram = spec.latency_histogram
    if histogram is None:
        histogram = spec.latency_histogram = [0] * HISTOGRAM_BUCKETS
    histogram[SMALL_US[us] if us < 4096 else _bucket(us)] += 1


def histogram_cdf(spec: Timed) -> tuple[int, list[tuple[int, int]]]:
    """(calls, [(bucket usec, cumulative calls)]) for the buckets that hold any, as Redis
    reports them; the sample's counts are scaled to the command's call count."""
    histogram = spec.latency_histogram or []
    samples = sum(histogram)
    calls = max(spec.calls, samples)
    out = []
    seen = 0
    for k, count in enumerate(histogram):
        if count:
            seen += count
            out.append((_STEP_US[k], seen * calls // samples))
    return calls, out


def reset_latency(spec: Timed) -> None:
    spec.latency_histogram = None


class Instantaneous:
    """INFO's instantaneous_* figures, as Redis's trackInstantaneousMetric: a rate per
    second measured every 100 ms or more, averaged over the last 16 measurements."""

    SAMPLES = 16
    PERIOD_MS = 100

    def __init__(self) -> None:
        self.last_ms = 0
        self.last: dict[str, int] = {}
        self.rates: dict[str, list[float]] = {}

    def sample(self, now_ms: int, counters: dict[str, int]) -> None:
        elapsed = now_ms - self.last_ms
        if self.last_ms and elapsed < self.PERIOD_MS:
            return
        if self.last_ms and elapsed > 0:
            for name, value in counters.items():
                rates = self.rates.setdefault(name, [])
                rates.append(max(0, value - self.last.get(name, value)) * 1000 / elapsed)
                del rates[:-self.SAMPLES]
        self.last_ms = now_ms
        self.last = dict(counters)

    def rate(self, name: str) -> float:
        rates = self.rates.get(name)
        return sum(rates) / len(rates) if rates else 0.0


# --- the latency monitor (LATENCY LATEST/HISTORY/RESET/DOCTOR) ---------------------------
#
# Redis's: per event, up to 160 samples of one second each (the highest latency seen in
# that second, ms) and the all-time maximum, kept while `latency-monitor-threshold` is
# set, for the events rillet has: `command`, `fast-command` (Dispatcher.timed) and
# `expire-cycle` (the server's cron).

LATENCY_SAMPLES = 160


class LatencySeries:
    __slots__ = ("samples", "max")

    def __init__(self) -> None:
        self.samples: deque[list[int]] = deque(maxlen=LATENCY_SAMPLES)  # [second, ms]
        self.max = 0


class LatencyMonitor:
    def __init__(self) -> None:
        self.events: dict[str, LatencySeries] = {}

    def add(self, event: str, latency_ms: int, now_s: int) -> None:
        series = self.events.get(event)
        if series is None:
            series = self.events[event] = LatencySeries()
        series.max = max(series.max, latency_ms)
        samples = series.samples
        if samples and samples[-1][0] == now_s:
            samples[-1][1] = max(samples[-1][1], latency_ms)
        else:
            samples.append([now_s, latency_ms])

    def reset(self, events: list[str] | None) -> int:
        """Forget the named events (case-insensitive; all when None); how many were."""
        names = [name for name in self.events
                 if events is None or any(name.lower() == e.lower() for e in events)]
        for name in names:
            del self.events[name]
        return len(names)

    def report(self, threshold_ms: int, slower_than_us: int, hz: int, now_s: int) -> bytes:
        """LATENCY DOCTOR's text, as Redis's createLatencyReport words it."""
        if not self.events and not threshold_ms:
            return _LATENCY_DISABLED
        if not self.events:
            return _NO_SPIKES
        lines = [b"Dave, I have observed latency spikes in this Redis instance. "
                 b"You don't mind talking about it, do you Dave?\n\n"]
        advice: set[bytes] = set()
        for number, (name, series) in enumerate(self.events.items(), 1):
            values = [ms for _, ms in series.samples]
            average = sum(values) // len(values)
            deviation = sum(abs(average - ms) for ms in values) // len(values)
            period = max(now_s - min(second for second, _ in series.samples), 1)
            lines.append(b"%d. %s: %d latency spikes (average %dms, mean deviation %dms, "
                         b"period %.2f sec). Worst all time event %dms.\n" % (
                             number, name.encode(), len(values), average, deviation,
                             period / len(values), series.max))
            advice.update(_EVENT_ADVICE.get(name, ()))
        if "command" in self.events:
            if slower_than_us < 0:
                advice.add(b"slowlog_enabled")
            elif slower_than_us // 1000 > threshold_ms:
                advice.add(b"slowlog_tuning")
        if hz >= 100:
            advice.discard(b"hz")
        if not advice:
            lines.append(b"\nWhile there are latency events logged, I'm not able to suggest any "
                         b"easy fix. Please use the Redis community to get some help, providing "
                         b"this report in your help request.\n")
            return b"".join(lines)
        lines.append(b"\nI have a few advices for you:\n\n")
        for key, text in _ADVICE:
            if key in advice:
                lines.append(text.replace(b"%THRESHOLD_US%", b"%d" % (threshold_ms * 1000)))
        return b"".join(lines)


_LATENCY_DISABLED = (
    b"I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. "
    b"You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it. "
    b"If we weren't in a deep space mission I'd suggest to take a look at "
    b"https://redis.io/docs/latest/operate/oss_and_stack/management/optimization/latency-monitor.\n"
)
_NO_SPIKES = (
    b"Dave, no latency spike was observed during the lifetime of this Redis instance, not in "
    b"the slightest bit. I honestly think you ought to sit down calmly, take a stress pill, and "
    b"think things over.\n"
)
_EVENT_ADVICE = {
    "command": (b"slowlog_inspect", b"large_objects"),
    "fast-command": (b"scheduler",),
    "expire-cycle": (b"hz", b"large_objects"),
}
# In the order Redis gives them.
_ADVICE = (
    (b"slowlog_enabled",
     b"- There are latency issues with potentially slow commands you are using. Try to enable "
     b"the Slow Log Redis feature using the command 'CONFIG SET slowlog-log-slower-than "
     b"%THRESHOLD_US%'. If the Slow log is disabled Redis is not able to log slow commands "
     b"execution for you.\n"),
    (b"slowlog_tuning",
     b"- Your current Slow Log configuration only logs events that are slower than your "
     b"configured latency monitor threshold. Please use 'CONFIG SET slowlog-log-slower-than "
     b"%THRESHOLD_US%'.\n"),
    (b"slowlog_inspect",
     b"- Check your Slow Log to understand what are the commands you are running which are too "
     b"slow to execute. Please check https://redis.io/commands/slowlog for more information.\n"),
    (b"scheduler",
     b"- The system is slow to execute Redis code paths not containing system calls. This "
     b"usually means the system does not provide Redis CPU time to run for long periods. You "
     b"should try to:\n"
     b"  1) Lower the system load.\n"
     b"  2) Use a computer / VM just for Redis if you are running other software in the same "
     b"system.\n"
     b"  3) Check if you have a \"noisy neighbour\" problem.\n"
     b"  4) Check with 'redis-cli --intrinsic-latency 100' what is the intrinsic latency in "
     b"your system.\n"
     b"  5) Check if the problem is allocator-related by recompiling Redis with MALLOC=libc, if "
     b"you are using Jemalloc. However this may create fragmentation problems.\n"),
    (b"hz",
     b"- In order to make the Redis keys expiring process more incremental, try to set the 'hz' "
     b"configuration parameter to 100 using 'CONFIG SET hz 100'.\n"),
    (b"large_objects",
     b"- Deleting, expiring or evicting (because of maxmemory policy) large objects is a "
     b"blocking operation. If you have very large objects that are often deleted, expired, or "
     b"evicted, try to fragment those objects into multiple smaller objects.\n"),
)
