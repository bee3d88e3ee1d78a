"""The backlog's ring of chunks holds exactly the last `size` bytes of the stream
(a shrink drops bytes for good: a later larger size does not bring them back)."""

from __future__ import annotations

import random

from rillet.replication.backlog import Backlog


def test_ring_of_chunks_matches_a_flat_model():
    rng = random.Random(12)
    for size in (1, 7, 64, 300):
        backlog = Backlog(size, 1, 0.0)
        stream = kept = b""
        for step in range(400):
            if step % 97 == 96:
                size = rng.choice((5, 50, 200, 400))
                backlog.resize(size)
                kept = kept[len(kept) - size:] if len(kept) > size else kept
            else:
                chunk = bytes(rng.randrange(256) for _ in range(rng.choice((0, 1, 3, 20, 90))))
                backlog.append(chunk)
                stream += chunk
                kept += chunk
                kept = kept[len(kept) - size:] if len(kept) > size else kept
            first = len(stream) - len(kept) + 1
            assert backlog.histlen == len(kept)
            assert backlog.first_byte_offset == first
            assert not backlog.covers(first - 1) or first == 1
            assert backlog.covers(first) and backlog.covers(len(stream) + 1)
            assert not backlog.covers(len(stream) + 2)
            for offset in {first, first + len(kept) // 2, len(stream) + 1}:
                assert backlog.read_from(offset) == stream[offset - 1:]
