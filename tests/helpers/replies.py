"""Reply values as handlers return them, with pre-encoded parts decoded.

Range reads answer `Raw` (entries encoded straight from the stream's nodes,
see resp/_stream_entries.pyx) when the compiled encoder is built; tests that
look inside replies compare the values the Python path would give.
"""

from __future__ import annotations

from rillet.resp.types import Map, Raw


def plain(reply: object) -> object:
    """`reply` with every Raw inside decoded; the same object if it holds none."""
    kind = reply.__class__
    if kind is Raw:
        value, _ = _parse(bytes(reply), 0)  # type: ignore[arg-type]
        return value
    if kind is list or kind is tuple:
        items = [plain(item) for item in reply]  # type: ignore[attr-defined]
        if all(a is b for a, b in zip(items, reply, strict=True)):  # type: ignore[call-overload]
            return reply
        return items if kind is list else tuple(items)
    if kind is Map:
        return Map([(plain(k), plain(v)) for k, v in reply.items])  # type: ignore[attr-defined]
    return reply


def _parse(data: bytes, pos: int) -> tuple[object, int]:
    # Range replies hold only arrays and bulk strings.
    end = data.index(b"\r\n", pos)
    kind, n = data[pos:pos + 1], int(data[pos + 1:end])
    pos = end + 2
    if kind == b"$":
        return data[pos:pos + n], pos + n + 2
    assert kind == b"*", kind
    items = []
    for _ in range(n):
        item, pos = _parse(data, pos)
        items.append(item)
    return items, pos
