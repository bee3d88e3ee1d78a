"""The micro-batch stream reader: offsets, admission control, availableNow, loss checks.

Delivery is by checkpointed ID ranges read with XRANGE, never XREADGROUP: Spark may
replay `(start, end]` after a crash or retry, and only a range read returns the same
entries again. A consumer group may mirror progress (`progressGroup`), never deliver.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa
import redis
from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)

from rillet.spark.client import (
    Commands,
    StreamInfo,
    is_error,
    range_floors,
    riding_out_restarts,
    scan_streams,
    stream_infos,
)
from rillet.spark.cluster import Router, connect_routed
from rillet.spark.ids import StreamID, format_id, next_id, parse_id, prev_id
from rillet.spark.offsets import (
    START_OF_STREAM,
    StreamPosition,
    entries_between,
    offset_from_json,
    offset_to_json,
    plan_partitions,
    split_counts,
)
from rillet.spark.options import ReaderOptions
from rillet.spark.reading import read_range

log = logging.getLogger("rillet.spark")


class DataLossError(RuntimeError):
    """Entries a query had not read yet were removed from a stream (failOnDataLoss)."""


def initial_position(info: StreamInfo | None, starting: str) -> StreamPosition:
    """Resolve earliest/latest to a concrete position, so replays never depend on stream state."""
    if info is None:
        return START_OF_STREAM
    if starting == "latest" or info.first_id is None:
        return StreamPosition(info.last_generated_id, info.entries_added)
    before_first = prev_id(info.first_id)
    # Redis's own rule (streamEstimateDistanceFromFirstEverEntry): the ordinal before the
    # first entry is known only if no XDEL left holes after it.
    no_holes = info.max_deleted_id is None or info.max_deleted_id < info.first_id
    read = info.entries_added - info.length if info.entries_added is not None and no_holes else None
    return StreamPosition(before_first, read)


def data_loss(stream: str, pos: StreamPosition, info: StreamInfo) -> str | None:
    """Why entries after `pos` are gone, or None if none are (or it cannot be known).

    Entries after `pos` were removed when the stream's first entry lies beyond them and
    fewer entries remain than were added since `pos` (XINFO's `entries-added` against
    the ordinal carried in the offset).
    """
    last = info.last_generated_id
    if pos.id >= last:
        # Behind a position we produced ourselves (it carries an ordinal) the counter can
        # only grow; a smaller one means the key was deleted and created again. A future
        # ID given as startingPosition has no ordinal and simply waits.
        recreated = (
            pos.id > last
            and pos.entries_read is not None
            and (info.entries_added is None or info.entries_added < pos.entries_read)
        )
        if recreated:
            return (
                f"stream {stream!r} was recreated: the query has read up to {pos.id}, "
                f"but its last ID is now {last}"
            )
        return None
    if info.first_id is not None and info.first_id <= next_id(pos.id):
        return None
    if info.entries_added is None or pos.entries_read is None:
        return None
    missing = info.entries_added - pos.entries_read - info.length
    if missing <= 0:
        return None
    first = info.first_id if info.first_id is not None else "(none, the stream is empty)"
    return (
        f"{missing} entries of stream {stream!r} after {pos.id} were removed before they "
        f"were read (the first entry is now {first})"
    )


class RilletStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """`spark.readStream.format("rillet")`: see the package docs for options."""

    def __init__(self, options: ReaderOptions) -> None:
        self.options = options
        self._client: Router | None = None
        self._frozen: dict[str, StreamPosition] | None = None
        self._known: list[str] = []
        self._refreshed_at = 0.0
        self._undetectable: set[str] = set()
        self._last_trigger: float | None = None

    # -- pickling: executors get the options only ------------------------------

    def __getstate__(self) -> dict[str, Any]:
        return {"options": self.options}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["options"])  # type: ignore[misc]

    @property
    def client(self) -> Router:
        if self._client is None:
            self._client = connect_routed(self.options.connection, reconnect=True)
        return self._client

    # -- driver ----------------------------------------------------------------

    def streams(self) -> list[str]:
        """Named streams and pattern matches (re-scanned at most every patternRefreshMs)."""
        if self.options.patterns:
            now = time.monotonic()
            if (
                not self._known
                or (now - self._refreshed_at) * 1000 >= self.options.pattern_refresh_ms
            ):
                found: set[str] = set()
                for pattern in self.options.patterns:
                    found.update(scan_streams(self.client.masters(), pattern))
                self._known = sorted(found)
                self._refreshed_at = now
        return sorted(set(self.options.streams) | set(self._known))

    @riding_out_restarts
    def initialOffset(self) -> dict:
        streams = self.streams()
        infos = stream_infos(self.client, streams)
        starting = self.options.starting
        groups = group_positions(self.client, streams, self.options.consumer_group)
        positions: dict[str, StreamPosition] = {}
        for stream in streams:
            info = infos[stream]
            choice = starting.get(stream, "latest") if isinstance(starting, dict) else starting
            if stream in groups:
                # consumerGroup: a new checkpoint resumes where the group's last query was.
                positions[stream] = groups[stream]
            elif self.options.starting_timestamp_ms is not None:
                # Kafka's startingTimestamp: the first entry at or after it, every stream.
                at = StreamID(self.options.starting_timestamp_ms, 0)
                known = info is not None and info.first_id is not None and at <= info.first_id
                positions[stream] = (
                    initial_position(info, "earliest") if known else StreamPosition(prev_id(at))
                )
            elif choice in ("earliest", "latest"):
                positions[stream] = initial_position(info, choice)
            else:
                chosen = parse_id(choice)
                known = info is not None and chosen == info.last_generated_id
                read = info.entries_added if known and info is not None else None
                positions[stream] = StreamPosition(chosen, read)
        return offset_to_json(positions)

    def getDefaultReadLimit(self) -> ReadLimit:
        if self.options.max_entries_per_trigger > 0:
            return ReadMaxRows(self.options.max_entries_per_trigger)
        return ReadAllAvailable()

    @riding_out_restarts
    def prepareForTriggerAvailableNow(self) -> None:
        streams = self.streams()
        infos = stream_infos(self.client, streams)
        self._frozen = {
            s: StreamPosition(i.last_generated_id, i.entries_added)
            for s, i in infos.items()
            if i is not None
        }

    def _tail(self, stream: str, info: StreamInfo) -> StreamPosition:
        """The furthest position a batch may reach now: stream end, availableNow target, endId."""
        tail = StreamPosition(info.last_generated_id, info.entries_added)
        if self._frozen is not None:
            frozen = self._frozen.get(stream)
            if frozen is None:
                return START_OF_STREAM
            if frozen.id < tail.id:
                tail = frozen
        last_id = self.options.last_id_of(stream)
        if last_id < tail.id:
            tail = StreamPosition(last_id, None)
        return tail

    def _check_loss(self, stream: str, pos: StreamPosition, info: StreamInfo) -> None:
        reason = data_loss(stream, pos, info)
        if reason is None:
            if (
                pos.entries_read is None
                and info.first_id is not None
                and info.first_id > next_id(pos.id)
                and stream not in self._undetectable
            ):
                self._undetectable.add(stream)
                log.info("rillet: cannot check %r for trimmed entries after %s", stream, pos.id)
            return
        if self.options.fail_on_data_loss:
            raise DataLossError(
                f"{reason}. Set the option failOnDataLoss=false to continue with the "
                "entries that remain."
            )
        log.warning("rillet: %s; continuing (failOnDataLoss=false)", reason)

    @riding_out_restarts
    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        begin = offset_from_json(start)
        # Streams dropped from the options keep their position but are not read.
        streams = self.streams()
        infos = stream_infos(self.client, streams)
        end = dict(begin)
        grown: dict[str, tuple[StreamPosition, StreamPosition, StreamInfo]] = {}
        for stream in streams:
            info = infos.get(stream)
            if info is None:
                continue
            pos = begin.get(stream, START_OF_STREAM)
            self._check_loss(stream, pos, info)
            tail = self._tail(stream, info)
            if tail.id > pos.id:
                grown[stream] = (pos, tail, info)
                end[stream] = tail
        if grown and self._too_few(grown):
            return start
        if isinstance(limit, ReadMaxRows) and grown:
            end.update(self._admit(grown, limit.max_rows))
        if end == begin:
            return start
        self._last_trigger = time.monotonic()
        return offset_to_json(end)

    def _too_few(self, grown: Mapping[str, tuple[StreamPosition, StreamPosition, Any]]) -> bool:
        """minEntriesPerTrigger: wait for more entries, but never beyond maxTriggerDelay
        since the last batch. Streams without ordinals count as enough (no count is cheap)."""
        wanted = self.options.min_entries_per_trigger
        if wanted <= 0 or self._frozen is not None:  # availableNow must not wait
            return False
        if self._last_trigger is None:
            self._last_trigger = time.monotonic()
        waited_ms = (time.monotonic() - self._last_trigger) * 1000
        if waited_ms >= self.options.max_trigger_delay_ms:
            return False
        total = 0
        for pos, tail, _ in grown.values():
            count = entries_between(pos, tail)
            if count is None:
                return False
            total += count
        return total < wanted

    def _admit(
        self,
        grown: Mapping[str, tuple[StreamPosition, StreamPosition, StreamInfo]],
        max_rows: int,
    ) -> dict[str, StreamPosition]:
        """Cap each growing stream to its share of `max_rows` entries.

        Finding the n-th entry after a position needs the entries themselves (Redis has
        no count-by-range), so this transfers up to `max_rows` IDs to the driver. Every
        stream gets at least one entry, so a limit below the number of streams can
        admit slightly more than asked.
        """
        streams = sorted(grown)
        share, extra = divmod(max(1, max_rows), len(streams))
        pipe = self.client.pipeline(transaction=False)
        counts: list[int] = []
        for i, stream in enumerate(streams):
            pos, tail, _ = grown[stream]
            count = max(1, share + (1 if i < extra else 0))
            counts.append(count)
            pipe.execute_command(
                "XRANGE", stream, format_id(next_id(pos.id)), format_id(tail.id), "COUNT", count
            )
        replies = pipe.execute(raise_on_error=False)
        capped: dict[str, StreamPosition] = {}
        for stream, count, page in zip(streams, counts, replies, strict=True):
            if is_error(page):
                raise page
            pos, tail, info = grown[stream]
            if len(page) < count:
                capped[stream] = tail
                continue
            last = parse_id(page[-1][0])
            no_holes = info.max_deleted_id is None or info.max_deleted_id <= pos.id
            read = pos.entries_read + count if pos.entries_read is not None and no_holes else None
            capped[stream] = StreamPosition(last, read)
        return capped

    @riding_out_restarts
    def reportLatestOffset(self) -> dict | None:
        streams = self.streams()
        infos = stream_infos(self.client, streams)
        latest = {
            s: StreamPosition(i.last_generated_id, i.entries_added)
            for s, i in infos.items()
            if i is not None
        }
        return offset_to_json(latest) if latest else None

    @riding_out_restarts
    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        begin, stop = offset_from_json(start), offset_from_json(end)
        policy = self.options.split
        split = {
            s: (begin.get(s, START_OF_STREAM).id, stop[s].id)
            for s, n in split_counts(begin, stop, policy).items()
            if n > 1
        }
        # The cuts follow the data (its first entry), which a replay of the same
        # (start, end] finds again: entries in the range are retained until committed.
        return plan_partitions(begin, stop, policy, range_floors(self.client, split))

    def commit(self, end: dict) -> None:
        group = self.options.progress_group
        if not group:
            return
        for stream, pos in offset_from_json(end).items():
            try:
                mirror_progress(self.client, stream, group, pos)
            except redis.RedisError as exc:
                log.warning("rillet: progress group %r on %r not updated: %s", group, stream, exc)

    def stop(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    # -- executors -------------------------------------------------------------

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return read_range(self.options, partition)


def mirror_progress(client: Commands, stream: str, group: str, pos: StreamPosition) -> None:
    """Point `group` at `pos` (creating it if needed), with ENTRIESREAD so XINFO shows lag."""
    if not client.execute_command("EXISTS", stream):
        return  # a progress marker must never create the stream it describes
    extra: list[Any] = [] if pos.entries_read is None else ["ENTRIESREAD", pos.entries_read]
    try:
        _set_group(client, stream, group, format_id(pos.id), extra)
    except redis.ResponseError:
        if not extra:
            raise
        _set_group(client, stream, group, format_id(pos.id), [])  # servers before 7.0


def _set_group(client: Commands, stream: str, group: str, ident: str, extra: list[Any]) -> None:
    try:
        client.execute_command("XGROUP", "SETID", stream, group, ident, *extra)
    except redis.ResponseError as exc:
        if not str(exc).startswith("NOGROUP"):
            raise
        try:
            client.execute_command("XGROUP", "CREATE", stream, group, ident, *extra)
        except redis.ResponseError as create_exc:
            if not str(create_exc).startswith("BUSYGROUP"):
                raise


def group_positions(
    client: Commands, streams: list[str], group: str | None
) -> dict[str, StreamPosition]:
    """Where `group` stands on each stream that has it (XINFO GROUPS last-delivered-id and
    entries-read), for consumerGroup's resume on a new checkpoint."""
    if not group or not streams:
        return {}
    pipe = client.pipeline(transaction=False)
    for stream in streams:
        pipe.execute_command("XINFO", "GROUPS", stream)
    found: dict[str, StreamPosition] = {}
    for stream, reply in zip(streams, pipe.execute(raise_on_error=False), strict=True):
        if is_error(reply):
            continue
        for entry in reply:
            info = {
                (k.decode() if isinstance(k, bytes) else str(k)): v
                for k, v in zip(entry[0::2], entry[1::2], strict=False)
            }
            name = info.get("name")
            name = name.decode() if isinstance(name, bytes) else name
            if name == group:
                read = info.get("entries-read")
                found[stream] = StreamPosition(
                    parse_id(info["last-delivered-id"]), None if read is None else int(read)
                )
    return found
