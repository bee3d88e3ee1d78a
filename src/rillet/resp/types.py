"""Typed replies.

Handlers return one value; its Python type decides the RESP type, never its
content: `bytes`/`str` -> bulk string, `int` -> integer, `bool` -> boolean,
`float` -> double, `None` -> null bulk, `list`/`tuple` -> array. Everything
else has a wrapper below. The encoder renders each for RESP2 or RESP3.
"""

from __future__ import annotations


class SimpleString(bytes):
    """+OK style status reply."""

    __slots__ = ()


class Map:
    """RESP3 map (%), a flat array of key/value pairs in RESP2."""

    __slots__ = ("items",)

    def __init__(self, items: list | dict) -> None:
        self.items = list(items.items()) if isinstance(items, dict) else items

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Map) and self.items == other.items

    def __repr__(self) -> str:
        return f"Map({self.items!r})"


class SetReply:
    """RESP3 set (~), an array in RESP2."""

    __slots__ = ("items",)

    def __init__(self, items: list) -> None:
        self.items = items


class Verbatim:
    """RESP3 verbatim string (=), a bulk string in RESP2."""

    __slots__ = ("fmt", "text")

    def __init__(self, text: bytes, fmt: bytes = b"txt") -> None:
        self.fmt = fmt
        self.text = text


class Push:
    """RESP3 out-of-band push (>), an array in RESP2."""

    __slots__ = ("items",)

    def __init__(self, items: list) -> None:
        self.items = items


class NullArray:
    """The null some commands send where an array would be (*-1 in RESP2, _ in RESP3)."""

    __slots__ = ()


class Raw(bytes):
    """Already-encoded bytes, identical in RESP2 and RESP3 (for replies built once and reused)."""

    __slots__ = ()


class PushedFrames(Raw):
    """Already-encoded pub/sub frames ((un)subscribe confirmations): pushes that
    CLIENT REPLY OFF|SKIP does not silence (Redis's CLIENT_PUSHING)."""

    __slots__ = ()


class NoReply:
    """Nothing is sent (e.g. a command whose client is being closed or is blocked)."""

    __slots__ = ()


OK = SimpleString(b"OK")
PONG = SimpleString(b"PONG")
QUEUED = SimpleString(b"QUEUED")
NULL_ARRAY = NullArray()
NO_REPLY = NoReply()
