"""The command table: one `CommandSpec` per command, registered by `@command`.

A spec says what the dispatcher checks before calling the handler (arity,
flags, key positions) and what COMMAND INFO/DOCS report. Subcommands are
registered as "container|sub" (e.g. "config|get") and the container entry is
created on first use, as in Redis's commands.def. A handler's docstring starts
with its Redis syntax line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

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
    subcommands: dict[bytes, CommandSpec] = field(default_factory=dict)
    parent: CommandSpec | None = None
    # Precomputed for the hot path: attribute reads beat set lookups.
    is_write: bool = False
    is_blocking: bool = False
    allowed_unauthenticated: bool = False
    allowed_in_multi: bool = True
    name_bytes: bytes = b""
    # Arity as bounds on len(argv), so the dispatcher does one chained compare.
    min_argc: int = 0
    max_argc: int = 0
    # Per-command statistics for INFO commandstats.
    calls: int = 0
    usec: int = 0
    rejected_calls: int = 0
    failed_calls: int = 0

    @property
    def syntax(self) -> str:
        doc = (self.handler.__doc__ or "") if self.handler else ""
        return doc.strip().splitlines()[0] if doc.strip() else self.name.upper()

    def key_indexes(self, argc: int) -> list[int]:
        if self.first_key <= 0:
            return []
        last = self.last_key if self.last_key >= 0 else argc + self.last_key
        return list(range(self.first_key, last + 1, self.key_step or 1))


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
            is_write=WRITE in flag_set,
            is_blocking=BLOCKING in flag_set,
            allowed_unauthenticated=NOAUTH in flag_set,
            allowed_in_multi=NOMULTI not in flag_set,
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
