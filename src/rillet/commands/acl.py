"""ACL commands: SETUSER, GETUSER, DELUSER, LIST, USERS, WHOAMI, CAT, GENPASS, LOG, SAVE, LOAD,
DRYRUN, HELP. The model (users, selectors, the check) is rillet/acl.py."""

from __future__ import annotations

import os

from rillet import acl as model
from rillet import errors
from rillet.commands.args import parse_int
from rillet.commands.connection import client_info_line, kill_client
from rillet.commands.table import (
    acl_categories,
    all_specs,
    command,
    help_reply,
    lookup,
    redact_from,
)
from rillet.errors import ReplyError
from rillet.resp.types import OK, Map, SetReply
from rillet.state import Client

_ADMIN = "admin noscript loading stale"
_PLAIN = "noscript loading stale"


def _text(value: bytes) -> str:
    return value.decode("utf-8", "surrogateescape")


def _deauthenticate_and_close(client: Client, ctx: Client) -> None:
    """Redis's deauthenticateAndCloseClient: the client goes without a reply; the one
    running the command gets its reply first."""
    client.set_user(ctx.server.acl.default)
    client.authenticated = False
    kill_client(client, ctx)


def kill_clients_of_missing_users(ctx: Client) -> None:
    """Clients authenticated as a user that went (DELUSER, LOAD) are disconnected, as in Redis."""
    users = ctx.server.acl.users
    for client in list(ctx.server.clients.values()):
        if users.get(client.user.name) is not client.user:
            _deauthenticate_and_close(client, ctx)


def _subscribed_beyond(client: Client, channels: list[bytes]) -> bool:
    """Redis's ACLShouldKillPubsubClient: a subscription `channels` no longer allows."""
    subs = client.pubsub
    if subs is None:
        return False
    return (any(not model.channel_allowed(channels, p, True) for p in subs.patterns)
            or any(not model.channel_allowed(channels, c, False) for c in subs.channels)
            or any(not model.channel_allowed(channels, c, False) for c in subs.shard))


def kill_revoked_subscribers(ctx: Client, before: dict[bytes, model.User]) -> None:
    """After users' rules changed (`before`: their copies from before the change): the
    clients subscribed to a channel or pattern their user lost are disconnected, as
    Redis's ACLKillPubsubClientsIfNeeded (SETUSER) and ACLLoadFromFile (LOAD) do."""
    if not any((ctx.server.pubsub.channels, ctx.server.pubsub.patterns, ctx.server.pubsub.shard)):
        return
    left: dict[bytes, list[bytes] | None] = {}
    for client in list(ctx.server.clients.values()):
        user = client.user
        old = before.get(user.name)
        if old is None or client.pubsub is None or client.closing:
            continue
        if user.name not in left:
            left[user.name] = model.channels_left(user, old)
        channels = left[user.name]
        if channels is not None and _subscribed_beyond(client, channels):
            _deauthenticate_and_close(client, ctx)


@command("acl|setuser", -3, _ADMIN, group="server", since="6.0.0", redact=redact_from(2))
def acl_setuser(ctx: Client, argv: list[bytes]) -> object:
    """ACL SETUSER username [rule [rule ...]]"""
    name = argv[2]
    if model._has_spaces(name):
        raise ReplyError(errors.ACL_BAD_USERNAME)
    acl = ctx.server.acl
    existing = acl.users.get(name)
    before = {name: existing.copy()} if existing is not None else {}
    try:
        # An empty rule is a no-op in Redis (ACLSetUser with oplen 0).
        acl.setuser(name, [rule for rule in argv[3:] if rule])
    except model.RuleError as error:
        rule = getattr(error, "rule", None)
        if rule is None:  # an unmatched parenthesis: its own message
            raise ReplyError("ERR " + error.reason) from None
        raise ReplyError(errors.ACL_SETUSER_RULE.format(errors.c_text(rule), error.reason)) from None
    kill_revoked_subscribers(ctx, before)
    return OK


def _selector_map(selector: model.Selector) -> list[tuple[bytes, object]]:
    return [
        (b"commands", selector.describe_commands().encode()),
        (b"keys", selector.describe_keys().encode()),
        (b"channels", selector.describe_channels().encode()),
    ]


@command("acl|getuser", 3, _ADMIN, group="server", since="6.0.0", redact=redact_from(2))
def acl_getuser(ctx: Client, argv: list[bytes]) -> object:
    """ACL GETUSER username"""
    user = ctx.server.acl.users.get(argv[2])
    if user is None:
        return None
    return Map([
        (b"flags", SetReply([f.encode() for f in user.flag_names()])),
        (b"passwords", [h.encode() for h in user.passwords]),
        *_selector_map(user.root),
        (b"selectors", [Map(_selector_map(s)) for s in user.selectors]),
    ])


@command("acl|deluser", -3, _ADMIN, group="server", since="6.0.0", redact=redact_from(2))
def acl_deluser(ctx: Client, argv: list[bytes]) -> object:
    """ACL DELUSER username [username ...]"""
    if b"default" in argv[2:]:
        raise ReplyError(errors.ACL_DEFAULT_UNDELETABLE)
    deleted = 0
    for name in argv[2:]:
        if ctx.server.acl.deluser(name) is not None:
            deleted += 1
    if deleted:
        kill_clients_of_missing_users(ctx)
    return deleted


@command("acl|list", 2, _ADMIN, group="server", since="6.0.0")
def acl_list(ctx: Client, argv: list[bytes]) -> object:
    """ACL LIST"""
    return [line.encode("utf-8", "surrogateescape") for line in ctx.server.acl.dump().splitlines()]


@command("acl|users", 2, _ADMIN, group="server", since="6.0.0")
def acl_users(ctx: Client, argv: list[bytes]) -> object:
    """ACL USERS"""
    return sorted(ctx.server.acl.users)


@command("acl|whoami", 2, _PLAIN, group="server", since="6.0.0")
def acl_whoami(ctx: Client, argv: list[bytes]) -> object:
    """ACL WHOAMI"""
    return ctx.user.name


@command("acl|cat", -2, _PLAIN, group="server", since="6.0.0")
def acl_cat(ctx: Client, argv: list[bytes]) -> object:
    """ACL CAT [category]"""
    if len(argv) > 3:
        raise ReplyError(errors.subcommand_syntax(argv[1], "acl"))
    if len(argv) == 2:
        return [c.encode() for c in model.CATEGORIES]
    category = argv[2].decode("utf-8", "replace").lower()
    if category not in model.CATEGORIES:
        raise ReplyError(errors.ACL_UNKNOWN_CATEGORY.format(errors.c_text(argv[2])))
    return [s.name.encode() for s in all_specs()
            if category in acl_categories(s) and not (s.parent is not None and s.parent.one_command)]


@command("acl|genpass", -2, _PLAIN, group="server", since="6.0.0")
def acl_genpass(ctx: Client, argv: list[bytes]) -> object:
    """ACL GENPASS [bits]"""
    if len(argv) > 3:
        raise ReplyError(errors.subcommand_syntax(argv[1], "acl"))
    bits = 256
    if len(argv) == 3:
        bits = parse_int(argv[2])
        if not 0 < bits <= 4096:
            raise ReplyError(errors.ACL_GENPASS_BITS)
    return model.genpass(bits).encode()


@command("acl|log", -2, _ADMIN, group="server", since="6.0.0")
def acl_log(ctx: Client, argv: list[bytes]) -> object:
    """ACL LOG [count | RESET]"""
    log = ctx.server.acl.log
    if len(argv) > 3:
        raise ReplyError(errors.subcommand_syntax(argv[1], "acl"))
    count = 10
    if len(argv) == 3:
        if argv[2].upper() == b"RESET":
            log.clear()
            return OK
        count = max(parse_int(argv[2]), 0)
    now = ctx.server.clock.now_ms()
    return [Map([
        (b"count", e.count),
        (b"reason", e.reason.encode()),
        (b"context", e.context.encode()),
        (b"object", e.object),
        (b"username", e.username),
        (b"age-seconds", (now - e.created_ms) / 1000),
        (b"client-info", e.client_info.encode("utf-8", "surrogateescape")),
        (b"entry-id", e.entry_id),
        (b"timestamp-created", e.created_ms),
        (b"timestamp-last-updated", e.updated_ms),
    ]) for e in log[:count]]


def _acl_file(ctx: Client) -> str:
    path = str(ctx.server.config["aclfile"])
    if not path:
        raise ReplyError(errors.ACL_NO_FILE)
    return path if os.path.isabs(path) else os.path.join(str(ctx.server.config["dir"]), path)


@command("acl|save", 2, _ADMIN, group="server", since="6.0.0")
def acl_save(ctx: Client, argv: list[bytes]) -> object:
    """ACL SAVE"""
    path = _acl_file(ctx)
    temp = f"{path}.tmp-{os.getpid()}"
    try:
        with open(temp, "w", encoding="utf-8", errors="surrogateescape") as handle:
            handle.write(ctx.server.acl.dump())
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except OSError:
        raise ReplyError(errors.ACL_SAVE_FAILED) from None
    return OK


@command("acl|load", 2, _ADMIN, group="server", since="6.0.0")
def acl_load(ctx: Client, argv: list[bytes]) -> object:
    """ACL LOAD"""
    path = _acl_file(ctx)
    acl = ctx.server.acl
    before = {name: user.copy() for name, user in acl.users.items()}
    try:
        load_acl_file(acl, path)
    except model.RuleError as error:
        raise ReplyError(errors.ACL_LOAD_FAILED.format(error.reason)) from None
    ctx.server._users_changed(None)
    kill_clients_of_missing_users(ctx)
    kill_revoked_subscribers(ctx, before)
    return OK


USERS_AND_ACLFILE = (
    "Configuring Redis with users defined in redis.conf and at the same setting an ACL file path "
    "is invalid. This setup is very likely to lead to configuration errors and security holes, "
    "please define either an ACL file or declare users directly in your redis.conf, but not both.")


def load_startup_users(acl: model.Acl, config) -> None:
    """The config file's `user` lines or the `aclfile`, at start (Redis's ACLLoadUsersAtStartup);
    raises RuleError and the server does not start."""
    path = config["aclfile"]
    if config.users and path:
        raise model.RuleError(USERS_AND_ACLFILE)
    if config.users:
        acl.load_lines(config.users)
    elif path:
        load_acl_file(acl, path if os.path.isabs(path) else os.path.join(str(config["dir"]), path))


def load_acl_file(acl: model.Acl, path: str) -> None:
    """Replace the users with the file's (all or nothing), as Redis's ACLLoadFromFile."""
    from rillet.resp.parser import split_args

    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except OSError as error:
        raise model.RuleError(f"Error loading ACLs, opening file '{path}': {error.strerror}") from None
    lines = []
    for lineno, line in enumerate(raw.split(b"\n"), 1):
        line = line.strip()
        if not line or line.startswith(b"#"):
            continue
        words = split_args(line)
        if not words:
            raise model.RuleError(f"{path}:{lineno}: unbalanced quotes in acl line")
        lines.append((f"{path}:{lineno}", words))
    acl.load_lines(lines, keep_default=False)


@command("acl|dryrun", -4, _ADMIN, group="server", since="7.0.0")
def acl_dryrun(ctx: Client, argv: list[bytes]) -> object:
    """ACL DRYRUN username command [arg [arg ...]]"""
    user = ctx.server.acl.users.get(argv[2])
    if user is None:
        raise ReplyError(errors.ACL_USER_NOT_FOUND.format(errors.c_text(argv[2])))
    args = argv[3:]
    spec = lookup(args[0])
    if spec is not None and spec.subcommands and len(args) >= 2:
        spec = spec.subcommands.get(args[1]) or spec.subcommands.get(args[1].lower()) or None
    # A container named alone is looked up as itself, and fails the arity check.
    if spec is None:
        raise ReplyError(errors.ACL_COMMAND_NOT_FOUND.format(errors.c_text(args[0])))
    if not spec.min_argc <= len(args) <= spec.max_argc:
        raise ReplyError(errors.wrong_arity(spec.name))
    outcome, index = check(user, spec, args)
    if outcome == model.OK:
        return OK
    return denial_text(outcome, user, spec, args, index, errors.DRYRUN_COMMAND,
                       errors.DRYRUN_KEY, errors.DRYRUN_CHANNEL).encode("utf-8", "surrogateescape")


_NEEDS: dict[object, int | None] = {}
_UNSEEN = -1


def _one_key_need(spec) -> int | None:
    """What a command's key asks for; None for a command without keys for the ACL (Redis's
    doesCommandHaveKeys: SSUBSCRIBE's and SPUBLISH's shard channels are "not_key" specs,
    checked as channels only)."""
    need = _NEEDS.get(spec, _UNSEEN)
    if need != _UNSEEN:
        return need
    flags = spec.key_spec_flags()
    need = None
    if spec.first_key > 0 and not all("not_key" in f.split() for f in flags):
        need = model.key_need(flags[0])
    _NEEDS[spec] = need
    return need


def _all_arguments(argv: list[bytes]) -> range:
    return range(1, len(argv))


# The channels a command names, for channel rules (Redis's getChannelsFromCommand):
# the unsubscribe forms and PUBSUB are not checked.
_CHANNELS = {
    "publish": lambda argv: (1,), "spublish": lambda argv: (1,),
    "subscribe": _all_arguments, "ssubscribe": _all_arguments, "psubscribe": _all_arguments,
}


def check(user: model.User, spec, argv: list[bytes]) -> tuple[int, int]:
    """Redis's ACLCheckAllUserCommandPerm: any selector allowing wins; else the most
    relevant denial (a later key or channel beats an earlier one)."""
    first = spec.first_key
    need = _one_key_need(spec)
    if spec.find_keys is None and (first == spec.last_key or need is None):
        # No key, or one at a fixed place (most commands): no key list to build.
        keys = [(first, need)] if need is not None and first < len(argv) else []
    else:
        keys = [(i, model.key_need(flags)) for i, flags in spec.keys_with_flags(argv)]
    channels = _CHANNELS.get(spec.name)
    at = channels(argv) if channels is not None else ()
    literal = spec.name == "psubscribe"
    outcome, index = user.root.check(spec, argv, keys, at, literal)
    if outcome == model.OK or not user.selectors:
        return outcome, index
    best, best_index = outcome, index
    for selector in user.selectors:
        outcome, index = selector.check(spec, argv, keys, at, literal)
        if outcome == model.OK:
            return model.OK, 0
        if outcome > best or (outcome == best and index > best_index):
            best, best_index = outcome, index
    return best, best_index


def denial_text(outcome: int, user: model.User, spec, argv: list[bytes], index: int,
                command_text: str, key_text: str, channel_text: str) -> str:
    name = _text(user.name)
    if outcome == model.DENIED_CMD:
        return command_text.format(name, spec.shown_name.decode())
    if outcome == model.DENIED_KEY:
        return key_text.format(name, _text(argv[index]))
    return channel_text.format(name, _text(argv[index]))


def refuse(ctx: Client, spec, argv: list[bytes], at_exec: bool = False,
           context: str | None = None) -> str | None:
    """The dispatcher's permission check: None, or the NOPERM text (logged, counted).

    `at_exec`: EXEC checking a queued command again (the rules may have changed
    since it was queued), with Redis's text for that. `context`: the ACL LOG's
    context when not the client's own ("lua" for a script's command).
    """
    outcome, index = check(ctx.user, spec, argv)
    if outcome == model.OK:
        return None
    acl = ctx.server.acl
    reason = {model.DENIED_CMD: "command", model.DENIED_KEY: "key",
              model.DENIED_CHANNEL: "channel"}[outcome]
    obj = spec.shown_name if outcome == model.DENIED_CMD else argv[index]
    if context is None:
        context = "multi" if ctx.multi is not None or at_exec else "toplevel"
    now = ctx.server.clock.now_ms()
    acl.add_log(reason, context, obj, ctx.user.name, client_info_line(ctx, now), now,
                ctx.server.config["acllog-max-len"])
    if at_exec:
        return errors.NOPERM_AT_EXEC.format(_EXEC_REASONS[outcome])
    return denial_text(outcome, ctx.user, spec, argv, index, errors.NOPERM_COMMAND,
                       errors.NOPERM_KEY, errors.NOPERM_CHANNEL)


_EXEC_REASONS = {
    model.DENIED_CMD: "no permission to execute the command or subcommand",
    model.DENIED_KEY: "no permission to touch the specified keys",
    model.DENIED_CHANNEL: "no permission to access one of the channels used as arguments",
}


@command("acl|help", 2, "loading stale", group="server", since="6.0.0")
def acl_help(ctx: Client, argv: list[bytes]) -> object:
    """ACL HELP"""
    return help_reply(
        "ACL",
        b"CAT [<category>]",
        b"    List all commands that belong to <category>, or all command categories",
        b"    when no category is specified.",
        b"DELUSER <username> [<username> ...]",
        b"    Delete a list of users.",
        b"DRYRUN <username> <command> [<arg> ...]",
        b"    Returns whether the user can execute the given command without executing the command.",
        b"GETUSER <username>",
        b"    Get the user's details.",
        b"GENPASS [<bits>]",
        b"    Generate a secure 256-bit user password. The optional `bits` argument can",
        b"    be used to specify a different size.",
        b"LIST",
        b"    Show users details in config file format.",
        b"LOAD",
        b"    Reload users from the ACL file.",
        b"LOG [<count> | RESET]",
        b"    Show the ACL log entries.",
        b"SAVE",
        b"    Save the current config to the ACL file.",
        b"SETUSER <username> <attribute> [<attribute> ...]",
        b"    Create or modify a user with the specified attributes.",
        b"USERS",
        b"    List all the registered usernames.",
        b"WHOAMI",
        b"    Return the current connection username.",
    )
