"""Server configuration: Redis's parameter names, defaults, parsing and validation.

One `Config` object per server. Each parameter is declared once with its kind
(bool, int, memory, enum, string, special) so that command-line flags, the
config file (redis.conf syntax), CONFIG GET and CONFIG SET all agree.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from rillet import errors
from rillet.notify import BAD_CLASS, parse_flags, render_flags
from rillet.resp.parser import split_args

log = logging.getLogger("rillet")


class ConfigError(ValueError):
    """A bad value; the message is what CONFIG SET reports after the dash."""

    def __init__(self, message: str, name: str = "") -> None:
        super().__init__(message)
        self.name = name


_UNITS = {
    "": 1, "b": 1,
    "k": 1000, "kb": 1024,
    "m": 1000**2, "mb": 1024**2,
    "g": 1000**3, "gb": 1024**3,
}


def parse_memory(text: str) -> int:
    low = text.strip().lower()
    digits = low.rstrip("kmgb")
    unit = low[len(digits):]
    if unit not in _UNITS or not digits.lstrip("-").isdigit():
        raise ConfigError("argument must be a memory value")
    return int(digits) * _UNITS[unit]


def parse_bool(text: str) -> bool:
    low = text.lower()
    if low == "yes":
        return True
    if low == "no":
        return False
    raise ConfigError("argument must be 'yes' or 'no'")


@dataclass
class Param:
    name: str
    kind: str  # bool | int | octal | memory | enum | string | save | obuf | keyspace-events
    # A value's type follows `kind` (bool, int, str, tuples, dicts): a run-time table, so
    # values are Any to the type checker and each reader knows its parameter's type.
    default: Any
    minimum: int | None = None
    maximum: int | None = None
    choices: tuple[str, ...] = ()
    immutable: bool = False
    # Redis's PROTECTED_CONFIG: settable at run time only where
    # `enable-protected-configs` allows (they name files the server writes).
    protected: bool = False
    # Redis's SENSITIVE_CONFIG: CONFIG SET's value shows as "(redacted)" in MONITOR/SLOWLOG.
    sensitive: bool = False
    aliases: tuple[str, ...] = ()
    # Accepted range is [minimum, maximum] but the value is then clamped to this
    # (Redis's hz: any int is accepted, 1..500 is used and reported).
    clamp: tuple[int, int] | None = None
    # Redis's unsigned numeric types (size_t, ...): a negative value has its own error text.
    unsigned: bool = False
    # Called with the new value after a successful CONFIG SET.
    on_change: list[Callable[[Any], None]] = field(default_factory=list)
    # kind "custom": the parameter's own parser and renderer (Redis's special configs).
    parser: Callable[[str], Any] | None = None
    renderer: Callable[[Any], str] | None = None
    # The value is several words that the directive takes as several arguments
    # (CONFIG REWRITE writes them unquoted, as Redis does).
    multiword: bool = False
    # Enum names that Redis stores as another's value and so reports under it.
    shown: dict[str, str] = field(default_factory=dict)
    # Redis's HIDDEN_CONFIG (test hooks): CONFIG GET names it, a pattern does not match it.
    hidden: bool = False

    def parse(self, text: str) -> Any:
        if self.parser is not None:
            return self.parser(text)
        if self.kind == "bool":
            return parse_bool(text)
        if self.kind in ("int", "memory", "octal"):
            try:
                if self.kind == "memory":
                    value = parse_memory(text)
                else:
                    value = int(text, 8 if self.kind == "octal" else 10)
            except (ValueError, ConfigError):
                raise ConfigError(
                    "argument must be a memory value" if self.kind == "memory"
                    else "argument couldn't be parsed into an integer"
                ) from None
            if self.kind == "memory" and value < 0:
                raise ConfigError("argument must be a memory value")
            if self.unsigned and value < 0:
                raise ConfigError("argument must be greater or equal to 0")
            if (self.minimum is not None and value < self.minimum) or (
                self.maximum is not None and value > self.maximum
            ):
                lo: object = self.minimum
                hi: object = self.maximum
                if self.kind == "octal":
                    lo, hi = f"{lo:o}", f"{hi:o}"
                raise ConfigError(f"argument must be between {lo} and {hi} inclusive")
            if self.clamp is not None:
                value = min(max(value, self.clamp[0]), self.clamp[1])
            return value
        if self.kind == "enum":
            low = text.lower()
            # Matched without case; kept in Redis's spelling (tls-auth-clients-user's "CN").
            choice = next((c for c in self.choices if c.lower() == low), None)
            if choice is None:
                raise ConfigError("argument(s) must be one of the following: "
                                  + ", ".join(self.choices))
            return self.shown.get(low, choice)
        if self.kind == "save":
            return parse_save(text)
        if self.kind == "obuf":
            return parse_output_buffer_limits(text)
        if self.kind == "keyspace-events":
            flags = parse_flags(text)
            if flags is None:
                raise ConfigError(BAD_CLASS)
            return flags
        return text

    def render(self, value: Any) -> str:
        if self.renderer is not None:
            return self.renderer(value)
        if self.kind == "bool":
            return "yes" if value else "no"
        if self.kind == "save":
            return " ".join(f"{s} {c}" for s, c in value)
        if self.kind == "obuf":
            return " ".join(f"{OBUF_SHOWN[name]} {h} {s} {secs}"
                            for name, (h, s, secs) in value.items())
        if self.kind == "octal":
            return f"{value:o}"
        if self.kind == "keyspace-events":
            return render_flags(value)
        return str(value)


def parse_save(text: str) -> list[tuple[int, int]]:
    parts = text.split()
    if len(parts) % 2:
        raise ConfigError("Invalid save parameters")
    rules = []
    for i in range(0, len(parts), 2):
        if not (parts[i].isdigit() and parts[i + 1].isdigit()):
            raise ConfigError("Invalid save parameters")
        rules.append((int(parts[i]), int(parts[i + 1])))
    return rules


# client-output-buffer-limit: Redis's class names (getClientTypeByName) and how
# CONFIG GET shows them; a value is {class: (hard bytes, soft bytes, soft seconds)}.
OBUF_CLASSES = {"normal": "normal", "slave": "replica", "replica": "replica", "pubsub": "pubsub"}
OBUF_SHOWN = {"normal": "normal", "replica": "slave", "pubsub": "pubsub"}
OutputLimits = dict[str, tuple[int, int, int]]


def parse_output_buffer_limits(text: str) -> OutputLimits:
    """`<class> <hard> <soft> <soft-seconds>` groups; the classes given replace theirs only."""
    words = text.split()
    if len(words) % 4:
        raise ConfigError("Wrong number of arguments in buffer limit configuration.")
    limits: OutputLimits = {}
    for j in range(0, len(words), 4):
        name = OBUF_CLASSES.get(words[j].lower())
        if name is None:
            raise ConfigError("Invalid client class specified in buffer limit configuration.")
        numbers = []
        for word in words[j + 1 : j + 4]:
            try:
                number = parse_memory(word)
            except ConfigError:
                number = -1
            if number < 0:
                raise ConfigError("Error in hard, soft or soft_seconds setting in buffer limit"
                                  " configuration.")
            numbers.append(number)
        limits[name] = (numbers[0], numbers[1], numbers[2])
    return limits


_MAX32 = 2**31 - 1
_MAX64 = 2**63 - 1

PARAMS = [
    Param("port", "int", 6379, 0, 65535),  # CONFIG SET: the server listens anew
    Param("bind", "string", "127.0.0.1", immutable=True),
    Param("unixsocket", "string", "", immutable=True),
    Param("unixsocketperm", "octal", 0, 0, 0o777, immutable=True),
    # TLS (server/tls.py), read when the listeners start.
    Param("tls-port", "int", 0, 0, 65535, immutable=True),
    # rillet's web console and Prometheus /metrics (server/http.py; 0: off), on the
    # addresses of `http-bind` (as `bind`: space-separated, "-" prefix allowed).
    Param("http-port", "int", 0, 0, 65535, immutable=True),
    Param("http-bind", "string", "127.0.0.1", immutable=True),
    Param("tls-cert-file", "string", "", immutable=True),
    Param("tls-key-file", "string", "", immutable=True),
    Param("tls-key-file-pass", "string", "", immutable=True, sensitive=True),
    Param("tls-client-cert-file", "string", "", immutable=True),
    Param("tls-client-key-file", "string", "", immutable=True),
    Param("tls-client-key-file-pass", "string", "", immutable=True, sensitive=True),
    Param("tls-dh-params-file", "string", "", immutable=True),
    Param("tls-ca-cert-file", "string", "", immutable=True),
    Param("tls-ca-cert-dir", "string", "", immutable=True),
    Param("tls-auth-clients", "enum", "yes", choices=("no", "yes", "optional"), immutable=True),
    # Redis 8.6: a verified client certificate's CN names the ACL user it logs in as.
    Param("tls-auth-clients-user", "enum", "off", choices=("off", "CN")),
    Param("tls-protocols", "string", "", immutable=True),
    Param("tls-ciphers", "string", "", immutable=True),
    Param("tls-ciphersuites", "string", "", immutable=True),
    Param("tls-prefer-server-ciphers", "bool", False, immutable=True),
    Param("tls-session-caching", "bool", True, immutable=True),
    Param("tls-session-cache-size", "int", 20480, 0, 2**31 - 1, immutable=True),
    Param("tls-session-cache-timeout", "int", 300, 0, 2**31 - 1, immutable=True),
    Param("tls-replication", "bool", False),
    Param("tls-cluster", "bool", False),
    Param("tcp-backlog", "int", 511, 0, _MAX32, immutable=True),
    Param("requirepass", "string", "", sensitive=True),
    Param("aclfile", "string", "", immutable=True),
    Param("acl-pubsub-default", "enum", "resetchannels", choices=("allchannels", "resetchannels")),
    Param("acllog-max-len", "int", 128, minimum=0, maximum=2**63 - 1),
    Param("databases", "int", 16, 1, _MAX32, immutable=True),
    Param("dir", "string", ".", protected=True),
    Param("loglevel", "enum", "notice", choices=("debug", "verbose", "notice", "warning", "nothing")),
    Param("logfile", "string", "", immutable=True),
    Param("daemonize", "bool", False, immutable=True),
    Param("pidfile", "string", "", immutable=True),
    Param("save", "save", [(3600, 1), (300, 100), (60, 10000)]),
    Param("dbfilename", "string", "dump.rdb", protected=True),
    Param("rdbcompression", "bool", True),
    Param("rdbchecksum", "bool", True, immutable=True),
    Param("appendonly", "bool", False),
    Param("appendfilename", "string", "appendonly.aof", immutable=True),
    Param("appenddirname", "string", "appendonlydir", immutable=True),
    Param("appendfsync", "enum", "everysec", choices=("everysec", "always", "no")),
    Param("aof-load-truncated", "bool", True),
    Param("aof-use-rdb-preamble", "bool", True),
    Param("auto-aof-rewrite-percentage", "int", 100, 0, _MAX32),
    Param("auto-aof-rewrite-min-size", "memory", 64 * 1024 * 1024, 0, _MAX64),
    Param("no-appendfsync-on-rewrite", "bool", False),
    Param("maxclients", "int", 10000, 1, 2**32 - 1, unsigned=True),
    Param("timeout", "int", 0, 0, _MAX32),
    Param("tcp-keepalive", "int", 300, 0, _MAX32),
    Param("proto-max-bulk-len", "memory", 512 * 1024 * 1024, 1024 * 1024, _MAX64),
    Param("client-query-buffer-limit", "memory", 1024 * 1024 * 1024, 1024 * 1024, _MAX64),
    Param("client-output-buffer-limit", "obuf", {
        "normal": (0, 0, 0), "replica": (256 * 1024 * 1024, 64 * 1024 * 1024, 60),
        "pubsub": (32 * 1024 * 1024, 8 * 1024 * 1024, 60)}),
    Param("maxmemory", "memory", 0, 0, _MAX64),
    Param("maxmemory-policy", "enum", "noeviction", choices=(
        # Redis 8.6's maxmemory_policy_enum, with its two LRM policies
        "volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl", "volatile-lrm",
        "allkeys-lru", "allkeys-lfu", "allkeys-random", "allkeys-lrm", "noeviction")),
    Param("maxmemory-samples", "int", 5, 1, 64),
    Param("maxmemory-eviction-tenacity", "int", 10, 0, 100),
    Param("lfu-log-factor", "int", 10, 0, _MAX32),
    Param("lfu-decay-time", "int", 1, 0, _MAX32),
    Param("replica-ignore-maxmemory", "bool", True, aliases=("slave-ignore-maxmemory",)),
    Param("hz", "int", 10, 0, _MAX32, clamp=(1, 500)),
    Param("stream-node-max-entries", "int", 100, 0, _MAX64),
    Param("stream-node-max-bytes", "memory", 4096, 0, _MAX64),
    Param("stream-idmp-duration", "int", 100, 1, 86400),
    Param("stream-idmp-maxsize", "int", 100, 1, 10000),
    Param("maxblockedclients", "int", 100000, 1, _MAX32),
    Param("slowlog-log-slower-than", "int", 10000, -1, _MAX64),
    Param("slowlog-max-len", "int", 128, 0, _MAX64),
    Param("lua-time-limit", "int", 5000, 0, _MAX64, aliases=("busy-reply-threshold",)),
    Param("tracking-table-max-keys", "int", 1000000, 0, _MAX64, unsigned=True),  # 0: no limit (tracking.py)
    Param("notify-keyspace-events", "keyspace-events", 0),
    Param("replicaof", "string", "", aliases=("slaveof",), immutable=True),
    Param("replica-read-only", "bool", True, aliases=("slave-read-only",)),
    Param("repl-backlog-size", "memory", 1024 * 1024, 1, _MAX64),
    Param("min-replicas-to-write", "int", 0, 0, _MAX32, aliases=("min-slaves-to-write",)),
    # Replication (rillet.replication), Redis's names and defaults.
    Param("min-replicas-max-lag", "int", 10, 0, _MAX32, aliases=("min-slaves-max-lag",)),
    Param("masterauth", "string", "", sensitive=True),
    Param("masteruser", "string", "", sensitive=True),
    Param("repl-backlog-ttl", "int", 3600, 0, _MAX64),
    Param("repl-ping-replica-period", "int", 10, 1, _MAX32, aliases=("repl-ping-slave-period",)),
    Param("repl-timeout", "int", 60, 1, _MAX32),
    Param("replica-serve-stale-data", "bool", True, aliases=("slave-serve-stale-data",)),
    Param("replica-priority", "int", 100, 0, _MAX32, aliases=("slave-priority",)),
    Param("replica-announced", "bool", True),
    Param("replica-announce-ip", "string", "", aliases=("slave-announce-ip",)),
    Param("replica-announce-port", "int", 0, 0, 65535, aliases=("slave-announce-port",)),
    Param("repl-diskless-sync", "bool", True),
    Param("repl-diskless-sync-delay", "int", 5, 0, _MAX32),
    Param("repl-diskless-load", "enum", "disabled", choices=("disabled", "on-empty-db", "swapdb")),
    Param("repl-disable-tcp-nodelay", "bool", False),
    Param("cluster-enabled", "bool", False, immutable=True),
    Param("protected-mode", "bool", True),
    Param("io-threads", "int", 1, 1, 128, immutable=True),
    Param("list-max-listpack-size", "int", -2, -_MAX32 - 1, _MAX32),
    Param("hash-max-listpack-entries", "int", 512, 0, _MAX64, unsigned=True),
    Param("hash-max-listpack-value", "memory", 64, 0, _MAX64),
    Param("set-max-intset-entries", "int", 512, 0, _MAX64, unsigned=True),
    Param("set-max-listpack-entries", "int", 128, 0, _MAX64, unsigned=True),
    Param("set-max-listpack-value", "int", 64, 0, _MAX64, unsigned=True),
    Param("zset-max-listpack-entries", "int", 128, 0, _MAX64, unsigned=True),
    Param("zset-max-listpack-value", "memory", 64, 0, _MAX64),
    Param("hll-sparse-max-bytes", "memory", 3000, 0, _MAX64),
    # The vectorset module's: VSIM/VADD CAS on the main thread; rillet's always run inline.
    Param("vset-force-single-threaded-execution", "bool", False),
    Param("list-compress-depth", "int", 0, 0, _MAX32),
    Param("latency-tracking", "bool", True),
    Param("enable-debug-command", "enum", "no", choices=("no", "yes", "local"), immutable=True),
    Param("enable-protected-configs", "enum", "no", choices=("no", "yes", "local"), immutable=True),
    Param("enable-module-command", "enum", "no", choices=("no", "yes", "local"), immutable=True),
    # Redis's test delays, per key loaded / saved, in microseconds (rdb.py's debug_delay).
    Param("key-load-delay", "int", 0, -_MAX32 - 1, _MAX32, hidden=True),
    Param("rdb-key-save-delay", "int", 0, -_MAX32 - 1, _MAX32, hidden=True),
    # How often Redis serves clients while loading; rillet does every few ms of loading.
    Param("loading-process-events-interval-bytes", "int", 2 * 1024 * 1024, 1024, _MAX32,
          hidden=True),
    Param("gc-freeze-interval", "int", 1000, 0, _MAX32),
    Param("gc-sweep-growth", "int", 100, 0, _MAX32),
]


# --- Redis 8.2 parameters that rillet accepts, stores, reports and rewrites -------------
# Redis's names, defaults, ranges and error texts (checked against Redis 8.2.3 by
# tests/compat/test_info_config_parity.py). Unless a comment says otherwise they have
# no effect here (no defrag, lazyfree, fork, syslog, OOM score or CPU affinity in
# rillet; docs/compat.md; the cluster-* ones rillet uses so far: docs/cluster.md), as
# Redis accepts the ones it ignores.


def _parse_oom_values(text: str) -> tuple[int, ...]:
    words = text.split()
    if len(words) != 3:
        raise ConfigError(errors.CONFIG_OOM_VALUES_COUNT)
    values = []
    for word in words:
        try:
            value = int(word, 10)
        except ValueError:
            value = 1 << 20
        if not -2000 <= value <= 2000:
            raise ConfigError(errors.CONFIG_OOM_VALUES_RANGE)
        values.append(value)
    return tuple(values)


def _parse_percentiles(text: str) -> tuple[float, ...]:
    values = []
    for word in text.split():
        try:
            value = float(word)
        except ValueError:
            raise ConfigError(errors.CONFIG_PERCENTILES_INVALID) from None
        if not 0.0 <= value <= 100.0:
            raise ConfigError(errors.CONFIG_PERCENTILES_RANGE)
        values.append(value)
    return tuple(values)


def render_double(value: float) -> str:
    """Shortest round-trip text, as Redis's fpconv_dtoa: 50 not 50.0, 99.9, 0.0001."""
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


def _parse_memory_or_percent(text: str) -> int:
    # Redis stores a percentage of maxmemory as a negative number.
    if len(text) > 1 and text.endswith("%"):
        digits = text[:-1]
        if digits.isdigit():
            if int(digits) > 100:
                raise ConfigError(errors.CONFIG_PERCENT_MAX.format(100))
            return -int(digits)
    try:
        value = parse_memory(text)
    except ConfigError:
        value = -1
    if value < 0:
        raise ConfigError(errors.CONFIG_MEMORY_OR_PERCENT)
    return value


_SHUTDOWN_FLAGS = ("default", "save", "nosave", "now", "force")


def _parse_shutdown_flags(text: str) -> tuple[str, ...]:
    words = {word.lower() for word in text.split()}
    if not words or not words <= set(_SHUTDOWN_FLAGS):
        raise ConfigError("argument(s) must be one of the following: " + ", ".join(_SHUTDOWN_FLAGS))
    if {"save", "nosave"} <= words:
        raise ConfigError(errors.CONFIG_SHUTDOWN_SAVE_NOSAVE)
    return tuple(flag for flag in _SHUTDOWN_FLAGS[1:] if flag in words)


def signal_save(flags: tuple[str, ...]) -> bool | None:
    """shutdown-on-sigterm/-sigint's SAVE or NOSAVE (None: save if save points are set).
    (NOW is read by the caller; FORCE is accepted: rillet's shutdown does not stop on a
    failed save.)"""
    if "save" in flags:
        return True
    return False if "nosave" in flags else None


def _parse_locale(text: str) -> str:
    # Redis calls setlocale(LC_COLLATE); rillet compares bytes (SORT ALPHA, docs/compat.md),
    # so the name is only checked, and the process's locale is put back.
    import locale

    saved = locale.setlocale(locale.LC_COLLATE)
    try:
        locale.setlocale(locale.LC_COLLATE, text)
    except locale.Error:
        raise ConfigError(errors.CONFIG_INVALID_LOCALE) from None
    finally:
        locale.setlocale(locale.LC_COLLATE, saved)
    return text


_AUX_INVALID = frozenset("!#$%&()*+;<>?@[]^{|}~")


def _parse_hostname(text: str) -> str:
    if any(not (c.isascii() and (c.isalnum() or c in "-.")) for c in text):
        raise ConfigError(errors.CONFIG_BAD_HOSTNAME)
    return text


def _parse_human_nodename(text: str) -> str:
    if any(c in _AUX_INVALID for c in text):
        raise ConfigError(errors.CONFIG_BAD_NODENAME)
    return text


def _custom(name: str, default: Any, parser: Callable[[str], Any],
            renderer: Callable[[Any], str], **kwargs: Any) -> Param:
    return Param(name, "custom", default, parser=parser, renderer=renderer,
                 **kwargs)


PARAMS += [
    Param("activedefrag", "bool", False),
    Param("active-defrag-cycle-max", "int", 25, 1, 99),
    Param("active-defrag-cycle-min", "int", 1, 1, 99),
    Param("active-defrag-ignore-bytes", "memory", 100 * 1024 * 1024, 1, _MAX64),
    Param("active-defrag-max-scan-fields", "int", 1000, 1, _MAX64),
    Param("active-defrag-threshold-lower", "int", 10, 0, 1000),
    Param("active-defrag-threshold-upper", "int", 100, 0, 1000),
    Param("active-expire-effort", "int", 1, 1, 10),
    Param("activerehashing", "bool", True),
    Param("always-show-logo", "bool", False, immutable=True),
    Param("aof-rewrite-incremental-fsync", "bool", True),
    Param("aof-timestamp-enabled", "bool", False),
    Param("rdb-del-sync-files", "bool", False),
    Param("rdb-save-incremental-fsync", "bool", True),
    Param("stop-writes-on-bgsave-error", "bool", True),
    Param("server-cpulist", "string", "", immutable=True, aliases=("server_cpulist",)),
    Param("bio-cpulist", "string", "", immutable=True, aliases=("bio_cpulist",)),
    Param("aof-rewrite-cpulist", "string", "", immutable=True, aliases=("aof_rewrite_cpulist",)),
    Param("bgsave-cpulist", "string", "", immutable=True, aliases=("bgsave_cpulist",)),
    Param("bind-source-addr", "string", ""),
    Param("socket-mark-id", "int", 0, 0, 2**32 - 1, immutable=True),
    Param("cluster-allow-pubsubshard-when-down", "bool", True),
    Param("cluster-allow-reads-when-down", "bool", False),
    Param("cluster-allow-replica-migration", "bool", True),
    Param("cluster-announce-bus-port", "int", 0, 0, 65535),
    _custom("cluster-announce-hostname", "", _parse_hostname, str),
    _custom("cluster-announce-human-nodename", "", _parse_human_nodename, str),
    Param("cluster-announce-ip", "string", ""),
    Param("cluster-announce-port", "int", 0, 0, 65535),
    Param("cluster-announce-tls-port", "int", 0, 0, 65535),
    Param("cluster-compatibility-sample-ratio", "int", 0, 0, 100),
    Param("cluster-config-file", "string", "nodes.conf", immutable=True),
    Param("cluster-link-sendbuf-limit", "memory", 0, 0, _MAX64),
    Param("cluster-migration-barrier", "int", 1, 0, _MAX32),
    Param("cluster-node-timeout", "int", 15000, 0, _MAX64),
    Param("cluster-port", "int", 0, 0, 65535, immutable=True),
    Param("cluster-preferred-endpoint-type", "enum", "ip",
          choices=("ip", "hostname", "unknown-endpoint")),
    Param("cluster-replica-no-failover", "bool", False, aliases=("cluster-slave-no-failover",)),
    Param("cluster-replica-validity-factor", "int", 10, 0, _MAX32,
          aliases=("cluster-slave-validity-factor",)),
    Param("cluster-require-full-coverage", "bool", True),
    Param("cluster-slot-stats-enabled", "bool", False),
    Param("crash-log-enabled", "bool", True),
    Param("crash-memcheck-enabled", "bool", True),
    Param("disable-thp", "bool", True, immutable=True),
    Param("dynamic-hz", "bool", True),
    Param("hide-user-data-from-log", "bool", False),
    Param("ignore-warnings", "string", ""),
    Param("jemalloc-bg-thread", "bool", True),
    Param("latency-monitor-threshold", "int", 0, 0, _MAX64),
    # Read by INFO's Latencystats section (commands/server.py).
    _custom("latency-tracking-info-percentiles", (50.0, 99.0, 99.9), _parse_percentiles,
            lambda v: " ".join(render_double(x) for x in v), multiword=True),
    Param("lazyfree-lazy-eviction", "bool", False),
    Param("lazyfree-lazy-expire", "bool", False),
    Param("lazyfree-lazy-server-del", "bool", False),
    Param("lazyfree-lazy-user-del", "bool", False),
    Param("lazyfree-lazy-user-flush", "bool", False),
    Param("replica-lazy-flush", "bool", False, aliases=("slave-lazy-flush",)),
    _custom("locale-collate", "", _parse_locale, str),
    Param("max-new-connections-per-cycle", "int", 10, 1, 1000, unsigned=True),
    Param("max-new-tls-connections-per-cycle", "int", 1, 1, 1000, unsigned=True),
    _custom("maxmemory-clients", 0, _parse_memory_or_percent,
            lambda v: f"{-v}%" if v < 0 else str(v)),
    # "relative" is Redis's second name for "yes" (it reports "yes").
    Param("oom-score-adj", "enum", "no", choices=("no", "yes", "relative", "absolute"),
          shown={"relative": "yes"}),
    _custom("oom-score-adj-values", (0, 200, 800), _parse_oom_values,
            lambda v: " ".join(map(str, v)), multiword=True),
    Param("proc-title-template", "string", "{title} {listen-addr} {server-mode}"),
    Param("set-proc-title", "bool", True, immutable=True),
    Param("propagation-error-behavior", "enum", "ignore",
          choices=("ignore", "panic", "panic-on-replicas")),
    Param("repl-diskless-sync-max-replicas", "int", 0, 0, _MAX32),
    Param("replica-full-sync-buffer-limit", "memory", 0, 0, _MAX64),
    Param("replica-ignore-disk-write-errors", "bool", False),
    Param("sanitize-dump-payload", "enum", "no", choices=("no", "yes", "clients")),
    _custom("shutdown-on-sigint", (), _parse_shutdown_flags,
            lambda v: " ".join(v) or "default", multiword=True),
    _custom("shutdown-on-sigterm", (), _parse_shutdown_flags,
            lambda v: " ".join(v) or "default", multiword=True),
    Param("shutdown-timeout", "int", 10, 0, _MAX32),
    Param("supervised", "enum", "no", choices=("upstart", "systemd", "auto", "no"),
          immutable=True),
    Param("syslog-enabled", "bool", False, immutable=True),
    Param("syslog-facility", "enum", "local0", choices=(
        "user", "local0", "local1", "local2", "local3", "local4", "local5", "local6", "local7"),
        immutable=True),
    Param("syslog-ident", "string", "redis", immutable=True),
]

# Written by CONFIG REWRITE even at their default (Redis forces them).
ALWAYS_REWRITTEN = frozenset({"latency-tracking-info-percentiles"})

# Redis 6's names of the listpack limits, still accepted and listed by Redis 8.
_OLD_NAMES = {
    "hash-max-listpack-entries": "hash-max-ziplist-entries",
    "hash-max-listpack-value": "hash-max-ziplist-value",
    "zset-max-listpack-entries": "zset-max-ziplist-entries",
    "zset-max-listpack-value": "zset-max-ziplist-value",
    "list-max-listpack-size": "list-max-ziplist-size",
}
for _param in PARAMS:
    if _param.name in _OLD_NAMES:
        _param.aliases += (_OLD_NAMES[_param.name],)


# What Redis's CONFIG REWRITE puts above the lines it adds.
REWRITE_MARKER = "# Generated by CONFIG REWRITE"


class Config:
    """Current values by name; aliases resolve to the canonical parameter."""

    def __init__(self) -> None:
        self.params: dict[str, Param] = {}
        for param in PARAMS:
            self.params[param.name] = param
            for alias in param.aliases:
                self.params[alias] = param
        self.values: dict[str, Any] = {p.name: p.default for p in PARAMS}
        # The file the server was started with (INFO config_file, CONFIG REWRITE).
        self.path = ""
        # Directives that are not parameters: `user <name> <rules...>` lines (the
        # ACL's, with where they came from) and `rename-command old new`.
        self.users: list[tuple[str, list[bytes]]] = []
        self.renamed_commands: list[tuple[bytes, bytes]] = []

    def directive(self, name: str, words: list[bytes], where: str) -> bool:
        """Take a `user` or `rename-command` directive; False if `name` is neither."""
        if name == "user":
            if len(words) < 2:
                raise ConfigError(f"{where}: Bad directive or wrong number of arguments")
            self.users.append((where, [b"user", *words[1:]]))
            return True
        if name == "rename-command":
            if len(words) != 3:
                raise ConfigError(f"{where}: Bad directive or wrong number of arguments")
            self.renamed_commands.append((words[1], words[2]))
            return True
        return False

    def __getitem__(self, name: str) -> Any:
        return self.values[self.params[name].name]

    def set_many(self, pairs: list[tuple[str, str]], startup: bool = False,
                 allow_protected: bool = False) -> None:
        """Validate every pair first, then apply all of them: CONFIG SET is atomic.

        Same order of checks as Redis's configSetCommand: names first (the first bad
        name decides), then values. A bad value is reported
        under the parameter's registered (lower-case) name, the rest as typed.
        """
        params: list[tuple[str, Param, str]] = []
        seen: set[str] = set()
        problem: ConfigError | None = None
        for name, text in pairs:
            key = name.lower()
            param = self.params.get(key)
            if problem is not None:
                continue  # the first bad name decides the reply
            if param is None:
                raise KeyError(name)
            if param.immutable and not startup:
                problem = ConfigError(errors.CONFIG_IMMUTABLE, name)
            elif param.protected and not (startup or allow_protected):
                problem = ConfigError(errors.CONFIG_PROTECTED, name)
            elif key in seen:
                # Redis registers an alias as a config of its own, so
                # `slave-read-only` and `replica-read-only` may be set together.
                problem = ConfigError("duplicate parameter", name)
            seen.add(key)
            params.append((key, param, text))
        if problem is not None:
            raise problem
        parsed: list[tuple[Param, Any]] = []
        for key, param, text in params:
            try:
                parsed.append((param, param.parse(text)))
            except ConfigError as error:
                raise ConfigError(str(error), key) from None
        before = {param.name: self.values[param.name] for param, _ in parsed}
        ran: list[tuple[Param, Callable[[Any], None]]] = []
        for param, value in parsed:
            if param.kind == "obuf":
                value = {**self.values[param.name], **value}
            self.values[param.name] = value
            try:
                for callback in param.on_change:
                    callback(value)
                    ran.append((param, callback))
            except ConfigError as error:
                # A change that could not be applied (a port that cannot be bound):
                # the old values come back, and what was applied is applied again
                # with them, as Redis's restoreBackupConfig.
                self.values.update(before)
                self._reapply(ran)
                raise ConfigError(str(error), param.name) from None

    def _reapply(self, ran: list[tuple[Param, Callable[[Any], None]]]) -> None:
        for param, callback in ran:
            try:
                callback(self.values[param.name])
            except ConfigError as error:
                log.warning("Failed applying restored failed CONFIG SET command: %s", error)

    def set(self, name: str, text: str, startup: bool = False) -> None:
        self.set_many([(name, text)], startup=startup)

    def watch(self, name: str, callback: Callable[[Any], None]) -> None:
        self.params[name].on_change.append(callback)

    def rewritten(self, old_text: str, users: list[str] | None = None) -> str:
        """CONFIG REWRITE's new text for a file that held `old_text`, as Redis writes it.

        Comments, blank lines, order and lines rillet does not own (include,
        unknown directives) stay; each parameter's first line takes its current
        value and its repeats go; parameters that differ from their default and
        had no line are appended under Redis's marker comment. `users` are the
        ACL's `user ...` lines: they replace the file's in order, the rest come
        last (None, with an aclfile: the file's user lines are dropped).
        """
        out: list[str] = []
        written: set[str] = set()
        pending_users = list(users or [])
        signed = False  # the file has Redis's marker: it stays where it is
        for line in old_text.splitlines():
            stripped = line.strip()
            if stripped == REWRITE_MARKER:
                signed = True
            words = split_args(stripped.encode()) if stripped and not stripped.startswith("#") else None
            name = words[0].decode("utf-8", "replace").lower() if words else ""
            if name == "user":
                if pending_users:
                    out.append(pending_users.pop(0))
                continue
            param = self.params.get(name) if words else None
            if param is None:
                out.append(line)
            elif param.name not in written:
                written.add(param.name)
                if param.name == "replicaof" and not self.values["replicaof"]:
                    continue  # a master: Redis drops the file's replicaof lines
                out.append(self._directive(param))
        added = [self._directive(p) for p in PARAMS if p.name not in written and (
            self.values[p.name] != p.default or p.name in ALWAYS_REWRITTEN)]
        added += pending_users
        # Redis's layout (checked against 8.2.3): a file that has the marker gets a
        # blank line and the new lines at its end; one without gets a blank line
        # (unless it is empty or ends with one), the marker, then the new lines.
        if signed:
            if out and out[-1]:
                out.append("")
            out += added
        elif added:
            if out and out[-1].strip():
                out.append("")
            out += [REWRITE_MARKER, *added]
        return "\n".join(out) + "\n"

    def _directive(self, param: Param) -> str:
        text = param.render(self.values[param.name])
        if param.kind in ("save", "obuf") or param.multiword or param.name == "replicaof":
            # Several words that the directive takes as several arguments, as
            # Redis writes them (`save 3600 1 300 100`, `replicaof host port`).
            return f"{param.name} {text}" if text else f'{param.name} ""'
        if not text or any(c in text for c in " \"'\\\t\r\n"):
            # sdscatrepr-style quoting, so that load_file reads the value back.
            text = '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
        return f"{param.name} {text}"

    def load_file(self, path: str) -> None:
        """redis.conf syntax: one `name arg...` per line, # comments, include."""
        if not self.path:
            self.path = os.path.abspath(path)
        with open(path, encoding="utf-8") as handle:
            self.load_lines(handle, path)

    def load_lines(self, lines: Iterable[str], where: str) -> None:
        """Directives in redis.conf syntax from a file or standard input (`where` names it)."""
        for lineno, line in enumerate(lines, 1):
            stripped = line.strip()
            if not stripped or stripped.startswith("#"):
                continue
            words = split_args(stripped.encode())
            if not words:
                raise ConfigError(f"{where}:{lineno}: unbalanced quotes")
            name = words[0].decode().lower()
            args = [w.decode() for w in words[1:]]
            if name == "include":
                self.load_file(args[0])
                continue
            if self.directive(name, words, f"{where}:{lineno}"):
                continue
            if name not in self.params:
                raise ConfigError(f"{where}:{lineno}: Bad directive or wrong number of arguments")
            self.set(name, " ".join(args) if args else "", startup=True)
