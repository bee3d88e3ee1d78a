"""Transactions: MULTI, EXEC, DISCARD, WATCH, UNWATCH.

Commands are queued by the dispatcher while `ctx.multi` is a list; EXEC runs
them back to back (nothing else can interleave: the event loop is our one
thread) and publishes their effects wrapped in MULTI/EXEC.
"""

from __future__ import annotations

from rillet import errors
from rillet.commands.table import command
from rillet.errors import ReplyError
from rillet.resp.types import NULL_ARRAY, OK
from rillet.state import Client


@command("multi", 1, "noscript loading stale fast allow_busy", group="transactions",
         since="1.2.0")
def multi(ctx: Client, argv: list[bytes]) -> object:
    """MULTI"""
    if ctx.multi is not None:
        raise ReplyError(errors.MULTI_NESTED)
    ctx.multi = []
    ctx.multi_error = False
    return OK


@command("discard", 1, "noscript loading stale fast allow_busy", group="transactions",
         since="2.0.0")
def discard(ctx: Client, argv: list[bytes]) -> object:
    """DISCARD"""
    if ctx.multi is None:
        raise ReplyError(errors.DISCARD_WITHOUT_MULTI)
    ctx.multi = None
    ctx.multi_error = False
    ctx.server.unwatch_all(ctx)
    return OK


@command("exec", 1, "noscript loading stale skip_slowlog", group="transactions",
         since="1.2.0")
def exec_(ctx: Client, argv: list[bytes]) -> object:
    """EXEC"""
    if ctx.multi is None:
        raise ReplyError(errors.EXEC_WITHOUT_MULTI)
    queued, ctx.multi = ctx.multi, None
    server = ctx.server
    if ctx.multi_error:
        ctx.multi_error = False
        server.unwatch_all(ctx)
        raise ReplyError(errors.EXECABORT)
    if ctx.dirty_cas:
        server.unwatch_all(ctx)
        return NULL_ARRAY
    server.unwatch_all(ctx)
    assert server.transactions is not None, "a Dispatcher wires itself in"
    return server.transactions.run_transaction(ctx, queued)


@command("watch", -2, "noscript loading stale fast allow_busy", keys=(1, -1, 1), key_flags="RO",
         group="transactions", since="2.2.0")
def watch(ctx: Client, argv: list[bytes]) -> object:
    """WATCH key [key ...]"""
    if ctx.multi is not None:
        raise ReplyError(errors.WATCH_IN_MULTI)
    for key in argv[1:]:
        ctx.server.watch(ctx, key)
    return OK


@command("unwatch", 1, "noscript loading stale fast allow_busy", group="transactions",
         since="2.2.0")
def unwatch(ctx: Client, argv: list[bytes]) -> object:
    """UNWATCH"""
    ctx.server.unwatch_all(ctx)
    return OK
