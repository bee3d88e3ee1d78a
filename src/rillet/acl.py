"""Access control as Redis 8's acl.c: users, passwords, selectors, the permission check, the log.

A user has flags (on/off, nopass, sanitize-payload), SHA-256 password hashes
and selectors: the root one and any number of `(...)` ones. A selector holds
the commands it allows (full names, "config|get" for a subcommand, plus
first-arg exceptions such as "+select|0"), key patterns with read/write
permissions and channel patterns. A command runs if any selector allows it.

Command rules are kept as Redis 7.2+ keeps them: the string of rules in the
order given, a new rule for a command replacing the earlier ones for it
(ACL LIST shows them back as typed). This module sees commands only through
`CommandInfo` (the command table's specs fit it): it sits below commands/.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from rillet.glob import glob_match

READ = 1
WRITE = 2
ALL = READ | WRITE

# Redis's category order (acl.c ACLCommandCategories): ACL CAT and rule descriptions.
CATEGORIES = (
    "keyspace", "read", "write", "set", "sortedset", "list", "hash", "string", "bitmap",
    "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow", "blocking", "dangerous",
    "connection", "transaction", "scripting", "array",
)

# Reasons a rule is refused (acl.c ACLSetUserStringError), after "Error in ACL SETUSER modifier".
UNKNOWN_RULE = "Unknown command or category name in ACL"
SYNTAX = "Syntax error"
KEYS_AFTER_ALL = ("Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and "
                  "does not have any effect. Try 'resetkeys' to start with an empty list of patterns")
CHANNELS_AFTER_ALL = ("Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid "
                      "and does not have any effect. Try 'resetchannels' to start with an empty list "
                      "of channels")
NO_SUCH_PASSWORD = "The password you are trying to remove from the user does not exist"
BAD_HASH = ("The password hash must be exactly 64 characters and contain only lowercase "
            "hexadecimal characters")
SUBCOMMAND_FIRSTARG = "Allowing first-arg of a subcommand is not supported"

# Outcomes of a check, in Redis's order of relevance (ACL_DENIED_*).
OK = 0
DENIED_CMD = 1
DENIED_KEY = 2
DENIED_AUTH = 3
DENIED_CHANNEL = 4

LOG_GROUP_MS = 60_000  # Redis groups like log entries seen within 60 s


class RuleError(ValueError):
    """A rule ACL SETUSER refused; `reason` is Redis's text for it."""

    rule: bytes  # set by Acl.setuser: the rule that failed (absent otherwise)

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class CommandInfo(Protocol):
    """What the ACL needs of a command (commands/table.py's CommandSpec)."""

    name: str
    flags: frozenset[str]
    parent: Any
    subcommands: dict[bytes, Any]


_NEEDS: dict[str, int] = {}


def key_need(flags: str) -> int:
    """The permissions a key spec asks for (acl.c ACLSelectorCheckKey): `access` reads,
    `insert`/`delete`/`update` write; RO/RW/OW alone ask for nothing but a matching pattern."""
    need = _NEEDS.get(flags)
    if need is None:
        words = flags.split()
        need = (READ if "access" in words else 0) | (
            WRITE if {"insert", "delete", "update"} & set(words) else 0)
        _NEEDS[flags] = need
    return need


def hash_password(password: bytes) -> str:
    return hashlib.sha256(password).hexdigest()


def _valid_hash(text: str) -> bool:
    return len(text) == 64 and all(c in "0123456789abcdef" for c in text)


def _has_spaces(text: bytes) -> bool:
    return any(ch in b" \t\n\r\v\f\0" for ch in text)


class Commands:
    """The command table as the ACL sees it: names, categories, subcommands."""

    def __init__(self) -> None:
        self.by_name: dict[str, Any] = {}
        self.categories: dict[str, tuple[str, ...]] = {}

    def load(self, specs: Iterable[Any], categories_of: Any) -> None:
        """Filled by the dispatcher from the command table (this module sits below it)."""
        for spec in specs:
            self._add(spec, categories_of)

    def _add(self, spec: Any, categories_of: Any) -> None:
        self.by_name[spec.name] = spec
        self.categories[spec.name] = tuple(categories_of(spec))
        for sub in {s.name: s for s in spec.subcommands.values()}.values():
            self._add(sub, categories_of)

    def lookup(self, name: str) -> Any:
        return self.by_name.get(name.lower())

    def in_category(self, category: str) -> list[str]:
        return [name for name, cats in self.categories.items() if category in cats]

    def family(self, spec: Any) -> list[str]:
        """A command and its subcommands: what +cmd and -cmd set."""
        names = [spec.name]
        names += sorted({s.name for s in spec.subcommands.values()})
        return names


@dataclass
class Selector:
    commands: Commands
    allowed: set[str] = field(default_factory=set)
    firstargs: dict[str, list[bytes]] = field(default_factory=dict)
    allcommands: bool = False  # every command, without looking at `allowed`
    future: bool = False  # set by +@all: described as "+@all ..."
    allkeys: bool = False
    keys: list[list[Any]] = field(default_factory=list)  # [pattern, READ|WRITE]
    allchannels: bool = False
    channels: list[bytes] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)

    def copy(self) -> Selector:
        return Selector(self.commands, set(self.allowed),
                        {k: list(v) for k, v in self.firstargs.items()}, self.allcommands,
                        self.future, self.allkeys, [list(k) for k in self.keys], self.allchannels,
                        list(self.channels), list(self.rules))

    @property
    def unrestricted(self) -> bool:
        return self.allcommands and self.allkeys and self.allchannels

    # --- rules ------------------------------------------------------------------
    def apply(self, op: bytes) -> None:
        """One selector rule (acl.c ACLSetSelector); raises RuleError, leaving a partial change
        that the caller discards (ACL SETUSER works on a copy)."""
        low = op.lower()
        if low in (b"allkeys", b"~*"):
            self.allkeys = True
            self.keys = []
        elif low == b"resetkeys":
            self.allkeys = False
            self.keys = []
        elif low in (b"allchannels", b"&*"):
            self.allchannels = True
            self.channels = []
        elif low == b"resetchannels":
            self.allchannels = False
            self.channels = []
        elif low in (b"allcommands", b"+@all"):
            # `allowed` is not read while `allcommands` holds; filled on the first denial.
            self.allowed = set()
            self.firstargs = {}
            self.allcommands = self.future = True
            self.rules = []
        elif low in (b"nocommands", b"-@all"):
            self.allowed = set()
            self.firstargs = {}
            self.allcommands = self.future = False
            self.rules = []
        elif op[:1] in (b"~", b"%"):
            self._add_key_pattern(op)
        elif op[:1] == b"&":
            if self.allchannels:
                raise RuleError(CHANNELS_AFTER_ALL)
            if _has_spaces(op[1:]):
                raise RuleError(SYNTAX)
            if op[1:] not in self.channels:
                self.channels.append(op[1:])
        elif op[:2] in (b"+@", b"-@"):
            category = op[2:].decode("utf-8", "replace").lower()
            if category not in CATEGORIES:
                raise RuleError(UNKNOWN_RULE)
            allow = op[:1] == b"+"
            for name in self.commands.in_category(category):
                self._set(name, allow)
            self._rule(op[:1].decode() + "@" + category, "@" + category)
        elif op[:1] == b"+":
            self._allow_command(op[1:].decode("utf-8", "surrogateescape"))
        elif op[:1] == b"-":
            self._deny_command(op[1:].decode("utf-8", "surrogateescape"))
        else:
            raise RuleError(SYNTAX)

    def _add_key_pattern(self, op: bytes) -> None:
        if self.allkeys:
            raise RuleError(KEYS_AFTER_ALL)
        if op[:1] == b"%":
            # Redis reads R/W up to a '~' (or the end: "%R" is the empty pattern).
            flags, offset = 0, 1
            while offset < len(op):
                ch = op[offset:offset + 1].upper()
                offset += 1
                if ch == b"R":
                    flags |= READ
                elif ch == b"W":
                    flags |= WRITE
                elif ch == b"~":
                    break
                else:
                    raise RuleError(SYNTAX)
            if not flags:
                raise RuleError(SYNTAX)
            pattern = op[offset:]
        else:
            flags, pattern = ALL, op[1:]
        if _has_spaces(pattern):
            raise RuleError(SYNTAX)
        for existing in self.keys:
            if existing[0] == pattern:
                existing[1] |= flags
                return
        self.keys.append([pattern, flags])

    def _set(self, name: str, allow: bool) -> None:
        spec = self.commands.by_name[name]
        for member in self.commands.family(spec):
            if allow:
                self.allowed.add(member)
            else:
                if self.allcommands:
                    self.allowed = set(self.commands.by_name)
                    self.allcommands = False
                self.allowed.discard(member)
            self.firstargs.pop(member, None)

    def _rule(self, text: str, subject: str) -> None:
        """Replace the earlier rules about `subject` (and its subcommands) with `text`."""
        prefix = subject + "|"
        self.rules = [r for r in self.rules if r[1:] != subject and not r[1:].startswith(prefix)]
        self.rules.append(text)

    def _allow_command(self, name: str) -> None:
        spec = self.commands.lookup(name)
        if spec is not None:
            self._set(spec.name, True)
            self._rule("+" + spec.name, spec.name)
            return
        if "|" not in name:
            raise RuleError(UNKNOWN_RULE)
        parent_name, arg = name.split("|", 1)
        parent = self.commands.lookup(parent_name)
        if parent is None or parent.parent is not None:
            raise RuleError(UNKNOWN_RULE)
        if "|" in arg:
            raise RuleError(SUBCOMMAND_FIRSTARG)
        if parent.subcommands:
            raise RuleError(UNKNOWN_RULE)
        # Redis's first-arg exception ("+select|0"): allowed while the command is not.
        allowed = self.firstargs.setdefault(parent.name, [])
        if arg.encode("utf-8", "surrogateescape").lower() not in allowed:
            allowed.append(arg.encode("utf-8", "surrogateescape").lower())
        self._rule("+" + parent.name + "|" + arg, parent.name + "|" + arg)

    def _deny_command(self, name: str) -> None:
        spec = self.commands.lookup(name)
        if spec is None:
            raise RuleError(UNKNOWN_RULE)
        self._set(spec.name, False)
        self._rule("-" + spec.name, spec.name)

    # --- description ------------------------------------------------------------
    def describe_keys(self) -> str:
        if self.allkeys:
            return "~*"
        out = []
        for pattern, flags in self.keys:
            prefix = {ALL: "~", READ: "%R~", WRITE: "%W~"}[flags]
            out.append(prefix + pattern.decode("utf-8", "surrogateescape"))
        return " ".join(out)

    def describe_channels(self) -> str:
        if self.allchannels:
            return "&*"
        return " ".join("&" + c.decode("utf-8", "surrogateescape") for c in self.channels)

    def describe_commands(self) -> str:
        return " ".join(["+@all" if self.future else "-@all", *self.rules])

    def describe(self) -> str:
        parts = []
        keys = self.describe_keys()
        if keys:
            parts.append(keys)
        if not self.allchannels:
            parts.append("resetchannels")
        channels = self.describe_channels()
        if channels:
            parts.append(channels)
        parts.append(self.describe_commands())
        return " ".join(parts)

    # --- the check ----------------------------------------------------------------
    def check(self, spec: Any, argv: list[bytes], keys: list[tuple[int, int]],
              channels: Iterable[int], literal: bool = False) -> tuple[int, int]:
        """(outcome, argv index at fault) for one command (acl.c ACLSelectorCheckCmd)."""
        if not self.allcommands and "no_auth" not in spec.flags and spec.name not in self.allowed:
            base = spec.parent.name if spec.parent is not None else spec.name
            allowed = self.firstargs.get(base)
            at = 2 if spec.parent is not None else 1
            if not allowed or len(argv) <= at or argv[at].lower() not in allowed:
                return DENIED_CMD, 0
        if keys and not self.allkeys:
            for index, need in keys:
                if not self.key_allowed(argv[index], need):
                    return DENIED_KEY, index
        if channels and not self.allchannels:
            for index in channels:
                if not channel_allowed(self.channels, argv[index], literal):
                    return DENIED_CHANNEL, index
        return OK, 0

    def key_allowed(self, key: bytes, need: int) -> bool:
        if self.allkeys:
            return True
        for pattern, flags in self.keys:
            if flags & need == need and glob_match(pattern, key):
                return True
        return False


def channel_allowed(patterns: list[bytes], name: bytes, is_pattern: bool) -> bool:
    """Redis's ACLCheckChannelAgainstList: a channel matches a pattern; a PSUBSCRIBE
    pattern (`is_pattern`) must be one of the patterns as written."""
    if is_pattern:
        return name in patterns
    return any(glob_match(p, name) for p in patterns)


@dataclass
class User:
    name: bytes
    root: Selector
    enabled: bool = False
    nopass: bool = False
    sanitize: str = "sanitize-payload"  # or "skip-sanitize-payload"
    passwords: list[str] = field(default_factory=list)  # SHA-256 hex, in the order added
    selectors: list[Selector] = field(default_factory=list)  # the (...) ones

    def copy(self) -> User:
        return User(self.name, self.root.copy(), self.enabled, self.nopass, self.sanitize,
                    list(self.passwords), [s.copy() for s in self.selectors])

    @property
    def unrestricted(self) -> bool:
        """Every command on every key and channel: the dispatcher may skip the check."""
        return self.root.unrestricted or any(s.unrestricted for s in self.selectors)

    def all_selectors(self) -> Iterator[Selector]:
        yield self.root
        yield from self.selectors

    def flag_names(self) -> list[str]:
        flags = ["on" if self.enabled else "off"]
        if self.nopass:
            flags.append("nopass")
        flags.append(self.sanitize)
        return flags

    def describe(self) -> str:
        parts = self.flag_names()
        parts += ["#" + h for h in self.passwords]
        parts.append(self.root.describe())
        parts += ["(" + s.describe() + ")" for s in self.selectors]
        return " ".join(parts)

    def check_password(self, password: bytes) -> bool:
        if self.nopass:
            return True
        digest = hash_password(password)
        return any(hmac.compare_digest(digest, h) for h in self.passwords)

    def apply(self, op: bytes, new_selector: Any) -> None:
        """One ACL SETUSER rule (acl.c ACLSetUser)."""
        low = op.lower()
        if low == b"on":
            self.enabled = True
        elif low == b"off":
            self.enabled = False
        elif low in (b"skip-sanitize-payload", b"sanitize-payload"):
            self.sanitize = low.decode()
        elif low == b"nopass":
            self.nopass = True
            self.passwords = []
        elif low == b"resetpass":
            self.nopass = False
            self.passwords = []
        elif op[:1] in (b">", b"#"):
            digest = hash_password(op[1:]) if op[:1] == b">" else op[1:].decode("latin-1")
            if op[:1] == b"#" and not _valid_hash(digest):
                raise RuleError(BAD_HASH)
            if digest not in self.passwords:
                self.passwords.append(digest)
            self.nopass = False
        elif op[:1] in (b"<", b"!"):
            digest = hash_password(op[1:]) if op[:1] == b"<" else op[1:].decode("latin-1")
            if op[:1] == b"!" and not _valid_hash(digest):
                raise RuleError(BAD_HASH)
            if digest not in self.passwords:
                raise RuleError(NO_SUCH_PASSWORD)
            self.passwords.remove(digest)
        elif op[:1] == b"(" and op[-1:] == b")":
            selector = new_selector()
            for rule in op[1:-1].split():
                selector.apply(rule)
            self.selectors.append(selector)
        elif low == b"clearselectors":
            self.selectors = []
        elif low == b"reset":
            for rule in (b"resetpass", b"resetkeys", b"resetchannels", b"off",
                         b"sanitize-payload", b"clearselectors", b"-@all"):
                self.apply(rule, new_selector)
            if new_selector().allchannels:  # acl-pubsub-default allchannels
                self.root.apply(b"allchannels")
        else:
            self.root.apply(op)


def channels_left(new: User, old: User) -> list[bytes] | None:
    """After `old`'s rules became `new`'s: None if every channel `old` allowed is still
    allowed, else the channel patterns `new` has (all selectors), which the user's
    subscriptions must stay within (Redis's getUpcomingChannelList). As in Redis, a
    pattern counts as kept only if `new` has it as written."""
    selectors = list(new.all_selectors())
    if any(s.allchannels for s in selectors):
        return None
    left = [pattern for s in selectors for pattern in s.channels]
    if all(not s.allchannels and all(p in left for p in s.channels) for s in old.all_selectors()):
        return None
    return left


def merge_selector_args(args: list[bytes]) -> list[bytes]:
    """Join "(~a" "+get)" into one "(~a +get)" rule (acl.c ACLMergeSelectorArguments)."""
    merged: list[bytes] = []
    open_parts: list[bytes] | None = None
    for arg in args:
        if open_parts is not None:
            open_parts.append(arg)
            if arg.endswith(b")"):
                merged.append(b" ".join(open_parts))
                open_parts = None
        elif arg.startswith(b"(") and not arg.endswith(b")"):
            open_parts = [arg]
        else:
            merged.append(arg)
    if open_parts is not None:
        start = open_parts[0].decode("utf-8", "surrogateescape")
        raise RuleError(f"Unmatched parenthesis in acl selector starting at '{start}'.")
    return merged


@dataclass
class LogEntry:
    count: int
    reason: str
    context: str
    object: bytes
    username: bytes
    client_info: str
    entry_id: int
    created_ms: int
    updated_ms: int


class Acl:
    """The users, the default user, the log, and INFO's denial counters."""

    def __init__(self, pubsub_default_all: bool = False) -> None:
        self.commands = Commands()
        self.pubsub_default_all = pubsub_default_all
        self.users: dict[bytes, User] = {}
        self.log: list[LogEntry] = []  # newest first
        self.next_log_id = 0
        # INFO's acl_access_denied_* (tls_cert: a certificate's CN named no enabled user).
        self.denied = {"auth": 0, "cmd": 0, "key": 0, "channel": 0, "tls_cert": 0}
        self.default = self.create(b"default")
        for rule in (b"+@all", b"~*", b"&*", b"on", b"nopass"):
            self.default.apply(rule, self.new_selector)
        # Called with a user whose rules changed, or None when users were replaced.
        self.on_change: list[Any] = []

    def new_selector(self) -> Selector:
        return Selector(self.commands, allchannels=self.pubsub_default_all)

    def new_user(self, name: bytes) -> User:
        return User(name, Selector(self.commands, allchannels=self.pubsub_default_all))

    def create(self, name: bytes) -> User:
        user = self.new_user(name)
        self.users[name] = user
        return user

    @property
    def default_open(self) -> bool:
        """New connections start authenticated: the default user is on and nopass."""
        return self.default.enabled and self.default.nopass

    @property
    def default_has_password(self) -> bool:
        """For protected mode: the default user needs a password."""
        return not self.default.nopass

    def set_default_password(self, password: str) -> None:
        """`requirepass` is the default user's password, as in Redis (empty: nopass)."""
        self.default.apply(b"resetpass", self.new_selector)
        self.default.apply(b">" + password.encode() if password else b"nopass", self.new_selector)
        self._changed(self.default)

    def _changed(self, user: User | None) -> None:
        for callback in self.on_change:
            callback(user)

    def setuser(self, name: bytes, rules: list[bytes]) -> None:
        """Apply all rules to a copy, then commit: an error leaves the user as it was.

        Raises RuleError(reason, with the failing rule as `.rule`).
        """
        existing = self.users.get(name)
        user = existing.copy() if existing is not None else self.new_user(name)
        for rule in merge_selector_args(rules):
            try:
                user.apply(rule, self.new_selector)
            except RuleError as error:
                error.rule = rule
                raise
        if existing is not None:
            existing.__dict__.update(user.__dict__)
            self._changed(existing)
        else:
            self.users[name] = user

    def deluser(self, name: bytes) -> User | None:
        user = self.users.pop(name, None)
        if user is not None:
            self._changed(user)
        return user

    def authenticate(self, name: bytes, password: bytes) -> User | None:
        user = self.users.get(name)
        if user is None or not user.enabled or not user.check_password(password):
            return None
        return user

    # --- the log ----------------------------------------------------------------
    def add_log(self, reason: str, context: str, obj: bytes, username: bytes,
                client_info: str, now_ms: int, max_len: int) -> None:
        self.denied[{"command": "cmd", "tls-cert": "tls_cert"}.get(reason, reason)] += 1
        for entry in self.log:
            if (entry.reason, entry.context, entry.object, entry.username) == (
                    reason, context, obj, username) and now_ms - entry.updated_ms < LOG_GROUP_MS:
                entry.count += 1
                entry.updated_ms = now_ms
                entry.client_info = client_info
                self.log.remove(entry)
                self.log.insert(0, entry)
                return
        self.log.insert(0, LogEntry(1, reason, context, obj, username, client_info,
                                    self.next_log_id, now_ms, now_ms))
        self.next_log_id += 1
        del self.log[max_len:]

    # --- ACL files and `user` directives ----------------------------------------
    def load_lines(self, lines: Iterable[tuple[str, list[bytes]]],
                   keep_default: bool = True) -> dict[bytes, User]:
        """Users from "user <name> <rules...>" lines: a fresh set, or RuleError with the place.

        `lines` are (where, words). The default user, if not named, is kept as it is
        (`user` directives) or made anew, +@all ~* &* on nopass (an ACL file, as
        Redis's ACLLoadFromFile).
        """
        saved_users, saved_default = self.users, self.default
        self.users = {}
        self.default = self.create(b"default")
        for rule in (b"+@all", b"~*", b"&*", b"on", b"nopass"):
            self.default.apply(rule, self.new_selector)
        seen: set[bytes] = set()
        try:
            for where, words in lines:
                if len(words) < 2 or words[0].lower() != b"user":
                    raise RuleError(f"{where}: should start with user keyword")
                name = words[1]
                if _has_spaces(name):
                    raise RuleError(f"{where}: username '{name.decode('utf-8', 'replace')}' "
                                    "contains invalid characters")
                if name in seen:
                    raise RuleError(f"{where}: Duplicate user '{name.decode('utf-8', 'replace')}' found")
                seen.add(name)
                if name != b"default":
                    self.create(name)
                else:
                    self.default.apply(b"reset", self.new_selector)
                try:
                    self.setuser(name, words[2:])
                except RuleError as error:
                    raise RuleError(f"{where}: {error.reason}. ") from None
            if b"default" not in seen and keep_default:
                self.users[b"default"] = saved_default
        except RuleError:
            self.users, self.default = saved_users, saved_default
            raise
        # A user that is still there keeps its identity (and its clients stay
        # authenticated, with the new rules); the clients of users that went are
        # disconnected by the caller.
        for name, user in list(self.users.items()):
            old = saved_users.get(name)
            if old is not None and old is not user:
                old.__dict__.update(user.__dict__)
                self.users[name] = old
        self.default = self.users[b"default"]
        return saved_users

    def dump(self) -> str:
        return "".join(f"user {u.name.decode('utf-8', 'surrogateescape')} {u.describe()}\n"
                       for _, u in sorted(self.users.items()))


def genpass(bits: int) -> str:
    chars = (bits + 3) // 4
    return os.urandom((chars + 1) // 2).hex()[:chars]
