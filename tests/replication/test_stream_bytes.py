"""The master's stream bytes: its effect sink's encoding, and the backlog's ring of chunks,
which holds exactly the last `size` bytes of the stream (a shrink drops bytes for
good: a later larger size does not bring them back)."""

from __future__ import annotations

import random

import pytest

from rillet.persistence import aof, aoflog
from rillet.replication.backlog import Backlog
from tests.replication import support


def _streams():
    """The reference EffectStream and, when built, the compiled one."""
    kinds = [pytest.param(aoflog.EffectStream, id="python")]
    if aof._aofenc is not None:
        kinds.append(pytest.param(aof._aofenc.EffectStream, id="compiled"))
    return kinds


@pytest.mark.parametrize("cls", _streams())
def test_the_effect_stream_encodes_as_the_reference_does(cls):
    plain = [b"XADD", b"s", b"1-1", b"f", b"\r\n\x00", b"", b"x" * 100_000]
    mixed = [b"SET", bytearray(b"k"), memoryview(b"v")]
    encoded = aoflog.encode_command([b"XADD", b"s", b"2-1", b"f", b"v"])  # a compiled body's
    effects = [(0, plain), (3, mixed), (3, (b"DEL", b"k")), (3, [b"PING"]), (0, mixed),
               (0, plain), (0, encoded), (12, [b"EXEC"])]
    for selected in (-1, 0, 3):
        stream = cls()
        stream.selected_db = selected
        expected, at = b"", selected
        for cut in (2, 5, len(effects)):  # several batches, then one take
            stream(effects[:cut])
            for db_index, argv in effects[:cut]:
                if db_index != at:
                    expected += aoflog.encode_select(db_index)
                    at = db_index
                expected += aoflog.encode_command(argv if argv.__class__ is bytes else list(argv))
        assert len(stream) == len(expected)
        assert (stream.take(), stream.selected_db) == (expected, 12)
        assert (len(stream), stream.take()) == (0, b"")
        stream([])
        assert (stream.take(), stream.selected_db) == (b"", 12)


@pytest.mark.parametrize("cls", _streams())
def test_on_buffered_is_called_before_the_first_bytes(cls):
    """The AOF holds replies from its buffer's first bytes: the hook runs once per
    take, before those bytes go in (a hook that writes the buffer out at once,
    as the AOF's does without a server, sees it still empty)."""
    stream, calls = cls(), []
    stream.on_buffered = lambda: calls.append(len(stream))
    stream([])
    assert calls == []
    stream([(0, [b"PING"])])
    stream([(0, [b"PING"])])
    assert calls == [0]
    stream.take()
    stream([(1, b"*1\r\n$4\r\nPING\r\n")])
    assert calls == [0, 0]
    stream.on_buffered = stream.take  # a hook that empties the stream
    stream.take()
    stream([(1, [b"PING"])])
    assert stream.take() == aoflog.encode_command([b"PING"])


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
                assert support.backlog_bytes(backlog, offset) == stream[offset - 1:]
