"""Stream entry IDs as the connector sees them: parse, format, step, and split ranges.

Pure arithmetic with no client and no Spark, so the offset and partition logic that
exactly-once replay depends on can be unit-tested on its own. An ID is the server's
`StreamID` `(ms, seq)`, whose tuple ordering is Redis's; a range is `(lo, hi]`:
exclusive start (the last entry already read), inclusive end.
"""

from __future__ import annotations

from rillet.engine.ids import MAX_ID, MIN_ID, U64_MAX, StreamID

SEQ_MAX = U64_MAX
MS_MAX = U64_MAX
ZERO = MIN_ID
MAX = MAX_ID


def parse_id(text: str | bytes, *, default_seq: int = 0) -> StreamID:
    """Parse `ms-seq` or a bare `ms` (its seq is `default_seq`: 0 for starts, SEQ_MAX for ends).

    `-` and `+` mean the smallest and largest IDs, as in XRANGE.
    """
    if isinstance(text, bytes):
        text = text.decode("ascii")
    text = text.strip()
    if text == "-":
        return ZERO
    if text == "+":
        return MAX
    ms_text, sep, seq_text = text.partition("-")
    try:
        ms = int(ms_text)
        seq = int(seq_text) if sep else default_seq
    except ValueError:
        raise ValueError(f"invalid stream ID {text!r}: expected <ms>-<seq> or <ms>") from None
    if not (0 <= ms <= MS_MAX and 0 <= seq <= SEQ_MAX):
        raise ValueError(f"invalid stream ID {text!r}: out of range")
    return StreamID(ms, seq)


def format_id(stream_id: StreamID) -> str:
    return f"{stream_id.ms}-{stream_id.seq}"


def next_id(stream_id: StreamID) -> StreamID:
    """The smallest ID greater than `stream_id`.

    XRANGE's `(id` form would do the same, but needs Redis 6.2; stepping the ID
    ourselves works on every server.
    """
    if stream_id.seq < SEQ_MAX:
        return StreamID(stream_id.ms, stream_id.seq + 1)
    if stream_id.ms < MS_MAX:
        return StreamID(stream_id.ms + 1, 0)
    raise ValueError("no stream ID after the maximum ID")


def prev_id(stream_id: StreamID) -> StreamID:
    """The largest ID smaller than `stream_id` (ZERO stays ZERO)."""
    if stream_id.seq > 0:
        return StreamID(stream_id.ms, stream_id.seq - 1)
    if stream_id.ms > 0:
        return StreamID(stream_id.ms - 1, SEQ_MAX)
    return ZERO


def split_range(
    lo: StreamID, hi: StreamID, parts: int, floor: StreamID | None = None
) -> list[tuple[StreamID, StreamID]]:
    """Cut `(lo, hi]` into at most `parts` disjoint, contiguous sub-ranges.

    Boundaries depend only on the arguments, so a replayed batch is cut the same way.
    Cuts fall on whole milliseconds (`<ms>-SEQ_MAX`), which splits by time; when the
    range lies inside one millisecond the sequence numbers are cut. `floor` (the ID just
    before the range's first entry, found by the caller) moves the time basis up to
    where the entries start, so a range from 0-0 is cut where its data is; the first
    sub-range still starts at `lo`.
    """
    if hi <= lo:
        return []
    parts = max(1, parts)
    if parts == 1:
        return [(lo, hi)]
    base = max(lo, floor) if floor is not None and floor < hi else lo
    cuts: list[StreamID] = []
    if hi.ms > base.ms:
        span = hi.ms - base.ms
        for i in range(1, parts):
            cut = StreamID(base.ms + span * i // parts, SEQ_MAX)
            if base < cut < hi and lo < cut and (not cuts or cut > cuts[-1]):
                cuts.append(cut)
    else:
        span = hi.seq - base.seq
        for i in range(1, parts):
            cut = StreamID(base.ms, base.seq + span * i // parts)
            if base < cut < hi and lo < cut and (not cuts or cut > cuts[-1]):
                cuts.append(cut)
    bounds = [lo, *cuts, hi]
    return list(zip(bounds[:-1], bounds[1:], strict=True))
