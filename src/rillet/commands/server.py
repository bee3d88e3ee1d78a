"""Server commands: INFO, CONFIG, COMMAND, DBSIZE, FLUSHDB/FLUSHALL, TIME, SHUTDOWN, FUNCTION."""

from __future__ import annotations

import contextlib
import functools
import os
import resource
import sys
import time
from typing import Any

from rillet import REDIS_COMPAT_VERSION, __version__, errors
from rillet.commands import table
from rillet.commands.keyfinders import DESTINATION
from rillet.commands.modules import module_info_lines
from rillet.commands.redis_tips import TIPS
from rillet.commands.syntax import arguments as syntax_arguments
from rillet.commands.table import CommandSpec, command, help_reply, unique_subcommands
from rillet.config import PARAMS, ConfigError, Param, render_double
from rillet.engine.eviction import lru_clock
from rillet.errors import ReplyError
from rillet.glob import glob_match
from rillet.memory import STARTUP_BYTES
from rillet.observe import values_at_percentiles
from rillet.persistence import fork
from rillet.resp.types import NO_REPLY, OK, Map, SetReply, SimpleString, Verbatim
from rillet.state import BlockedClient, Client, ServerState

# --- INFO -------------------------------------------------------------------------


def _rss_bytes() -> int:
    try:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


# The interpreter's own memory (its heap, rillet's modules), which used_memory does
# not count (docs/compat.md): the RSS once the commands are loaded, before any data.
# mem_fragmentation_ratio leaves it out of the RSS as used_memory does, so the ratio
# says what Redis's does (RSS per byte of data, ~1-1.5 under load), not the
# interpreter's size (x40 empty).
_INTERPRETER_RSS = max(_rss_bytes() - STARTUP_BYTES, 0)


def _section_server(state: ServerState) -> list[tuple[str, object]]:
    import platform  # (its import parses the libc and the interpreter: not at every start)

    uptime = state.info_uptime()
    return [
        ("redis_version", REDIS_COMPAT_VERSION),
        ("rillet_version", __version__),
        ("redis_git_sha1", "00000000"),
        ("redis_git_dirty", 0),
        ("redis_build_id", "0"),
        ("redis_mode", "standalone" if state.cluster is None else "cluster"),
        ("os", f"{platform.system()} {platform.release()} {platform.machine()}"),
        ("arch_bits", 64),
        ("monotonic_clock", "POSIX clock_gettime"),
        ("multiplexing_api", "epoll"),
        ("atomicvar_api", "c11-builtin"),
        # Redis prints 0.0.0 when it was not built by GCC; rillet was not built by one.
        ("gcc_version", "0.0.0"),
        ("python_version", platform.python_version()),
        ("process_id", os.getpid()),
        ("process_supervised", state.config["supervised"]),
        ("run_id", state.run_id),
        ("tcp_port", state.config["port"]),
        ("server_time_usec", time.time_ns() // 1000),
        ("uptime_in_seconds", uptime),
        ("uptime_in_days", uptime // 86400),
        ("hz", state.config["hz"]),
        ("configured_hz", state.config["hz"]),
        ("lru_clock", lru_clock(state.clock.now_ms())),
        ("executable", sys.argv[0] if sys.argv else ""),
        ("config_file", state.config.path),
        ("io_threads_active", 0),
        *_listeners(state),
    ]


def _listeners(state: ServerState) -> list[tuple[str, object]]:
    """Redis's listener<N> lines: tcp, then unix, then tls, each where configured."""
    config = state.config
    binds = "".join(f"bind={addr}," for addr in str(config["bind"]).split())
    found = []
    if config["port"]:
        found.append(f"name=tcp,{binds}port={config['port']}")
    if config["unixsocket"]:
        found.append(f"name=unix,bind={config['unixsocket']}")
    if config["tls-port"]:
        found.append(f"name=tls,{binds}port={config['tls-port']}")
    return [(f"listener{i}", text) for i, text in enumerate(found)]


def _section_threads(state: ServerState) -> list[tuple[str, object]]:
    """Redis 8's per-I/O-thread line, as with io-threads 1: the main thread has every
    client and does every read and write."""
    stats = state.stats
    clients = sum(1 for c in state.clients.values() if c.conn is not None)
    return [("io_thread_0", f"clients={clients},reads={stats.total_reads_processed},"
                            f"writes={stats.total_writes_processed}")]


def _section_clients(state: ServerState) -> list[tuple[str, object]]:
    return [
        # As Redis: replicas attached to us (flag S) are not counted.
        ("connected_clients", sum(1 for c in state.clients.values() if "S" not in c.flags)),
        ("cluster_connections", 0),
        ("maxclients", state.config["maxclients"]),
        # The largest buffers among the clients connected now.
        ("client_recent_max_input_buffer", max(
            (c.conn.query_buffer_size for c in state.clients.values() if c.conn), default=0)),
        ("client_recent_max_output_buffer", max(
            (c.conn.output_buffer_size for c in state.clients.values() if c.conn), default=0)),
        ("blocked_clients", state.blocked_count()),
        ("tracking_clients", state.tracking.clients),
        ("pubsub_clients", sum(1 for c in state.clients.values()
                               if c.pubsub is not None and c.pubsub.total())),
        ("watching_clients", sum(1 for c in state.clients.values() if c.watched)),
        # Blocked clients with a deadline (Redis's timeout table).
        ("clients_in_timeout_table", sum(1 for c in state.clients.values()
                                         if c.blocked is not None and c.blocked.deadline_ms)),
        ("total_watched_keys", len(state.watched_keys)),
        ("total_blocking_keys", len(state.blocking)),
        ("total_blocking_keys_on_nokey", sum(
            1 for queue in state.blocking.values() if any(map(_unblocks_on_nokey, queue)))),
    ]


def _unblocks_on_nokey(entry: BlockedClient) -> bool:
    """A client that the key's deletion unblocks (Redis's unblock_on_nokey: XREADGROUP)."""
    return entry.on_key_deleted is not None or entry.argv[0].lower() == b"xreadgroup"


def _section_memory(state: ServerState) -> list[tuple[str, object]]:
    # used_memory is the estimate maxmemory compares with (memory.py, docs/compat.md);
    # the process's real footprint is used_memory_rss.
    memory = state.memory
    used = memory.used()
    rss = _rss_bytes()
    resident = max(rss - _INTERPRETER_RSS, 0)
    limit = int(state.config["maxmemory"])
    peak = max(memory.peak, used)
    dataset = used - STARTUP_BYTES
    system = _total_system_memory()
    lua = _lua_figures(state)
    backlog = dict(_provided(state, "replication")).get("repl_backlog_histlen", 0)
    clients = [c for c in state.clients.values() if c.conn is not None]
    replica_bytes = sum(conn.output_buffer_size for c in clients
                        if "S" in c.flags and (conn := c.conn) is not None)
    normal_bytes = sum(conn.output_buffer_size + conn.query_buffer_size
                       for c in clients if "S" not in c.flags and (conn := c.conn) is not None)
    return [
        ("used_memory", used),
        ("used_memory_human", _human(used)),
        ("used_memory_rss", rss),
        ("used_memory_rss_human", _human(rss)),
        ("used_memory_peak", peak),
        ("used_memory_peak_human", _human(peak)),
        ("used_memory_peak_time", int(memory.peak_time or state.stats.start_time)),
        ("used_memory_peak_perc", f"{used * 100 / peak:.2f}%"),
        # rillet's estimate counts keys and the startup figure (memory.py): the rest is overhead.
        ("used_memory_overhead", STARTUP_BYTES),
        ("used_memory_startup", STARTUP_BYTES),
        ("used_memory_dataset", dataset),
        # Redis: dataset / (used - startup), which is all of it here.
        ("used_memory_dataset_perc", "100.00%" if dataset > 0 else "0.00%"),
        # Python's allocator has no jemalloc split: allocated and active are the
        # estimate, resident the RSS past the interpreter's own (mem_fragmentation_*'s
        # figure), and that interpreter baseline the RSS overhead.
        ("allocator_allocated", used),
        ("allocator_active", used),
        ("allocator_resident", resident),
        ("allocator_muzzy", 0),
        ("total_system_memory", system),
        ("total_system_memory_human", _human(system)),
        *lua,
        ("maxmemory", limit),
        ("maxmemory_human", _human(limit)),
        ("maxmemory_policy", state.config["maxmemory-policy"]),
        ("allocator_frag_ratio", "1.00"),
        ("allocator_frag_bytes", 0),
        ("allocator_rss_ratio", f"{resident / used:.2f}"),
        ("allocator_rss_bytes", resident - used),
        ("rss_overhead_ratio", f"{rss / max(resident, 1):.2f}"),
        ("rss_overhead_bytes", rss - resident),
        ("mem_fragmentation_ratio", f"{resident / used:.2f}"),
        ("mem_fragmentation_bytes", resident - used),
        ("mem_not_counted_for_evict", 0),
        ("mem_replication_backlog", backlog),
        ("mem_total_replication_buffers", replica_bytes + backlog),
        ("mem_replica_full_sync_buffer", 0),
        ("mem_clients_slaves", replica_bytes),
        ("mem_clients_normal", normal_bytes),
        ("mem_cluster_links", 0),
        ("mem_aof_buffer", 0),
        ("mem_allocator", "pymalloc"),
        ("mem_overhead_db_hashtable_rehashing", 0),
        ("active_defrag_running", 0),
        ("lazyfree_pending_objects", 0),
        ("lazyfreed_objects", state.stats.lazyfreed_objects),
    ]


def _total_system_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (OSError, ValueError):
        return 0


def _lua_figures(state: ServerState) -> list[tuple[str, object]]:
    """The Lua fields of INFO memory: one Lua runtime serves EVAL and functions in rillet,
    so its heap is reported as the eval VM's and the functions VM's share is 0."""
    engine = state.scripting
    vm = engine.memory_bytes() if engine is not None else 0
    scripts = len(engine.scripts) if engine is not None else 0
    libraries = engine.functions.libraries if engine is not None else {}
    functions = sum(len(lib.functions) for lib in libraries.values())
    script_bytes = sum(len(s.body) for s in engine.scripts.values()) if engine is not None else 0
    function_bytes = sum(len(lib.code) for lib in libraries.values())
    return [
        ("used_memory_lua", vm),
        ("used_memory_vm_eval", vm),
        ("used_memory_lua_human", _human(vm)),
        ("used_memory_scripts_eval", script_bytes),
        ("number_of_cached_scripts", scripts),
        ("number_of_functions", functions),
        ("number_of_libraries", len(libraries)),
        ("used_memory_vm_functions", 0),
        ("used_memory_vm_total", vm),
        ("used_memory_vm_total_human", _human(vm)),
        ("used_memory_functions", function_bytes),
        ("used_memory_scripts", script_bytes + function_bytes),
        ("used_memory_scripts_human", _human(script_bytes + function_bytes)),
    ]


def _human(n: float) -> str:
    for unit in ("B", "K", "M", "G", "T"):
        if n < 1024 or unit == "T":
            return f"{n:.2f}{unit}" if unit != "B" else f"{int(n)}B"
        n /= 1024
    return str(n)


def _section_persistence(state: ServerState) -> list[tuple[str, object]]:
    provider = state.info_providers.get("persistence")
    if provider is not None:
        return provider()
    return [
        ("loading", 1 if state.loading else 0),
        ("rdb_changes_since_last_save", state.dirty),
        ("rdb_bgsave_in_progress", 0),
        ("rdb_last_save_time", int(state.stats.start_time)),
        ("rdb_last_bgsave_status", "ok"),
        ("aof_enabled", 1 if state.config["appendonly"] else 0),
        ("aof_rewrite_in_progress", 0),
        ("aof_last_write_status", "ok"),
    ]


def total_calls() -> int:
    # Counted per command spec on the hot path; summed only when INFO asks.
    return sum(one.calls for spec in table.COMMANDS.values()
               for one in (spec, *unique_subcommands(spec)))


def sample_instantaneous(state: ServerState) -> None:
    """A cron hook (server/server.py): one measurement of the instantaneous_* rates,
    and of the event loop's cycles since the last tick."""
    s = state.stats
    calls = total_calls()
    cycles, busy_us = state.event_loop.totals(s.total_reads_processed)
    state.event_loop.sample(calls, s.total_reads_processed)
    state.instant.sample(state.clock.now_ms(), {
        "ops": calls, "input": s.net_input_bytes, "output": s.net_output_bytes,
        "repl_input": s.net_repl_input_bytes, "repl_output": s.net_repl_output_bytes,
        "el_cycles": cycles, "el_busy": busy_us}, per={"el_duration": ("el_busy", "el_cycles")})


def _commands_usec() -> int:
    """eventloop_duration_cmd_sum: the commands' time, as INFO commandstats sums it."""
    return sum(spec.usec for spec in table.counted_specs())


def _aof_flush_us(state: ServerState) -> int:
    persistence = state.persistence
    return persistence.aof.flush_ns // 1000 if persistence is not None else 0


def _section_stats(state: ServerState) -> list[tuple[str, object]]:
    s = state.stats
    instant = state.instant
    pubsub = state.pubsub
    cycles, busy_us = state.event_loop.totals(s.total_reads_processed)
    return [
        ("total_connections_received", s.connections_received),
        ("total_commands_processed", total_calls()),
        ("instantaneous_ops_per_sec", int(instant.rate("ops"))),
        ("total_net_input_bytes", s.net_input_bytes),
        ("total_net_output_bytes", s.net_output_bytes),
        ("total_net_repl_input_bytes", s.net_repl_input_bytes),
        ("total_net_repl_output_bytes", s.net_repl_output_bytes),
        ("instantaneous_input_kbps", f"{instant.rate('input') / 1024:.2f}"),
        ("instantaneous_output_kbps", f"{instant.rate('output') / 1024:.2f}"),
        ("instantaneous_input_repl_kbps", f"{instant.rate('repl_input') / 1024:.2f}"),
        ("instantaneous_output_repl_kbps", f"{instant.rate('repl_output') / 1024:.2f}"),
        ("rejected_connections", s.rejected_connections),
        *_provided(state, "replication_stats"),
        # No hash-field expiry cycle nor time-capped expire cycle to report (Redis's 0s).
        ("expired_subkeys", 0),
        ("expired_keys", s.expired_keys),
        ("expired_stale_perc", "0.00"),
        ("expired_time_cap_reached_count", 0),
        ("expire_cycle_cpu_milliseconds", 0),
        ("evicted_keys", s.evicted_keys),
        ("evicted_clients", 0),
        ("evicted_scripts", 0),
        *state.memory.exceeded_times_ms(),
        ("keyspace_hits", s.keyspace_hits),
        ("keyspace_misses", s.keyspace_misses),
        ("pubsub_channels", len(pubsub.channels)),
        ("pubsub_patterns", len(pubsub.patterns)),
        ("pubsubshard_channels", len(pubsub.shard)),
        ("latest_fork_usec", fork.latest_usec),
        ("total_forks", fork.total),
        ("migrate_cached_sockets", 0),
        ("slave_expires_tracked_keys",
         len(state.replication.own_expiries.keys) if state.replication is not None else 0),
        # No active defragmentation in rillet (activedefrag is accepted, docs/compat.md).
        ("active_defrag_hits", 0),
        ("active_defrag_misses", 0),
        ("active_defrag_key_hits", 0),
        ("active_defrag_key_misses", 0),
        ("total_active_defrag_time", 0),
        ("current_active_defrag_time", 0),
        *state.tracking.info_stats(),
        # Redis's order: these two come after the error counters.
        ("unexpected_error_replies", s.unexpected_error_replies),
        ("total_error_replies", s.total_error_replies),
        ("dump_payload_sanitizations", 0),
        ("total_reads_processed", s.total_reads_processed),
        ("total_writes_processed", s.total_writes_processed),
        # One thread does all I/O (Redis's figures with io-threads 1).
        ("io_threaded_reads_processed", 0),
        ("io_threaded_writes_processed", 0),
        ("io_threaded_total_prefetch_batches", 0),
        ("io_threaded_total_prefetch_entries", 0),
        ("client_query_buffer_limit_disconnections", s.query_buffer_limit_disconnections),
        ("client_output_buffer_limit_disconnections", s.output_buffer_limit_disconnections),
        ("reply_buffer_shrinks", 0),
        ("reply_buffer_expands", 0),
        ("eventloop_cycles", cycles),
        ("eventloop_duration_sum", busy_us),
        ("eventloop_duration_cmd_sum", _commands_usec()),
        ("instantaneous_eventloop_cycles_per_sec", int(instant.rate("el_cycles"))),
        ("instantaneous_eventloop_duration_usec", int(instant.rate("el_duration"))),
        *((f"acl_access_denied_{kind}", n) for kind, n in state.acl.denied.items()),
        # rillet's own (docs/streams-policies.md), after every field Redis has.
        ("stream_retention_trimmed", s.stream_retention_trimmed),
        ("stream_deadlettered", s.stream_deadlettered),
    ]


def _section_debug(state: ServerState) -> list[tuple[str, object]]:
    """INFO debug (only when named). Lua's heap is not apart in an allocator of its own:
    its allocated and active bytes are the heap's, resident 0 as Redis's jemalloc arena
    reports it."""
    loop = state.event_loop
    engine = state.scripting
    lua = engine.memory_bytes() if engine is not None else 0
    return [
        ("eventloop_duration_aof_sum", max(_aof_flush_us(state) - loop.aof_base, 0)),
        ("eventloop_duration_cron_sum", loop.cron_us),
        ("eventloop_duration_max", loop.duration_max),
        ("eventloop_cmd_per_cycle_max", loop.cmd_max),
        ("allocator_allocated_lua", lua),
        ("allocator_active_lua", lua),
        ("allocator_resident_lua", 0),
        ("allocator_frag_bytes_lua", 0),
    ]


def _provided(state: ServerState, name: str) -> list[tuple[str, Any]]:
    provider = state.info_providers.get(name)
    return provider() if provider is not None else []


def _section_replication(state: ServerState) -> list[tuple[str, object]]:
    provider = state.info_providers.get("replication")
    if provider is not None:
        return provider()
    return [
        ("role", "master"),
        ("connected_slaves", 0),
        ("master_failover_state", "no-failover"),
        ("master_replid", state.run_id),
        ("master_repl_offset", 0),
    ]


def _section_cpu(state: ServerState) -> list[tuple[str, object]]:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    # INFO runs on the event loop's thread, the one that runs commands.
    thread = resource.getrusage(getattr(resource, "RUSAGE_THREAD", resource.RUSAGE_SELF))
    return [
        ("used_cpu_sys", f"{usage.ru_stime:.6f}"),
        ("used_cpu_user", f"{usage.ru_utime:.6f}"),
        ("used_cpu_sys_children", f"{children.ru_stime:.6f}"),
        ("used_cpu_user_children", f"{children.ru_utime:.6f}"),
        ("used_cpu_sys_main_thread", f"{thread.ru_stime:.6f}"),
        ("used_cpu_user_main_thread", f"{thread.ru_utime:.6f}"),
    ]


def _section_commandstats(state: ServerState) -> list[tuple[str, object]]:
    out: list[tuple[str, object]] = []
    for spec in table.counted_specs():
        if spec.calls or spec.rejected_calls or spec.failed_calls:
            per = spec.usec / spec.calls if spec.calls else 0
            out.append((
                f"cmdstat_{spec.name}",
                f"calls={spec.calls},usec={spec.usec},usec_per_call={per:.2f},"
                f"rejected_calls={spec.rejected_calls},failed_calls={spec.failed_calls}",
            ))
    return out


def _section_errorstats(state: ServerState) -> list[tuple[str, object]]:
    return [(f"errorstat_{code}", f"count={n}") for code, n in sorted(state.stats.errors.items())]


def _section_latencystats(state: ServerState) -> list[tuple[str, object]]:
    """Each command's latency-tracking-info-percentiles, read from its histogram as
    Redis reads its HDR histogram (observe.py)."""
    percentiles = state.config["latency-tracking-info-percentiles"]
    if not percentiles:
        return []
    out: list[tuple[str, object]] = []
    for spec in table.counted_specs():
        histogram = spec.latency_histogram
        if not histogram:
            continue
        values = values_at_percentiles(histogram, percentiles)
        parts = [f"p{render_double(q)}={ns / 1000:.3f}" for q, ns in zip(percentiles, values, strict=True)]
        out.append((f"latency_percentiles_usec_{spec.name}", ",".join(parts)))
    return out


def _section_keyspace(state: ServerState) -> list[tuple[str, object]]:
    out: list[tuple[str, object]] = []
    for db in state.keyspace.dbs:
        if len(db):
            out.append((f"db{db.index}",
                        f"keys={len(db)},expires={len(db.expires)},avg_ttl={db.avg_ttl},subexpiry=0"))
    return out


# INFO keysizes: each type's size measure, in Redis's order.
_KEYSIZES = ((b"string", "strings_sizes"), (b"list", "lists_items"), (b"set", "sets_items"),
             (b"zset", "zsets_items"), (b"hash", "hashes_items"))
_SIZE_UNITS = ("", "K", "M", "G", "T", "P", "E")


def _power_label(power: int) -> str:
    """2**power as Redis's keysizes prints it: 1, 2, ..., 512, 1K, 2K, ..., 1M."""
    return f"{1 << (power % 10)}{_SIZE_UNITS[power // 10]}"


def _section_keysizes(state: ServerState) -> list[tuple[str, object]]:
    """Per db and type, how many keys have a size in each power-of-two bin (0 apart).

    Redis keeps these counts as keys change; rillet counts when asked, so the
    section is not in INFO's default set here (docs/compat.md)."""
    out: list[tuple[str, object]] = []
    for db in state.keyspace.dbs:
        if not len(db):
            continue
        bins: dict[bytes, dict[int, int]] = {kind: {} for kind, _ in _KEYSIZES}
        value: Any  # a key's value: its kind is read from its class
        for value in db.data.values():
            kind = b"string" if value.__class__ is bytes else getattr(value, "TYPE_NAME", b"")
            counts = bins.get(kind)
            if counts is None:
                continue
            power = len(value).bit_length() - 1  # -1: size 0
            counts[power] = counts.get(power, 0) + 1
        for kind, name in _KEYSIZES:
            counts = bins[kind]
            if counts:
                text = ",".join(("0" if p < 0 else _power_label(p)) + f"={n}"
                                for p, n in sorted(counts.items()))
                out.append((f"db{db.index}_distrib_{name}", text))
    return out


def _section_modules(state: ServerState) -> list[tuple[str, object]]:
    return module_info_lines()


def _section_cluster(state: ServerState) -> list[tuple[str, object]]:
    return [("cluster_enabled", 0 if state.cluster is None else 1)]


# In Redis's output order; INFO renders requested sections in this order
# whatever order they were asked in.
SECTIONS = {
    "server": _section_server,
    "clients": _section_clients,
    "memory": _section_memory,
    "persistence": _section_persistence,
    "threads": _section_threads,
    "stats": _section_stats,
    "replication": _section_replication,
    "cpu": _section_cpu,
    "modules": _section_modules,
    "commandstats": _section_commandstats,
    "errorstats": _section_errorstats,
    "latencystats": _section_latencystats,
    "cluster": _section_cluster,
    "keyspace": _section_keyspace,
    "keysizes": _section_keysizes,
    "debug": _section_debug,
}
# Sections printed only when named (not by `all` or `everything`), as Redis's debug.
_NAMED_ONLY = frozenset({"debug"})
_HEADERS = {"cpu": "CPU"}
DEFAULT_SECTIONS = ["server", "clients", "memory", "persistence", "threads", "stats",
                    "replication", "cpu", "modules", "errorstats", "cluster", "keyspace"]


def render_info(state: ServerState, wanted: list[str]) -> str:
    names: set[str] = set()
    for word in wanted or ["default"]:
        word = word.lower()
        if word in ("all", "everything"):
            names.update(name for name in SECTIONS if name not in _NAMED_ONLY)
        elif word == "default":
            names.update(DEFAULT_SECTIONS)
        elif word in SECTIONS:
            names.add(word)
    parts = []
    for name, section in SECTIONS.items():
        if name in names:
            lines = [f"# {_HEADERS.get(name, name.capitalize())}"]
            lines += [f"{k}:{v}" for k, v in section(state)]
            parts.append("\r\n".join(lines) + "\r\n")
    return "\r\n".join(parts)


@command("info", -1, "loading stale", group="server", since="1.0.0", acl="slow dangerous")
def info(ctx: Client, argv: list[bytes]) -> object:
    """INFO [section [section ...]]"""
    text = render_info(ctx.server, [a.decode("utf-8", "replace") for a in argv[1:]])
    return Verbatim(text.encode())


# --- CONFIG -------------------------------------------------------------------------

@command("config|get", -3, "admin noscript loading stale", group="server", since="2.0.0")
def config_get(ctx: Client, argv: list[bytes]) -> object:
    """CONFIG GET parameter [parameter ...]"""
    config = ctx.server.config
    # Keyed by lower-case name, as Redis's case-insensitive `matches` dict. A
    # plain name is echoed as typed; a glob matches case-insensitively.
    found: dict[bytes, tuple[bytes, Param]] = {}
    for pattern in argv[2:]:
        if not any(ch in pattern for ch in b"[*?"):
            key = pattern.lower()
            param = config.params.get(key.decode("utf-8", "replace"))
            if param is not None and key not in found:
                found[key] = (pattern, param)
            continue
        for name, param in config.params.items():
            raw = name.encode()
            if raw not in found and not param.hidden and glob_match(pattern, raw, nocase=True):
                found[raw] = (raw, param)
    return Map([
        (shown, param.render(config.values[param.name]).encode())
        for shown, param in found.values()
    ])


_SENSITIVE_CONFIGS = frozenset(name.encode() for param in PARAMS if param.sensitive
                               for name in (param.name, *param.aliases))


def _config_set_secrets(argv: list[bytes]) -> list[int]:
    return [i + 1 for i in range(2, len(argv) - 1, 2) if argv[i].lower() in _SENSITIVE_CONFIGS]


@command("config|set", -4, "admin noscript loading stale", group="server", since="2.0.0",
         redact=_config_set_secrets)
def config_set(ctx: Client, argv: list[bytes]) -> object:
    """CONFIG SET parameter value [parameter value ...]"""
    if len(argv) % 2:
        raise ReplyError(errors.SYNTAX)
    # surrogateescape: a name Redis does not know is echoed in the error as sent.
    pairs = [(argv[i].decode("utf-8", "surrogateescape"),
              argv[i + 1].decode("utf-8", "surrogateescape"))
             for i in range(2, len(argv), 2)]
    try:
        ctx.server.config.set_many(
            pairs, allow_protected=ctx.protected_action_allowed("enable-protected-configs"))
    except KeyError as missing:
        name = missing.args[0].encode("utf-8", "surrogateescape")
        raise ReplyError(errors.CONFIG_UNKNOWN_PARAM.format(errors.c_text(name))) from None
    except ConfigError as error:
        raise ReplyError(errors.CONFIG_SET_FAILED.format(error.name, error)) from None
    return OK


@command("config|resetstat", 2, "admin noscript loading stale", group="server", since="2.0.0")
def config_resetstat(ctx: Client, argv: list[bytes]) -> object:
    """CONFIG RESETSTAT"""
    state = ctx.server
    blocked = state.stats.blocked_clients
    start = state.stats.start_time
    state.stats = type(state.stats)()
    state.stats.blocked_clients = blocked
    state.stats.start_time = start
    state.event_loop.reset(_aof_flush_us(state))
    state.instant.reset()
    table.reset_call_stats()
    return OK


@command("config|rewrite", 2, "admin noscript loading stale", group="server", since="2.8.0")
def config_rewrite(ctx: Client, argv: list[bytes]) -> object:
    """CONFIG REWRITE"""
    path = ctx.server.config.path
    if not path:
        raise ReplyError(errors.CONFIG_NO_FILE)
    try:
        with open(path, encoding="utf-8") as handle:
            old = handle.read()
    except FileNotFoundError:
        old = ""
    except OSError as error:
        raise ReplyError(errors.CONFIG_REWRITE_FAILED.format(error.strerror)) from None
    # A new file beside the old one, then rename: a crash leaves one or the other whole.
    temp = f"{path}.rewrite-{os.getpid()}"
    try:
        with open(temp, "w", encoding="utf-8") as handle:
            config = ctx.server.config
            users = None if config["aclfile"] else ctx.server.acl.dump().splitlines()
            handle.write(config.rewritten(old, users))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except OSError as error:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise ReplyError(errors.CONFIG_REWRITE_FAILED.format(error.strerror)) from None
    return OK


@command("config|help", 2, "loading stale", group="server", since="5.0.0")
def config_help(ctx: Client, argv: list[bytes]) -> object:
    """CONFIG HELP"""
    return help_reply(
        "CONFIG",
        b"GET <pattern>", b"    Return parameters matching the glob-like <pattern> and their values.",
        b"SET <directive> <value>", b"    Set the configuration <directive> to <value>.",
        b"RESETSTAT", b"    Reset statistics reported by the INFO command.",
        b"REWRITE", b"    Rewrite the configuration file.",
    )


# --- keyspace-wide --------------------------------------------------------------------

@command("dbsize", 1, "readonly fast", group="server", since="1.0.0", acl="keyspace read fast")
def dbsize(ctx: Client, argv: list[bytes]) -> object:
    """DBSIZE"""
    return len(ctx.db)


def _flush_mode(argv: list[bytes], first: int) -> None:
    if len(argv) > first + 1 or (len(argv) == first + 1 and argv[first].upper() not in (b"ASYNC", b"SYNC")):
        raise ReplyError(errors.SYNTAX)


def _lazy_flush(ctx: Client, keys: int) -> None:
    """INFO's lazyfreed_objects counts a flush's keys: Redis 8 frees them in its
    background thread (emptyDbAsync), a SYNC flush too (the client waits for it),
    except inside MULTI or a script. rillet frees them at once."""
    scripting = ctx.server.scripting
    if not ctx.in_exec and (scripting is None or scripting.current is None):
        ctx.server.stats.lazyfreed_objects += keys


def flush_data(state: ServerState, db_index: int | None) -> None:
    """Empty one database (or all), telling WATCH and blocked clients first."""
    state.db_flushed(db_index)
    state.tracking.flushed()
    if db_index is None:
        state.keyspace.flush_all()
        if state.replication is not None:
            # A writable replica forgets its own TTLs (Redis's emptyData): a key the
            # master makes again under that name is the master's to expire.
            state.replication.own_expiries.clear()
    else:
        state.keyspace[db_index].flush()


@command("flushdb", -1, "write", group="server", since="1.0.0",
         acl="keyspace write slow dangerous")
def flushdb(ctx: Client, argv: list[bytes]) -> object:
    """FLUSHDB [ASYNC | SYNC]"""
    _flush_mode(argv, 1)
    changes = len(ctx.db)
    _lazy_flush(ctx, changes)
    flush_data(ctx.server, ctx.db.index)
    ctx.changed(changes + 1)
    ctx.propagate([b"FLUSHDB"])
    return OK


@command("flushall", -1, "write", group="server", since="1.0.0",
         acl="keyspace write slow dangerous")
def flushall(ctx: Client, argv: list[bytes]) -> object:
    """FLUSHALL [ASYNC | SYNC]"""
    _flush_mode(argv, 1)
    state = ctx.server
    changes = sum(len(db) for db in state.keyspace.dbs)
    _lazy_flush(ctx, changes)
    flush_data(state, None)
    persistence = state.persistence
    if persistence is not None and state.config["save"] and not state.loading:
        # Redis writes the (now empty) snapshot right away when save points are set,
        # so a restart cannot bring the flushed data back from an older one.
        try:
            persistence.save()
        except ReplyError:
            pass
    ctx.changed(changes + 1)
    ctx.propagate([b"FLUSHALL"])
    return OK


@command("time", 1, "loading stale fast", group="server", since="2.6.0")
def time_(ctx: Client, argv: list[bytes]) -> object:
    """TIME"""
    now_us = ctx.clock.now_us()
    return [b"%d" % (now_us // 1_000_000), b"%d" % (now_us % 1_000_000)]


@command("shutdown", -1, "admin noscript loading stale no_multi allow_busy", group="server",
         since="1.0.0")
def shutdown(ctx: Client, argv: list[bytes]) -> object:
    """SHUTDOWN [NOSAVE | SAVE] [NOW] [FORCE] [ABORT]"""
    options = {a.upper() for a in argv[1:]}
    if not options <= {b"NOSAVE", b"SAVE", b"NOW", b"FORCE", b"ABORT"} or (
        b"NOSAVE" in options and b"SAVE" in options
    ):
        raise ReplyError(errors.SYNTAX)
    if b"ABORT" in options:
        if len(options) > 1:
            raise ReplyError(errors.SYNTAX)
        # (Only a shutdown waiting for replicas can be aborted: others are done at once.)
        replication = ctx.server.replication
        if replication is not None and replication.shutdown.abort():
            return OK
        raise ReplyError(errors.SHUTDOWN_NOT_IN_PROGRESS)
    ctx.server.shutdown_requested = {"save": b"SAVE" in options, "nosave": b"NOSAVE" in options,
                                     "now": b"NOW" in options}
    ctx.closing = True
    return NO_REPLY


@command("lastsave", 1, "loading stale fast", group="server", since="1.0.0",
         acl="admin fast dangerous")
def lastsave(ctx: Client, argv: list[bytes]) -> object:
    """LASTSAVE"""
    persistence = ctx.server.persistence
    if persistence is not None:
        return persistence.lastsave
    return int(ctx.server.stats.start_time)


# --- COMMAND ------------------------------------------------------------------------

# Redis's order of command flags (server.h CMD_*), as COMMAND INFO lists them.
_FLAG_ORDER = (
    "write", "readonly", "denyoom", "module", "admin", "pubsub", "noscript", "blocking",
    "loading", "stale", "skip_monitor", "skip_slowlog", "asking", "fast", "no_auth",
    "may_replicate", "sentinel", "only_sentinel", "no_mandatory_keys", "protected",
    "module_no_cluster", "no_async_loading", "no_multi", "movablekeys", "allow_busy",
)


# Flags Redis keeps from COMMAND INFO ("Hidden on purpose" in addReplyCommandFlags).
_HIDDEN_FLAGS = frozenset({"may_replicate", "sentinel", "only_sentinel", "protected"})


def _flag_set(spec: CommandSpec) -> SetReply:
    known = [f for f in _FLAG_ORDER if f in spec.flags and f not in _HIDDEN_FLAGS]
    known += sorted(f for f in spec.flags if f not in _FLAG_ORDER)
    return SetReply([SimpleString(flag.encode()) for flag in known])


acl_categories = table.acl_categories


def _spec(flags: str, begin: tuple[bytes, list], find: tuple[bytes, list], notes: str = "") -> Map:
    """One key spec in COMMAND INFO's shape: (type, spec fields) of its begin_search
    and of its find_keys."""
    return Map([
        *([(b"notes", notes.encode())] if notes else []),
        (b"flags", SetReply([SimpleString(f.encode()) for f in flags.split()])),
        (b"begin_search", Map([(b"type", begin[0]), (b"spec", Map(begin[1]))])),
        (b"find_keys", Map([(b"type", find[0]), (b"spec", Map(find[1]))])),
    ])


def _index(at: int) -> tuple[bytes, list]:
    return b"index", [(b"index", at)]


def _range(last: int, step: int = 1, limit: int = 0) -> tuple[bytes, list]:
    return b"range", [(b"lastkey", last), (b"keystep", step), (b"limit", limit)]


_UNKNOWN: tuple[bytes, list] = (b"unknown", [])


def _keynum_specs(at: int, dest: bool, source: str, notes: str, step: int = 1) -> list:
    """A numkeys finder's specs (commands/keyfinders.py): the destination, then the keys."""
    specs = [_spec(DESTINATION, _index(1), _range(0))] if dest else []
    keynum = (b"keynum", [(b"keynumidx", 0), (b"firstkey", 1), (b"keystep", step)])
    return specs + [_spec(source, _index(at), keynum, notes)]


def _key_specs(spec: CommandSpec) -> list:
    """Key specs from (first, last, step) and the flags in the table, Redis's COMMAND INFO shape."""
    keynum = getattr(spec.find_keys, "keynum", None)
    if keynum is not None:
        return _keynum_specs(*keynum)
    if spec.first_key <= 0 and not spec.keyword_keys:
        return []
    flags = spec.key_spec_flags()
    if len(flags) > 1:  # one spec per key position (RENAME's source and destination)
        ranges = [(spec.first_key + n, 0, 1, f) for n, f in enumerate(flags)]
        if spec.last_key < 0:  # the last flags cover the rest (BITOP's, SINTERSTORE's sources)
            index, _, _, text = ranges[-1]
            ranges[-1] = (index, spec.last_key, spec.key_step or 1, text)
    else:
        last = spec.last_key - spec.first_key if spec.last_key >= 0 else spec.last_key
        ranges = [(spec.first_key, last, spec.key_step or 1, flags[0])]
    specs = [] if spec.first_key <= 0 else [
        _spec(text, _index(index), _range(last, step), spec.key_notes if n == 0 else "")
        for n, (index, last, step, text) in enumerate(ranges)]
    specs += [_spec(text, _UNKNOWN, _UNKNOWN, notes) for text, notes in spec.unknown_keys]
    for text, keyword, startfrom, *rest in spec.keyword_keys:
        lastkey = rest[0] if rest else 0
        limit = rest[1] if len(rest) > 1 else 0
        begin = (b"keyword", [(b"keyword", keyword.encode()), (b"startfrom", startfrom)])
        specs.append(_spec(text, begin, _range(lastkey, 1, limit)))
    return specs


def shown_subcommands(spec: CommandSpec) -> list[CommandSpec]:
    """The subcommands COMMAND INFO/DOCS/LIST show: none for a container Redis has as
    one command (DEBUG), whose subcommands are only rillet's way to dispatch it."""
    return [] if spec.one_command else unique_subcommands(spec)


def command_info(spec: CommandSpec) -> list:
    """One COMMAND INFO entry; the tips are Redis's (commands/redis_tips.py)."""
    subs = shown_subcommands(spec)
    return [
        spec.shown_name,
        spec.arity,
        _flag_set(spec),
        spec.first_key,
        spec.last_key,
        spec.key_step,
        SetReply([SimpleString(b"@" + c.encode()) for c in acl_categories(spec)]),
        SetReply([tip.encode() for tip in TIPS.get(spec.name, ())]),
        SetReply(_key_specs(spec)),
        [command_info(sub) for sub in subs] if subs else SetReply([]),
    ]


@functools.cache
def _redis_docs() -> dict[str, dict[str, object]]:
    # Imported on first use: 90 KB of text that only COMMAND DOCS reads (10-20 ms
    # of every server start otherwise).
    from rillet.commands.redis_docs import DOCS

    return DOCS


def _doc_field(field: str, value: Any) -> object:  # (a str, or the field's list)
    if field == "doc_flags":
        return SetReply([SimpleString(flag.encode()) for flag in value])
    if field == "history":
        return SetReply([[version.encode(), text.encode()] for version, text in value])
    return value.encode()


def command_docs(spec: CommandSpec) -> tuple[bytes, Map]:
    """Redis's text (commands/redis_docs.py) where Redis has the command, else the spec's;
    fields in addReplyCommandDocs's order, then `arguments` from the syntax line."""
    if spec.module:  # Redis has no docs for a module command that registered none
        return spec.shown_name, Map([(b"group", b"module"), (b"module", spec.module.encode())])
    docs = _redis_docs().get(spec.name)
    if docs is None:
        docs = {"summary": spec.summary or spec.syntax, "since": spec.since, "group": spec.group}
        if spec.complexity:
            docs["complexity"] = spec.complexity
    items: list[tuple[bytes, object]] = [
        (field.encode(), _doc_field(field, value)) for field, value in docs.items()
    ]
    if spec.handler is not None:
        args = syntax_arguments(spec.syntax, spec.name)
        if args:
            items.append((b"arguments", args))
    subs = shown_subcommands(spec)
    if subs:
        items.append((b"subcommands", Map([command_docs(sub) for sub in subs])))
    return spec.name.encode(), Map(items)


@command("command", -1, "loading stale", group="server", since="2.8.13", acl="slow connection")
def command_(ctx: Client, argv: list[bytes]) -> object:
    """COMMAND"""
    if len(argv) > 1:
        raise ReplyError(errors.unknown_subcommand(argv[1], "command"))
    return [command_info(spec) for spec in table.COMMANDS.values()]


@command("command|count", 2, "loading stale", group="server", since="2.8.13", acl="slow connection")
def command_count(ctx: Client, argv: list[bytes]) -> object:
    """COMMAND COUNT"""
    return len(table.COMMANDS)


def _resolve(name: bytes) -> CommandSpec | None:
    if b"|" in name:
        parent_name, sub = name.split(b"|", 1)
        parent = table.lookup(parent_name)
        if parent is None or parent.one_command:  # DEBUG's subcommands are not Redis's
            return None
        return parent.subcommands.get(sub.lower())
    return table.lookup(name)


@command("command|info", -2, "loading stale", group="server", since="2.8.13", acl="slow connection")
def command_info_(ctx: Client, argv: list[bytes]) -> object:
    """COMMAND INFO [command-name [command-name ...]]"""
    if len(argv) == 2:
        return [command_info(spec) for spec in table.COMMANDS.values()]
    out: list = []
    for name in argv[2:]:
        spec = _resolve(name)
        out.append(None if spec is None else command_info(spec))
    return out


@command("command|docs", -2, "loading stale", group="server", since="7.0.0", acl="slow connection")
def command_docs_(ctx: Client, argv: list[bytes]) -> object:
    """COMMAND DOCS [command-name [command-name ...]]"""
    if len(argv) == 2:
        return Map([command_docs(spec) for spec in table.COMMANDS.values()])
    items = []
    for name in argv[2:]:
        spec = _resolve(name)
        if spec is not None:
            items.append(command_docs(spec))
    return Map(items)


@command("command|list", -2, "loading stale", group="server", since="7.0.0", acl="slow connection")
def command_list(ctx: Client, argv: list[bytes]) -> object:
    """COMMAND LIST [FILTERBY <MODULE module-name | ACLCAT category | PATTERN pattern>]"""
    names = []
    for spec in table.COMMANDS.values():
        names.append(spec)
        names.extend(shown_subcommands(spec))
    if len(argv) == 2:
        return [s.shown_name for s in names]
    if len(argv) != 5 or argv[2].upper() != b"FILTERBY":
        raise ReplyError(errors.SYNTAX)
    kind, value = argv[3].upper(), argv[4]
    if kind == b"PATTERN":
        return [s.shown_name for s in names if glob_match(value, s.name.encode(), nocase=True)]
    if kind == b"ACLCAT":
        category = value.lower().decode("utf-8", "replace")
        return [s.shown_name for s in names if category in acl_categories(s)]
    if kind == b"MODULE":  # the module's name as MODULE LIST gives it, in any case
        module = value.lower().decode("utf-8", "replace")
        return [s.shown_name for s in names if s.module and s.module.lower() == module]
    raise ReplyError(errors.SYNTAX)


@command("command|getkeys", -3, "loading stale", group="server", since="2.8.13", acl="slow connection")
def command_getkeys(ctx: Client, argv: list[bytes]) -> object:
    """COMMAND GETKEYS command [arg [arg ...]]

    Checked in Redis's order: the command (a container with an unknown
    subcommand is none), whether it has keys at all, then its arity.
    """
    args = argv[2:]
    return [args[i] for i, _ in _getkeys(argv)]


def _getkeys(argv: list[bytes]) -> list[tuple[int, str]]:
    """COMMAND GETKEYS/GETKEYSANDFLAGS: the keys of argv[2:] as (index there, flags)."""
    args = argv[2:]
    spec = table.lookup(args[0])
    if spec is not None and spec.subcommands and len(args) > 1 and not spec.one_command:
        spec = spec.subcommands.get(args[1].lower())
    if spec is None:
        raise ReplyError(errors.GETKEYS_INVALID_COMMAND)
    if spec.find_keys is None and (spec.first_key <= 0 or all(
            "not_key" in flags.split() for flags in spec.key_spec_flags())):
        # Redis's doesCommandHaveKeys: SPUBLISH's channels are "not_key" specs
        raise ReplyError(errors.GETKEYS_NO_KEYS)
    if (spec.arity > 0 and spec.arity != len(args)) or len(args) < -spec.arity:
        raise ReplyError(errors.GETKEYS_WRONG_ARITY)
    flags = spec.key_spec_flags()
    if spec.find_keys is None and len(flags) > 1 and spec.first_key + len(flags) - 1 >= len(args):
        # One key spec per position (PFMERGE's destination, then its sources): Redis's
        # getKeysUsingKeySpecs finds a spec whose index is past the arguments invalid.
        raise ReplyError(errors.GETKEYS_INVALID_ARGS)
    keys = spec.keys_with_flags(args)
    if not keys and "no_mandatory_keys" not in spec.flags:  # (EVAL/FCALL with 0 keys: none)
        raise ReplyError(errors.GETKEYS_INVALID_ARGS)
    return keys


@command("command|getkeysandflags", -3, "loading stale", group="server", since="7.0.0",
         acl="slow connection",
         complexity="O(N) where N is the number of arguments to the command")
def command_getkeysandflags(ctx: Client, argv: list[bytes]) -> object:
    """COMMAND GETKEYSANDFLAGS command [arg [arg ...]]

    Extracts the key names and access flags for an arbitrary command."""
    args = argv[2:]
    return [[args[i], SetReply([SimpleString(f.encode()) for f in flags.split()])]
            for i, flags in _getkeys(argv)]


@command("command|help", 2, "loading stale", group="server", since="5.0.0", acl="slow connection")
def command_help(ctx: Client, argv: list[bytes]) -> object:
    """COMMAND HELP"""
    return help_reply(
        "COMMAND",
        b"(no subcommand)", b"    Return details about all Redis commands.",
        b"COUNT", b"    Return the total number of commands in this Redis server.",
        b"LIST", b"    Return a list of all commands in this Redis server.",
        b"INFO [<command-name> ...]", b"    Return details about multiple Redis commands.",
        b"    If no command names are given, documentation details for all",
        b"    commands are returned.",
        b"DOCS [<command-name> ...]",
        b"    Return documentation details about multiple Redis commands.",
        b"    If no command names are given, documentation details for all",
        b"    commands are returned.",
        b"GETKEYS <full-command>", b"    Return the keys from a full Redis command.",
        b"GETKEYSANDFLAGS <full-command>",
        b"    Return the keys and the access flags from a full Redis command.",
    )
