"""Job functions the library tests enqueue (importable by the workers)."""

from __future__ import annotations


def add(a: int, b: int) -> int:
    return a + b


async def async_add(ctx: dict, a: int, b: int) -> int:
    return a + b
