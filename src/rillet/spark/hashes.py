"""Tables of hashes (spark-redis's model): a DataFrame row is a hash `<table>:<key>`.

`format("rillet").option("table", "person").option("keyColumn", "name")`: each row is
written as the hash `person:<name>` whose fields are the other columns (nulls left
out), and read back from every hash matching `person:*` (or `keysPattern`), the key's
suffix in `keyColumn`. Values are strings on the server: a read converts them to the
schema given, or to one inferred from a sample of the hashes.

Partitioning: a SCAN cursor cannot be split (it is an opaque position in the server's
hash table, valid only for the walk that produced it), so the driver walks the whole
SCAN once (`MATCH` pattern, `TYPE hash`), sorts the keys and cuts the list into
`keysPerPartition`-sized partitions. The plan is then a fixed list of keys: a retried
task reads the same keys, and the server does one walk rather than one per task.
spark-redis instead has every task SCAN the whole keyspace and keep the keys of its
hash-slot range, which costs a full walk per task. The price here is the key list in
the driver's memory (about 100 bytes per key). A key deleted between planning and its
task is skipped; one added meanwhile is not read (as with any snapshot).

Each task reads with HGETALL, `pipelineSize` keys per round trip, into Arrow columns.
Writes are pipelined too: per row DEL, HSET and (with `ttl`) EXPIRE, so a row written
again replaces the former one whole (spark-redis's documented append behaviour).
Overwrite mode deletes the table's hashes (`<table>:*` of type hash) on the driver
before the tasks write, as spark-redis does: a failed overwrite leaves a partial table.
"""

from __future__ import annotations

import math
import re
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.datasource import (
    DataSourceArrowWriter,
    DataSourceReader,
    InputPartition,
    WriterCommitMessage,
)

from rillet.spark.arrow import _column_values
from rillet.spark.client import Commands
from rillet.spark.cluster import Router, connect_routed
from rillet.spark.offsets import MIN_ENTRIES_PER_TASK
from rillet.spark.options import OptionError, TableOptions, available_cores

_INTEGER = re.compile(rb"[+-]?\d{1,18}")
_BOOLEANS = frozenset((b"true", b"false"))


def scan_hashes(client: Router, pattern: str, count: int, limit: int = 0) -> list[str]:
    """Hash keys matching `pattern` (one whole SCAN walk of each master, or until `limit`
    keys)."""
    found: dict[str, None] = {}
    for node in client.masters():
        cursor: Any = b"0"
        while True:
            cursor, keys = node.execute_command(
                "SCAN", cursor, "MATCH", pattern, "COUNT", count, "TYPE", "hash"
            )
            found.update((k.decode("utf-8", "surrogateescape"), None) for k in keys)
            if limit and len(found) >= limit:
                return list(found)[:limit]
            if cursor in (b"0", 0, "0"):
                break
    return list(found)


def _encode(key: str) -> bytes:
    return key.encode("utf-8", "surrogateescape")


def fetch_hashes(
    client: Commands, keys: Sequence[str], pipeline_size: int
) -> Iterator[tuple[list[str], list[dict[bytes, bytes]]]]:
    """(keys, their fields) in pieces of `pipeline_size`, one pipelined HGETALL each;
    keys gone since planning (an empty reply) are left out."""
    for start in range(0, len(keys), pipeline_size):
        piece = keys[start : start + pipeline_size]
        pipe = client.pipeline(transaction=False)
        for key in piece:
            pipe.execute_command("HGETALL", _encode(key))
        present: list[str] = []
        rows: list[dict[bytes, bytes]] = []
        for key, reply in zip(piece, pipe.execute(), strict=True):
            if reply:
                flat = list(reply)
                present.append(key)
                rows.append(dict(zip(flat[0::2], flat[1::2], strict=True)))
        yield present, rows


# -- schema -----------------------------------------------------------------------


def _guess(values: list[bytes]) -> Any:
    """The narrowest of bigint, double, boolean and string that every value parses as."""
    from pyspark.sql.types import BooleanType, DoubleType, LongType, StringType

    if not values:
        return StringType()
    if all(_INTEGER.fullmatch(v) for v in values):
        return LongType()
    if all(v.lower() in _BOOLEANS for v in values):
        return BooleanType()
    try:
        for v in values:
            float(v)
    except ValueError:
        return StringType()
    return DoubleType()


def infer_schema(options: TableOptions) -> Any:
    """The schema of a sample of the table's hashes (`sampleSize` keys): the key column
    first, then each field in the order first seen; types are guessed when
    `inferSchema` (bigint, double, boolean, else string), otherwise all strings."""
    from pyspark.sql.types import StringType, StructType

    client = connect_routed(options.connection)
    try:
        keys = scan_hashes(client, options.keys_pattern, options.scan_count, options.sample_size)
        values: dict[bytes, list[bytes]] = {}
        for _present, rows in fetch_hashes(client, keys, options.pipeline_size):
            for row in rows:
                for field_name, value in row.items():
                    values.setdefault(field_name, []).append(value)
    finally:
        client.close()
    schema = StructType()
    if options.key_column is not None:
        schema.add(options.key_column, StringType())
    elif not values:
        raise OptionError(
            f"no hash matches {options.keys_pattern!r} to infer a schema from: give one "
            "(spark.read.schema(...)) or a keyColumn"
        )
    for raw_name, seen in values.items():
        name = raw_name.decode("utf-8", "replace")
        if name == options.key_column:
            continue
        schema.add(name, _guess(seen) if options.infer_types else StringType())
    return schema


def _check_readable(schema: Any) -> None:
    from pyspark.sql.types import ArrayType, MapType, StructType

    for field in schema.fields:
        if isinstance(field.dataType, ArrayType | MapType | StructType):
            raise OptionError(
                f"column {field.name}: {field.dataType.simpleString()} cannot be read from a "
                "hash field (values are strings); read it as a string and parse it "
                "(from_json)"
            )


# -- reading ----------------------------------------------------------------------


class HashKeys(InputPartition):
    """One task's keys: a slice of the driver's sorted SCAN."""

    def __init__(self, keys: Sequence[str], index: int) -> None:
        super().__init__(index)
        self.keys = tuple(keys)
        self.index = index

    def __repr__(self) -> str:
        return f"HashKeys({len(self.keys)} keys, #{self.index})"


def plan(keys: Sequence[str], options: TableOptions) -> list[HashKeys]:
    """`partitions` tasks, or one per `keysPerPartition` keys in whole waves of the
    cores; contiguous in key order."""
    ordered = sorted(keys)
    if not ordered:
        return []
    count = options.partitions
    if not count:
        # As for streams (SplitPolicy): whole waves of the cores, 10,000 keys a task at least.
        count = math.ceil(len(ordered) / options.keys_per_partition)
        cores = available_cores()
        if cores > 1 and len(ordered) // MIN_ENTRIES_PER_TASK > 1:
            count = min(-(-count // cores) * cores, len(ordered) // MIN_ENTRIES_PER_TASK)
    count = max(1, min(count, len(ordered)))
    size = math.ceil(len(ordered) / count)
    return [HashKeys(ordered[i : i + size], n) for n, i in enumerate(range(0, len(ordered), size))]


def _column(values: list[bytes | None], kind: pa.DataType, name: str) -> pa.Array:
    raw = pa.array(values, pa.binary())
    if pa.types.is_binary(kind):
        return raw
    try:
        text = raw.cast(pa.string())
    except pa.ArrowInvalid:  # not UTF-8: replaced, as the stream reader's map column does
        text = pa.array(
            [None if v is None else v.decode("utf-8", "replace") for v in values], pa.string()
        )
    if pa.types.is_string(kind):
        return text
    if pa.types.is_boolean(kind):
        text = pc.utf8_lower(text)
    try:
        return pc.cast(text, kind)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise ValueError(f"hash field {name!r}: cannot read the values as {kind}: {exc}") from None


def rows_to_batch(
    keys: list[str], rows: list[dict[bytes, bytes]], schema: pa.Schema, options: TableOptions
) -> pa.RecordBatch:
    prefix = options.prefix
    columns = []
    for field in schema:
        if field.name == options.key_column:
            cut = len(prefix)
            suffixes = [k[cut:] if k.startswith(prefix) else k for k in keys]
            columns.append(pa.array(suffixes, pa.string()).cast(field.type))
            continue
        name = field.name.encode()
        columns.append(_column([row.get(name) for row in rows], field.type, field.name))
    return pa.RecordBatch.from_arrays(columns, schema=schema)


class HashTableReader(DataSourceReader):
    """`spark.read.format("rillet").option("table", ...)`: planned on the driver from one
    SCAN walk; each task HGETALLs its keys."""

    def __init__(self, options: TableOptions, schema: Any) -> None:
        _check_readable(schema)
        self.options = options
        self.schema = schema

    def partitions(self) -> list[InputPartition]:
        client = connect_routed(self.options.connection)
        try:
            keys = scan_hashes(client, self.options.keys_pattern, self.options.scan_count)
        finally:
            client.close()
        return list(plan(keys, self.options))

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, HashKeys):
            return  # no key matched: PySpark still runs one task over a placeholder
        from pyspark.sql.pandas.types import to_arrow_schema

        schema = to_arrow_schema(self.schema, timezone="UTC")
        client = connect_routed(self.options.connection)
        try:
            for keys, rows in fetch_hashes(client, partition.keys, self.options.pipeline_size):
                if keys:
                    yield rows_to_batch(keys, rows, schema, self.options)
        finally:
            client.close()


# -- writing ----------------------------------------------------------------------


@dataclass
class TableWriteResult(WriterCommitMessage):
    written: int = 0


def _text_values(column: pa.Array) -> list[Any]:
    """Values as hash field values; doubles keep a decimal point (2.0, not 2) so a
    sample of them is inferred as double again."""
    if pa.types.is_floating(column.type):
        return [None if v is None else repr(float(v)) for v in column.to_pylist()]
    return _column_values(column)


def delete_table(options: TableOptions) -> int:
    """Overwrite's first step: delete the table's hashes (other types are left alone)."""
    client = connect_routed(options.connection)
    try:
        keys = scan_hashes(client, options.keys_pattern, options.scan_count)
        for start in range(0, len(keys), options.pipeline_size):
            piece = [_encode(key) for key in keys[start : start + options.pipeline_size]]
            if not client.is_cluster:
                client.execute_command("DEL", *piece)
                continue
            pipe = client.pipeline()  # a cluster's keys are in many slots: one DEL each
            for key in piece:
                pipe.execute_command("DEL", key)
            pipe.execute()
        return len(keys)
    finally:
        client.close()


class HashTableWriter(DataSourceArrowWriter):
    """`df.write.format("rillet").option("table", ...)`, append or overwrite."""

    def __init__(self, options: TableOptions, column_names: list[str], overwrite: bool) -> None:
        if options.key_column is not None and options.key_column not in column_names:
            raise OptionError(f"option keyColumn: no column named {options.key_column!r}")
        self.options = options
        if overwrite:
            delete_table(options)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> TableWriteResult:
        opts = self.options
        result = TableWriteResult()
        client = connect_routed(opts.connection)
        try:
            pipe = client.pipeline(transaction=False)
            for batch in iterator:
                for key, fields in self._rows(batch):
                    pipe.execute_command("DEL", key)
                    if fields:
                        pipe.execute_command("HSET", key, *fields)
                        if opts.ttl_s:
                            pipe.execute_command("EXPIRE", key, opts.ttl_s)
                    result.written += 1
                    if len(pipe) >= opts.pipeline_size:
                        pipe.execute()
            if len(pipe):
                pipe.execute()
        finally:
            client.close()
        return result

    def _rows(self, batch: pa.RecordBatch) -> Iterator[tuple[str, list[Any]]]:
        key_column = self.options.key_column
        columns = [
            (name.encode(), _text_values(batch.column(name)))
            for name in batch.schema.names
            if name != key_column
        ]
        if key_column is not None:
            suffixes = batch.column(key_column).cast(pa.string()).to_pylist()
        for i in range(batch.num_rows):
            if key_column is None:
                suffix = uuid.uuid4().hex  # spark-redis's default: a generated key
            elif suffixes[i] is None:
                raise ValueError(f"keyColumn {key_column!r} is null in a row: no key to write")
            else:
                suffix = suffixes[i]
            fields: list[Any] = []
            for name, values in columns:
                if values[i] is not None:
                    fields.append(name)
                    fields.append(values[i])
            yield self.options.key_of(suffix), fields
