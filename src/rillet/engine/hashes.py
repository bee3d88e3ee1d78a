"""The hash type: field -> value, with optional per-field expiry (Redis 7.4+).

`fields` keeps insertion order (what HGETALL shows for a listpack-encoded
hash in Redis). `ttls` maps a field to its absolute deadline in unix ms; a
field past its deadline is gone, which the commands layer enforces
(`purge_expired`) so that the deletions can be propagated as HDEL.

OBJECT ENCODING: `listpack` while every field and value fits
hash-max-listpack-value and the count fits hash-max-listpack-entries
(`listpackex` once a field-expiry command has touched it, `ex`), `hashtable`
after; a hash never goes back, as in Redis. A `listpackex` keeps the fields
with a TTL first, by deadline (a field given a deadline goes before those due at
the same time), then the others: `fields` follows that order while the hash is
compact, since HGETALL shows it.
"""

from __future__ import annotations

from rillet.compiled import as_slots


class Hash:
    TYPE_NAME = b"hash"
    __slots__ = ("fields", "ttls", "big", "ex")

    def __init__(self) -> None:
        self.fields: dict[bytes, bytes] = {}
        self.ttls: dict[bytes, int] = {}
        self.big = False
        self.ex = False

    # --- plain structures (snapshot codecs, RDB) ---------------------------------
    @classmethod
    def from_dict(cls, fields: dict[bytes, bytes], ttls: dict[bytes, int] | None = None,
                  big: bool = False, ex: bool = False) -> Hash:
        h = cls()
        h.fields = dict(fields)
        h.ttls = {f: t for f, t in (ttls or {}).items() if f in h.fields}
        h.big = big
        h.ex = ex or bool(h.ttls)
        return h

    def to_dict(self) -> dict[bytes, bytes]:
        return dict(self.fields)

    def field_ttls(self) -> dict[bytes, int]:
        return dict(self.ttls)

    # --- content ---------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.fields)

    def due_fields(self, now_ms: int) -> list[bytes]:
        if not self.ttls:
            return []
        return [f for f, t in self.ttls.items() if t <= now_ms]

    def set(self, field: bytes, value: bytes, keep_ttl: bool = False) -> bool:
        """Set a field; True if it is new. A set field loses its TTL unless `keep_ttl`."""
        new = field not in self.fields
        if not keep_ttl and self.ttls and self.ttls.pop(field, None) is not None and not self.big:
            del self.fields[field]  # a listpackex moves a field that loses its TTL to the end
        self.fields[field] = value
        return new

    def set_ttl(self, field: bytes, deadline: int) -> None:
        self.ttls[field] = deadline
        self.ex = True
        if self.big:
            return
        value = self.fields.pop(field)
        items = list(self.fields.items())
        at = 0
        # Before the fields due at the same time (Redis inserts before the first field
        # whose deadline is not earlier).
        while at < len(items) and items[at][0] in self.ttls and self.ttls[items[at][0]] < deadline:
            at += 1
        items.insert(at, (field, value))
        self.fields = dict(items)

    def persist(self, field: bytes) -> bool:
        if self.ttls.pop(field, None) is None:
            return False
        if not self.big:
            self.fields[field] = self.fields.pop(field)
        return True

    def delete(self, field: bytes) -> bool:
        if field in self.fields:
            del self.fields[field]
            if self.ttls:
                self.ttls.pop(field, None)
            return True
        return False

    def note_sizes(self, max_entries: int, max_value: int, items: list[bytes]) -> None:
        """After a write: convert to `hashtable` when Redis would (never back)."""
        if self.big:
            return
        if len(self.fields) > max_entries or any(len(x) > max_value for x in items):
            self.big = True

    def copy(self) -> Hash:
        return Hash.from_dict(self.fields, self.ttls, self.big, self.ex)

    def encoding(self) -> bytes:
        if self.big:
            return b"hashtable"
        return b"listpackex" if self.ex else b"listpack"

    def memory_usage(self) -> int:
        return 64 + sum(len(f) + len(v) + 16 for f, v in self.fields.items()) + 24 * len(self.ttls)

# (Compiled: an extension type, engine/hashes.pxd; its fields read as slots from Python.)
as_slots(Hash)
