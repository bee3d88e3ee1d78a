"""Server configuration: Redis's parameter names, defaults, parsing and validation.

One `Config` object per server. Each parameter is declared once with its kind
(bool, int, memory, enum, string, special) so that command-line flags, the
config file (redis.conf syntax), CONFIG GET and CONFIG SET all agree.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

from rillet import errors
from rillet.notify import BAD_CLASS, parse_flags, render_flags
from rillet.resp.parser import split_args


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
    default: object
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
    on_change: list[Callable[[object], None]] = field(default_factory=list)

    def parse(self, text: str) -> object:
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
                low, high = self.minimum, self.maximum
                if self.kind == "octal":
                    low, high = f"{low:o}", f"{high:o}"  # type: ignore[str-format]
                raise ConfigError(f"argument must be between {low} and {high} inclusive")
            if self.clamp is not None:
                value = min(max(value, self.clamp[0]), self.clamp[1])
            return value
        if self.kind == "enum":
            low = text.lower()
            if low not in self.choices:
                raise ConfigError("argument(s) must be one of the following: "
                                  + ", ".join(self.choices))
            return low
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

    def render(self, value: object) -> str:
        if self.kind == "bool":
            return "yes" if value else "no"
        if self.kind == "save":
            return " ".join(f"{s} {c}" for s, c in value)  # type: ignore[union-attr]
        if self.kind == "obuf":
            return " ".join(f"{OBUF_SHOWN[name]} {h} {s} {secs}"
                            for name, (h, s, secs) in value.items())  # type: ignore[union-attr]
        if self.kind == "octal":
            return f"{value:o}"
        if self.kind == "keyspace-events":
            return render_flags(value)  # type: ignore[arg-type]
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
    Param("port", "int", 6379, 0, 65535, immutable=True),
    Param("bind", "string", "127.0.0.1", immutable=True),
    Param("unixsocket", "string", "", immutable=True),
    Param("unixsocketperm", "octal", 0, 0, 0o777, immutable=True),
    # TLS (server/tls.py), read when the listeners start.
    Param("tls-port", "int", 0, 0, 65535, immutable=True),
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
    Param("rdbchecksum", "bool", True),
    Param("appendonly", "bool", False),
    Param("appendfilename", "string", "appendonly.aof", immutable=True),
    Param("appenddirname", "string", "appendonlydir", immutable=True),
    Param("appendfsync", "enum", "everysec", choices=("always", "everysec", "no")),
    Param("aof-load-truncated", "bool", True),
    Param("aof-use-rdb-preamble", "bool", True),
    Param("auto-aof-rewrite-percentage", "int", 100, 0, _MAX32),
    Param("auto-aof-rewrite-min-size", "memory", 64 * 1024 * 1024, 0, _MAX64),
    Param("no-appendfsync-on-rewrite", "bool", False),
    Param("maxclients", "int", 10000, 1, 2**32 - 1),
    Param("timeout", "int", 0, 0, _MAX32),
    Param("tcp-keepalive", "int", 300, 0, _MAX32),
    Param("proto-max-bulk-len", "memory", 512 * 1024 * 1024, 1024 * 1024, _MAX64),
    Param("client-query-buffer-limit", "memory", 1024 * 1024 * 1024, 1024 * 1024, _MAX64),
    Param("client-output-buffer-limit", "obuf", {
        "normal": (0, 0, 0), "replica": (256 * 1024 * 1024, 64 * 1024 * 1024, 60),
        "pubsub": (32 * 1024 * 1024, 8 * 1024 * 1024, 60)}),
    Param("maxmemory", "memory", 0, 0, _MAX64),
    Param("maxmemory-policy", "enum", "noeviction", choices=(
        "volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl", "allkeys-lru",
        "allkeys-lfu", "allkeys-random", "noeviction")),
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
    Param("repl-backlog-ttl", "int", 3600, 0, _MAX32),
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
    Param("list-max-listpack-size", "int", -2, -5, _MAX32),
    Param("hash-max-listpack-entries", "int", 512, 0, _MAX64),
    Param("hash-max-listpack-value", "memory", 64, 0, _MAX64),
    Param("set-max-intset-entries", "int", 512, 0, _MAX64),
    Param("set-max-listpack-entries", "int", 128, 0, _MAX64),
    Param("set-max-listpack-value", "memory", 64, 0, _MAX64),
    Param("zset-max-listpack-entries", "int", 128, 0, _MAX64),
    Param("zset-max-listpack-value", "memory", 64, 0, _MAX64),
    Param("hll-sparse-max-bytes", "memory", 3000, 0, _MAX64),
    # The vectorset module's: VSIM/VADD CAS on the main thread; rillet's always run inline.
    Param("vset-force-single-threaded-execution", "bool", False),
    Param("list-compress-depth", "int", 0, 0, _MAX32),
    Param("latency-tracking", "bool", True),
    Param("enable-debug-command", "enum", "no", choices=("no", "yes", "local"), immutable=True),
    Param("enable-protected-configs", "enum", "no", choices=("no", "yes", "local"), immutable=True),
    Param("enable-module-command", "enum", "no", choices=("no", "yes", "local"), immutable=True),
    Param("gc-freeze-interval", "int", 1000, 0, _MAX32),
    Param("gc-sweep-growth", "int", 100, 0, _MAX32),
]


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
        self.values: dict[str, object] = {p.name: p.default for p in PARAMS}
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

    def __getitem__(self, name: str) -> object:
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
        parsed: list[tuple[Param, object]] = []
        for key, param, text in params:
            try:
                parsed.append((param, param.parse(text)))
            except ConfigError as error:
                raise ConfigError(str(error), key) from None
        for param, value in parsed:
            if param.kind == "obuf":
                value = {**self.values[param.name], **value}  # type: ignore[dict-item]
            self.values[param.name] = value
            for callback in param.on_change:
                callback(value)

    def set(self, name: str, text: str, startup: bool = False) -> None:
        self.set_many([(name, text)], startup=startup)

    def watch(self, name: str, callback: Callable[[object], None]) -> None:
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
        for line in old_text.splitlines():
            stripped = line.strip()
            if stripped == REWRITE_MARKER:
                continue
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
                out.append(self._directive(param))
        added = [self._directive(p) for p in PARAMS
                 if p.name not in written and self.values[p.name] != p.default]
        added += pending_users
        if added:
            out += [REWRITE_MARKER, *added]
        return "\n".join(out) + "\n"

    def _directive(self, param: Param) -> str:
        text = param.render(self.values[param.name])
        if param.kind in ("save", "obuf") or param.name == "replicaof":
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
            for lineno, line in enumerate(handle, 1):
                stripped = line.strip()
                if not stripped or stripped.startswith("#"):
                    continue
                words = split_args(stripped.encode())
                if not words:
                    raise ConfigError(f"{path}:{lineno}: unbalanced quotes")
                name = words[0].decode().lower()
                args = [w.decode() for w in words[1:]]
                if name == "include":
                    self.load_file(args[0])
                    continue
                if self.directive(name, words, f"{path}:{lineno}"):
                    continue
                if name not in self.params:
                    raise ConfigError(f"{path}:{lineno}: Bad directive or wrong number of arguments")
                self.set(name, " ".join(args) if args else "", startup=True)
