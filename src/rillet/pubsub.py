"""Pub/sub without I/O: who is subscribed to what, and delivery of messages.

Channels, patterns and shard channels map to their subscribers (insertion
ordered); each client keeps its own three maps (`Client.pubsub`, None until
its first subscription). Patterns are matched with glob.glob_match (Redis's
stringmatchlen), never a regex.

Delivery costs no work per subscriber per message. A channel's subscribers are
kept as a `Fanout` (its RESP2 and RESP3 clients, rebuilt after a change), a
message is formatted once (for both protocols: see _MESSAGE), and consecutive
messages to the same fanout gather in one event. At the end of the event-loop turn (`flush`,
called by the server layer: after every read of the poll, as Redis's
beforeSleep) each event's frames are joined once and each subscriber gets one
write, its events in the order they were published. A subscriber's command
flushes what waits for it first, and the frames its own command sends it follow
that command's reply (`enter`/`leave`).

While a client is subscribed, its connection applies client-output-buffer-limit's
`pubsub` class (server/connection.py), which drops a subscriber that does not
read, as Redis does; its subscriptions go with it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rillet.glob import glob_match
from rillet.resp.encoder import encode_into
from rillet.resp.types import Raw

if TYPE_CHECKING:
    from rillet.state import Client, ServerState


class Subscriptions:
    """One client's subscriptions."""

    __slots__ = ("channels", "patterns", "shard", "resp3")

    def __init__(self, resp3: bool) -> None:
        self.channels: dict[bytes, None] = {}
        self.patterns: dict[bytes, None] = {}
        self.shard: dict[bytes, None] = {}
        # The connection's protocol, which its messages use: `Client.resp3` is
        # RESP2 while the client's script runs, but a message is not the script's.
        self.resp3 = resp3

    def count(self) -> int:
        """SUBSCRIBE/PSUBSCRIBE's count: channels and patterns (shard channels apart)."""
        return len(self.channels) + len(self.patterns)

    def total(self) -> int:
        return len(self.channels) + len(self.patterns) + len(self.shard)


def _bulk(value: bytes) -> bytes:
    return b"$%d\r\n%s\r\n" % (len(value), value)


def frame(resp3: bool, *items: bytes | int | None) -> bytes:
    """A pub/sub frame: an array in RESP2, a push in RESP3."""
    out = bytearray(b">%d\r\n" % len(items) if resp3 else b"*%d\r\n" % len(items))
    for item in items:
        if item is None:
            out += b"_\r\n" if resp3 else b"$-1\r\n"
        elif item.__class__ is int:
            out += b":%d\r\n" % item
        else:
            out += _bulk(item)  # type: ignore[arg-type]  # bytes: None and int are above
    return bytes(out)


# A message's frames with the channel (and pattern) and message to fill in:
# (RESP2, RESP3, both). The two differ only in their first byte ('*', '>'): for a
# fanout with subscribers of both protocols the rest is formatted once, and the
# flush joins these bodies with each protocol's byte (`_joined`). One formatting
# per message, nothing per subscriber.
def _frames(resp2: bytes) -> tuple[bytes, bytes, bytes]:
    return resp2, b">" + resp2[1:], resp2[1:]


_MESSAGE = _frames(b"*3\r\n$7\r\nmessage\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n")
_SMESSAGE = _frames(b"*3\r\n$8\r\nsmessage\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n")
_PMESSAGE = _frames(b"*4\r\n$8\r\npmessage\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n")

# Channels whose matching patterns are remembered (PubSub._matched), at most.
MATCH_CACHE_SIZE = 4096

# Who gets a channel's (or a pattern's) messages: (RESP2 clients, RESP3 clients,
# how many). Tuples, so that a flush never sees a registry change under it.
Fanout = tuple  # tuple[tuple[Client, ...], tuple[Client, ...], int]
# What `enter` saves for `leave`: the running client, its own frames, those ahead of its reply.
Saved = tuple  # tuple[Client | None, list[bytes] | None, list[bytes] | None]


def _fanout(members: dict[Client, None]) -> Fanout:
    # (A subscriber always has its Subscriptions: the None test is for the checker.)
    resp2 = tuple(c for c in members if (subs := c.pubsub) is not None and not subs.resp3)
    resp3 = tuple(c for c in members if (subs := c.pubsub) is not None and subs.resp3)
    return (resp2, resp3, len(resp2) + len(resp3))


def _joined(event: list) -> tuple[bytes, bytes]:
    """An event's RESP2 and RESP3 bytes (b"" for a protocol it has no client of)."""
    _, first, second = event
    if second is None:  # bodies: b"" then each message's frame after its first byte
        return b"*".join(first), b">".join(first)
    return (first[0] if len(first) == 1 else b"".join(first),
            second[0] if len(second) == 1 else b"".join(second))


class PubSub:
    def __init__(self, state: ServerState) -> None:
        self.state = state
        # Frames waiting for the end of the loop turn: one write per
        # subscriber per turn, not one per message. Each event is [fanout,
        # RESP2 frames, RESP3 frames], in publish order. The server layer sets
        # `on_pending` (called when the first frame waits) and calls `flush`;
        # without it (no event loop) frames are sent at once.
        self.events: list[list] = []
        # The clients those events go to: a command of one of them flushes first
        # (`enter`), so that its reply does not pass what was sent to it before.
        self.waiting: set[Client] = set()
        self.on_pending: Callable[[], None] | None = None
        # Work to do when the frames are flushed, before them (CLIENT TRACKING's
        # BCAST invalidations, gathered over the read).
        self.flush_hooks: list[Callable[[], None]] = []
        self._flushing = False
        self.channels: dict[bytes, dict[Client, None]] = {}
        self.patterns: dict[bytes, dict[Client, None]] = {}
        self.shard: dict[bytes, dict[Client, None]] = {}
        # Fanouts of the channels with subscribers, made on their first message
        # and dropped when their subscribers (or a subscriber's protocol) change.
        self._channel_fanout: dict[bytes, Fanout] = {}
        self._shard_fanout: dict[bytes, Fanout] = {}
        self._pattern_fanout: list[tuple[bytes, Fanout]] | None = None
        # The patterns (and their fanouts) each recent channel matched, so that a
        # channel's messages are not matched against every pattern each time.
        # Bounded: keyspace events reach a channel per key.
        self._matched: dict[bytes, tuple[tuple[bytes, Fanout], ...]] = {}
        # The subscriber whose command is running (Dispatcher.execute sets it for
        # a client that can receive frames) and the frames it sent itself: they
        # follow that command's reply, before the next one's, as in Redis 7.2+.
        self.current: Client | None = None
        self.own: list[bytes] | None = None
        # Frames for `current` written before its command runs (deliver_ahead): they
        # precede its reply, as what Redis adds to a client's buffer then.
        self.ahead: list[bytes] | None = None

    # --- subscribing ------------------------------------------------------------------
    @staticmethod
    def of(client: Client) -> Subscriptions:
        subs = client.pubsub
        if subs is None:
            subs = client.pubsub = Subscriptions(client.resp3)
            client.update_gate()
            client.set_output_class("pubsub")
        return subs

    def subscribe(self, client: Client, kind: str, name: bytes) -> bool:
        """Add one subscription (kind: channels, patterns or shard); False if it existed."""
        own = getattr(self.of(client), kind)
        if name in own:
            return False
        own[name] = None
        getattr(self, kind).setdefault(name, {})[client] = None
        self._changed(kind, name)
        return True

    def unsubscribe(self, client: Client, kind: str, name: bytes) -> bool:
        subs = client.pubsub
        if subs is None:
            return False
        own = getattr(subs, kind)
        if name not in own:
            return False
        del own[name]
        registry = getattr(self, kind)
        members = registry.get(name)
        if members is not None:
            members.pop(client, None)
            if not members:
                del registry[name]
        self._changed(kind, name)
        return True

    def drop_shard_channel(self, channel: bytes) -> None:
        """Cluster mode: the channel's slot left this node. Its subscribers are
        unsubscribed, each sent SUNSUBSCRIBE's frame (Redis's
        pubsubShardUnsubscribeAllChannelsInSlot)."""
        for client in list(self.shard.get(channel, ())):
            self.unsubscribe(client, "shard", channel)
            subs = client.pubsub
            left = len(subs.shard) if subs is not None else 0
            self.deliver(client, frame(client.resp3, b"sunsubscribe", channel, left))
            if subs is not None and not subs.total():
                client.pubsub = None  # off the gated path again, as SUNSUBSCRIBE leaves it
                client.update_gate()

    def forget(self, client: Client) -> None:
        """The client left (or RESET): every subscription goes."""
        subs = client.pubsub
        if subs is None:
            return
        for kind in ("channels", "patterns", "shard"):
            for name in list(getattr(subs, kind)):
                self.unsubscribe(client, kind, name)
        client.pubsub = None
        client.update_gate()
        client.set_output_class("normal")

    def protocol_changed(self, client: Client) -> None:
        """HELLO switched `client`'s protocol: its messages are encoded the other way from now on."""
        if client.pubsub is not None:
            client.pubsub.resp3 = client.resp3
            self._channel_fanout.clear()
            self._shard_fanout.clear()
            self._pattern_fanout = None
            self._matched.clear()

    def _changed(self, kind: str, name: bytes) -> None:
        if kind == "channels":
            self._channel_fanout.pop(name, None)
        elif kind == "shard":
            self._shard_fanout.pop(name, None)
        else:
            self._pattern_fanout = None
            self._matched.clear()

    # --- publishing -------------------------------------------------------------------
    def publish(self, channel: bytes, message: bytes, shard: bool = False) -> int:
        """Deliver `message`; the number of clients that received it."""
        if shard:
            fanouts, registry, frames = self._shard_fanout, self.shard, _SMESSAGE
        else:
            fanouts, registry, frames = self._channel_fanout, self.channels, _MESSAGE
        receivers = 0
        fan = fanouts.get(channel)
        if fan is None and channel in registry:
            fan = fanouts[channel] = _fanout(registry[channel])
        if fan is not None:
            receivers = fan[2]
            fields = (len(channel), channel, len(message), message)
            if self.current is not None:
                fan = self._but_current(fan, frames, fields)
            if fan[2]:
                events = self.events
                event = events[-1] if events and events[-1][0] is fan else self._event(fan)
                if event[2] is None:
                    event[1].append(frames[2] % fields)
                elif fan[0]:
                    event[1].append(frames[0] % fields)
                else:
                    event[2].append(frames[1] % fields)
        if not shard and self.patterns:
            receivers += self._publish_patterns(channel, message)
        if self.on_pending is None and self.events:
            self.flush()  # no event loop: sent at once
        return receivers

    def _publish_patterns(self, channel: bytes, message: bytes) -> int:
        matched = self._matched.get(channel)
        if matched is None:
            pattern_fanout = self._pattern_fanout
            if pattern_fanout is None:
                pattern_fanout = self._pattern_fanout = [
                    (pattern, _fanout(members)) for pattern, members in self.patterns.items()]
            matched = tuple(entry for entry in pattern_fanout if glob_match(entry[0], channel))
            if len(self._matched) >= MATCH_CACHE_SIZE:
                self._matched.clear()
            self._matched[channel] = matched
        receivers = 0
        events = self.events
        for pattern, fan in matched:
            receivers += fan[2]
            fields = (len(pattern), pattern, len(channel), channel, len(message), message)
            if self.current is not None:
                fan = self._but_current(fan, _PMESSAGE, fields)
                if not fan[2]:
                    continue
            event = events[-1] if events and events[-1][0] is fan else self._event(fan)
            if event[2] is None:
                event[1].append(_PMESSAGE[2] % fields)
            elif fan[0]:
                event[1].append(_PMESSAGE[0] % fields)
            else:
                event[2].append(_PMESSAGE[1] % fields)
        return receivers

    def _but_current(self, fan: Fanout, frames: tuple[bytes, ...], fields: tuple) -> Fanout:
        """`fan` without the running client, whose frame goes to `own` instead."""
        current = self.current
        if current in fan[0]:
            self._own(frames[0] % fields)
        elif current in fan[1]:
            self._own(frames[1] % fields)
        else:
            return fan
        return (tuple(c for c in fan[0] if c is not current),
                tuple(c for c in fan[1] if c is not current), fan[2] - 1)

    def _own(self, data: bytes) -> None:
        if self.own is None:
            self.own = [data]
        else:
            self.own.append(data)

    def enter(self, client: Client) -> Saved:
        """`client`'s command starts: frames for it wait for its reply (nests, for
        the clients served while a script is busy)."""
        if client in self.waiting:
            self.flush()
        saved = (self.current, self.own, self.ahead)
        self.current, self.own, self.ahead = client, None, None
        return saved

    def leave(self, client: Client, reply: object, saved: Saved) -> object:
        """`client`'s command is done: the frames written ahead of it, its reply,
        then the frames it sent itself."""
        own, ahead = self.own, self.ahead
        self.current, self.own, self.ahead = saved
        if own is None and ahead is None:
            return reply
        from rillet.state import Block  # (state imports this module)

        if reply.__class__ is Block:
            for data in (ahead or []) + (own or []):  # parked: they leave at the end of the turn
                self.deliver(client, data)
            return reply
        out = bytearray(b"".join(ahead or ()))
        encode_into(out, reply, client.resp3)
        for data in own or ():
            out += data
        return Raw(out)

    def deliver_ahead(self, client: Client, data: bytes) -> None:
        """`deliver`, but ahead of the running client's reply when `client` is that
        client: what Redis writes to its buffer before the command runs (the
        invalidation of a key its own command's eviction removed)."""
        if client is self.current:
            if self.ahead is None:
                self.ahead = [data]
            else:
                self.ahead.append(data)
            return
        self.deliver(client, data)

    def _event(self, fan: Fanout) -> list:
        """A new event for `fan` at the end of the queue (the first one asks for a flush)."""
        if (not self.events and not self.flush_hooks and not self._flushing
                and self.on_pending is not None):
            self.on_pending()
        # [fan, RESP2 frames, RESP3 frames]; for a fan with both protocols
        # [fan, [b"", bodies...], None] (see _MESSAGE). `deliver` adds to a
        # one-client event only, which never has both.
        event = [fan, [b""], None] if fan[0] and fan[1] else [fan, [], []]
        self.events.append(event)
        self.waiting.update(fan[0])
        self.waiting.update(fan[1])
        return event

    def at_flush(self, hook: Callable[[], None]) -> None:
        """Run `hook` at the next flush, before the frames leave (at once without a loop)."""
        if self.on_pending is None:
            hook()
            return
        if not self.events and not self.flush_hooks and not self._flushing:
            self.on_pending()
        self.flush_hooks.append(hook)

    def deliver(self, client: Client, data: bytes) -> None:
        """Queue an encoded frame for `client` (sent at the end of the turn, or after
        its reply if it is the running client)."""
        if client is self.current:
            self._own(data)
            return
        if self.on_pending is None:
            self._send(client, data)
            return
        events = self.events
        if events:
            event = events[-1]
            fan = event[0]
            if fan[2] == 1 and (fan[0] or fan[1])[0] is client:
                (event[1] if fan[0] else event[2]).append(data)
                return
        self._event(((client,), (), 1))[1].append(data)

    def flush(self) -> None:
        """Send what waits, in order, one write per subscriber."""
        if self.flush_hooks:
            hooks, self.flush_hooks = self.flush_hooks, []
            self._flushing = True
            try:
                for hook in hooks:
                    hook()
            finally:
                self._flushing = False
        events, self.events = self.events, []
        if not events:
            return
        self.waiting.clear()
        send = self._send
        if len(events) == 1:
            # The common case (one channel's messages): one join per protocol, a write each.
            fan = events[0][0]
            resp2, resp3 = _joined(events[0])
            for client in fan[0]:
                send(client, resp2)
            for client in fan[1]:
                send(client, resp3)
            return
        pending: dict[Client, list[bytes]] = {}
        for event in events:
            fan = event[0]
            for clients, data in zip(fan[:2], _joined(event), strict=True):
                for client in clients:
                    chunks = pending.get(client)
                    if chunks is None:
                        pending[client] = [data]
                    else:
                        chunks.append(data)
        for client, chunks in pending.items():
            send(client, chunks[0] if len(chunks) == 1 else b"".join(chunks))

    def _send(self, client: Client, data: bytes) -> None:
        conn = client.conn
        if conn is None or client.closing:
            return
        # The connection applies client-output-buffer-limit's pubsub class (the
        # client's class while it is subscribed) and drops a subscriber over it.
        conn.send(data)
        if client.closing:
            self.forget(client)
