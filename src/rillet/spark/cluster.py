"""One URL, every shard: the connector's view of a Redis Cluster.

`connect_routed` asks the server at the URL for the cluster's shards (CLUSTER SHARDS,
or CLUSTER SLOTS on servers before 7.0). A server without cluster support (its
`cluster support disabled` error, or no CLUSTER command it lets us run) gives a Router
over that one client, which behaves exactly as the client did. On a cluster, the Router
sends each command to the master owning its key's slot and:

- `-MOVED`: refreshes the map, takes the error's node for that slot, and retries;
- `-ASK`: sends ASKING and the command to the error's node, once; the map is kept;
- `-TRYAGAIN` (a multi-key command while its slot migrates): waits a little and retries;
- a connection error: refreshes the map from any node that answers (a failed-over
  master's replica has its slots now) and raises, so the caller's reconnecting retries.

It duck-types the parts of `redis.Redis` the connector uses on per-key commands
(`execute_command`, `pipeline(transaction=False)`, `close`): a pipeline is split per
node and its redirected replies are run again one by one. Stream offsets name keys, not
nodes, so a stream whose slot moves is read on from its last ID on its new node.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any, TypeVar
from urllib.parse import urlparse, urlunparse

import redis
from redis.exceptions import AskError, MovedError, NoPermissionError, TryAgainError

from rillet.cluster.keyslot import SLOTS, key_slot
from rillet.spark.options import ConnectionOptions

log = logging.getLogger("rillet.spark")
T = TypeVar("T")

Address = tuple[str, int]

# A command redirected more often than this is failing, not following a migration.
MAX_REDIRECTS = 16
TRYAGAIN_DELAY_S = 0.05

# Commands whose key is not their first argument (the connector's, no more).
_KEY_AT = {b"XINFO": 2, b"XGROUP": 2}


def command_key(args: Sequence[Any]) -> bytes:
    """The key a per-key command is routed by."""
    name = _bytes(args[0]).upper()
    return _bytes(args[_KEY_AT.get(name, 1)])


def _bytes(value: Any) -> bytes:
    if isinstance(value, bytes):
        return value
    return str(value).encode()


def slot_of(key: str | bytes) -> int:
    return key_slot(_bytes(key))


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _pairs(reply: Any) -> dict[str, Any]:
    items = list(reply)
    return {_text(items[i]): items[i + 1] for i in range(0, len(items) - 1, 2)}


def _disabled(exc: redis.ResponseError) -> bool:
    return "cluster support disabled" in str(exc).lower()


def _missing(exc: redis.ResponseError) -> bool:
    """No such command or subcommand here, or not one this user may run."""
    text = str(exc).lower()  # (redis-py drops the NOPERM code from the message)
    return isinstance(exc, NoPermissionError) or "unknown" in text or "no permissions" in text


def parse_shards(reply: Any, seed_host: str, tls: bool) -> list[tuple[Address, list[range]]]:
    """(master address, slot ranges) per shard of a CLUSTER SHARDS reply."""
    shards = []
    for shard in reply:
        info = _pairs(shard)
        bounds = [int(n) for n in info.get("slots") or []]
        ranges = [range(bounds[i], bounds[i + 1] + 1) for i in range(0, len(bounds) - 1, 2)]
        masters = [_pairs(node) for node in info.get("nodes") or []]
        masters = [n for n in masters if _text(n.get("role", b"")) == "master"]
        masters.sort(key=lambda n: _text(n.get("health", b"")) != "online")
        if not ranges or not masters:
            continue
        node = masters[0]
        host = _text(node.get("endpoint") or b"")
        if host in ("", "?"):
            host = _text(node.get("ip") or b"") or seed_host
        port = node.get("tls-port") if tls and node.get("tls-port") else node.get("port")
        shards.append(((host, int(port or 0)), ranges))
    return shards


def parse_slots(reply: Any, seed_host: str) -> list[tuple[Address, list[range]]]:
    """The same from a CLUSTER SLOTS reply (one row per slot range, master first)."""
    shards: dict[Address, list[range]] = {}
    for row in reply:
        host = _text(row[2][0]) or seed_host
        if host == "?":
            host = seed_host
        shards.setdefault((host, int(row[2][1])), []).append(range(int(row[0]), int(row[1]) + 1))
    return list(shards.items())


def discover(client: redis.Redis, seed_host: str, tls: bool) -> list[Address | None] | None:
    """The master of each slot (None: unassigned), or None for a server that is not a
    cluster node."""
    try:
        shards = parse_shards(client.execute_command("CLUSTER", "SHARDS"), seed_host, tls)
    except redis.ResponseError as exc:
        if _disabled(exc):
            return None
        if not _missing(exc):
            raise
        try:  # before Redis 7.0: no SHARDS
            shards = parse_slots(client.execute_command("CLUSTER", "SLOTS"), seed_host)
        except redis.ResponseError as slots_exc:
            if _disabled(slots_exc) or _missing(slots_exc):
                return None
            raise
    table = _table(shards)
    if None in table:
        # Just after a failover a shard can list its failed old master first, whose
        # slot list (the shard's) is empty: CLUSTER SLOTS names each range's owner.
        try:
            by_range = _table(parse_slots(client.execute_command("CLUSTER", "SLOTS"),
                                          seed_host))
        except redis.ResponseError:
            return table
        table = [a if a is not None else b for a, b in zip(table, by_range, strict=True)]
    return table


def _table(shards: list[tuple[Address, list[range]]]) -> list[Address | None]:
    table: list[Address | None] = [None] * SLOTS
    for address, ranges in shards:
        for slots in ranges:
            for slot in slots:
                table[slot] = address
    return table


class SlotUnservedError(redis.ConnectionError):
    """No master serves the key's slot in the map just asked for: its master failed and
    its replica is not elected yet. A connection error, so that the reader's
    reconnecting waits for the election as it waits for a restart."""


class Router:
    """Commands by key to the node that owns it (see the module doc)."""

    def __init__(self, options: ConnectionOptions, *, reconnect: bool = False) -> None:
        from rillet.spark.client import connect

        self.options = options
        self._connect = lambda opts: connect(opts, reconnect=reconnect)
        self.seed = self._connect(options)
        url = urlparse(options.url)
        self._seed_address: Address = (url.hostname or "127.0.0.1", url.port or 6379)
        self._tls = url.scheme == "rediss"
        self._nodes: dict[Address, redis.Redis] = {self._seed_address: self.seed}
        # Asked on first use, inside the caller's reconnecting (the seed may be restarting).
        self._known = False
        self._table: list[Address | None] | None = None

    @property
    def _slots(self) -> list[Address | None] | None:
        if not self._known:
            self._table = discover(self.seed, self._seed_address[0], self._tls)
            self._known = True
        return self._table

    @property
    def is_cluster(self) -> bool:
        return self._slots is not None

    # -- the map ------------------------------------------------------------

    def refresh(self) -> None:
        """The slot map again, from the first node that answers (the seed first)."""
        last: Exception | None = None
        for address in [self._seed_address, *self._nodes]:
            try:
                slots = discover(self.node(address), self._seed_address[0], self._tls)
            except redis.RedisError as exc:
                last = exc
                continue
            if slots is not None:
                self._table, self._known = slots, True
                return
        if last is not None:
            raise last

    def _refresh_quietly(self) -> None:
        try:
            self.refresh()
        except redis.RedisError as exc:
            log.warning("rillet: cluster map not refreshed: %s", exc)

    def node(self, address: Address) -> redis.Redis:
        client = self._nodes.get(address)
        if client is None:
            url = urlparse(self.options.url)
            userinfo = url.netloc.rpartition("@")[0]
            host = f"[{address[0]}]" if ":" in address[0] else address[0]
            netloc = f"{userinfo}@{host}:{address[1]}" if userinfo else f"{host}:{address[1]}"
            opts = replace(self.options, url=urlunparse(url._replace(netloc=netloc)))
            client = self._nodes[address] = self._connect(opts)
        return client

    def address_for(self, key: str | bytes) -> Address:
        if self._slots is None:
            return self._seed_address
        address = self._slots[slot_of(key)]
        if address is None:
            self.refresh()
            address = self._table[slot_of(key)] if self._table is not None else None
        if address is None:
            raise SlotUnservedError(f"CLUSTERDOWN Hash slot not served ({_text(key)!r})")
        return address

    def client_for(self, key: str | bytes) -> redis.Redis:
        return self.node(self.address_for(key))

    def masters(self) -> list[redis.Redis]:
        """A client per master (the one client off a cluster), e.g. to SCAN each."""
        if self._slots is None:
            return [self.seed]
        return [self.node(a) for a in sorted({a for a in self._slots if a is not None})]

    # -- commands -----------------------------------------------------------

    def run(self, key: str | bytes, action: Callable[[redis.Redis, bool], T]) -> T:
        """`action(client, asking)` on the node of `key`'s slot, following redirections;
        with `asking` it must send ASKING just before its command."""
        if self._slots is None:
            return action(self.seed, False)
        address, asking = self.address_for(key), False
        for _ in range(MAX_REDIRECTS):
            try:
                return action(self.node(address), asking)
            except MovedError as exc:
                self._refresh_quietly()
                address, asking = self._moved(exc), False
            except AskError as exc:
                address, asking = (exc.host, int(exc.port)), True
            except TryAgainError:
                time.sleep(TRYAGAIN_DELAY_S)
                address, asking = self.address_for(key), False
            except redis.ConnectionError:
                self._refresh_quietly()
                raise
        raise redis.ResponseError(f"too many cluster redirections for key {_text(key)!r}")

    def _moved(self, exc: MovedError) -> Address:
        address = (exc.host, int(exc.port))
        if self._table is not None:
            self._table[int(exc.slot_id)] = address
        return address

    def execute_command(self, *args: Any) -> Any:
        if self._slots is None:
            return self.seed.execute_command(*args)
        return self.run(command_key(args), lambda client, asking: _call(client, asking, args))

    def pipeline(self, transaction: bool = False) -> RoutedPipeline:
        if transaction:
            raise ValueError("a routed pipeline is not a transaction (MULTI is per node)")
        return RoutedPipeline(self)

    def close(self) -> None:
        for client in self._nodes.values():
            client.close()
        self._nodes.clear()


def _call(client: redis.Redis, asking: bool, args: Sequence[Any]) -> Any:
    if not asking:
        return client.execute_command(*args)
    pipe = client.pipeline(transaction=False)
    pipe.execute_command("ASKING")
    pipe.execute_command(*args)
    return pipe.execute()[1]


def _redirected(reply: Any) -> bool:
    return isinstance(reply, (AskError, TryAgainError))  # MovedError is an AskError


class RoutedPipeline:
    """Commands queued for many keys, sent as one pipeline per node."""

    def __init__(self, router: Router) -> None:
        self.router = router
        self.commands: list[tuple[Any, ...]] = []

    def execute_command(self, *args: Any) -> RoutedPipeline:
        self.commands.append(args)
        return self

    def __len__(self) -> int:
        return len(self.commands)

    def execute(self, raise_on_error: bool = True) -> list[Any]:
        commands, self.commands = self.commands, []
        router = self.router
        if router._slots is None:  # noqa: SLF001 - one node: its own pipeline, as before
            pipe = router.seed.pipeline(transaction=False)
            for args in commands:
                pipe.execute_command(*args)
            return pipe.execute(raise_on_error=raise_on_error)
        replies: list[Any] = [None] * len(commands)
        by_node: dict[Address, list[int]] = {}
        for i, args in enumerate(commands):
            by_node.setdefault(router.address_for(command_key(args)), []).append(i)
        for address, indexes in by_node.items():
            try:
                pipe = router.node(address).pipeline(transaction=False)
                for i in indexes:
                    pipe.execute_command(*commands[i])
                for i, reply in zip(indexes, pipe.execute(raise_on_error=False), strict=True):
                    replies[i] = reply
            except redis.ConnectionError:
                router._refresh_quietly()  # noqa: SLF001
                raise
        for i, reply in enumerate(replies):
            if _redirected(reply):
                try:
                    replies[i] = router.execute_command(*commands[i])
                except redis.ResponseError as exc:
                    replies[i] = exc
        if raise_on_error:
            for reply in replies:
                if isinstance(reply, Exception):
                    raise reply
        return replies


def connect_routed(options: ConnectionOptions, *, reconnect: bool = False) -> Router:
    return Router(options, reconnect=reconnect)


_tags: dict[int, str] = {}


def slot_tag(slot: int) -> str:
    """A short hash tag whose slot is `slot`: `{tag}` puts a key of ours (a sink's
    marker) in the slot of the keys it goes with."""
    tag = _tags.get(slot)
    if tag is None:
        n = 0
        while key_slot(str(n).encode()) != slot:
            n += 1
        tag = _tags[slot] = str(n)
    return tag


def by_slot(keys: Iterator[str | bytes]) -> dict[int, list[int]]:
    """Positions of `keys`, grouped by slot in first-seen order."""
    groups: dict[int, list[int]] = {}
    for i, key in enumerate(keys):
        groups.setdefault(slot_of(key), []).append(i)
    return groups
