"""XADD IDMP state (Redis 8.6 idempotent producers), kept beside a stream.

Owned by the engine so persistence can save and load it without the command
layer: `Stream.idmp` is an `Idmp` or None (the stream never used IDMP/XCFGSET).
"""

from __future__ import annotations

from rillet.engine.ids import StreamID

IDMP_DURATION_MAX_S = 86400
IDMP_MAXSIZE_MAX = 10000


class Idmp:
    """A stream's IDMP map: per producer ID, its recent idempotent IDs -> entry ID.

    Each producer's dict is in insertion order, which is also entry-ID order
    (IDMP only works with `*`), so the oldest iid is the first key: eviction
    by IDMP-MAXSIZE and expiry by IDMP-DURATION both pop from the front. An
    iid's time is its entry ID's milliseconds, which makes replaying an
    XIDMPRECORD effect deterministic. `duration_s`/`maxsize` are None until
    XCFGSET sets them; until then the server's stream-idmp-* defaults apply.
    """

    __slots__ = ("duration_s", "maxsize", "producers", "iids_added", "iids_duplicates")

    def __init__(self) -> None:
        self.duration_s: int | None = None
        self.maxsize: int | None = None
        self.producers: dict[bytes, dict[bytes, StreamID]] = {}
        self.iids_added = 0
        self.iids_duplicates = 0

    def settings(self, default_duration_s: int, default_maxsize: int) -> tuple[int, int]:
        """(duration s, maxsize) in force: XCFGSET's, else the server's defaults."""
        duration = self.duration_s if self.duration_s is not None else default_duration_s
        maxsize = self.maxsize if self.maxsize is not None else default_maxsize
        return duration, maxsize

    def lookup(self, pid: bytes, iid: bytes, now_ms: int, duration_s: int) -> StreamID | None:
        """The entry ID recorded for (pid, iid), unless it expired (then it is forgotten)."""
        iids = self.producers.get(pid)
        if iids is None:
            return None
        self._expire(pid, iids, now_ms, duration_s)
        return iids.get(iid)

    def record(self, pid: bytes, iid: bytes, sid: StreamID, now_ms: int, duration_s: int,
               maxsize: int) -> None:
        iids = self.producers.get(pid)
        if iids is None:
            iids = self.producers[pid] = {}
        else:
            self._expire(pid, iids, now_ms, duration_s)
            iids.pop(iid, None)
            while len(iids) >= maxsize:
                del iids[next(iter(iids))]
        iids[iid] = sid
        self.producers[pid] = iids  # _expire drops a producer it empties
        self.iids_added += 1

    def _expire(self, pid: bytes, iids: dict[bytes, StreamID], now_ms: int, duration_s: int) -> None:
        horizon = now_ms - duration_s * 1000
        while iids:
            oldest = next(iter(iids))
            if iids[oldest][0] > horizon:
                return
            del iids[oldest]
        del self.producers[pid]

    def expire_all(self, now_ms: int, duration_s: int) -> None:
        for pid, iids in list(self.producers.items()):
            self._expire(pid, iids, now_ms, duration_s)

    def clear(self) -> None:
        """XCFGSET with a new setting forgets every producer (counters stay)."""
        self.producers.clear()

    @property
    def iids_tracked(self) -> int:
        return sum(map(len, self.producers.values()))
