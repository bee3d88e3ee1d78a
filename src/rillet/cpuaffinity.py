"""Redis's CPU lists: `server-cpulist`, `bio-cpulist`, `aof-rewrite-cpulist` and
`bgsave-cpulist` pin the server, its AOF thread and its snapshot children
(BGSAVE and full syncs; BGREWRITEAOF) to CPUs, as Redis's setcpuaffinity.c does.

A list is CPUs and ranges separated by commas, a range with an optional stride:
`0-7:2` is 0,2,4,6, and `1,10-11` is 1,10,11. The lists are read at start-up
(they are immutable), so a malformed one stops the server there with Redis's
message; a CPU the machine does not have is ignored by the kernel's call as
Redis ignores its failure.
"""

from __future__ import annotations

import os
import re

INVALID = "setcpuaffinity: invalid cpu list"
PARAMS = ("server-cpulist", "bio-cpulist", "aof-rewrite-cpulist", "bgsave-cpulist")

_ITEM = re.compile(r"(\d+)(?:-(\d+)(?::(\d+))?)?\Z")  # a stride only after a range


def parse_cpulist(text: str) -> set[int]:
    """The CPUs `text` names (ValueError for anything setcpuaffinity.c refuses)."""
    cpus: set[int] = set()
    for item in text.split(","):
        match = _ITEM.match(item)
        if match is None:
            raise ValueError(INVALID)
        low = int(match[1])
        high = int(match[2]) if match[2] is not None else low
        step = int(match[3]) if match[3] is not None else 1
        if high < low or step < 1:
            raise ValueError(INVALID)
        cpus.update(range(low, high + 1, step))
    return cpus


def pin(cpulist: str) -> None:
    """Pin the calling thread (in a fresh process: the process) to `cpulist`; "" leaves it."""
    if not cpulist:
        return
    try:
        os.sched_setaffinity(0, parse_cpulist(cpulist))
    except OSError:
        pass  # (no such CPU here: Redis does not check sched_setaffinity's result either)
