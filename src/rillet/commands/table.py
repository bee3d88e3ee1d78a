"""The command table: one `CommandSpec` per command, registered by `@command`.

A spec says what the dispatcher checks before calling the handler (arity,
flags, key positions) and what COMMAND INFO/DOCS report. Subcommands are
registered as "container|sub" (e.g. "config|get") and the container entry is
created on first use, as in Redis's commands.def. A handler's docstring starts
with its Redis syntax line.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import TypedDict

from rillet.observe import reset_latency
from rillet.resp.types import SimpleString

Handler = Callable[..., object]

# Flags with a meaning to the dispatcher; others are only reported by COMMAND.
WRITE = "write"
READONLY = "readonly"
BLOCKING = "blocking"
NOAUTH = "no_auth"
NOMULTI = "no_multi"
LOADING_OK = "loading"
STALE = "stale"
FAST = "fast"
ADMIN = "admin"
DENYOOM = "denyoom"
# Their script's declared flags may make them DENYOOM (Redis's getCommandFlags).
_SCRIPT_RUNNERS = frozenset({"eval", "evalsha", "fcall"})

# A `sampled` command's duration is recorded once in TIMING_SAMPLE calls (dispatch.py, the compiled
# fast path and Lua's redis.call read these; here, below all three).
TIMING_SAMPLE = 16
TIMING_MASK = TIMING_SAMPLE - 1


@dataclass(eq=False)
class CommandSpec:
    name: str  # lower-case full name: "xadd", "config|get"
    handler: Handler | None
    arity: int
    flags: frozenset[str]
    first_key: int = 0
    last_key: int = 0
    key_step: int = 0
    group: str = "generic"
    since: str = "1.0.0"
    summary: str = ""
    complexity: str = ""
    acl_categories: tuple[str, ...] = ()
    # Redis's key spec flags, one string per key position in order, the last
    # repeating ("RW access update"); empty: derived from write/readonly.
    key_flags: tuple[str, ...] = ()
    # For keys (first, last, step) cannot say (XREAD's after STREAMS, SET's
    # GET): argv -> [(index, key spec flags)].
    find_keys: Callable[[list[bytes]], list[tuple[int, str]]] | None = None
    # Key specs Redis marks "unknown" (SORT's BY/GET patterns and STORE): (flags, notes)
    # each, reported by COMMAND INFO after the others; find_keys finds such keys.
    unknown_keys: tuple[tuple[str, str], ...] = ()
    key_notes: str = ""  # the notes of the first key spec (BITFIELD's)
    # argv -> the indexes MONITOR and SLOWLOG show as "(redacted)" (passwords, user
    # names: Redis's redactClientCommandArgument).
    redact: Callable[[list[bytes]], Iterable[int]] | None = None
    # Key specs found by a keyword (GEORADIUS's STORE): (flags, keyword, startfrom[,
    # lastkey, default 0[, limit, default 0]]), reported by COMMAND INFO after the index ones.
    keyword_keys: tuple[tuple[str, str, int] | tuple[str, str, int, int]
                        | tuple[str, str, int, int, int], ...] = ()
    subcommands: dict[bytes, CommandSpec] = field(default_factory=dict)
    parent: CommandSpec | None = None
    # Redis knows this container as one command (DEBUG): COMMAND and ACL CAT show it alone.
    one_command: bool = False
    # The Redis module that has the command (vector sets: "vectorset"). Redis shows a
    # module command by its registered (upper-case) name, with no ACL categories and
    # only group/module in COMMAND DOCS.
    module: str = ""
    # Redis's CMD_PROTECTED (DEBUG, MODULE LOAD/LOADEX/UNLOAD): the config that must
    # allow the client ("enable-debug-command"...). Refused right after the arity
    # check, before AUTH, ACL and MULTI queueing, as Redis's processCommand does.
    protected_by: str = ""
    # Precomputed for the hot path: attribute reads beat set lookups.
    is_write: bool = False
    is_blocking: bool = False
    allowed_unauthenticated: bool = False
    allowed_in_multi: bool = True
    # maxmemory checks it before running (DENYOOM, or a script that may declare it).
    oom_check: bool = False
    # Recorded once in TIMING_SAMPLE calls, not every call (Redis's `fast` commands and the
    # writes, whose bodies are a few hundred ns: a recording costs a Python call; dispatch.py).
    sampled: bool = False
    # How keyspace_hits/misses count its lookups (notify.READS_*, set by the dispatcher).
    read_stats: int = 0
    name_bytes: bytes = b""
    # Arity as bounds on len(argv), so the dispatcher does one chained compare.
    min_argc: int = 0
    max_argc: int = 0
    # Per-command statistics for INFO commandstats.
    calls: int = 0
    usec: int = 0
    rejected_calls: int = 0
    failed_calls: int = 0
    # LATENCY HISTOGRAM (observe.record_latency): the timed calls per bucket.
    latency_histogram: list[int] | None = None

    @property
    def shown_name(self) -> bytes:
        """The name COMMAND INFO/DOCS/LIST report."""
        return self.name.upper().encode() if self.module else self.name.encode()

    @property
    def syntax(self) -> str:
        doc = (self.handler.__doc__ or "") if self.handler else ""
        return doc.strip().splitlines()[0] if doc.strip() else self.name.upper()

    def key_indexes(self, argc: int) -> list[int]:
        if self.first_key <= 0:
            return []
        last = self.last_key if self.last_key >= 0 else argc + self.last_key
        return list(range(self.first_key, last + 1, self.key_step or 1))

    def key_spec_flags(self) -> tuple[str, ...]:
        if self.key_flags:
            return self.key_flags
        return ("RW update",) if self.is_write else ("RO access",)

    def keys_with_flags(self, argv: list[bytes]) -> list[tuple[int, str]]:
        """The command's keys as (argv index, Redis key spec flags), for ACL and GETKEYS."""
        if self.find_keys is not None:
            return self.find_keys(argv)
        flags = self.key_spec_flags()
        indexes = [i for i in self.key_indexes(len(argv)) if i < len(argv)]
        return [(i, flags[min(n, len(flags) - 1)]) for n, i in enumerate(indexes)]


COMMANDS: dict[str, CommandSpec] = {}
# Lookup by the raw bytes a client sends: both cases are pre-inserted, so the
# common all-lower and all-upper spellings cost one dict lookup.
TABLE: dict[bytes, CommandSpec] = {}


def _container(name: str, group: str) -> CommandSpec:
    spec = COMMANDS.get(name)
    if spec is None:
        spec = CommandSpec(name=name, handler=None, arity=-2, flags=frozenset(), group=group)
        _register(spec)
    return spec


def _arity_bounds(spec: CommandSpec) -> None:
    spec.min_argc = abs(spec.arity)
    spec.max_argc = spec.arity if spec.arity > 0 else 1 << 62


def _register(spec: CommandSpec) -> None:
    _arity_bounds(spec)
    spec.name_bytes = spec.name.encode()
    COMMANDS[spec.name] = spec
    raw = spec.name.encode()
    TABLE[raw] = spec
    TABLE[raw.upper()] = spec


class CommandOptions(TypedDict, total=False):
    """`command`'s keyword options, for a set that several commands share (`**options`)."""

    keys: tuple[int, int, int]
    group: str
    since: str
    summary: str
    complexity: str
    acl: str
    key_flags: str
    module: str


class CommandDocs(TypedDict, total=False):
    """A command's COMMAND DOCS text, passed to `command` as `**docs`."""

    summary: str
    complexity: str


def command(
    name: str,
    arity: int,
    flags: str = "",
    keys: tuple[int, int, int] = (0, 0, 0),
    group: str = "generic",
    since: str = "1.0.0",
    summary: str = "",
    complexity: str = "",
    acl: str = "",
    key_flags: str = "",
    find_keys: Callable[[list[bytes]], list[tuple[int, str]]] | None = None,
    unknown_keys: tuple[tuple[str, str], ...] = (),
    key_notes: str = "",
    keyword_keys: tuple[tuple[str, str, int] | tuple[str, str, int, int]
                        | tuple[str, str, int, int, int], ...] = (),
    redact: Callable[[list[bytes]], Iterable[int]] | None = None,
    module: str = "",
    protected_by: str = "",
) -> Callable[[Handler], Handler]:
    """Register a handler `(ctx, argv) -> reply` under `name` ("xadd" or "xinfo|stream")."""

    def register(handler: Handler) -> Handler:
        flag_set = frozenset(flags.split())
        spec = CommandSpec(
            name=name,
            handler=handler,
            arity=arity,
            flags=flag_set,
            first_key=keys[0],
            last_key=keys[1],
            key_step=keys[2],
            group=group,
            since=since,
            summary=summary or (handler.__doc__ or "").strip().split("\n\n")[-1].strip()[:200],
            complexity=complexity,
            acl_categories=tuple(acl.split()),
            key_flags=tuple(part.strip() for part in key_flags.split("|")) if key_flags else (),
            find_keys=find_keys,
            unknown_keys=unknown_keys,
            key_notes=key_notes,
            keyword_keys=keyword_keys,
            redact=redact,
            module=module,
            protected_by=protected_by,
            is_write=WRITE in flag_set,
            is_blocking=BLOCKING in flag_set,
            allowed_unauthenticated=NOAUTH in flag_set,
            allowed_in_multi=NOMULTI not in flag_set,
            oom_check=DENYOOM in flag_set or name in _SCRIPT_RUNNERS,
            sampled="fast" in flag_set or WRITE in flag_set,
        )
        if "|" in name:
            parent_name, sub = name.split("|", 1)
            parent = _container(parent_name, group)
            spec.parent = parent
            spec.name_bytes = name.encode()
            _arity_bounds(spec)
            parent.subcommands[sub.encode()] = spec
            parent.subcommands[sub.upper().encode()] = spec
        else:
            existing = COMMANDS.get(name)
            if existing is not None and existing.handler is None:
                spec.subcommands = existing.subcommands
            _register(spec)
        return handler

    return register


def rename(old: bytes, new: bytes) -> str | None:
    """`rename-command old new` (new empty: the command is gone), for clients only:
    COMMANDS keeps the original names, which the AOF loader and replicas use.
    Returns Redis's startup error, or None."""
    spec = COMMANDS.get(old.lower().decode("utf-8", "replace"))
    if spec is None or TABLE.get(old.lower()) is not spec:
        return "No such command in rename-command"
    if new and TABLE.get(new.lower()) is not None:
        return "Target command name already exists"
    for raw in (old.lower(), old.upper()):
        TABLE.pop(raw, None)
    if new:
        TABLE[new.lower()] = spec
        TABLE[new.upper()] = spec
        TABLE[new] = spec
    return None


def container(name: str, group: str, acl: str, flags: str, protected_by: str = "") -> None:
    """Declare a container that Redis has as one command (DEBUG): COMMAND INFO/DOCS/LIST
    and ACL CAT show it alone, with these categories and flags, not its subcommands;
    `protected_by` refuses an unknown subcommand as it refuses the known ones."""
    spec = _container(name, group)
    spec.acl_categories = tuple(acl.split())
    spec.flags = frozenset(flags.split())
    spec.protected_by = protected_by
    spec.one_command = True


def container_docs(name: str, since: str, summary: str, group: str) -> None:
    """A container's own COMMAND DOCS entry, as Redis's commands.def has it."""
    spec = COMMANDS[name]
    spec.since, spec.summary, spec.group = since, summary, group
    spec.complexity = "Depends on subcommand."


# Redis's ACL category order (acl.c ACLCommandCategories).
CATEGORY_ORDER = (
    "keyspace", "read", "write", "set", "sortedset", "list", "hash", "string", "bitmap",
    "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow", "blocking", "dangerous",
    "connection", "transaction", "scripting", "array",
)
_GROUP_CATEGORY = {
    "generic": "keyspace", "string": "string", "connection": "connection",
    "transactions": "transaction", "stream": "stream", "scripting": "scripting",
    "hash": "hash", "list": "list", "set": "set", "sorted-set": "sortedset", "bitmap": "bitmap",
    "array": "array",
}


def acl_categories(spec: CommandSpec) -> list[str]:
    """A command's ACL categories: its `acl=`, else what its flags and group imply,
    as Redis derives them (setImplicitACLCategories plus the group's category)."""
    if spec.acl_categories:
        return list(spec.acl_categories)
    if spec.module:
        return []  # a module command has the categories its module gives it: none here
    if spec.handler is None:
        return ["slow"]  # a container such as CONFIG: its subcommands carry the rest
    flags = spec.flags
    categories = {"fast" if "fast" in flags else "slow"}
    if WRITE in flags:
        categories.add("write")
    if READONLY in flags:
        categories.add("read")
    if spec.group in _GROUP_CATEGORY:
        categories.add(_GROUP_CATEGORY[spec.group])
    if ADMIN in flags:
        categories |= {"admin", "dangerous"}
    if BLOCKING in flags:
        categories.add("blocking")
    if "pubsub" in flags:
        categories.add("pubsub")
    return [c for c in CATEGORY_ORDER if c in categories]


def all_specs() -> list[CommandSpec]:
    """Every command and subcommand, each once."""
    out = []
    for spec in COMMANDS.values():
        out.append(spec)
        out.extend(unique_subcommands(spec))
    return out


def counted_specs() -> list[CommandSpec]:
    """Every command and subcommand as INFO commandstats/latencystats and LATENCY
    HISTOGRAM report them: a container Redis has as one command (DEBUG) stands alone,
    with its subcommands' counts summed, as Redis counts that one command."""
    out = []
    for spec in COMMANDS.values():
        if spec.one_command:
            out.append(summed(spec))
        else:
            out.append(spec)
            out.extend(unique_subcommands(spec))
    return out


def summed(spec: CommandSpec) -> CommandSpec:
    """A copy of a one-command container carrying its own and its subcommands'
    statistics (its own: the calls refused before a subcommand was known)."""
    subs = [spec, *unique_subcommands(spec)]
    histograms = [s.latency_histogram for s in subs if s.latency_histogram]
    return replace(
        spec, calls=sum(s.calls for s in subs), usec=sum(s.usec for s in subs),
        rejected_calls=sum(s.rejected_calls for s in subs),
        failed_calls=sum(s.failed_calls for s in subs),
        latency_histogram=[sum(counts) for counts in zip(*histograms, strict=True)]
        if histograms else None)


def lookup(name: bytes) -> CommandSpec | None:
    spec = TABLE.get(name)
    if spec is None:
        spec = TABLE.get(name.lower())
    return spec


def unique_subcommands(spec: CommandSpec) -> list[CommandSpec]:
    seen: dict[str, CommandSpec] = {}
    for sub in spec.subcommands.values():
        seen[sub.name] = sub
    return sorted(seen.values(), key=lambda s: s.name)


def reset_call_stats() -> None:
    """Every command's calls, time, failures, rejections and latency histogram back to
    zero: CONFIG RESETSTAT, and the end of the start-up load (Redis replays an AOF
    through its handlers, not through call(), so INFO counts none of it)."""
    for spec in COMMANDS.values():
        for one in [spec, *unique_subcommands(spec)]:
            one.calls = one.usec = one.rejected_calls = one.failed_calls = 0
            reset_latency(one)


def help_reply(container: str, *lines: bytes) -> list[SimpleString]:
    """A `<CONTAINER> HELP` reply, framed as Redis's addReplyHelp frames it.

    `lines` are the subcommand/description lines; the header and the closing
    "HELP / Print this help." pair are added here, as Redis adds them.
    """
    return [SimpleString(line) for line in (
        b"%s <subcommand> [<arg> [value] [opt] ...]. Subcommands are:" % container.encode(),
        *lines,
        b"HELP",
        b"    Print this help.",
    )]


# --- redaction ----------------------------------------------------------------------------

REDACTED = b"(redacted)"


def shown_argv(spec: CommandSpec, argv: list[bytes]) -> list[bytes]:
    """argv as MONITOR and SLOWLOG show it: the spec's secret arguments "(redacted)"."""
    redact = spec.redact
    if redact is None:
        return argv
    shown = list(argv)
    for index in redact(argv):
        if index < len(shown):
            shown[index] = REDACTED
    return shown


def redact_from(first: int) -> Callable[[list[bytes]], Iterable[int]]:
    """Every argument from `first` on (AUTH; ACL SETUSER/GETUSER/DELUSER, user names too)."""
    return lambda argv: range(first, len(argv))


def redact_options(start: int, secrets: dict[bytes, int], skips: dict[bytes, int],
                   stop: bytes = b"") -> Callable[[list[bytes]], Iterable[int]]:
    """The values of the options in `secrets` (option -> its value count), walking the
    options from `start` as the command's parser does: `skips` are the other options
    with their value counts, `stop` an option after which the rest are not options."""

    def indexes(argv: list[bytes]) -> list[int]:
        found: list[int] = []
        j = start
        while j < len(argv):
            option = argv[j].upper()
            if option == stop:
                break
            count = secrets.get(option)
            if count is not None:
                found.extend(range(j + 1, j + 1 + count))
            else:
                count = skips.get(option, 0)
            j += 1 + count
        return found

    return indexes
