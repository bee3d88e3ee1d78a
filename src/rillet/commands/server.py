"""Server commands: INFO, CONFIG, COMMAND, DBSIZE, FLUSHDB/FLUSHALL, TIME, SHUTDOWN, FUNCTION."""

from __future__ import annotations

import contextlib
import functools
import os
import platform
import resource
import sys
import time

from rillet import REDIS_COMPAT_VERSION, __version__, errors
from rillet.commands import table
from rillet.commands.modules import module_info_lines
from rillet.commands.syntax import arguments as syntax_arguments
from rillet.commands.table import CommandSpec, command, help_reply, unique_subcommands
from rillet.config import PARAMS, ConfigError, Param
from rillet.errors import ReplyError
from rillet.glob import glob_match
from rillet.memory import STARTUP_BYTES
from rillet.observe import reset_latency
from rillet.resp.types import NO_REPLY, OK, Map, SetReply, SimpleString, Verbatim
from rillet.state import Client, ServerState

# --- INFO -------------------------------------------------------------------------


def _rss_bytes() -> int:
    try:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _section_server(state: ServerState) -> list[tuple[str, object]]:
    uptime = state.info_uptime()
    return [
        ("redis_version", REDIS_COMPAT_VERSION),
        ("rillet_version", __version__),
        ("redis_git_sha1", "00000000"),
        ("redis_git_dirty", 0),
        ("redis_build_id", "0"),
        ("redis_mode", "standalone"),
        ("os", f"{platform.system()} {platform.release()} {platform.machine()}"),
        ("arch_bits", 64),
        ("multiplexing_api", "epoll"),
        ("python_version", platform.python_version()),
        ("process_id", os.getpid()),
        ("run_id", state.run_id),
        ("tcp_port", state.config["port"]),
        ("server_time_usec", time.time_ns() // 1000),
        ("uptime_in_seconds", uptime),
        ("uptime_in_days", uptime // 86400),
        ("hz", state.config["hz"]),
        ("executable", sys.argv[0] if sys.argv else ""),
        ("config_file", state.config.path),
    ]


def _section_clients(state: ServerState) -> list[tuple[str, object]]:
    return [
        # As Redis: replicas attached to us (flag S) are not counted.
        ("connected_clients", sum(1 for c in state.clients.values() if "S" not in c.flags)),
        ("maxclients", state.config["maxclients"]),
        # The largest buffers among the clients connected now.
        ("client_recent_max_input_buffer", max(
            (c.conn.query_buffer_size for c in state.clients.values() if c.conn), default=0)),
        ("client_recent_max_output_buffer", max(
            (c.conn.output_buffer_size for c in state.clients.values() if c.conn), default=0)),
        ("blocked_clients", state.blocked_count()),
        ("tracking_clients", state.tracking.clients),
        ("watching_clients", sum(1 for c in state.clients.values() if c.watched)),
        ("total_watched_keys", len(state.watched_keys)),
        ("total_blocking_keys", len(state.blocking)),
    ]


def _section_memory(state: ServerState) -> list[tuple[str, object]]:
    # used_memory is the estimate maxmemory compares with (memory.py, docs/compat.md);
    # the process's real footprint is used_memory_rss.
    memory = state.memory
    used = memory.used()
    rss = _rss_bytes()
    limit = int(state.config["maxmemory"])  # type: ignore[call-overload]
    return [
        ("used_memory", used),
        ("used_memory_human", _human(used)),
        ("used_memory_rss", rss),
        ("used_memory_rss_human", _human(rss)),
        ("used_memory_peak", memory.peak),
        ("used_memory_peak_human", _human(memory.peak)),
        ("used_memory_startup", STARTUP_BYTES),
        ("used_memory_dataset", used - STARTUP_BYTES),
        ("maxmemory", limit),
        ("maxmemory_human", _human(limit)),
        ("maxmemory_policy", state.config["maxmemory-policy"]),
        ("mem_fragmentation_ratio", f"{rss / used:.2f}"),
        ("mem_not_counted_for_evict", 0),
        ("mem_allocator", "pymalloc"),
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


def _total_calls() -> int:
    # Counted per command spec on the hot path; summed only when INFO asks.
    return sum(one.calls for spec in table.COMMANDS.values()
               for one in (spec, *unique_subcommands(spec)))


def _section_stats(state: ServerState) -> list[tuple[str, object]]:
    s = state.stats
    return [
        ("total_connections_received", s.connections_received),
        ("total_commands_processed", _total_calls()),
        ("instantaneous_ops_per_sec", 0),
        ("total_net_input_bytes", s.net_input_bytes),
        ("total_net_output_bytes", s.net_output_bytes),
        ("rejected_connections", s.rejected_connections),
        *_provided(state, "replication_stats"),
        ("expired_keys", s.expired_keys),
        ("evicted_keys", s.evicted_keys),
        ("evicted_clients", 0),
        ("evicted_scripts", 0),
        *state.memory.exceeded_times_ms(),
        ("keyspace_hits", s.keyspace_hits),
        ("keyspace_misses", s.keyspace_misses),
        ("pubsub_channels", 0),
        *state.tracking.info_stats(),
        # Redis's order: these two come after the error counters.
        ("unexpected_error_replies", s.unexpected_error_replies),
        ("total_error_replies", s.total_error_replies),
        ("client_query_buffer_limit_disconnections", s.query_buffer_limit_disconnections),
        ("client_output_buffer_limit_disconnections", s.output_buffer_limit_disconnections),
        *((f"acl_access_denied_{kind}", n) for kind, n in state.acl.denied.items()),
    ]


def _provided(state: ServerState, name: str) -> list[tuple[str, object]]:
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
    return [("used_cpu_sys", f"{usage.ru_stime:.6f}"), ("used_cpu_user", f"{usage.ru_utime:.6f}")]


def _section_commandstats(state: ServerState) -> list[tuple[str, object]]:
    out = []
    specs: list[CommandSpec] = []
    for spec in table.COMMANDS.values():
        specs.append(spec)
        specs.extend(unique_subcommands(spec))
    for spec in specs:
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


def _section_keyspace(state: ServerState) -> list[tuple[str, object]]:
    out = []
    for db in state.keyspace.dbs:
        if len(db):
            out.append((f"db{db.index}",
                        f"keys={len(db)},expires={len(db.expires)},avg_ttl=0,subexpiry=0"))
    return out


def _section_modules(state: ServerState) -> list[tuple[str, object]]:
    return module_info_lines()


def _section_cluster(state: ServerState) -> list[tuple[str, object]]:
    return [("cluster_enabled", 0)]


# In Redis's output order; INFO renders requested sections in this order
# whatever order they were asked in.
SECTIONS = {
    "server": _section_server,
    "clients": _section_clients,
    "memory": _section_memory,
    "persistence": _section_persistence,
    "stats": _section_stats,
    "replication": _section_replication,
    "cpu": _section_cpu,
    "modules": _section_modules,
    "commandstats": _section_commandstats,
    "errorstats": _section_errorstats,
    "cluster": _section_cluster,
    "keyspace": _section_keyspace,
}
_HEADERS = {"cpu": "CPU"}
DEFAULT_SECTIONS = ["server", "clients", "memory", "persistence", "stats", "replication", "cpu",
                    "modules", "errorstats", "cluster", "keyspace"]


def render_info(state: ServerState, wanted: list[str]) -> str:
    names: set[str] = set()
    for word in wanted or ["default"]:
        word = word.lower()
        if word in ("all", "everything"):
            names.update(SECTIONS)
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
            if raw not in found and glob_match(pattern, raw, nocase=True):
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
    for spec in table.COMMANDS.values():
        for one in [spec, *unique_subcommands(spec)]:
            one.calls = one.usec = one.rejected_calls = one.failed_calls = 0
            reset_latency(one)
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


def _flush(state: ServerState, db_index: int | None) -> None:
    """Empty one database (or all), telling WATCH and blocked clients first."""
    state.db_flushed(db_index)
    state.tracking.flushed()
    if db_index is None:
        state.keyspace.flush_all()
    else:
        state.keyspace[db_index].flush()


@command("flushdb", -1, "write", group="server", since="1.0.0",
         acl="keyspace write slow dangerous")
def flushdb(ctx: Client, argv: list[bytes]) -> object:
    """FLUSHDB [ASYNC | SYNC]"""
    _flush_mode(argv, 1)
    changes = len(ctx.db)
    _flush(ctx.server, ctx.db.index)
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
    _flush(state, None)
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
        raise ReplyError(errors.SHUTDOWN_NOT_IN_PROGRESS)
    ctx.server.shutdown_requested = {"save": b"SAVE" in options, "nosave": b"NOSAVE" in options}
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


def _key_specs(spec: CommandSpec) -> list:
    """Key specs from (first, last, step) and the flags in the table, Redis's COMMAND INFO shape."""
    if spec.first_key <= 0:
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
    specs = [Map([
        *([(b"notes", spec.key_notes.encode())] if spec.key_notes and n == 0 else []),
        (b"flags", SetReply([SimpleString(f.encode()) for f in text.split()])),
        (b"begin_search", Map([(b"type", b"index"), (b"spec", Map([(b"index", index)]))])),
        (b"find_keys", Map([
            (b"type", b"range"),
            (b"spec", Map([(b"lastkey", last), (b"keystep", step), (b"limit", 0)])),
        ])),
    ]) for n, (index, last, step, text) in enumerate(ranges)] + [Map([
        (b"notes", notes.encode()),
        (b"flags", SetReply([SimpleString(f.encode()) for f in text.split()])),
        (b"begin_search", Map([(b"type", b"unknown"), (b"spec", Map([]))])),
        (b"find_keys", Map([(b"type", b"unknown"), (b"spec", Map([]))])),
    ]) for text, notes in spec.unknown_keys]
    for text, keyword, startfrom, *rest in spec.keyword_keys:
        lastkey = rest[0] if rest else 0
        specs.append(Map([
            (b"flags", SetReply([SimpleString(f.encode()) for f in text.split()])),
            (b"begin_search", Map([(b"type", b"keyword"), (b"spec", Map([
                (b"keyword", keyword.encode()), (b"startfrom", startfrom)]))])),
            (b"find_keys", Map([
                (b"type", b"range"),
                (b"spec", Map([(b"lastkey", lastkey), (b"keystep", 1), (b"limit", 0)])),
            ])),
        ]))
    return specs


def command_info(spec: CommandSpec) -> list:
    subs = unique_subcommands(spec)
    return [
        spec.shown_name,
        spec.arity,
        _flag_set(spec),
        spec.first_key,
        spec.last_key,
        spec.key_step,
        SetReply([SimpleString(b"@" + c.encode()) for c in acl_categories(spec)]),
        SetReply([t.encode() for t in spec.tips]),
        SetReply(_key_specs(spec)),
        [command_info(sub) for sub in subs] if subs else SetReply([]),
    ]


@functools.cache
def _redis_docs() -> dict[str, dict[str, object]]:
    # Imported on first use: 90 KB of text that only COMMAND DOCS reads (10-20 ms
    # of every server start otherwise).
    from rillet.commands.redis_docs import DOCS

    return DOCS


def _doc_field(field: str, value: object) -> object:
    if field == "doc_flags":
        return SetReply([SimpleString(flag.encode()) for flag in value])  # type: ignore[attr-defined]
    if field == "history":
        return SetReply([[version.encode(), text.encode()] for version, text in value])  # type: ignore[attr-defined]
    return value.encode()  # type: ignore[attr-defined]


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
    subs = unique_subcommands(spec)
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
        if parent is None:
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
        names.extend(unique_subcommands(spec))
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
    if kind == b"MODULE":
        return []
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
    if spec is not None and spec.subcommands and len(args) > 1:
        spec = spec.subcommands.get(args[1].lower())
    if spec is None:
        raise ReplyError(errors.GETKEYS_INVALID_COMMAND)
    if spec.find_keys is None and spec.first_key <= 0:
        raise ReplyError(errors.GETKEYS_NO_KEYS)
    if (spec.arity > 0 and spec.arity != len(args)) or len(args) < -spec.arity:
        raise ReplyError(errors.GETKEYS_WRONG_ARITY)
    keys = spec.keys_with_flags(args)
    if not keys:
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
