"""The XADD sink: batch and streaming writers, at-least-once or exactly-once.

At-least-once pipelines XADDs. `exactlyOnce=true` commits each chunk of at most
`maxEntriesPerTransaction` rows in one MULTI with a marker key
`rillet:sink:<sinkId>:<batch>:<partition>:<chunk>`, so a replayed chunk adds nothing.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

import pyarrow as pa
import redis
from pyspark.sql.datasource import (
    DataSourceArrowWriter,
    DataSourceStreamArrowWriter,
    WriterCommitMessage,
)
from redis.exceptions import AskError, TryAgainError

from rillet.spark.arrow import FieldList, batch_to_entries
from rillet.spark.client import is_error
from rillet.spark.cluster import Router, by_slot, connect_routed, slot_of, slot_tag
from rillet.spark.options import OptionError, WriterOptions

log = logging.getLogger("rillet.spark")

Entry = tuple[str | None, str | None, FieldList]

ID_TOO_SMALL = "equal or smaller than the target stream top item"


@dataclass
class WriteResult(WriterCommitMessage):
    """What one task wrote; the driver's commit sees a list of these (None for failed tasks)."""

    partition: int
    batch_id: int | None
    written: int = 0
    duplicates: int = 0
    empty: int = 0
    markers: list[str] = field(default_factory=list)


def marker_prefix(sink_id: str) -> str:
    return f"rillet:sink:{sink_id}"


class SinkPlan:
    """Target resolution fixed on the driver from the DataFrame's schema."""

    def __init__(self, options: WriterOptions, column_names: Iterable[str]) -> None:
        names = set(column_names)
        self.options = options
        self.stream_from_column = options.stream is None
        if self.stream_from_column and "stream" not in names:
            raise OptionError(
                "the rillet sink needs a target: set the option stream, or give the rows a "
                "`stream` column"
            )
        if options.id_column is not None and options.id_column not in names:
            raise OptionError(f"option idColumn: no column named {options.id_column!r}")
        if options.exactly_once and options.sink_id is None:
            raise OptionError(
                "exactlyOnce needs a stable sink identity: set checkpointLocation "
                "(streaming) or sinkId"
            )

    def entries(self, batches: Iterator[pa.RecordBatch]) -> Iterator[Entry]:
        for batch in batches:
            yield from batch_to_entries(
                batch,
                stream_from_column=self.stream_from_column,
                id_column=self.options.id_column,
            )

    def xadd_args(self, entry: Entry) -> list[Any] | None:
        stream, ident, fields = entry
        target = stream if self.stream_from_column else self.options.stream
        if not fields or target is None:
            return None
        return ["XADD", target, *self.options.trim_args(), ident or "*", *fields]


def _count_replies(replies: list[Any], result: WriteResult) -> None:
    for reply in replies:
        if is_error(reply):
            if ID_TOO_SMALL in str(reply):
                result.duplicates += 1  # an explicit ID that is already there: a replay
                continue
            raise reply
        result.written += 1


def write_at_least_once(
    client: Router, plan: SinkPlan, entries: Iterable[Entry], result: WriteResult
) -> WriteResult:
    """Pipelined XADDs, `pipelineSize` commands per round trip."""
    pipe = client.pipeline(transaction=False)
    pending = 0
    for entry in entries:
        args = plan.xadd_args(entry)
        if args is None:
            result.empty += 1
            continue
        pipe.execute_command(*args)
        pending += 1
        if pending >= plan.options.pipeline_size:
            _count_replies(pipe.execute(raise_on_error=False), result)
            pending = 0
    if pending:
        _count_replies(pipe.execute(raise_on_error=False), result)
    return result


def write_exactly_once(
    client: Router,
    plan: SinkPlan,
    entries: Iterable[Entry],
    result: WriteResult,
) -> WriteResult:
    """One MULTI/EXEC per chunk, with its marker; chunks already committed are skipped.

    Chunks cap how long one EXEC keeps the server busy (about 1 ms per 1000 XADDs).
    A replay must deliver the same rows in the same order per partition, which holds
    for our source (fixed ID ranges) and for Spark's deterministic shuffles. On a
    cluster a transaction stays in one slot, so a chunk is committed per slot of its
    target streams, each with its own marker `{<tag>}rillet:sink:...:<chunk>` whose
    hash tag puts it in that slot; a replayed chunk groups its rows the same way.
    """
    opts = plan.options
    assert opts.sink_id is not None and result.batch_id is not None
    prefix = f"{marker_prefix(opts.sink_id)}:{result.batch_id}:{result.partition}"
    iterator = iter(entries)
    chunk_no = 0
    while True:
        chunk = list(islice(iterator, opts.max_entries_per_transaction))
        if not chunk:
            return result
        marker = f"{prefix}:{chunk_no}"
        chunk_no += 1
        commands = []
        for entry in chunk:
            args = plan.xadd_args(entry)
            if args is None:
                result.empty += 1
            else:
                commands.append(args)
        if not client.is_cluster:
            groups = [(marker, commands)]
        else:
            slots = by_slot(args[1] for args in commands)
            groups = [
                (f"{{{slot_tag(slot)}}}{marker}", [commands[i] for i in positions])
                for slot, positions in slots.items()
            ] or [(f"{{{slot_tag(slot_of(marker))}}}{marker}", [])]
        for key, group in groups:
            result.markers.append(key)
            replies = client.run(
                key,
                lambda node, asking: _commit_chunk(node, asking, key, group, opts.marker_ttl_s),  # noqa: B023
            )
            if replies is None:
                result.duplicates += len(group)
            else:
                _count_replies(replies[:-1], result)


def _commit_chunk(
    client: redis.Redis, asking: bool, marker: str, commands: list[list[Any]], ttl_s: int
) -> list[Any] | None:
    """The commands and the marker in one MULTI; None when the marker says they are in."""
    if asking:
        # The slot is being imported here: ASKING before the check and before MULTI
        # (whose flag lasts the transaction). WATCH would take the flag, so a speculative
        # twin of this task is caught by the marker check only, for this moment.
        pipe = client.pipeline(transaction=False)
        pipe.execute_command("ASKING")
        pipe.execute_command("EXISTS", marker)
        if pipe.execute()[1]:
            return None
        pipe.execute_command("ASKING")
        pipe.execute_command("MULTI")
        for args in commands:
            pipe.execute_command(*args)
        pipe.execute_command("SET", marker, len(commands), "EX", ttl_s)
        pipe.execute_command("EXEC")
        replies = pipe.execute(raise_on_error=False)
        for reply in replies[2:]:
            if isinstance(reply, Exception):
                raise reply  # a queued command's redirection first, then EXECABORT
        return list(replies[-1])
    with client.pipeline(transaction=True) as pipe:
        # WATCH guards against a concurrent attempt of the same task (speculation);
        # on a server without WATCH the marker check alone still covers replays.
        try:
            pipe.watch(marker)
            exists = pipe.execute_command("EXISTS", marker)
        except (AskError, TryAgainError):
            raise
        except redis.ResponseError:
            pipe.reset()
            exists = client.execute_command("EXISTS", marker)
        if exists:
            return None
        pipe.multi()
        for args in commands:
            pipe.execute_command(*args)
        pipe.execute_command("SET", marker, len(commands), "EX", ttl_s)
        try:
            return pipe.execute(raise_on_error=False)
        except redis.WatchError:
            return None


def cleanup_markers(client: Router, sink_id: str, batch_id: int, messages: list[Any]) -> None:
    """Forget the markers of batches before `batch_id`.

    Runs in the sink's commit for `batch_id`: Spark only plans a batch after the previous
    one's commit log entry is durable, so older batches can never be replayed. The
    markers also expire on their own (markerTtlSeconds) if this never runs.
    """
    registry = f"{marker_prefix(sink_id)}:markers"
    keys = [m for msg in messages if isinstance(msg, WriteResult) for m in msg.markers]
    previous = client.execute_command("GET", registry)
    if previous:
        record = json.loads(previous)
        if int(record.get("batch", -1)) < batch_id and record.get("keys"):
            _delete(client, record["keys"])
        elif int(record.get("batch", -1)) == batch_id:
            keys = sorted(set(keys) | set(record.get("keys", [])))
    client.execute_command("SET", registry, json.dumps({"batch": batch_id, "keys": keys}))


def _delete(client: Router, keys: list[str]) -> None:
    """DEL in one command off a cluster; per key on one (they are in many slots)."""
    if not getattr(client, "is_cluster", False):  # (or a plain redis.Redis)
        client.execute_command("DEL", *keys)
        return
    pipe = client.pipeline()
    for key in keys:
        pipe.execute_command("DEL", key)
    pipe.execute()


def _task_identity(default_batch: int | None) -> tuple[int | None, int]:
    """(batch id, partition id) of the running task.

    Spark does not pass the batch id to Python's `write()`; MicroBatchExecution sets it as
    the task-local property `streaming.sql.batchId`.
    """
    from pyspark import TaskContext

    context = TaskContext.get()
    if context is None:
        return default_batch, 0
    prop = context.getLocalProperty("streaming.sql.batchId")
    batch = int(prop) if prop is not None else default_batch
    return batch, context.partitionId()


def _write(
    options: WriterOptions, plan: SinkPlan, batches: Iterator[pa.RecordBatch]
) -> WriteResult:
    batch_id, partition = _task_identity(options.batch_id)
    result = WriteResult(partition=partition, batch_id=batch_id)
    client = connect_routed(options.connection)
    try:
        entries = plan.entries(batches)
        if options.exactly_once:
            if batch_id is None:
                raise OptionError(
                    "exactlyOnce in a batch write needs the option batchId (e.g. the "
                    "foreachBatch batch id)"
                )
            return write_exactly_once(client, plan, entries, result)
        return write_at_least_once(client, plan, entries, result)
    finally:
        client.close()


def _commit(options: WriterOptions, messages: list[Any], batch_id: int | None) -> None:
    if not options.exactly_once or options.sink_id is None or batch_id is None:
        return
    client = connect_routed(options.connection)
    try:
        cleanup_markers(client, options.sink_id, batch_id, messages)
    finally:
        client.close()


def _report_abort(messages: list[Any], batch_id: int | None) -> None:
    written = sum(m.written for m in messages if isinstance(m, WriteResult))
    log.warning(
        "rillet: write of batch %s aborted; %d entries already added stay in the stream "
        "(XADD cannot be undone)",
        batch_id,
        written,
    )


class RilletWriter(DataSourceArrowWriter):
    """`df.write.format("rillet")`."""

    def __init__(self, options: WriterOptions, column_names: list[str]) -> None:
        self.options = options
        self.plan = SinkPlan(options, column_names)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriteResult:
        return _write(self.options, self.plan, iterator)

    def commit(self, messages: list[Any]) -> None:
        _commit(self.options, messages, self.options.batch_id)

    def abort(self, messages: list[Any]) -> None:
        _report_abort(messages, self.options.batch_id)


class RilletStreamWriter(DataSourceStreamArrowWriter):
    """`df.writeStream.format("rillet")` (append mode)."""

    def __init__(self, options: WriterOptions, column_names: list[str]) -> None:
        self.options = options
        self.plan = SinkPlan(options, column_names)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriteResult:
        return _write(self.options, self.plan, iterator)

    def commit(self, messages: list[Any], batchId: int) -> None:  # noqa: N803 - Spark's name
        _commit(self.options, messages, batchId)

    def abort(self, messages: list[Any], batchId: int) -> None:  # noqa: N803
        _report_abort(messages, batchId)
