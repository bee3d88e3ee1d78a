"""Pub/sub: SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE, SSUBSCRIBE, SUNSUBSCRIBE,
PUBLISH, SPUBLISH and PUBSUB CHANNELS/NUMSUB/NUMPAT/SHARDCHANNELS/SHARDNUMSUB/HELP.

The registry and delivery are rillet.pubsub. (Un)subscribe replies are one
frame per channel (pushes in RESP3), so the handler returns them pre-encoded,
as PushedFrames: they are sent under CLIENT REPLY OFF|SKIP too, as in Redis.
A RESP2 client with subscriptions may only run the commands the dispatcher
lets through (Dispatcher._gate, Redis's "only (P|S)SUBSCRIBE ..." rule).
"""

from __future__ import annotations

from rillet import errors
from rillet.commands.table import command, help_reply
from rillet.errors import ReplyError
from rillet.glob import glob_match
from rillet.pubsub import frame
from rillet.resp.types import PushedFrames
from rillet.state import Client

_SUB_FLAGS = "pubsub noscript loading stale"


def _subscribe(ctx: Client, names: list[bytes], kind: str, verb: bytes) -> object:
    registry = ctx.server.pubsub
    out = bytearray()
    for name in names:
        registry.subscribe(ctx, kind, name)
        subs = registry.of(ctx)
        count = len(subs.shard) if kind == "shard" else subs.count()
        out += frame(ctx.resp3, verb, name, count)
    return PushedFrames(out)


def _unsubscribe(ctx: Client, names: list[bytes], kind: str, verb: bytes) -> object:
    registry = ctx.server.pubsub
    subs = ctx.pubsub
    if not names and subs is not None:
        names = list(getattr(subs, kind))
    out = bytearray()
    if not names:
        # Nothing to leave: one frame with a null name, as Redis.
        out += frame(ctx.resp3, verb, None, _count(ctx, kind))
    for name in names:
        registry.unsubscribe(ctx, kind, name)
        out += frame(ctx.resp3, verb, name, _count(ctx, kind))
    subs = ctx.pubsub
    if subs is not None and not subs.total():
        ctx.pubsub = None  # off the gated path again
        ctx.update_gate()
    return PushedFrames(out)


def _count(ctx: Client, kind: str) -> int:
    subs = ctx.pubsub
    if subs is None:
        return 0
    return len(subs.shard) if kind == "shard" else subs.count()


@command("subscribe", -2, _SUB_FLAGS, group="pubsub", since="2.0.0", acl="pubsub slow")
def subscribe(ctx: Client, argv: list[bytes]) -> object:
    """SUBSCRIBE channel [channel ...]"""
    return _subscribe(ctx, argv[1:], "channels", b"subscribe")


@command("unsubscribe", -1, _SUB_FLAGS, group="pubsub", since="2.0.0", acl="pubsub slow")
def unsubscribe(ctx: Client, argv: list[bytes]) -> object:
    """UNSUBSCRIBE [channel [channel ...]]"""
    return _unsubscribe(ctx, argv[1:], "channels", b"unsubscribe")


@command("psubscribe", -2, _SUB_FLAGS, group="pubsub", since="2.0.0", acl="pubsub slow")
def psubscribe(ctx: Client, argv: list[bytes]) -> object:
    """PSUBSCRIBE pattern [pattern ...]"""
    return _subscribe(ctx, argv[1:], "patterns", b"psubscribe")


@command("punsubscribe", -1, _SUB_FLAGS, group="pubsub", since="2.0.0", acl="pubsub slow")
def punsubscribe(ctx: Client, argv: list[bytes]) -> object:
    """PUNSUBSCRIBE [pattern [pattern ...]]"""
    return _unsubscribe(ctx, argv[1:], "patterns", b"punsubscribe")


@command("ssubscribe", -2, _SUB_FLAGS, keys=(1, -1, 1), key_flags="not_key", group="pubsub", since="7.0.0",
         acl="pubsub slow")
def ssubscribe(ctx: Client, argv: list[bytes]) -> object:
    """SSUBSCRIBE shardchannel [shardchannel ...]"""
    return _subscribe(ctx, argv[1:], "shard", b"ssubscribe")


@command("sunsubscribe", -1, _SUB_FLAGS, keys=(1, -1, 1), key_flags="not_key", group="pubsub", since="7.0.0",
         acl="pubsub slow")
def sunsubscribe(ctx: Client, argv: list[bytes]) -> object:
    """SUNSUBSCRIBE [shardchannel [shardchannel ...]]"""
    return _unsubscribe(ctx, argv[1:], "shard", b"sunsubscribe")


@command("publish", 3, "pubsub loading stale fast may_replicate", group="pubsub", since="2.0.0",
         acl="pubsub fast")
def publish(ctx: Client, argv: list[bytes]) -> object:
    """PUBLISH channel message"""
    replication = ctx.server.replication
    if not _to_bus(ctx, argv, False) and replication is not None:
        # As Redis: replicas deliver it to their own subscribers (not in the AOF).
        replication.replicate_only(ctx.db.index, argv)
    return ctx.server.pubsub.publish(argv[1], argv[2])


@command("spublish", 3, "pubsub loading stale fast may_replicate", keys=(1, 1, 1), key_flags="not_key", group="pubsub",
         since="7.0.0", acl="pubsub fast")
def spublish(ctx: Client, argv: list[bytes]) -> object:
    """SPUBLISH shardchannel message"""
    _to_bus(ctx, argv, True)
    return ctx.server.pubsub.publish(argv[1], argv[2], shard=True)


def _to_bus(ctx: Client, argv: list[bytes], shard: bool) -> bool:
    """In a cluster, the other nodes' subscribers (replicas included) get it over the
    bus, not by replication (Redis's clusterPropagatePublish); False outside one."""
    cluster = ctx.server.cluster
    if cluster is None or cluster.bus is None:
        return False
    cluster.bus.publish(argv[1], argv[2], shard)
    return True


def _names(registry: dict, argv: list[bytes]) -> list[bytes]:
    if len(argv) > 3:  # pubsubCommand: one pattern at most
        raise ReplyError(errors.subcommand_syntax(argv[1], "pubsub"))
    pattern = argv[2] if len(argv) > 2 else None
    return [name for name in registry if pattern is None or glob_match(pattern, name)]


@command("pubsub|channels", -2, "pubsub loading stale", group="pubsub", since="2.8.0",
         acl="pubsub slow")
def pubsub_channels(ctx: Client, argv: list[bytes]) -> object:
    """PUBSUB CHANNELS [pattern]"""
    return _names(ctx.server.pubsub.channels, argv)


@command("pubsub|shardchannels", -2, "pubsub loading stale", group="pubsub", since="7.0.0",
         acl="pubsub slow")
def pubsub_shardchannels(ctx: Client, argv: list[bytes]) -> object:
    """PUBSUB SHARDCHANNELS [pattern]"""
    return _names(ctx.server.pubsub.shard, argv)


def _numsub(registry: dict, names: list[bytes]) -> list:
    reply: list = []
    for name in names:
        reply.append(name)
        reply.append(len(registry.get(name, ())))
    return reply


@command("pubsub|numsub", -2, "pubsub loading stale", group="pubsub", since="2.8.0",
         acl="pubsub slow")
def pubsub_numsub(ctx: Client, argv: list[bytes]) -> object:
    """PUBSUB NUMSUB [channel [channel ...]]"""
    return _numsub(ctx.server.pubsub.channels, argv[2:])


@command("pubsub|shardnumsub", -2, "pubsub loading stale", group="pubsub", since="7.0.0",
         acl="pubsub slow")
def pubsub_shardnumsub(ctx: Client, argv: list[bytes]) -> object:
    """PUBSUB SHARDNUMSUB [shardchannel [shardchannel ...]]"""
    return _numsub(ctx.server.pubsub.shard, argv[2:])


@command("pubsub|numpat", 2, "pubsub loading stale", group="pubsub", since="2.8.0",
         acl="pubsub slow")
def pubsub_numpat(ctx: Client, argv: list[bytes]) -> object:
    """PUBSUB NUMPAT"""
    return len(ctx.server.pubsub.patterns)


@command("pubsub|help", 2, "loading stale", group="pubsub", since="6.2.0", acl="slow")
def pubsub_help(ctx: Client, argv: list[bytes]) -> object:
    """PUBSUB HELP"""
    return help_reply(
        "PUBSUB",
        b"CHANNELS [<pattern>]",
        b"    Return the currently active channels matching a <pattern> (default: '*').",
        b"NUMPAT",
        b"    Return number of subscriptions to patterns.",
        b"NUMSUB [<channel> ...]",
        b"    Return the number of subscribers for the specified channels, excluding",
        b"    pattern subscriptions(default: no channels).",
        b"SHARDCHANNELS [<pattern>]",
        b"    Return the currently active shard level channels matching a <pattern> (default: '*').",
        b"SHARDNUMSUB [<shardchannel> ...]",
        b"    Return the number of subscribers for the specified shard level channel(s)",
    )
