"""HOTKEYS (Redis 8.6): a tracking session of the keys that cost the most CPU time or
network bytes, fed by the dispatcher after each top-level command (Redis's hotkeys.c).

Simplified where Redis's own numbers cannot be had: Redis ranks keys with a CHK
top-K sketch of count*10 entries; here each key's total is kept exactly, in a
dict that drops its lower half past `_KEPT_PER_COUNT * count` keys (a key that
comes back starts again from 0). CPU time is the command's wall time in the
handler, shared evenly among its keys, as Redis shares its measured time; net
bytes are the RESP size of the request (Redis also counts the reply).
"""

from __future__ import annotations

import random
import resource

_KEPT_PER_COUNT = 100


def request_bytes(argv: list[bytes]) -> int:
    """The RESP size of a request: `*<n>\\r\\n`, then `$<len>\\r\\n<arg>\\r\\n` each."""
    size = 3 + len(str(len(argv)))
    for arg in argv:
        size += 5 + len(str(len(arg))) + len(arg)
    return size


def _cpu_times_ms() -> tuple[int, int]:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return int(usage.ru_utime * 1000), int(usage.ru_stime * 1000)


class Hotkeys:
    """One session, from HOTKEYS START to HOTKEYS RESET (STOP keeps its results)."""

    def __init__(self, now_ms: int, count: int, duration_ms: int, sample_ratio: int,
                 cpu: bool, net: bool) -> None:
        self.count = count
        self.duration_ms = duration_ms  # 0: until STOP
        self.sample_ratio = sample_ratio
        self.cpu: dict[bytes, int] | None = {} if cpu else None  # key -> microseconds
        self.net: dict[bytes, int] | None = {} if net else None  # key -> bytes
        self.start_ms = now_ms
        self.active = True
        self.time_all_us = 0
        self.net_all = 0
        self.net_total = 0  # bytes of the sampled commands (Redis's sketch total)
        self.cpu_start = _cpu_times_ms()
        self.nesting = 0  # a script's commands are counted as the script's

    def expire(self, now_ms: int) -> None:
        """DURATION elapsed: the session stops by itself (Redis checks in its cron)."""
        if self.active and self.duration_ms and now_ms - self.start_ms >= self.duration_ms:
            self.stop(self.start_ms + self.duration_ms)

    def stop(self, now_ms: int) -> None:
        self.active = False
        self.duration_ms = now_ms - self.start_ms

    def record(self, keys: list[bytes], elapsed_us: int, net_bytes: int) -> None:
        """One top-level command on `keys` took `elapsed_us` and `net_bytes`."""
        self.time_all_us += elapsed_us
        self.net_all += net_bytes
        if self.sample_ratio > 1 and random.random() >= 1.0 / self.sample_ratio:
            return
        self.net_total += net_bytes
        for table, amount in ((self.cpu, elapsed_us), (self.net, net_bytes)):
            if table is None:
                continue
            share = amount // len(keys)
            for key in keys:
                table[key] = table.get(key, 0) + share
            if len(table) > _KEPT_PER_COUNT * self.count:
                kept = sorted(table.items(), key=lambda item: -item[1])[:len(table) // 2]
                table.clear()
                table.update(kept)

    def top(self, table: dict[bytes, int]) -> list[object]:
        ranked = sorted(((-amount, key) for key, amount in table.items() if amount))
        return [x for amount, key in ranked[:self.count] for x in (key, -amount)]

    def report(self, now_ms: int) -> list[tuple[bytes, object]]:
        """HOTKEYS GET's fields, in Redis's order. Outside a cluster the selected slots
        are the node's own, all of them (clusterGetLocalSlotRanges)."""
        duration = self.duration_ms if not self.active else now_ms - self.start_ms
        out: list[tuple[bytes, object]] = [
            (b"tracking-active", int(self.active)),
            (b"sample-ratio", self.sample_ratio),
            (b"selected-slots", [[0, 16383]]),
            (b"all-commands-all-slots-us", self.time_all_us),
            (b"net-bytes-all-commands-all-slots", self.net_all),
            (b"collection-start-time-unix-ms", self.start_ms),
            (b"collection-duration-ms", duration),
        ]
        if self.cpu is not None:
            user, system = _cpu_times_ms()
            out += [(b"total-cpu-time-user-ms", user - self.cpu_start[0]),
                    (b"total-cpu-time-sys-ms", system - self.cpu_start[1])]
        if self.net is not None:
            out.append((b"total-net-bytes", self.net_total))
        if self.cpu is not None:
            out.append((b"by-cpu-time-us", self.top(self.cpu)))
        if self.net is not None:
            out.append((b"by-net-bytes", self.top(self.net)))
        return out
