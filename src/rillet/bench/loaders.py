"""Fast, pipelined data loading for the benchmarks: streams of N entries and PELs of N pending.

Loading 1M entries through redis-py takes minutes; pre-encoded pipelined
commands in batches take seconds, so the suite can build 1M-entry streams for
both servers in one run.
"""

from __future__ import annotations

import random

from rillet.bench.client import RespError, SyncClient

BATCH = 2000


def _bulk(data: bytes) -> bytes:
    return b"$%d\r\n%s\r\n" % (len(data), data)


def _send_batches(client: SyncClient, commands: list[bytes]) -> None:
    errors, first = client.send_raw_count_errors(b"".join(commands), len(commands))
    if errors:
        raise RespError(f"{errors} of {len(commands)} writes failed: {first}")


def fill_explicit_ids(client: SyncClient, key: bytes, entries: int, first_ms: int = 1) -> None:
    """XADD key <ms>-0 f v for ms = first_ms .. first_ms+entries-1.

    Explicit millisecond IDs let redis-benchmark's 12-digit __rand_int__ name
    a random existing entry (ID 000000123456 is 123456-0).
    """
    head = b"*5\r\n$4\r\nXADD\r\n" + _bulk(key)
    tail = b"$1\r\nf\r\n$1\r\nv\r\n"
    for start in range(first_ms, first_ms + entries, BATCH):
        stop = min(start + BATCH, first_ms + entries)
        _send_batches(client, [head + _bulk(b"%d-0" % ms) + tail for ms in range(start, stop)])


def fill_sensor(client: SyncClient, key: bytes, entries: int, seed: int = 42) -> None:
    """XADD key * sensor-id <i % 1000> temperature <float>: the memory target's workload."""
    head = b"*7\r\n$4\r\nXADD\r\n" + _bulk(key) + b"$1\r\n*\r\n$9\r\nsensor-id\r\n"
    rng = random.Random(seed)
    for start in range(0, entries, BATCH):
        stop = min(start + BATCH, entries)
        commands = []
        for i in range(start, stop):
            sensor = b"%d" % (i % 1000)
            temperature = b"%.2f" % rng.uniform(-10.0, 40.0)
            commands.append(head + _bulk(sensor) + b"$11\r\ntemperature\r\n" + _bulk(temperature))
        _send_batches(client, commands)


def build_pel(
    client: SyncClient, key: bytes, group: bytes, consumer: bytes, expected: int,
    chunk: int = 10_000,
) -> None:
    """(Re)create `group` at 0 and read the whole stream with `consumer`: `expected` pending."""
    try:
        client.call("XGROUP", "DESTROY", key, group)
    except RespError:
        pass
    client.call("XGROUP", "CREATE", key, group, "0")
    read = 0
    while True:
        reply = client.call("XREADGROUP", "GROUP", group, consumer, "COUNT", chunk,
                            "STREAMS", key, ">")
        if not reply:
            break
        got = len(reply[0][1])
        read += got
        if got == 0:
            break
    pending = client.call("XPENDING", key, group)
    count = int(pending[0]) if isinstance(pending, list) else -1
    if read != expected or count != expected:
        raise RespError(f"PEL build read {read}, pending {count}, expected {expected}")
