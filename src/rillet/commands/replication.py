"""Replication commands: REPLICAOF/SLAVEOF, PSYNC/SYNC, REPLCONF, ROLE, WAIT, WAITAOF.

The state they act on is rillet.replication's `Replication` (one per server).
"""

from __future__ import annotations

import logging

from rillet import errors
from rillet.commands.args import parse_int
from rillet.commands.connection import client_info_line
from rillet.commands.table import command
from rillet.errors import ReplyError
from rillet.replication import of as replication_of
from rillet.replication.master import Waiter, aof_position
from rillet.resp.types import NO_REPLY, OK, SimpleString
from rillet.state import Block, Client

_UNAVAILABLE = "ERR replication is not available on this server"

log = logging.getLogger("rillet")


def _request_from(ctx: Client, kind: str) -> str:
    """Who asked, as Redis's log lines name them: the client's CLIENT INFO line."""
    return f"{kind} request from '{client_info_line(ctx, ctx.server.clock.now_ms())}'"


def _replication(ctx: Client):
    found = replication_of(ctx.server)
    if found is None:
        raise ReplyError(_UNAVAILABLE)
    return found


def _replicaof(ctx: Client, argv: list[bytes]) -> object:
    if ctx.server.cluster is not None:
        raise ReplyError(errors.REPLICAOF_IN_CLUSTER)  # CLUSTER REPLICATE instead
    repl = _replication(ctx)
    if repl.failover.paused:
        raise ReplyError(errors.REPLICAOF_DURING_FAILOVER)
    if argv[1].lower() == b"no" and argv[2].lower() == b"one":
        repl.replicaof(None, cause=_request_from(ctx, "user"))
        return OK
    port = parse_int(argv[2], errors.INVALID_MASTER_PORT)
    if not 0 <= port <= 65535:
        raise ReplyError(errors.INVALID_MASTER_PORT)
    host = argv[1].decode("utf-8", "replace")
    if not repl.replicaof(host, port):
        return SimpleString(errors.REPLICA_ALREADY_CONNECTED.encode())
    log.info("REPLICAOF %s:%d enabled (%s)", host, port, _request_from(ctx, "user"))
    return OK


@command("replicaof", 3, "admin noscript stale no_async_loading", group="server", since="5.0.0")
def replicaof(ctx: Client, argv: list[bytes]) -> object:
    """REPLICAOF <host port | NO ONE>"""
    return _replicaof(ctx, argv)


@command("slaveof", 3, "admin noscript stale no_async_loading", group="server", since="1.0.0")
def slaveof(ctx: Client, argv: list[bytes]) -> object:
    """SLAVEOF <host port | NO ONE>"""
    return _replicaof(ctx, argv)


@command("psync", -3, "admin noscript no_async_loading no_multi", group="server", since="2.8.0")
def psync(ctx: Client, argv: list[bytes]) -> object:
    """PSYNC replicationid offset"""
    if len(argv) > 3 and argv[3].lower() == b"failover":
        # FAILOVER's hand-over: our master asks us to take its place first.
        repl = _replication(ctx)
        asked = argv[1].decode("utf-8", "replace")
        log.info("Failover request received for replid %s.", asked)
        if asked != repl.replid:
            raise ReplyError(errors.PSYNC_FAILOVER_REPLID)
        repl.replicaof(None, cause=_request_from(ctx, "failover"))
    return _sync(ctx, argv[1], argv[2], False)


@command("sync", 1, "admin noscript no_async_loading no_multi", group="server", since="1.0.0")
def sync(ctx: Client, argv: list[bytes]) -> object:
    """SYNC"""
    return _sync(ctx, b"?", b"-1", True)


def _sync(ctx: Client, replid: bytes, offset_raw: bytes, sync_cmd: bool) -> object:
    repl = _replication(ctx)
    if ctx.flags == "S":
        return NO_REPLY  # Redis ignores SYNC from a client that is already a replica
    if repl.is_replica and (repl.link is None or not repl.link.up):
        raise ReplyError("NOMASTERLINK Can't SYNC while not connected with my master")
    if ctx.conn is None:
        raise ReplyError(_UNAVAILABLE)
    try:
        offset = int(offset_raw)
    except ValueError:
        offset = -1
    repl.master_side.psync(ctx, replid, offset, sync_cmd)
    return NO_REPLY


@command("replconf", -1, "admin noscript loading stale allow_busy", group="server",
         since="3.0.0")
def replconf(ctx: Client, argv: list[bytes]) -> object:
    """REPLCONF"""
    if len(argv) % 2 == 0:
        raise ReplyError(errors.SYNTAX)
    repl = _replication(ctx)
    side = repl.master_side
    for i in range(1, len(argv), 2):
        option = argv[i].lower()
        value = argv[i + 1]
        if option == b"listening-port":
            side.handshake(ctx)["port"] = parse_int(value)
        elif option == b"ip-address":
            side.handshake(ctx)["ip"] = value.decode("utf-8", "replace")
        elif option == b"capa":
            side.handshake(ctx)["capa"].add(value.lower())
        elif option == b"ack":
            # Sent by replicas once a second (with FACK, their AOF's fsynced
            # offset); never answered.
            try:
                offset = int(value)
                fack = int(argv[i + 3]) if len(argv) > i + 3 and argv[i + 2].lower() == b"fack" \
                    else -1
            except ValueError:
                return NO_REPLY
            side.ack(ctx, offset, fack)
            return NO_REPLY
        elif option == b"getack":
            if repl.link is not None:
                repl.link.send_ack()
            return NO_REPLY
        elif option in (b"rdb-only", b"rdb-filter-only", b"rdb-channel", b"main-ch-client-id",
                        b"version"):
            pass
        else:
            raise ReplyError(errors.REPLCONF_UNRECOGNIZED.format(
                argv[i].decode("utf-8", "replace")))
    return OK


@command("role", 1, "noscript loading stale fast", group="server", since="2.8.12",
         acl="admin fast dangerous")
def role(ctx: Client, argv: list[bytes]) -> object:
    """ROLE"""
    repl = _replication(ctx)
    if repl.is_replica:
        link = repl.link
        state = link.link_state if link is not None else "connect"
        return [b"slave", repl.master_host.encode(), repl.master_port, state.encode(),
                repl.master_repl_offset if link is not None and link.up else -1]
    replicas = [[e.ip.encode(), b"%d" % e.port, b"%d" % e.ack_offset]
                for e in repl.master_side.online() if e.state == "online"]
    return [b"master", repl.master_repl_offset, replicas]


def _timeout_ms(raw: bytes) -> int:
    timeout = parse_int(raw, errors.TIMEOUT_NOT_INTEGER)
    if timeout < 0:
        raise ReplyError(errors.TIMEOUT_NEGATIVE)
    return timeout


@command("wait", 3, "blocking", group="generic", since="3.0.0", acl="slow blocking connection")
def wait(ctx: Client, argv: list[bytes]) -> object:
    """WAIT numreplicas timeout"""
    repl = _replication(ctx)
    if repl.is_replica:
        raise ReplyError(errors.WAIT_ON_REPLICA)
    numreplicas = parse_int(argv[1])
    timeout = _timeout_ms(argv[2])
    side = repl.master_side
    offset = repl.write_offset
    acked = side.acked(offset)
    if ctx.in_exec or acked >= numreplicas or ctx.is_internal:
        return acked
    side.add_waiter(Waiter(ctx, offset, numreplicas), timeout)
    return Block([], 0, argv, acked)


@command("waitaof", 4, "blocking", group="generic", since="7.2.0",
         acl="slow blocking connection")
def waitaof(ctx: Client, argv: list[bytes]) -> object:
    """WAITAOF numlocal numreplicas timeout"""
    repl = _replication(ctx)
    if repl.is_replica:
        raise ReplyError(errors.WAITAOF_ON_REPLICA)
    numlocal = parse_int(argv[1])
    numreplicas = parse_int(argv[2])
    timeout = _timeout_ms(argv[3])
    persistence = ctx.server.persistence
    aof_on = persistence is not None and persistence.aof_state != "off"
    if numlocal and not aof_on:
        raise ReplyError(errors.WAITAOF_APPENDONLY_OFF)
    side = repl.master_side
    offset = repl.write_offset
    aof_bytes = aof_position(persistence) if aof_on and persistence is not None else 0
    local = side.local_aof_durable(aof_bytes)
    acked = side.acked(offset, aof=True)
    if ctx.in_exec or ctx.is_internal or (acked >= numreplicas and local >= numlocal):
        return [local, acked]
    side.add_waiter(Waiter(ctx, offset, numreplicas, aof=True, numlocal=numlocal,
                           aof_bytes=aof_bytes), timeout)
    return Block([], 0, argv, [local, acked])


@command("failover", -1, "admin noscript stale", group="server", since="6.2.0")
def failover(ctx: Client, argv: list[bytes]) -> object:
    """FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT milliseconds]"""
    repl = _replication(ctx)
    if len(argv) == 2 and argv[1].lower() == b"abort":
        if not repl.failover.paused:
            raise ReplyError(errors.FAILOVER_NOT_IN_PROGRESS)
        repl.failover.abort("Failover manually aborted")
        return OK
    host: str | None = None
    port = 0
    timeout = 0
    force = False
    i = 1
    while i < len(argv):
        option = argv[i].lower()
        if option == b"to" and i + 2 < len(argv) and host is None:
            host = argv[i + 1].decode("utf-8", "replace")
            port = parse_int(argv[i + 2])
            i += 3
        elif option == b"timeout" and i + 1 < len(argv) and not timeout:
            timeout = parse_int(argv[i + 1])
            if timeout <= 0:
                raise ReplyError(errors.FAILOVER_TIMEOUT)
            i += 2
        elif option == b"force" and not force:
            force = True
            i += 1
        else:
            raise ReplyError(errors.SYNTAX)
    if repl.failover.paused:
        raise ReplyError(errors.FAILOVER_IN_PROGRESS)
    if repl.is_replica:
        raise ReplyError(errors.FAILOVER_ON_REPLICA)
    if not repl.master_side.online():
        raise ReplyError(errors.FAILOVER_NO_REPLICAS)
    if force and (not timeout or host is None):
        raise ReplyError(errors.FAILOVER_FORCE)
    if host is not None:
        entry = next((e for e in repl.master_side.online() if (e.ip, e.port) == (host, port)), None)
        if entry is None:
            raise ReplyError(errors.FAILOVER_NOT_A_REPLICA)
        if entry.state != "online":
            raise ReplyError(errors.FAILOVER_NOT_ONLINE)
    repl.failover.start(host, port, timeout, force)
    return OK
