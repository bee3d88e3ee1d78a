"""CLIENT TRACKING, CACHING, TRACKINGINFO and GETREDIR: server-assisted client-side
caching. The table and the invalidation messages live in rillet.tracking."""

from __future__ import annotations

from rillet import errors
from rillet.commands.args import parse_int
from rillet.commands.table import command
from rillet.errors import ReplyError
from rillet.resp.types import OK, Map, Raw, SetReply
from rillet.state import Client

_FLAGS = "noscript loading stale"


@command("client|tracking", -3, _FLAGS, group="connection", since="6.0.0", acl="slow connection")
def client_tracking(ctx: Client, argv: list[bytes]) -> object:
    """CLIENT TRACKING <ON | OFF> [REDIRECT client-id] [PREFIX prefix [PREFIX prefix ...]] [BCAST] [OPTIN] [OPTOUT] [NOLOOP]"""
    server = ctx.server
    redirect = 0
    bcast = optin = optout = noloop = False
    prefixes: list[bytes] = []
    i = 3
    while i < len(argv):
        option = argv[i].lower()
        more = i + 1 < len(argv)
        if option == b"redirect" and more:
            i += 1
            if redirect:
                raise ReplyError(errors.TRACKING_REDIRECT_TWICE)
            redirect = parse_int(argv[i])
            if redirect not in server.clients:
                raise ReplyError(errors.TRACKING_REDIRECT_MISSING)
        elif option == b"bcast":
            bcast = True
        elif option == b"optin":
            optin = True
        elif option == b"optout":
            optout = True
        elif option == b"noloop":
            noloop = True
        elif option == b"prefix" and more:
            i += 1
            prefixes.append(argv[i])
        else:
            raise ReplyError(errors.SYNTAX)
        i += 1
    switch = argv[2].lower()
    if switch == b"off":
        server.tracking.disable(ctx)
        return OK
    if switch != b"on":
        raise ReplyError(errors.SYNTAX)
    mode = ctx.tracking
    if prefixes and not bcast:
        raise ReplyError(errors.TRACKING_PREFIX_NEEDS_BCAST)
    if mode is not None and mode.bcast != bcast:
        raise ReplyError(errors.TRACKING_BCAST_SWITCH)
    if bcast and (optin or optout):
        raise ReplyError(errors.TRACKING_BCAST_OPTIN)
    if optin and optout:
        raise ReplyError(errors.TRACKING_OPTIN_OPTOUT)
    if mode is not None and ((optin and mode.optout) or (optout and mode.optin)):
        raise ReplyError(errors.TRACKING_OPT_SWITCH)
    overlap = server.tracking.check_prefixes(mode, prefixes) if bcast else None
    if overlap is not None and not overlap.startswith("!"):
        raise ReplyError(overlap)
    server.tracking.enable(ctx, redirect, bcast, optin, optout, noloop, prefixes)
    if overlap is not None:
        # Redis's checkPrefixCollisionsOrReply answers an overlap past the first
        # prefix with an error and a true value: the error, then +OK, both sent.
        text = overlap[1:].replace("\r", " ").replace("\n", " ")
        return Raw(b"-%s\r\n+OK\r\n" % text.encode("utf-8", "surrogateescape"))
    return OK


@command("client|caching", 3, _FLAGS, group="connection", since="6.0.0", acl="slow connection")
def client_caching(ctx: Client, argv: list[bytes]) -> object:
    """CLIENT CACHING <YES | NO>"""
    mode = ctx.tracking
    if mode is None:
        raise ReplyError(errors.CACHING_NOT_TRACKING)
    choice = argv[2].lower()
    if choice == b"yes":
        if not mode.optin:
            raise ReplyError(errors.CACHING_YES_NOT_OPTIN)
    elif choice == b"no":
        if not mode.optout:
            raise ReplyError(errors.CACHING_NO_NOT_OPTOUT)
    else:
        raise ReplyError(errors.SYNTAX)
    mode.caching = True
    return OK


@command("client|trackinginfo", 2, _FLAGS, group="connection", since="6.2.0", acl="slow connection")
def client_trackinginfo(ctx: Client, argv: list[bytes]) -> object:
    """CLIENT TRACKINGINFO"""
    mode = ctx.tracking
    return Map([
        (b"flags", SetReply(ctx.server.tracking.flags(ctx))),
        (b"redirect", -1 if mode is None else mode.redirect),
        (b"prefixes", [] if mode is None else sorted(mode.prefixes)),
    ])


@command("client|getredir", 2, _FLAGS, group="connection", since="6.0.0", acl="slow connection")
def client_getredir(ctx: Client, argv: list[bytes]) -> object:
    """CLIENT GETREDIR"""
    mode = ctx.tracking
    return -1 if mode is None else mode.redirect
