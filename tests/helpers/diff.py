"""Differential testing: run the same commands on rillet and a reference Redis, compare bytes.

`Pair.check(*args)` sends one command to both and asserts the raw replies are
equal (after optional normalisation, e.g. of idle times); it returns the bytes.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from tests.helpers.wire import Wire

Normaliser = Callable[[bytes], bytes]


def mask_integers_after(*names: bytes) -> Normaliser:
    """Replace the integer that follows each named field (e.g. b'idle') with 0."""
    patterns = [re.compile(rb"(\$%d\r\n%s\r\n:)-?\d+" % (len(n), re.escape(n))) for n in names]

    def normalise(raw: bytes) -> bytes:
        for pattern in patterns:
            raw = pattern.sub(rb"\g<1>0", raw)
        return raw

    return normalise


def mask_acl_log(raw: bytes) -> bytes:
    """ACL LOG entries with what differs between servers (client info, ids, times) masked."""
    raw = re.sub(rb"(\$11\r\nclient-info\r\n)\$\d+\r\n[^\r]*\r\n", rb"\1-", raw)
    raw = re.sub(rb"(\$11\r\nage-seconds\r\n)\$\d+\r\n[^\r]*\r\n", rb"\1-", raw)
    raw = re.sub(rb"(\$8\r\nentry-id\r\n):\d+", rb"\1-", raw)
    return re.sub(rb"(\$\d\d\r\ntimestamp-[a-z-]+\r\n):\d+", rb"\1-", raw)


class Pair:
    def __init__(self, ours_port: int, ref_port: int) -> None:
        self.ours = Wire(ours_port)
        self.ref = Wire(ref_port)

    def both(self, *args: bytes | str | int) -> tuple[bytes, bytes]:
        return self.ours.call(*args), self.ref.call(*args)

    def check(self, *args: bytes | str | int, normalise: Normaliser | None = None) -> bytes:
        ours, ref = self.both(*args)
        if normalise is not None:
            ours, ref = normalise(ours), normalise(ref)
        assert ours == ref, f"{args!r}:\n  rillet: {ours!r}\n  redis:  {ref!r}"
        return ours

    def close(self) -> None:
        self.ours.close()
        self.ref.close()


def with_lrm_policies(reply: bytes) -> bytes:
    """Redis 8.6 lists its two LRM policies (volatile-lrm, allkeys-lrm) in the error
    for a bad maxmemory-policy; Redis 8.2.3 has not got them (docs/compat.md)."""
    return reply.replace(
        b"volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction",
        b"volatile-ttl, volatile-lrm, allkeys-lru, allkeys-lfu, allkeys-random, allkeys-lrm, "
        b"noeviction")
