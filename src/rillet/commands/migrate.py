"""MIGRATE and RESTORE-ASKING: move keys to another server as DUMP payloads.

MIGRATE sends the target (optionally AUTH, then SELECT when the db differs
from the last one used on that connection) one RESTORE per key that exists
here, reads the replies, and deletes here the keys the target accepted (not
with COPY). It runs as Redis's migrateCommand does: synchronously, each write
and read bounded by the command's timeout, on a connection cached per
host:port for 10 s (MIGRATE_SOCKET_CACHE_TTL) and retried once on a socket
error other than a timeout, before the first reply. Its effect is a DEL of the
moved keys (Redis's replaceClientCommandVector), none with COPY or when none moved.
"""

from __future__ import annotations

import socket
import time
from dataclasses import dataclass, field

from rillet import errors
from rillet.commands.args import parse_int
from rillet.commands.dump import restore
from rillet.commands.table import command, redact_options
from rillet.errors import ReplyError
from rillet.notify import GENERIC
from rillet.persistence import rdb
from rillet.resp.types import OK, SimpleString
from rillet.state import Client

_CACHE_TTL_S = 10.0  # Redis's MIGRATE_SOCKET_CACHE_TTL
_CACHE_MAX = 64  # Redis's MIGRATE_SOCKET_CACHE_ITEMS
_NOKEY = SimpleString(b"NOKEY")
_KEY_FLAGS = "RW access delete"
_SKIP_OPTIONS = {b"COPY": 0, b"REPLACE": 0, b"AUTH": 1, b"AUTH2": 2}


class _Timeout(Exception):
    pass


class _SocketError(Exception):
    pass


@dataclass
class _Cached:
    sock: socket.socket
    last_dbid: int = -1
    last_use: float = 0.0
    buffer: bytearray = field(default_factory=bytearray)


_sockets: dict[tuple[bytes, bytes], _Cached] = {}


def migrate_keys(argv: list[bytes]) -> list[tuple[int, str]]:
    """migrateGetKeys: argv[3], or what follows KEYS (argv[3] must then be empty)."""
    first, count = 3, 1
    i = 6
    while i < len(argv):
        word = argv[i].upper()
        if word == b"KEYS":
            if argv[3]:
                return []
            first, count = i + 1, len(argv) - i - 1
            break
        i += _SKIP_OPTIONS.get(word, 0) + 1
    return [(j, _KEY_FLAGS) for j in range(first, first + count) if j < len(argv)]


def _close(host: bytes, port: bytes) -> None:
    cached = _sockets.pop((host, port), None)
    if cached is not None:
        cached.sock.close()


def _connect(host: bytes, port: bytes, timeout_s: float) -> _Cached:
    now = time.monotonic()
    for name, entry in list(_sockets.items()):
        if now - entry.last_use > _CACHE_TTL_S:
            _close(*name)
    cached = _sockets.get((host, port))
    if cached is not None:
        cached.last_use = now
        return cached
    if len(_sockets) >= _CACHE_MAX:
        _close(*next(iter(_sockets)))
    try:
        sock = socket.create_connection((host.decode("utf-8", "replace"), int(port)), timeout_s)
    except TimeoutError:
        raise _Timeout("connecting") from None
    except (OSError, ValueError, OverflowError):
        # Redis connects without blocking and sees the refusal at its first write.
        raise _SocketError("writing") from None
    sock.settimeout(timeout_s)
    cached = _Cached(sock, last_use=now)
    _sockets[(host, port)] = cached
    return cached


def _write(cached: _Cached, data: bytes) -> None:
    try:
        cached.sock.sendall(data)
    except TimeoutError:
        raise _Timeout("writing") from None
    except OSError:
        raise _SocketError("writing") from None


def _read_line(cached: _Cached) -> bytes:
    buffer = cached.buffer
    while True:
        end = buffer.find(b"\r\n")
        if end >= 0:
            line = bytes(buffer[:end])
            del buffer[:end + 2]
            return line
        try:
            chunk = cached.sock.recv(65536)
        except TimeoutError:
            raise _Timeout("reading") from None
        except OSError:
            raise _SocketError("reading") from None
        if not chunk:
            raise _SocketError("reading")
        buffer += chunk


def _encode(*args: bytes) -> bytes:
    return b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args)


@dataclass
class _Request:
    host: bytes
    port: bytes
    dbid: int
    timeout_s: float
    copy: bool = False
    replace: bool = False
    username: bytes | None = None
    password: bytes | None = None
    keys: list[bytes] = field(default_factory=list)
    asking: bool = False  # cluster mode: RESTORE-ASKING, which an importing node accepts


def _parse(argv: list[bytes]) -> _Request:
    copy = replace = False
    username = password = None
    keys = [argv[3]]
    i = 6
    while i < len(argv):
        word = argv[i].upper()
        more = len(argv) - 1 - i
        if word == b"COPY":
            copy = True
        elif word == b"REPLACE":
            replace = True
        elif word == b"AUTH":
            if not more:
                raise ReplyError(errors.SYNTAX)
            i += 1
            password = argv[i]
        elif word == b"AUTH2":
            if more < 2:
                raise ReplyError(errors.SYNTAX)
            username, password = argv[i + 1], argv[i + 2]
            i += 2
        elif word == b"KEYS":
            if argv[3]:
                raise ReplyError(errors.MIGRATE_KEYS_EMPTY)
            keys = argv[i + 1:]
            break
        else:
            raise ReplyError(errors.SYNTAX)
        i += 1
    timeout = parse_int(argv[5])
    dbid = parse_int(argv[4])
    if timeout <= 0:
        timeout = 1000
    return _Request(argv[1], argv[2], dbid, timeout / 1000, copy, replace, username, password, keys)


@command("migrate", -6, "write movablekeys", keys=(3, 3, 1), key_flags=_KEY_FLAGS,
         group="generic", since="2.6.0", acl="keyspace write slow dangerous",
         find_keys=migrate_keys,
         redact=redact_options(6, {b"AUTH": 1, b"AUTH2": 2}, {}, stop=b"KEYS"),
         keyword_keys=(("RW access delete incomplete", "KEYS", -2, -1),),
         complexity="This command actually executes a DUMP+DEL in the source instance, and a"
         " RESTORE in the target instance. See the pages of these commands for time"
         " complexity. Also an O(N) data transfer between the two instances is performed.")
def migrate(ctx: Client, argv: list[bytes]) -> object:
    """MIGRATE host port <key | ""> destination-db timeout [COPY] [REPLACE] [AUTH password | AUTH2 username password] [KEYS key [key ...]]

    Atomically transfers a key from one Redis instance to another."""
    request = _parse(argv)
    request.asking = ctx.server.cluster is not None
    db = ctx.db
    now = ctx.clock.now_ms()
    config = ctx.server.config
    compress = bool(config["rdbcompression"])
    moving: list[tuple[bytes, int, bytes]] = []  # key, ttl ms, payload
    for key in request.keys:
        value = db.get(key)
        if value is None:
            continue
        ttl = 0
        deadline = db.expires.get(key) if db.expires else None
        if deadline is not None:
            ttl = deadline - now
            if ttl < 0:
                continue
            ttl = max(ttl, 1)
        moving.append((key, ttl, rdb.dump_value(value, compress, config)))
    if not moving:
        return _NOKEY
    accepted, problem = _transfer(request, moving)
    if not request.copy:
        for key in accepted:
            if db.delete(key):
                ctx.modified(key)
                ctx.notify(GENERIC, b"del", key)
        if accepted:
            ctx.propagate([b"DEL", *accepted])
    # An error after some keys moved is returned, not raised: their DEL effect stands.
    return OK if problem is None else ReplyError(problem)


def _transfer(request: _Request, moving: list[tuple[bytes, int, bytes]]) -> tuple[list[bytes], str | None]:
    """(the keys the target accepted, the error reply or None), as migrateCommand."""
    may_retry = True
    while True:
        try:
            return _exchange(request, moving)
        except _Timeout as problem:
            _close(request.host, request.port)
            if problem.args[0] == "connecting":
                return [], errors.MIGRATE_CONNECT
            return [], errors.MIGRATE_IOERR.format(problem.args[0])
        except _SocketError as problem:
            # Nothing was read back yet: retried once on a fresh connection.
            _close(request.host, request.port)
            if may_retry:
                may_retry = False
                continue
            return [], errors.MIGRATE_IOERR.format(problem.args[0])


def _exchange(request: _Request, moving: list[tuple[bytes, int, bytes]]) -> tuple[list[bytes], str | None]:
    cached = _connect(request.host, request.port, request.timeout_s)
    cached.sock.settimeout(request.timeout_s)
    select = cached.last_dbid != request.dbid
    out = []
    if request.password is not None:
        if request.username is not None:
            out.append(_encode(b"AUTH", request.username, request.password))
        else:
            out.append(_encode(b"AUTH", request.password))
    if select:
        out.append(_encode(b"SELECT", b"%d" % request.dbid))
    for key, ttl, payload in moving:
        args = [b"RESTORE-ASKING" if request.asking else b"RESTORE", key, b"%d" % ttl, payload]
        if request.replace:
            args.append(b"REPLACE")
        out.append(_encode(*args))
    _write(cached, b"".join(out))
    auth_reply = _read_line(cached) if request.password is not None else b"+OK"
    select_reply = _read_line(cached) if select else b"+OK"
    accepted: list[bytes] = []
    error: str | None = None
    for n, (key, _, _) in enumerate(moving):
        try:
            line = _read_line(cached)
        except _SocketError as problem:
            if n == 0:
                raise
            _close(request.host, request.port)
            # Some keys moved: their DEL stands, then the I/O error (as Redis).
            return accepted, error or errors.MIGRATE_IOERR.format(problem.args[0])
        except _Timeout as problem:
            _close(request.host, request.port)
            return accepted, error or errors.MIGRATE_IOERR.format(problem.args[0])
        failed = next((r for r in (auth_reply, select_reply, line) if r[:1] == b"-"), None)
        if failed is not None:
            if error is None:
                cached.last_dbid = -1
                error = errors.MIGRATE_TARGET.format(failed[1:].decode("utf-8", "replace"))
        else:
            accepted.append(key)
    if error is None:
        cached.last_dbid = request.dbid
    return accepted, error


@command("restore-asking", -4, "write denyoom asking", keys=(1, 1, 1), key_flags="OW update",
         group="server", since="3.0.0", acl="keyspace write slow dangerous",
         complexity="O(1) to create the new key and additional O(N*M) to reconstruct the"
         " serialized value, where N is the number of Redis objects composing the value and M"
         " their average size. For small string values the time complexity is thus"
         " O(1)+O(1*M) where M is small, so simply O(1). However for sorted set values the"
         " complexity is O(N*M*log(N)) because inserting values into sorted sets is"
         " O(log(N)).")
def restore_asking(ctx: Client, argv: list[bytes]) -> object:
    """RESTORE-ASKING key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency]

    An internal command for migrating keys in a cluster."""
    return restore(ctx, argv)
