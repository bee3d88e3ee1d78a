"""Client-side caching (CLIENT TRACKING): which clients may hold which keys, and
the invalidation messages they get when those keys change (Redis's tracking.c).

The table maps a key name (global, not per database, as in Redis) to the ids
of the clients that read it while tracking; a change to the key sends each of
them `invalidate [key]` once and forgets them. BCAST clients instead subscribe
to key prefixes: the keys changed under a prefix gather and leave once per
loop turn, together. Messages go as RESP3 pushes to the tracking client, or
to its REDIRECT client (a push in RESP3, a `__redis__:invalidate` message in
RESP2 while that client is subscribed to something); a FLUSHDB/FLUSHALL sends
a null, "every key". Delivery goes through the pub/sub layer's per-read
batching (`PubSub.deliver`): an invalidation caused by a client's own command
follows its reply (Redis's pending keys), one written before its command runs
(its eviction's) precedes it.

The dispatcher's hooks (dispatch.py): a tracking client is `gated`; while its
command runs it is `current` (NOLOOP), after each command its CACHING flag is
reset, and `Dispatcher.call` hands every command it runs for a tracking client
to `remember`. `ServerState.key_modified` (signalModifiedKey) calls `invalidate`.

`tracking-table-max-keys` bounds the table (Redis's trackingLimitUsedSlots):
past it, keys are dropped and their clients sent an invalidation, as if the
keys had changed. Redis picks them by a random walk of its radix tree; here
the longest-tracked go first (the table's order, kept in `_order`). Redis
looks at the limit before each command and in its cron; here, after a command
added keys to the table (the same place in a client's stream of replies: after
the reply of the read that went over, before the next one) and when CONFIG SET
lowers the limit.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

from rillet import errors
from rillet.compiled import as_slots
from rillet.errors import ReplyError

if TYPE_CHECKING:
    from rillet.commands.table import CommandSpec
    from rillet.state import Client, ServerState

INVALIDATE_CHANNEL = b"__redis__:invalidate"
_PUSH_HEAD = b">2\r\n$10\r\ninvalidate\r\n"
_MESSAGE_HEAD = b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n"
# Read-only scripts are not tracked themselves, only the commands they run.
_NOT_TRACKED = frozenset({"eval_ro", "evalsha_ro", "fcall_ro"})


class ClientTracking:
    """One client's tracking mode (Redis's CLIENT_TRACKING_* flags)."""

    __slots__ = ("bcast", "broken", "caching", "noloop", "optin", "optout", "prefixes", "redirect")

    def __init__(self) -> None:
        self.redirect = 0
        self.bcast = False
        self.optin = False
        self.optout = False
        self.noloop = False
        self.caching = False  # CLIENT CACHING yes|no, for the next command (or transaction)
        self.broken = False  # the REDIRECT client went away
        self.prefixes: dict[bytes, None] = {}


class _Prefix:
    """A BCAST prefix: its clients, and the keys changed under it this turn (with
    the client that changed each last, for NOLOOP)."""

    __slots__ = ("clients", "keys")

    def __init__(self) -> None:
        self.clients: dict[Client, None] = {}
        self.keys: dict[bytes, Client | None] = {}


def _key_array(keys: list[bytes]) -> bytes:
    return b"*%d\r\n" % len(keys) + b"".join(b"$%d\r\n%s\r\n" % (len(k), k) for k in keys)


class Tracking:
    # `clients` is read by every write (ServerState.key_modified, and as a typed
    # field, tracking.pxd, by the compiled bodies, commands/_bodies.pxi); the rest is
    # in __dict__.
    __slots__ = ("clients", "__dict__")

    def __init__(self, state: ServerState) -> None:
        self.state = state
        self.table: dict[bytes, dict[int, None]] = {}
        self.prefixes: dict[bytes, _Prefix] = {}
        # Clients with tracking on; ServerState.key_modified looks at nothing else.
        self.clients = 0
        # The tracking client whose command is running (Redis's current_client), for NOLOOP.
        self.current: Client | None = None
        # Invalidations for `current` wait until its command is done (Redis's
        # tracking_pending_keys): a script it runs speaks RESP2 meanwhile.
        self.pending: list[bytes] = []
        self._broadcast_due = False
        # tracking_total_items: (key, client) pairs added, as Redis's TrackingTableTotalItems
        # (not lowered when a client turns tracking off: its ids leave the table lazily).
        self.total_items = 0
        # The table's keys in the order they entered it, for eviction; entries for keys
        # gone since are skipped then, and dropped when they outnumber the table.
        self._order: deque[bytes] = deque()
        # Redis's timeout_counter: calls in a row that left the table over the limit
        # (each evicts up to 100 keys more than the last).
        self._over_calls = 0
        # Set while a command's evictions run, before it does (Memory.refuse): what
        # they invalidate is written at once, ahead of that command's reply, as
        # Redis's sendTrackingMessage does outside a command's execution.
        self.before_command = False
        state.config.watch("tracking-table-max-keys", self._limit_changed)

    # --- CLIENT TRACKING ------------------------------------------------------------
    def enable(self, client: Client, redirect: int, bcast: bool, optin: bool, optout: bool,
               noloop: bool, prefixes: list[bytes]) -> None:
        """Redis's enableTracking (the caller has checked the options)."""
        mode = client.tracking
        if mode is None:
            mode = client.tracking = ClientTracking()
            self.clients += 1
            client.update_gate()
        mode.broken = False
        mode.redirect = redirect
        mode.bcast = bcast
        if bcast:
            for prefix in prefixes or [b""]:
                entry = self.prefixes.get(prefix)
                if entry is None:
                    entry = self.prefixes[prefix] = _Prefix()
                if client not in entry.clients:
                    entry.clients[client] = None
                    mode.prefixes[prefix] = None
        mode.optin = optin
        mode.optout = optout
        mode.noloop = noloop

    def disable(self, client: Client) -> None:
        """CLIENT TRACKING off, RESET, or the client left. Its ids in the table go lazily."""
        mode = client.tracking
        if mode is None:
            return
        for prefix in mode.prefixes:
            entry = self.prefixes.get(prefix)
            if entry is not None:
                entry.clients.pop(client, None)
                if not entry.clients:
                    del self.prefixes[prefix]
        client.tracking = None
        self.clients -= 1
        client.update_gate()

    @staticmethod
    def check_prefixes(mode: ClientTracking | None, prefixes: list[bytes]) -> str | None:
        """checkPrefixCollisionsOrReply: the error text, or None. Redis's check
        answers an overlap found past the first prefix and still enables tracking:
        such an error comes back as ("!", text) for the caller to do the same."""
        for i, prefix in enumerate(prefixes):
            if mode is not None:
                for existing in sorted(mode.prefixes):
                    if existing.startswith(prefix) or prefix.startswith(existing):
                        return errors.TRACKING_PREFIX_EXISTING.format(
                            _text(prefix), _text(existing))
            for other in prefixes[i + 1:]:
                if other.startswith(prefix) or prefix.startswith(other):
                    text = errors.TRACKING_PREFIX_OTHER.format(_text(prefix), _text(other))
                    return text if i == 0 else "!" + text
        return None

    # --- the dispatcher's hooks -----------------------------------------------------
    def remember(self, client: Client, spec: CommandSpec, argv: list[bytes]) -> None:
        """trackingRememberKeys: a read-only command ran for `client`: its keys are tracked."""
        mode = client.tracking
        if mode is None or mode.bcast or "readonly" not in spec.flags or spec.name in _NOT_TRACKED:
            return
        if (mode.optin and not mode.caching) or (mode.optout and mode.caching):
            return
        if "pubsub" in spec.flags:
            return
        try:
            keys = spec.keys_with_flags(argv)
        except (ReplyError, ValueError, IndexError):
            return
        table = self.table
        client_id = client.id
        added = False
        for index, _ in keys:
            key = argv[index]
            ids = table.get(key)
            if ids is None:
                table[key] = {client_id: None}
                self._order.append(key)
                self.total_items += 1
                added = True
            elif client_id not in ids:
                ids[client_id] = None
                self.total_items += 1
        if added and len(table) > self.state.config.values["tracking-table-max-keys"] > 0:
            self.limit()

    # --- tracking-table-max-keys ----------------------------------------------------
    def limit(self) -> bool:
        """trackingLimitUsedSlots: over the limit, drop keys (their clients get an
        invalidation) until under it, or until this call's effort is spent: 100 keys,
        100 more for each call in a row that ended still over. True when under."""
        max_keys = self.state.config.values["tracking-table-max-keys"]
        table = self.table
        if not max_keys or len(table) <= max_keys:
            self._over_calls = 0
            return True
        effort = 100 * (self._over_calls + 1)
        while effort > 0 and self._order:  # (`invalidate` may replace _order: read it each time)
            key = self._order.popleft()
            if key not in table:
                continue  # invalidated since it entered (it may be back, later in the order)
            effort -= 1
            self.invalidate(key, broadcast=False)
            if len(table) <= max_keys:
                self._over_calls = 0
                return True
        self._over_calls += 1
        return False

    def _limit_changed(self, value: object) -> None:
        """CONFIG SET tracking-table-max-keys: a lower limit applies at once (Redis's
        cron gets there within a few ticks)."""
        while not self.limit():
            pass

    def invalidate(self, key: bytes, broadcast: bool = True) -> None:
        """trackingInvalidateKey: `key` changed (signalModifiedKey, an expiry), or
        was evicted from the table (not `broadcast` to BCAST prefixes then)."""
        current = self.current
        if broadcast and self.prefixes:
            for prefix, entry in self.prefixes.items():
                if key.startswith(prefix):
                    entry.keys[key] = current
                    if not self._broadcast_due:
                        self._broadcast_due = True
                        self.state.pubsub.at_flush(self.broadcast)
        ids = self.table.pop(key, None)
        if not ids:
            return
        self.total_items -= len(ids)
        if len(self._order) > 2 * len(self.table) + 64:
            self._order = deque(self.table)  # mostly keys gone since: start again from the table
        clients = self.state.clients
        payload = _key_array([key])
        for client_id in ids:
            target = clients.get(client_id)
            if target is None:
                continue
            mode = target.tracking
            if mode is None or mode.bcast:
                continue
            if target is current:
                if not mode.noloop:
                    self.pending.append(payload)
                continue
            self._send(target, mode, payload, ahead=self.before_command)

    def send_pending(self, client: Client) -> None:
        """trackingHandlePendingKeyInvalidations: `client`'s command is done."""
        pending, self.pending = self.pending, []
        mode = client.tracking
        if mode is not None:
            for payload in pending:
                self._send(client, mode, payload)

    def flushed(self) -> None:
        """trackingInvalidateKeysOnFlush: FLUSHDB/FLUSHALL, a null ("every key") to every
        tracking client; the table starts again empty.

        Redis 8.2 writes the executing client's own null before the FLUSH reply: it
        is sent at once (ahead of the replies of the read), the others batched."""
        if self.clients:
            current = self.current
            for client in list(self.state.clients.values()):
                mode = client.tracking
                if mode is not None:
                    null = b"_\r\n" if client.resp3 else b"$-1\r\n"
                    self._send(client, mode, null, at_once=client is current and not mode.redirect)
        self.table.clear()
        self._order.clear()
        self.total_items = 0

    def broadcast(self) -> None:
        """trackingBroadcastInvalidationMessages: the keys changed under each BCAST
        prefix this turn, to its clients (without their own changes under NOLOOP)."""
        self._broadcast_due = False
        # Prefixes and keys in byte order, as Redis's radix trees give them.
        for _, entry in sorted(self.prefixes.items()):
            if not entry.keys:
                continue
            keys = dict(sorted(entry.keys.items()))
            entry.keys = {}
            common = _key_array(list(keys))
            for client in list(entry.clients):
                mode = client.tracking
                if mode is None:
                    continue
                if mode.noloop:
                    own = [k for k, by in keys.items() if by is not client]
                    if own:
                        self._send(client, mode, _key_array(own))
                else:
                    self._send(client, mode, common)

    # --- delivery ---------------------------------------------------------------------
    def _send(self, client: Client, mode: ClientTracking, payload: bytes, at_once: bool = False,
              ahead: bool = False) -> None:
        """sendTrackingMessage: `payload` (the keys' array, or a null) to `client`,
        or to the client it redirects to (`ahead`: before the running client's reply)."""
        pubsub = self.state.pubsub
        target: Client | None
        target = client
        if mode.redirect:
            target = self.state.clients.get(mode.redirect)
            if target is None or target.closing:
                mode.broken = True
                if client.resp3:
                    pubsub.deliver(client, b">2\r\n$21\r\ntracking-redir-broken\r\n:%d\r\n" % mode.redirect)
                return
        if target.resp3:
            data = _PUSH_HEAD + payload
        elif target is not client and target.pubsub is not None and target.pubsub.total():
            data = _MESSAGE_HEAD + payload
        else:
            return  # RESP2 has no push frames in the same connection
        if at_once and target.conn is not None:
            target.conn.send(data)
        elif ahead:
            pubsub.deliver_ahead(target, data)
        else:
            pubsub.deliver(target, data)

    # --- INFO -----------------------------------------------------------------------
    def info_stats(self) -> list[tuple[str, object]]:
        """INFO stats' tracking_total_keys, _items and _prefixes."""
        return [("tracking_total_keys", len(self.table)), ("tracking_total_items", self.total_items),
                ("tracking_total_prefixes", len(self.prefixes))]

    # --- CLIENT TRACKINGINFO / GETREDIR / LIST ----------------------------------------
    @staticmethod
    def flags(client: Client) -> list[bytes]:
        mode = client.tracking
        if mode is None:
            return [b"off"]
        flags = [b"on"]
        if mode.bcast:
            flags.append(b"bcast")
        if mode.optin:
            flags.append(b"optin")
            if mode.caching:
                flags.append(b"caching-yes")
        if mode.optout:
            flags.append(b"optout")
            if mode.caching:
                flags.append(b"caching-no")
        if mode.noloop:
            flags.append(b"noloop")
        if mode.broken:
            flags.append(b"broken_redirect")
        return flags


def _text(value: bytes) -> str:
    return value.decode("utf-8", "surrogateescape")


# (Compiled: an extension type, tracking.pxd; its field reads as a slot from Python.)
as_slots(Tracking)
