"""DUMP and RESTORE: one value in Redis's serialisation (RDB encoding plus a footer).

The payload is what Redis 8.2.3 produces for strings and streams (type byte,
RDB value, 2-byte RDB version, CRC-64), so DUMP from rillet RESTOREs into
Redis and back. IDLETIME and FREQ set the key's LRU clock or LFU counter as
Redis's objectSetLRUOrLFU (the one the policy tracks; the other is ignored).
"""

from __future__ import annotations

from rillet import errors
from rillet.commands.args import parse_int
from rillet.commands.table import command
from rillet.commands.typed import server_del
from rillet.engine.eviction import set_lru_or_lfu
from rillet.errors import ReplyError
from rillet.notify import GENERIC
from rillet.persistence import rdb
from rillet.persistence.rdb_format import RDBError
from rillet.resp.types import OK
from rillet.state import Client


@command("dump", 2, "readonly", keys=(1, 1, 1), key_flags="RO access", group="generic", since="2.6.0")
def dump(ctx: Client, argv: list[bytes]) -> object:
    """DUMP key"""
    value = ctx.db.get(argv[1])
    if value is None:
        return None
    config = ctx.server.config
    return rdb.dump_value(value, bool(config["rdbcompression"]), config)


@command("restore", -4, "write denyoom", keys=(1, 1, 1), key_flags="OW update", group="generic",
         since="2.6.0", acl="keyspace write slow dangerous")
def restore(ctx: Client, argv: list[bytes]) -> object:
    """RESTORE key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency]"""
    replace = absttl = False
    idle = freq = -1
    i = 4
    while i < len(argv):
        word = argv[i].upper()
        more = len(argv) - i - 1
        if word == b"REPLACE":
            replace = True
        elif word == b"ABSTTL":
            absttl = True
        elif word == b"IDLETIME" and more >= 1 and freq == -1:
            idle = parse_int(argv[i + 1])
            if idle < 0:
                raise ReplyError(errors.RESTORE_BAD_IDLETIME)
            i += 1
        elif word == b"FREQ" and more >= 1 and idle == -1:
            freq = parse_int(argv[i + 1])
            if not 0 <= freq <= 255:
                raise ReplyError(errors.RESTORE_BAD_FREQ)
            i += 1
        else:
            raise ReplyError(errors.SYNTAX)
        i += 1
    key = argv[1]
    db = ctx.db
    if not replace and db.get(key) is not None:
        raise ReplyError(errors.BUSYKEY)
    ttl = parse_int(argv[2])
    if ttl < 0:
        raise ReplyError(errors.RESTORE_BAD_TTL)
    payload = argv[3]
    if not rdb.verify_payload(payload):
        raise ReplyError(errors.RESTORE_BAD_PAYLOAD)
    try:
        value = rdb.restore_value(payload, ctx.server)
    except RDBError:
        raise ReplyError(errors.RESTORE_BAD_FORMAT) from None
    server = ctx.server
    old = db.get(key) if replace else None
    existed = old is not None
    now = server.clock.now_ms()
    deadline = (ttl if absttl else ttl + now) if ttl else 0
    if deadline and deadline <= now and not server.loading:
        # Already expired: the key is not created (an old one is deleted, as a DEL or UNLINK).
        if existed:
            db.delete(key)
            ctx.modified(key)
            ctx.notify(GENERIC, b"del", key)
            ctx.propagate(server_del(ctx, key))
        return OK
    if existed:
        db.delete(key)
    db.set(key, value)
    if deadline:
        db.set_expire(key, deadline)
    set_lru_or_lfu(db, key, freq, idle)
    ctx.modified(key)
    ctx.notify(GENERIC, b"restore", key)
    if old is not None:
        server.key_overwritten(db, key, old, value)
    if deadline and not absttl:
        # Propagated with the absolute deadline, so replicas and the AOF agree (Redis 7+).
        ctx.propagate([argv[0], key, b"%d" % deadline, *argv[3:], b"ABSTTL"])
    return OK
