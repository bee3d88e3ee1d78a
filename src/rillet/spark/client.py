"""The connector's Redis client: redis-py with raw replies, plus XINFO STREAM decoding.

redis-py's reply parsers turn an entry's fields into a dict, which silently drops
repeated field names, and decode differently under RESP2 and RESP3. The connector
clears them and reads raw replies. A client is made where it is used (inside `read()`
or `write()`, or lazily on the driver) and is never pickled.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar
from urllib.parse import urlparse

import redis
from redis.backoff import NoBackoff
from redis.exceptions import AuthenticationError, AuthorizationError
from redis.retry import Retry

from rillet.spark.ids import StreamID, format_id, next_id, parse_id, prev_id
from rillet.spark.options import ConnectionOptions, ReaderOptions

log = logging.getLogger("rillet.spark")
T = TypeVar("T")

RECONNECT_FIRST_DELAY_S = 0.1
RECONNECT_MAX_DELAY_S = 2.0


class Commands(Protocol):
    """What the per-key helpers below need: a redis.Redis, or a cluster's Router."""

    def execute_command(self, *args: Any) -> Any: ...

    def pipeline(self, transaction: bool = ...) -> Any: ...


class ServerUnavailableError(redis.ConnectionError):
    """The server did not answer again within the reader's reconnectTimeout."""


# redis-py files these under ConnectionError, but waiting does not fix them.
_NOT_TRANSIENT = (AuthenticationError, AuthorizationError)


def connect(options: ConnectionOptions, *, reconnect: bool = False) -> redis.Redis:
    """A RESP2 client whose replies are the server's raw bytes, ints and lists.

    With `reconnect`, redis-py does not retry by itself: the caller's `reconnecting`
    owns the retries, so their time is bounded by the reader's reconnectTimeout (redis-py's
    own ten tries would run again under each of ours).
    """
    # (`protocol` goes in this dict: the types-redis stub, written for redis-py 4, lacks it.)
    settings: dict[str, Any] = {"protocol": 2}
    if options.username is not None:
        settings["username"] = options.username
    if options.password is not None:
        settings["password"] = options.password
    if reconnect:
        settings["retry"] = Retry(NoBackoff(), 0)
    client = redis.Redis.from_url(
        options.url,
        **settings,
        decode_responses=False,
        socket_timeout=options.socket_timeout_s,
        socket_connect_timeout=min(10.0, options.socket_timeout_s),
    )
    client.response_callbacks.clear()
    return client


def _duration(ms: int) -> str:
    return f"{ms // 1000}s" if ms % 1000 == 0 else f"{ms}ms"


def reconnecting(action: Callable[[], T], options: ReaderOptions, what: str) -> T:
    """Run `action`, riding out a server restart as Kafka's source rides out a broker's.

    A connection error (refused, reset, closed, or LOADING while the server reads its
    AOF) is retried with backoff, 0.1 s doubling to 2 s, until `reconnectTimeout` has
    passed since the first failure; then ServerUnavailableError names the server and
    the option. Only reads are retried, and every read here is a function of fixed
    IDs, so a retry returns the same entries and exactly-once holds. A socket timeout
    is not retried: a server that answers slowly has not restarted.
    """
    deadline: float | None = None
    delay = RECONNECT_FIRST_DELAY_S
    while True:
        try:
            return action()
        except (ServerUnavailableError, *_NOT_TRANSIENT):
            raise
        except redis.ConnectionError as exc:
            now = time.monotonic()
            if deadline is None:
                deadline = now + options.reconnect_timeout_ms / 1000
            if now >= deadline:
                url = urlparse(options.connection.url)
                raise ServerUnavailableError(
                    f"{what}: no answer from {url.hostname}:{url.port or 6379} within "
                    f"reconnectTimeout={_duration(options.reconnect_timeout_ms)} "
                    f"(last error: {exc}); raise the option to wait longer for a restart"
                ) from exc
            log.warning("rillet: %s: %s; reconnecting in %.1fs", what, exc, delay)
            time.sleep(min(delay, deadline - now))
            delay = min(delay * 2, RECONNECT_MAX_DELAY_S)


def riding_out_restarts(method: Callable[..., T]) -> Callable[..., T]:
    """A driver-side reader method retried by `reconnecting` (its object has `.options`).
    The wrapper keeps the method's signature, which PySpark inspects."""

    @functools.wraps(method)
    def call(self: Any, *args: Any) -> T:
        return reconnecting(lambda: method(self, *args), self.options, method.__name__)

    return call


def is_error(reply: Any) -> bool:
    return isinstance(reply, Exception)


def _pairs(reply: Any) -> dict[str, Any]:
    if isinstance(reply, Mapping):
        return {_text(k): v for k, v in reply.items()}
    items = list(reply)
    return {_text(items[i]): items[i + 1] for i in range(0, len(items) - 1, 2)}


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _maybe_id(value: Any) -> StreamID | None:
    if value is None:
        return None
    return parse_id(value)


@dataclass(frozen=True)
class StreamInfo:
    """The XINFO STREAM counters the connector relies on.

    `entries_added` and `max_deleted_id` are None on servers older than Redis 7.0.
    """

    length: int
    last_generated_id: StreamID
    entries_added: int | None
    max_deleted_id: StreamID | None
    first_id: StreamID | None

    @classmethod
    def from_reply(cls, reply: Any) -> StreamInfo:
        info = _pairs(reply)
        first_entry = info.get("first-entry")
        first_id = _maybe_id(first_entry[0]) if first_entry else None
        added = info.get("entries-added")
        return cls(
            length=int(info["length"]),
            last_generated_id=parse_id(info["last-generated-id"]),
            entries_added=None if added is None else int(added),
            max_deleted_id=_maybe_id(info.get("max-deleted-entry-id")),
            first_id=first_id,
        )


class NotAStreamError(redis.ResponseError):
    """A key the reader was told to read holds another type (Redis's WRONGTYPE)."""


def stream_infos(client: Commands, streams: Sequence[str]) -> dict[str, StreamInfo | None]:
    """XINFO STREAM for many keys in one round trip; None for a missing key.

    A key of another type raises NotAStreamError: a missing stream is an empty read
    (it may be created later, as a Kafka topic may), but a hash or list under a name the
    query lists is a mistake that silent empty results would hide.
    """
    if not streams:
        return {}
    pipe = client.pipeline(transaction=False)
    for stream in streams:
        pipe.execute_command("XINFO", "STREAM", stream)
    replies = pipe.execute(raise_on_error=False)
    out: dict[str, StreamInfo | None] = {}
    for stream, reply in zip(streams, replies, strict=True):
        if is_error(reply):
            message = str(reply)
            if "no such key" in message:
                out[stream] = None
                continue
            if message.startswith("WRONGTYPE"):
                kind = _text(client.execute_command("TYPE", stream))
                raise NotAStreamError(
                    f"WRONGTYPE key {stream!r} holds a {kind}, not a stream: "
                    "option streams must name stream keys"
                ) from None
            raise reply
        out[stream] = StreamInfo.from_reply(reply)
    return out


def scan_streams(nodes: Sequence[redis.Redis], pattern: str, *, count: int = 1000) -> list[str]:
    """Stream keys matching a glob pattern, via SCAN ... TYPE stream on each node (a
    cluster's masters; bounded by the keyspace)."""
    found: set[str] = set()
    for client in nodes:
        cursor: Any = b"0"
        while True:
            cursor, keys = client.execute_command(
                "SCAN", cursor, "MATCH", pattern, "COUNT", count, "TYPE", "stream"
            )
            found.update(_text(k) for k in keys)
            if cursor in (b"0", 0, "0"):
                break
    return sorted(found)


def range_floors(
    client: Commands, ranges: Mapping[str, tuple[StreamID, StreamID]]
) -> dict[str, StreamID]:
    """For each `(lo, hi]`, the ID just before its first entry (one pipelined round trip of
    XRANGE ... COUNT 1), so ranges are cut where their entries are, not from `lo`.
    Streams whose range holds no entry are left out."""
    if not ranges:
        return {}
    streams = sorted(ranges)
    pipe = client.pipeline(transaction=False)
    for stream in streams:
        lo, hi = ranges[stream]
        pipe.execute_command("XRANGE", stream, format_id(next_id(lo)), format_id(hi), "COUNT", 1)
    floors: dict[str, StreamID] = {}
    for stream, page in zip(streams, pipe.execute(raise_on_error=False), strict=True):
        if not is_error(page) and page:
            floors[stream] = prev_id(parse_id(page[0][0]))
    return floors
