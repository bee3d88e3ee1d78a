"""Diagnostics whose replies are figures of this run: MEMORY STATS/DOCTOR/MALLOC-STATS/
PURGE/HELP, LATENCY HISTOGRAM/GRAPH and LOLWUT.

LATENCY HISTOGRAM reports the per-command histograms that `latency-tracking`
keeps (observe.py). MEMORY STATS/DOCTOR report rillet's own accounting
(memory.py, the estimate maxmemory uses), with zeros for what rillet has no
counterpart of (docs/compat.md). LOLWUT answers its version line.
"""

from __future__ import annotations

import struct

from rillet import REDIS_COMPAT_VERSION, errors
from rillet.commands import table
from rillet.commands.args import parse_int
from rillet.commands.table import command, help_reply
from rillet.errors import ReplyError
from rillet.memory import STARTUP_BYTES
from rillet.observe import histogram_cdf
from rillet.resp.types import OK, Map, Verbatim
from rillet.state import Client

# --- LATENCY HISTOGRAM / GRAPH ----------------------------------------------------------

def _histogram_entry(spec: table.CommandSpec) -> tuple[bytes, Map]:
    calls, cdf = histogram_cdf(spec)
    return spec.name.encode(), Map([(b"calls", calls), (b"histogram_usec", Map(cdf))])


@command("latency|histogram", -2, "admin noscript loading stale", group="server",
         since="7.0.0", acl="admin slow dangerous",
         complexity="O(N) where N is the number of commands with latency information being"
         " retrieved.")
def latency_histogram(ctx: Client, argv: list[bytes]) -> object:
    """LATENCY HISTOGRAM [command [command ...]]

    Returns the cumulative distribution of latencies of a subset or all commands."""
    if len(argv) == 2:
        specs = [s for s in table.counted_specs() if s.latency_histogram]
    else:
        specs = []
        for name in argv[2:]:
            spec = _lookup_full_name(name)
            if spec is None:
                continue
            # A container names its subcommands (Redis's latencySpecificCommandsFillCDF);
            # DEBUG is one command there.
            family = [table.summed(spec)] if spec.one_command else [
                spec, *table.unique_subcommands(spec)]
            specs.extend(s for s in family if s.latency_histogram and s not in specs)
    return Map([_histogram_entry(s) for s in specs])


def _lookup_full_name(name: bytes) -> table.CommandSpec | None:
    if b"|" in name:
        parent_name, sub = name.split(b"|", 1)
        parent = table.lookup(parent_name)
        if parent is None or parent.one_command:  # DEBUG's subcommands are not Redis's
            return None
        return parent.subcommands.get(sub.lower())
    return table.lookup(name)


@command("latency|graph", 3, "admin noscript loading stale", group="server", since="2.8.13",
         acl="admin slow dangerous", complexity="O(1)")
def latency_graph(ctx: Client, argv: list[bytes]) -> object:
    """LATENCY GRAPH event

    Returns a latency graph for an event."""
    # No latency monitor: no event ever has samples (Redis with the monitor off).
    raise ReplyError(errors.LATENCY_NO_SAMPLES.format(argv[2].decode("utf-8", "replace")))


# --- MEMORY -----------------------------------------------------------------------------



def _float32(value: float) -> float:
    """Redis keeps these ratios in C floats: the same digits as its replies."""
    return struct.unpack("f", struct.pack("f", value))[0]


def _client_bytes(ctx: Client) -> int:
    total = 0
    for client in ctx.server.clients.values():
        conn = client.conn
        if conn is not None:
            total += conn.output_buffer_size + conn.query_buffer_size
    return total


@command("memory|stats", 2, "", group="server", since="4.0.0", acl="slow",
         complexity="O(1)")
def memory_stats(ctx: Client, argv: list[bytes]) -> object:
    """MEMORY STATS

    Returns details about memory usage."""
    from rillet.commands.server import _rss_bytes

    memory = ctx.server.memory
    used = memory.used()
    peak = max(memory.peak, used)
    clients = _client_bytes(ctx)
    overhead = STARTUP_BYTES + clients
    keys = sum(len(db) for db in ctx.server.keyspace.dbs)
    net = used - STARTUP_BYTES
    dataset = max(0, used - overhead)
    rss = _rss_bytes()
    return Map([
        (b"peak.allocated", peak),
        (b"total.allocated", used),
        (b"startup.allocated", STARTUP_BYTES),
        (b"replication.backlog", 0),
        (b"replica.fullsync.buffer", 0),
        (b"clients.slaves", 0),
        (b"clients.normal", clients),
        (b"cluster.links", 0),
        (b"aof.buffer", 0),
        (b"lua.caches", 0),
        (b"functions.caches", 0),
        (b"script.VMs", 0),
        (b"overhead.db.hashtable.lut", 0),
        (b"overhead.db.hashtable.rehashing", 0),
        (b"overhead.total", overhead),
        (b"db.dict.rehashing.count", 0),
        (b"keys.count", keys),
        (b"keys.bytes-per-key", net // keys if keys else 0),
        (b"dataset.bytes", dataset),
        (b"dataset.percentage", _float32(dataset * 100.0 / net) if net > 0 else 0.0),
        (b"peak.percentage", _float32(used * 100.0 / peak)),
        (b"allocator.allocated", used),
        (b"allocator.active", used),
        (b"allocator.resident", rss),
        (b"allocator.muzzy", 0),
        (b"allocator-fragmentation.ratio", 1.0),
        (b"allocator-fragmentation.bytes", 0),
        (b"allocator-rss.ratio", _float32(rss / used)),
        (b"allocator-rss.bytes", rss - used),
        (b"rss-overhead.ratio", 1.0),
        (b"rss-overhead.bytes", 0),
        (b"fragmentation", _float32(rss / used)),
        (b"fragmentation.bytes", rss - used),
    ])


_DOCTOR_EMPTY = (
    b"Hi Sam, this instance is empty or is using very little memory, my issues detector can't"
    b" be used in these conditions. Please, leave for your mission on Earth and fill it with"
    b" some data. The new Sam and I will be back to our programming as soon as I finished"
    b" rebooting.\n"
)
_DOCTOR_FINE = (
    b"Hi Sam, I can't find any memory issue in your instance. I can only account for what"
    b" occurs on this base.\n"
)


@command("memory|doctor", 2, "", group="server", since="4.0.0", acl="slow",
         complexity="O(1)")
def memory_doctor(ctx: Client, argv: list[bytes]) -> object:
    """MEMORY DOCTOR

    Outputs a memory problems report."""
    # Redis's threshold: under 5 MB the instance counts as empty. rillet's estimate
    # has none of the allocator and buffer figures Redis's other checks read.
    empty = ctx.server.memory.used() < 5 * 1024 * 1024
    return Verbatim(_DOCTOR_EMPTY if empty else _DOCTOR_FINE)


@command("memory|malloc-stats", 2, "", group="server", since="4.0.0", acl="slow",
         complexity="Depends on how much memory is allocated, could be slow")
def memory_malloc_stats(ctx: Client, argv: list[bytes]) -> object:
    """MEMORY MALLOC-STATS

    Returns the allocator statistics."""
    # Redis built with libc malloc answers this line; rillet's allocator is Python's.
    return Verbatim(b"Stats not supported for the current allocator")


@command("memory|purge", 2, "", group="server", since="4.0.0", acl="slow",
         complexity="Depends on how much memory is allocated, could be slow")
def memory_purge(ctx: Client, argv: list[bytes]) -> object:
    """MEMORY PURGE

    Asks the allocator to release memory."""
    return OK


@command("memory|help", 2, "loading stale", group="server", since="4.0.0", acl="slow",
         complexity="O(1)")
def memory_help(ctx: Client, argv: list[bytes]) -> object:
    """MEMORY HELP

    Returns helpful text about the different subcommands."""
    return help_reply(
        "MEMORY",
        b"DOCTOR",
        b"    Return memory problems reports.",
        b"MALLOC-STATS",
        b"    Return internal statistics report from the memory allocator.",
        b"PURGE",
        b"    Attempt to purge dirty pages for reclamation by the allocator.",
        b"STATS",
        b"    Return information about the memory usage of the server.",
        b"USAGE <key> [SAMPLES <count>]",
        b"    Return memory in bytes used by <key> and its value. Nested values are",
        b"    sampled up to <count> times (default: 5, 0 means sample all).",
    )


# --- LOLWUT -------------------------------------------------------------------------------


@command("lolwut", -1, "readonly fast", group="server", since="5.0.0", acl="read fast")
def lolwut(ctx: Client, argv: list[bytes]) -> object:
    """LOLWUT [VERSION version]

    Displays computer art and the Redis version"""
    if len(argv) >= 3 and argv[1].upper() == b"VERSION":
        parse_int(argv[2])
    # Redis draws art for versions 5, 6 and 8 (random each call) before its version
    # line; rillet answers the version line alone, which is what Redis prints for
    # the versions without art (docs/compat.md).
    return Verbatim(b"Redis ver. " + REDIS_COMPAT_VERSION.encode() + b"\n")


table.container_docs("memory", "4.0.0", "A container for memory diagnostics commands.", "server")
table.container_docs("latency", "2.8.13", "A container for latency diagnostics commands.", "server")
