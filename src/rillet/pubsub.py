"""Pub/sub without I/O: who is subscribed to what, and delivery of one message.

Channels, patterns and shard channels map to their subscribers (insertion
ordered); each client keeps its own three maps (`Client.pubsub`, None until
its first subscription). A message is encoded once per protocol and handed to
each subscriber's connection (`conn.send`). Patterns are matched with
glob.glob_match (Redis's stringmatchlen), never a regex.

While a client is subscribed, its connection applies client-output-buffer-limit's
`pubsub` class (server/connection.py), which drops a subscriber that does not
read, as Redis does; its subscriptions go with it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rillet.glob import glob_match

if TYPE_CHECKING:
    from rillet.state import Client, ServerState


class Subscriptions:
    """One client's subscriptions."""

    __slots__ = ("channels", "patterns", "shard")

    def __init__(self) -> None:
        self.channels: dict[bytes, None] = {}
        self.patterns: dict[bytes, None] = {}
        self.shard: dict[bytes, None] = {}

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
            out += _bulk(item)  # type: ignore[arg-type]
    return bytes(out)


class PubSub:
    def __init__(self, state: ServerState) -> None:
        self.state = state
        # Frames waiting for the end of the current read, per subscriber: one
        # write per subscriber per read, not one per message. The server layer
        # sets `on_pending` (called when the first frame waits) and calls
        # `flush`; without it (no event loop) frames are sent at once.
        self.pending: dict[Client, list[bytes]] = {}
        self.on_pending: Callable[[], None] | None = None
        # Work to do when the frames are flushed, before them (CLIENT TRACKING's
        # BCAST invalidations, gathered over the read).
        self.flush_hooks: list[Callable[[], None]] = []
        self._flushing = False
        self.channels: dict[bytes, dict[Client, None]] = {}
        self.patterns: dict[bytes, dict[Client, None]] = {}
        self.shard: dict[bytes, dict[Client, None]] = {}

    # --- subscribing ------------------------------------------------------------------
    @staticmethod
    def of(client: Client) -> Subscriptions:
        subs = client.pubsub
        if subs is None:
            subs = client.pubsub = Subscriptions()
            client.update_gate()
            client.set_output_class("pubsub")
        return subs  # type: ignore[no-any-return]

    def subscribe(self, client: Client, kind: str, name: bytes) -> bool:
        """Add one subscription (kind: channels, patterns or shard); False if it existed."""
        own = getattr(self.of(client), kind)
        if name in own:
            return False
        own[name] = None
        getattr(self, kind).setdefault(name, {})[client] = None
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
        return True

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

    # --- publishing -------------------------------------------------------------------
    def publish(self, channel: bytes, message: bytes, shard: bool = False) -> int:
        """Deliver `message`; the number of clients that received it."""
        receivers = 0
        frames: list[bytes | None] = [None, None]  # RESP2, RESP3: encoded on first use
        kind = b"smessage" if shard else b"message"
        members = (self.shard if shard else self.channels).get(channel)
        if members:
            for client in list(members):
                resp3 = client.resp3
                data = frames[resp3]
                if data is None:
                    data = frames[resp3] = frame(resp3, kind, channel, message)
                self._deliver(client, data)
                receivers += 1
        if not shard and self.patterns:
            for pattern, members in list(self.patterns.items()):
                if not glob_match(pattern, channel):
                    continue
                pframes: list[bytes | None] = [None, None]
                for client in list(members):
                    resp3 = client.resp3
                    data = pframes[resp3]
                    if data is None:
                        data = pframes[resp3] = frame(resp3, b"pmessage", pattern, channel, message)
                    self._deliver(client, data)
                    receivers += 1
        return receivers

    def at_flush(self, hook: Callable[[], None]) -> None:
        """Run `hook` at the next flush, before the frames leave (at once without a loop)."""
        if self.on_pending is None:
            hook()
            return
        if not self.pending and not self.flush_hooks and not self._flushing:
            self.on_pending()
        self.flush_hooks.append(hook)

    def deliver(self, client: Client, data: bytes) -> None:
        """Queue an encoded frame for `client` (sent at the end of the read)."""
        self._deliver(client, data)

    def _deliver(self, client: Client, data: bytes) -> None:
        if self.on_pending is None:
            self._send(client, data)
            return
        chunks = self.pending.get(client)
        if chunks is None:
            if not self.pending and not self.flush_hooks and not self._flushing:
                self.on_pending()
            self.pending[client] = [data]
        else:
            chunks.append(data)

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
        pending, self.pending = self.pending, {}
        for client, chunks in pending.items():
            self._send(client, chunks[0] if len(chunks) == 1 else b"".join(chunks))

    def _send(self, client: Client, data: bytes) -> None:
        conn = client.conn
        if conn is None or client.closing:
            return
        # The connection applies client-output-buffer-limit's pubsub class (the
        # client's class while it is subscribed) and drops a subscriber over it.
        conn.send(data)
        if client.closing:
            self.forget(client)
