"""Watching the server run: MONITOR's feed and the slow log (no I/O).

MONITOR lines are Redis's replicationFeedMonitors format: the time, the db
and the client's address (`lua` for a script's commands), then every
argument quoted as sdscatrepr quotes it. The slow log keeps the most recent
`slowlog-max-len` commands slower than `slowlog-log-slower-than` microseconds
(Dispatcher.timed; a blocked command once, when it is unblocked).
"""

from __future__ import annotations

import resource
import sys
import time
from bisect import bisect_left
from collections import deque
from dataclasses import dataclass
from functools import partial
from itertools import accumulate
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
# Redis records every call's duration (whole microseconds, recorded in ns) in an HDR
# histogram of 1 ns .. 1 s with two significant digits, and rillet keeps the same one:
# 256 sub-buckets in the first bucket, 128 more per power of two, 3,072 counters in all
# (hdr_init(1, 1e9, 2)). INFO latencystats reads its percentiles as Redis's
# hdr_value_at_percentile does; LATENCY HISTOGRAM walks it in power-of-two steps from
# 1024 ns (Redis's log iterator). Only the timed calls (one in TIMING_SAMPLE for fast
# commands, Dispatcher.timed) are recorded, so the counts are a sample, scaled to the
# call count when reported.

_SUB_HALF_MAGNITUDE = 7  # log2 of the 128 sub-buckets each further bucket adds
_SUB_MASK = 255
HISTOGRAM_COUNTERS = 24 * 128  # (buckets needed for 1e9 with 256 sub-buckets + 1) * 128
_MIN_NS = 1
_MAX_NS = 1_000_000_000
# LATENCY HISTOGRAM's steps: the highest value HDR holds as equivalent to 1024 << k, and
# the usec Redis prints for it.
_STEPS = 21  # 1024 << 20 is the last step under Redis's 1 s maximum
_STEP_NS = [(1024 << k) + (1 << (k + 3)) - 1 for k in range(_STEPS)]
_STEP_US = [ns // 1000 for ns in _STEP_NS]


def hdr_index(ns: int) -> int:
    """counts_index_for: the counter that holds `ns`."""
    bucket = max((ns | _SUB_MASK).bit_length() - 8, 0)
    return ((bucket + 1) << _SUB_HALF_MAGNITUDE) + (ns >> bucket) - 128


def hdr_range(index: int) -> tuple[int, int]:
    """(lowest, highest) equivalent values of the values counter `index` holds."""
    bucket = (index >> _SUB_HALF_MAGNITUDE) - 1
    sub = (index & 127) + 128
    if bucket < 0:
        bucket, sub = 0, sub - 128
    return sub << bucket, (sub << bucket) + (1 << bucket) - 1


def _index_of_us(us: int) -> int:
    # Redis times in whole microseconds and records them in ns, clamped to its range.
    return hdr_index(min(max(us * 1000, _MIN_NS), _MAX_NS))


# The counter of each duration under 4096 us, looked up rather than computed.
SMALL_US = [_index_of_us(us) for us in range(4096)]


def _step_end(top: int) -> int:
    """One past the last counter whose values are all at most `top` (the counter that
    holds `top`, unless its range goes past it)."""
    index = hdr_index(top)
    return index + 1 if hdr_range(index)[1] <= top else index


# The counters each LATENCY HISTOGRAM step reports (those whose values its bound holds,
# past the previous step's): consecutive ranges, as values grow with the index.
# (Found from each bound's own counter: a search of all 3,072 cost every start ~40 ms.)
_STEP_ENDS = [_step_end(top) for top in _STEP_NS[:-1]] + [HISTOGRAM_COUNTERS]


class Timed(Protocol):
    """What the latency histograms read of a command (commands/table.py's CommandSpec)."""

    calls: int
    latency_histogram: list[int] | None


def record_latency(spec: Timed, elapsed_ns: int) -> None:
    """One timed call of `spec` (a CommandSpec) into its histogram."""
    us = elapsed_ns // 1000
    histogram = spec.latency_histogram
    if histogram is None:
        histogram = spec.latency_histogram = [0] * HISTOGRAM_COUNTERS
    histogram[SMALL_US[us] if us < 4096 else _index_of_us(us)] += 1


def histogram_cdf(spec: Timed) -> tuple[int, list[tuple[int, int]]]:
    """(calls, [(step usec, cumulative calls)]) for the steps that hold any, as Redis's
    fillCommandCDF reports them; the sample's counts are scaled to the command's calls."""
    histogram = spec.latency_histogram or []
    samples = sum(histogram)
    calls = max(spec.calls, samples)
    out = []
    seen = start = 0
    for k, end in enumerate(_STEP_ENDS):
        count = sum(histogram[start:end])
        start = end
        if count:
            seen += count
            out.append((_STEP_US[k], seen * calls // samples))
    return calls, out


def values_at_percentiles(histogram: list[int], percentiles: list[float]) -> list[int]:
    """hdr_value_at_percentile (ns) of each percentile: the highest value equivalent to
    the one at that percentile of the recorded values (the lowest, for the 0th)."""
    cumulative = list(accumulate(histogram))  # (in C: INFO reads every command's)
    out = []
    for percentile in percentiles:
        wanted = max(int(min(percentile, 100.0) / 100 * cumulative[-1] + 0.5), 1)
        index = min(bisect_left(cumulative, wanted), len(cumulative) - 1)
        out.append(hdr_range(index)[0 if percentile == 0.0 else 1])
    return out


def reset_latency(spec: Timed) -> None:
    spec.latency_histogram = None


class Instantaneous:
    """INFO's instantaneous_* figures, as Redis's trackInstantaneousMetric: a rate per
    second measured every 100 ms or more, averaged over the last 16 measurements;
    or, for a `per` figure, a counter's growth per unit of another's (the event
    loop's busy time per cycle)."""

    SAMPLES = 16
    PERIOD_MS = 100

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """CONFIG RESETSTAT: the figures start again from nothing, as Redis's."""
        self.last_ms = 0
        self.last: dict[str, int] = {}
        self.rates: dict[str, list[float]] = {}

    def sample(self, now_ms: int, counters: dict[str, int],
               per: dict[str, tuple[str, str]] | None = None) -> None:
        """`per`: name -> (counter, base counter), both among `counters`."""
        elapsed = now_ms - self.last_ms
        if self.last_ms and elapsed < self.PERIOD_MS:
            return
        if self.last_ms and elapsed > 0:
            for name, value in counters.items():
                self._add(name, max(0, value - self.last.get(name, value)) * 1000 / elapsed)
            for name, (counter, base) in (per or {}).items():
                grown = counters[base] - self.last.get(base, counters[base])
                added = counters[counter] - self.last.get(counter, counters[counter])
                self._add(name, added // grown if grown > 0 else 0)
        self.last_ms = now_ms
        self.last = dict(counters)

    def _add(self, name: str, value: float) -> None:
        rates = self.rates.setdefault(name, [])
        rates.append(value)
        del rates[:-self.SAMPLES]

    def rate(self, name: str) -> float:
        rates = self.rates.get(name)
        return sum(rates) / len(rates) if rates else 0.0


# --- the event loop (INFO stats' eventloop_*, INFO debug) --------------------------------
#
# Redis times each cycle of its loop (afterSleep to beforeSleep). rillet's loop is
# uvloop's, which has no hook around a cycle, and a hook per read would cost the
# compiled read path a call: instead a cycle is counted where the loop's thread
# gives up the CPU to wait (its voluntary context switches: one per poll that
# sleeps, the cron's ticks included), or, when the poll finds work without
# sleeping (a client that answers at once), per read and cron tick, whichever
# counts more; the cycles' duration is that thread's CPU time.


def loop_thread_usage() -> tuple[int, int]:
    """(voluntary context switches, CPU microseconds) of the calling thread, which
    must be the loop's (the cron and INFO run there)."""
    usage = resource.getrusage(_RUSAGE_THREAD)
    return usage.ru_nvcsw, int((usage.ru_utime + usage.ru_stime) * 1_000_000)


_RUSAGE_THREAD = getattr(resource, "RUSAGE_THREAD", resource.RUSAGE_SELF)


class EventLoop:
    """Redis's duration_stats and el_cmd_cnt_max, since the start or CONFIG RESETSTAT.

    The per-cycle maxima are read from the cron's view: `duration_max` is the
    longest of the cron's own runs, the delays of its timer (a cycle that holds
    the loop delays it) and the mean cycle between two ticks; `cmd_max` the most
    commands per cycle between two ticks. Both are lower bounds of Redis's."""

    def __init__(self) -> None:
        self.reset(0)

    def reset(self, aof_us: int) -> None:
        self.cycles_base, self.busy_base = loop_thread_usage()
        self.aof_base = aof_us
        self.cron_us = 0
        self.ticks = 0
        self.duration_max = 0
        self.cmd_max = 0
        # (cycles, busy us, commands) at the last tick; counted from 0 here, as
        # RESETSTAT zeroes the commands' counts too.
        self._last = (0, 0, 0)

    def totals(self, reads: int) -> tuple[int, int]:
        """(cycles, their busy microseconds) so far; `reads`: the clients' reads since."""
        waits, busy = loop_thread_usage()
        return max(waits - self.cycles_base, reads + self.ticks), max(busy - self.busy_base, 0)

    def cron_ran(self, elapsed_us: int, late_us: int) -> None:
        """One cron tick took `elapsed_us`; its timer fired `late_us` after it was due."""
        self.ticks += 1
        self.cron_us += elapsed_us
        self.duration_max = max(self.duration_max, elapsed_us, late_us)

    def sample(self, commands: int, reads: int) -> None:
        """A cron tick's look at the cycles since the last one (`commands`: run so far)."""
        cycles, busy = self.totals(reads)
        last = self._last
        if cycles > last[0]:
            grown = cycles - last[0]
            self.duration_max = max(self.duration_max, (busy - last[1]) // grown)
            self.cmd_max = max(self.cmd_max, -(-(commands - last[2]) // grown))
        self._last = (cycles, busy, commands)


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
