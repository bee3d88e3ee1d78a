"""Typed helpers for redis-py users of rillet's stream policies (docs/streams-policies.md).

    import redis
    from rillet import client as rc

    r = redis.Redis()
    rc.set_retention(r, "sensors", timedelta(days=7))      # RILLET.XRETENTION
    rc.set_dead_letter(r, "jobs", "workers", 5, "jobs:dead")  # RILLET.XDEADLETTER
    for entry_id, fields in r.xrange("jobs:dead"):
        letter = rc.DeadLetter.from_fields(entry_id, fields)

Each helper takes any redis-py client (`redis.Redis`, a pipeline, a cluster
client) and raises redis-py's `ResponseError` with the server's error, as a
plain call would; a server that is not rillet answers `unknown command`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Protocol

from rillet.engine.stream_policy import (
    FIELD_CONSUMER,
    FIELD_DELIVERIES,
    FIELD_GROUP,
    FIELD_ID,
    FIELD_STREAM,
)

Key = str | bytes

_OWN_FIELDS = (FIELD_STREAM, FIELD_ID, FIELD_GROUP, FIELD_CONSUMER, FIELD_DELIVERIES)


class Commands(Protocol):
    """What the helpers need of a client: redis-py's `execute_command`."""

    def execute_command(self, *args: Any, **options: Any) -> Any: ...


def _milliseconds(age: int | timedelta) -> int:
    if isinstance(age, timedelta):
        return int(age.total_seconds() * 1000)
    return age


def set_retention(r: Commands, key: Key, age: int | timedelta) -> Any:
    """Keep only entries of `key` younger than `age` (milliseconds, or a timedelta)."""
    return r.execute_command("RILLET.XRETENTION", key, _milliseconds(age))


def clear_retention(r: Commands, key: Key) -> Any:
    return r.execute_command("RILLET.XRETENTION", key, 0)


def set_dead_letter(r: Commands, key: Key, group: Key, max_deliveries: int,
                    dead_letter_key: Key) -> Any:
    """Entries of `group` delivered `max_deliveries` times go to `dead_letter_key`
    at their next delivery instead (and are acknowledged)."""
    return r.execute_command("RILLET.XDEADLETTER", key, group, max_deliveries, dead_letter_key)


def clear_dead_letter(r: Commands, key: Key, group: Key) -> Any:
    return r.execute_command("RILLET.XDEADLETTER", key, group, "OFF")


def retention_ms(r: Commands, key: Key) -> int | None:
    """The stream's retention in milliseconds, None without one (XINFO STREAM)."""
    info = _as_dict(r.execute_command("XINFO", "STREAM", key))
    value = info.get(b"retention-ms")
    return None if value is None else int(value)


def dead_letter_policy(r: Commands, key: Key, group: Key) -> tuple[int, bytes] | None:
    """(max-deliveries, dead-letter key) of the group, None without one (XINFO GROUPS)."""
    name = group.encode() if isinstance(group, str) else group
    for raw in r.execute_command("XINFO", "GROUPS", key):
        info = _as_dict(raw)
        if _as_bytes(info.get(b"name")) == name:
            limit = info.get(b"max-deliveries")
            return None if limit is None else (int(limit), _as_bytes(info[b"dead-letter-key"]))
    return None


@dataclass(frozen=True)
class DeadLetter:
    """An entry of a dead-letter stream: the original fields and where they came from."""

    id: bytes  # its ID in the dead-letter stream
    fields: dict[bytes, bytes]  # the original entry's
    stream: bytes
    source_id: bytes
    group: bytes
    consumer: bytes  # the consumer that held it last ("" if XNACK had released it)
    deliveries: int  # how many times it had been delivered

    @classmethod
    def from_fields(cls, entry_id: Key, fields: Mapping[Any, Any]) -> DeadLetter:
        """From an XRANGE/XREAD entry as redis-py returns it (bytes or str keys)."""
        raw = {_as_bytes(k): _as_bytes(v) for k, v in fields.items()}
        return cls(
            id=_as_bytes(entry_id),
            fields={k: v for k, v in raw.items() if k not in _OWN_FIELDS},
            stream=raw[FIELD_STREAM], source_id=raw[FIELD_ID], group=raw[FIELD_GROUP],
            consumer=raw[FIELD_CONSUMER], deliveries=int(raw[FIELD_DELIVERIES]))


def _as_bytes(value: Any) -> bytes:
    return value.encode() if isinstance(value, str) else bytes(value)


def _as_dict(reply: Any) -> dict[bytes, Any]:
    if isinstance(reply, dict):
        return {_as_bytes(k): v for k, v in reply.items()}
    return {_as_bytes(k): v for k, v in zip(reply[::2], reply[1::2], strict=True)}
