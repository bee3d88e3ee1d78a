"""Pub/sub, the minimal form Redis Sentinel needs: SUBSCRIBE, UNSUBSCRIBE, PUBLISH.

Sentinel keeps a subscription to `__sentinel__:hello` on every instance it
monitors and publishes its hello messages there (issue 12). Patterns, shard
channels, PUBSUB introspection and the subscribed-mode command restrictions
are the pub/sub issue's (14) to complete.
"""

from __future__ import annotations

from rillet.commands.table import command
from rillet.resp.encoder import encode_into
from rillet.resp.types import Push, Raw
from rillet.state import Client, ServerState


class Channels:
    """Channel -> subscribed clients, and each client's channels (by client id)."""

    def __init__(self) -> None:
        self.subscribers: dict[bytes, dict[int, Client]] = {}
        self.by_client: dict[int, set[bytes]] = {}

    def count(self, client: Client) -> int:
        return len(self.by_client.get(client.id, ()))


def channels_of(state: ServerState) -> Channels:
    found = state.pubsub
    if found is None:
        found = state.pubsub = Channels()
    return found


def _replies(ctx: Client, items: list[list[object]]) -> Raw:
    out = bytearray()
    for item in items:
        encode_into(out, Push(item), ctx.resp3)
    return Raw(bytes(out))


@command("subscribe", -2, "pubsub noscript loading stale", group="pubsub", since="2.0.0",
         acl="pubsub slow")
def subscribe(ctx: Client, argv: list[bytes]) -> object:
    """SUBSCRIBE channel [channel ...]"""
    table = channels_of(ctx.server)
    mine = table.by_client.setdefault(ctx.id, set())
    replies = []
    for channel in argv[1:]:
        mine.add(channel)
        table.subscribers.setdefault(channel, {})[ctx.id] = ctx
        replies.append([b"subscribe", channel, len(mine)])
    return _replies(ctx, replies)


@command("unsubscribe", -1, "pubsub noscript loading stale", group="pubsub", since="2.0.0",
         acl="pubsub slow")
def unsubscribe(ctx: Client, argv: list[bytes]) -> object:
    """UNSUBSCRIBE [channel [channel ...]]"""
    table = channels_of(ctx.server)
    mine = table.by_client.get(ctx.id, set())
    wanted = argv[1:] or sorted(mine)
    if not wanted:
        return _replies(ctx, [[b"unsubscribe", None, 0]])
    replies = []
    for channel in wanted:
        mine.discard(channel)
        subscribers = table.subscribers.get(channel)
        if subscribers is not None:
            subscribers.pop(ctx.id, None)
            if not subscribers:
                del table.subscribers[channel]
        replies.append([b"unsubscribe", channel, len(mine)])
    if not mine:
        table.by_client.pop(ctx.id, None)
    return _replies(ctx, replies)


@command("publish", 3, "pubsub loading stale fast", group="pubsub", since="2.0.0",
         acl="pubsub fast")
def publish(ctx: Client, argv: list[bytes]) -> object:
    """PUBLISH channel message"""
    state = ctx.server
    table = channels_of(state)
    subscribers = table.subscribers.get(argv[1])
    if not subscribers:
        return 0
    delivered = 0
    for client_id, client in list(subscribers.items()):
        if client_id not in state.clients or client.conn is None:
            # Gone: forget it here (no hook on disconnection in this minimal form).
            del subscribers[client_id]
            table.by_client.pop(client_id, None)
            continue
        out = bytearray()
        encode_into(out, Push([b"message", argv[1], argv[2]]), client.resp3)
        client.conn.send(bytes(out))
        delivered += 1
    if not subscribers:
        del table.subscribers[argv[1]]
    return delivered
