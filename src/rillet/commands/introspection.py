"""Watching the server: MONITOR, CLIENT REPLY, SLOWLOG and LATENCY.

The feed and the slow log live in rillet.observe; the dispatcher feeds them
(Dispatcher.call) and mutes replies for CLIENT REPLY OFF|SKIP (Dispatcher._mute).
LATENCY reads the latency monitor (observe.LatencyMonitor: the `command`,
`fast-command` and `expire-cycle` events); LATENCY HISTOGRAM and GRAPH are in
diagnostics.py.
"""

from __future__ import annotations

from rillet import errors
from rillet.commands.args import parse_int
from rillet.commands.table import command, help_reply
from rillet.errors import ReplyError
from rillet.resp.types import NO_REPLY, OK, Verbatim
from rillet.state import PAUSE_BY_CLIENT, Client


@command("monitor", 1, "admin noscript loading stale", group="server", since="1.0.0",
         acl="admin slow dangerous")
def monitor(ctx: Client, argv: list[bytes]) -> object:
    """MONITOR"""
    ctx.server.add_monitor(ctx)
    return OK


@command("client|reply", 3, "noscript loading stale", group="connection", since="3.2.0",
         acl="slow connection")
def client_reply(ctx: Client, argv: list[bytes]) -> object:
    """CLIENT REPLY <ON | OFF | SKIP>"""
    mode = {b"ON": 0, b"OFF": 1, b"SKIP": 2}.get(argv[2].upper())
    if mode is None:
        raise ReplyError(errors.SYNTAX)
    if mode == 2 and ctx.reply_mode == 1:
        return NO_REPLY  # as Redis: SKIP does not end an OFF
    ctx.reply_mode = mode
    ctx.update_gate()
    return OK if mode == 0 else NO_REPLY


@command("slowlog|get", -2, "admin loading stale", group="server", since="2.2.12",
         acl="admin slow dangerous")
def slowlog_get(ctx: Client, argv: list[bytes]) -> object:
    """SLOWLOG GET [count]"""
    count = 10
    if len(argv) == 3:
        try:
            count = parse_int(argv[2])
        except ReplyError:
            raise ReplyError(errors.SLOWLOG_COUNT) from None
        if count < -1:
            raise ReplyError(errors.SLOWLOG_COUNT)
    elif len(argv) > 3:
        raise ReplyError(errors.wrong_arity("slowlog|get"))
    entries = list(ctx.server.slowlog.entries)
    if count != -1:
        entries = entries[:count]
    return [[e.id, e.timestamp, e.duration_us, list(e.argv), e.addr, e.name] for e in entries]


@command("slowlog|len", 2, "admin loading stale", group="server", since="2.2.12",
         acl="admin slow dangerous")
def slowlog_len(ctx: Client, argv: list[bytes]) -> object:
    """SLOWLOG LEN"""
    return len(ctx.server.slowlog.entries)


@command("slowlog|reset", 2, "admin loading stale", group="server", since="2.2.12",
         acl="admin slow dangerous")
def slowlog_reset(ctx: Client, argv: list[bytes]) -> object:
    """SLOWLOG RESET"""
    ctx.server.slowlog.reset()
    return OK


@command("slowlog|help", 2, "loading stale", group="server", since="6.2.0", acl="slow")
def slowlog_help(ctx: Client, argv: list[bytes]) -> object:
    """SLOWLOG HELP"""
    return help_reply(
        "SLOWLOG",
        b"GET [<count>]",
        b"    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
        b"    Entries are made of:",
        b"    id, timestamp, time in microseconds, arguments array, client IP and port,",
        b"    client name",
        b"LEN",
        b"    Return the length of the slowlog.",
        b"RESET",
        b"    Reset the slowlog.",
    )


@command("latency|doctor", 2, "admin noscript loading stale", group="server", since="2.8.13",
         acl="admin slow dangerous",
         complexity="O(1)")
def latency_doctor(ctx: Client, argv: list[bytes]) -> object:
    """LATENCY DOCTOR

    Returns a human-readable latency analysis report."""
    state = ctx.server
    values = state.config.values
    return Verbatim(state.latency.report(values["latency-monitor-threshold"],
                                         values["slowlog-log-slower-than"], values["hz"],
                                         state.clock.now_ms() // 1000))


@command("latency|latest", 2, "admin noscript loading stale", group="server", since="2.8.13",
         acl="admin slow dangerous",
         complexity="O(1)")
def latency_latest(ctx: Client, argv: list[bytes]) -> object:
    """LATENCY LATEST

    Returns the latest latency samples for all events."""
    return [[name.encode(), series.samples[-1][0], series.samples[-1][1], series.max]
            for name, series in ctx.server.latency.events.items()]


@command("latency|history", 3, "admin noscript loading stale", group="server", since="2.8.13",
         acl="admin slow dangerous",
         complexity="O(1)")
def latency_history(ctx: Client, argv: list[bytes]) -> object:
    """LATENCY HISTORY event

    Returns timestamp-latency samples for an event."""
    series = ctx.server.latency.events.get(argv[2].decode("utf-8", "replace"))
    return [] if series is None else [[second, ms] for second, ms in series.samples]


@command("latency|reset", -2, "admin noscript loading stale", group="server", since="2.8.13",
         acl="admin slow dangerous",
         complexity="O(1)")
def latency_reset(ctx: Client, argv: list[bytes]) -> object:
    """LATENCY RESET [event [event ...]]

    Resets the latency data for one or more events."""
    return ctx.server.latency.reset([a.decode("utf-8", "replace") for a in argv[2:]] or None)


@command("latency|help", 2, "loading stale", group="server", since="2.8.13", acl="slow", complexity="O(1)")
def latency_help(ctx: Client, argv: list[bytes]) -> object:
    """LATENCY HELP

    Returns helpful text about the different subcommands."""
    return help_reply(
        "LATENCY",
        b"DOCTOR",
        b"    Return a human readable latency analysis report.",
        b"GRAPH <event>",
        b"    Return an ASCII latency graph for the <event> class.",
        b"HISTORY <event>",
        b"    Return time-latency samples for the <event> class.",
        b"LATEST",
        b"    Return the latest latency samples for all events.",
        b"RESET [<event> ...]",
        b"    Reset latency data of one or more <event> classes.",
        b"    (default: reset all data for all event classes)",
        b"HISTOGRAM [COMMAND ...]",
        b"    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
        b"    If no commands are specified then all histograms are replied.",
    )


@command("client|pause", -3, "admin noscript loading stale", group="connection", since="3.0.0",
         acl="admin slow dangerous connection")
def client_pause(ctx: Client, argv: list[bytes]) -> object:
    """CLIENT PAUSE timeout [WRITE | ALL]"""
    try:
        timeout = parse_int(argv[2])
    except ReplyError:
        raise ReplyError(errors.TIMEOUT_NOT_INTEGER) from None
    if timeout < 0:
        raise ReplyError(errors.TIMEOUT_NEGATIVE)
    pause_all = True
    if len(argv) == 4:
        mode = argv[3].upper()
        if mode not in (b"WRITE", b"ALL"):
            raise ReplyError(errors.CLIENT_PAUSE_MODE)
        pause_all = mode == b"ALL"
    elif len(argv) > 4:
        raise ReplyError(errors.SYNTAX)
    ctx.server.pause(ctx.clock.now_ms() + timeout, pause_all)
    return OK


@command("client|unpause", 2, "admin noscript loading stale", group="connection", since="6.2.0",
         acl="admin slow dangerous connection")
def client_unpause(ctx: Client, argv: list[bytes]) -> object:
    """CLIENT UNPAUSE"""
    ctx.server.unpause(PAUSE_BY_CLIENT)
    return OK
