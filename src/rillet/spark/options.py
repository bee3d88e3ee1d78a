"""Connector options: parsed once on the driver into frozen, picklable dataclasses.

Spark hands options over as a case-insensitive string map; every name, default and
check lives here so readers and writers never look at raw strings. An unknown name
fails, naming the closest known one (a typo would otherwise read nothing, silently);
the Kafka source's names fail naming rillet's equivalent, since their values differ
(Kafka's offsets JSON is per partition). Spark's own options (`path`,
`checkpointLocation`) pass.
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from rillet.spark.ids import MAX, SEQ_MAX, ZERO, StreamID, parse_id, prev_id
from rillet.spark.offsets import SplitPolicy

DEFAULT_URL = "redis://127.0.0.1:6379/0"
PATTERN_CHARS = frozenset("*?[")


class OptionError(ValueError):
    """An option is missing or malformed; the message names the option."""


CONNECTION_OPTIONS = ("url", "socketTimeout", "rillet.username", "rillet.password")
READER_OPTIONS = (
    *CONNECTION_OPTIONS,
    "streams",
    "stream",
    "startingPosition",
    "startingTimestamp",
    "endingPosition",
    "startId",
    "endId",
    "from",
    "to",
    "maxEntriesPerTrigger",
    "minEntriesPerTrigger",
    "maxTriggerDelay",
    "failOnDataLoss",
    "entriesPerPartition",
    "minPartitions",
    "maxPartitionsPerStream",
    "partitionsPerStream",
    "chunkSize",
    "fieldsAs",
    "progressGroup",
    "consumerGroup",
    "patternRefreshMs",
    "reconnectTimeout",
)
WRITER_OPTIONS = (
    *CONNECTION_OPTIONS,
    "stream",
    "maxlen",
    "minid",
    "approximateTrim",
    "pipelineSize",
    "exactlyOnce",
    "maxEntriesPerTransaction",
    "sinkId",
    "batchId",
    "idColumn",
    "markerTtlSeconds",
)
# Spark adds these itself: load(path)/save(path), and a streaming sink's checkpoint.
SPARK_OPTIONS = ("path", "paths", "checkpointLocation")

# The Kafka source's and sink's names, refused with rillet's: the values differ in form.
KAFKA_READER_NAMES = {
    "subscribe": "streams (a comma list of stream keys)",
    "subscribePattern": "streams with a glob such as orders:* (not a regex)",
    "assign": "streams (a comma list of stream keys)",
    "startingOffsets": 'startingPosition (earliest, latest or {"stream": "<id>"})',
    "startingOffsetsByTimestamp": "startingTimestamp (one time for every stream)",
    "endingOffsets": 'endingPosition (latest or {"stream": "<id>"})',
    "maxOffsetsPerTrigger": "maxEntriesPerTrigger (the same meaning)",
    "minOffsetsPerTrigger": "minEntriesPerTrigger (the same meaning)",
    "maxRecordsPerPartition": "entriesPerPartition",
    "kafka.bootstrap.servers": "url (redis://host:port/db)",
    "kafka.group.id": "consumerGroup",
    "groupIdPrefix": "consumerGroup",
}
KAFKA_WRITER_NAMES = {
    "topic": "stream (or a stream column)",
    "kafka.bootstrap.servers": "url (redis://host:port/db)",
}
# Tables of hashes (`table` or `keysPattern` given): rows are hashes `<table>:<key>`.
TABLE_OPTIONS = (
    *CONNECTION_OPTIONS,
    "table",
    "keysPattern",
    "keyColumn",
    "ttl",
    "inferSchema",
    "sampleSize",
    "keysPerPartition",
    "partitions",
    "scanCount",
    "pipelineSize",
)
# spark-redis's names for the same options: the values have the same form, so they work.
SPARK_REDIS_NAMES = {
    "key.column": "keyColumn",
    "keys.pattern": "keysPattern",
    "infer.schema": "inferSchema",
    "max.pipeline.size": "pipelineSize",
    "scan.count": "scanCount",
    "partitions.number": "partitions",
}


def is_table(raw: Mapping[str, Any]) -> bool:
    """Whether options describe a table of hashes rather than streams."""
    names = {str(name).lower() for name in raw}
    return bool(names & {"table", "keyspattern", "keys.pattern"})


def check_names(
    raw: Mapping[str, Any], known: tuple[str, ...], kafka: Mapping[str, str], kind: str
) -> None:
    """Fail on the first option that is neither rillet's (for `kind`) nor Spark's."""
    canonical = {name.lower(): name for name in (*known, *SPARK_OPTIONS)}
    kafka_names = {name.lower(): name for name in kafka}
    for name in raw:  # Spark hands the names over lower-cased
        lowered = str(name).lower()
        if lowered in canonical:
            continue
        if lowered in kafka_names:
            kafka_name = kafka_names[lowered]
            raise OptionError(
                f"option {kafka_name} is the Kafka source's; the rillet {kind} option is "
                f"{kafka[kafka_name]}"
            )
        close = difflib.get_close_matches(lowered, list(canonical), n=1, cutoff=0.6)
        hint = f"; did you mean {canonical[close[0]]}?" if close else ""
        raise OptionError(
            f"unknown {kind} option {name!r}{hint} (the options are listed in rillet.spark's docs)"
        )


class _Options:
    """Lower-cased view of Spark's options with typed getters."""

    def __init__(self, raw: Mapping[str, Any]) -> None:
        self.raw = {str(k).lower(): v for k, v in raw.items()}

    def text(self, name: str, default: str | None = None) -> str | None:
        value = self.raw.get(name.lower())
        if value is None:
            return default
        value = str(value).strip()
        return value if value else default

    def integer(self, name: str, default: int, *, minimum: int = 0) -> int:
        text = self.text(name)
        if text is None:
            return default
        try:
            value = int(text)
        except ValueError:
            raise OptionError(f"option {name}: expected an integer, got {text!r}") from None
        if value < minimum:
            raise OptionError(f"option {name}: must be >= {minimum}, got {value}")
        return value

    def boolean(self, name: str, default: bool) -> bool:
        text = self.text(name)
        if text is None:
            return default
        lowered = text.lower()
        if lowered in ("true", "1", "yes", "on"):
            return True
        if lowered in ("false", "0", "no", "off"):
            return False
        raise OptionError(f"option {name}: expected true or false, got {text!r}")

    def stream_id(self, name: str, *, default_seq: int = 0) -> StreamID | None:
        text = self.text(name)
        if text is None:
            return None
        try:
            return parse_id(text, default_seq=default_seq)
        except ValueError as exc:
            raise OptionError(f"option {name}: {exc}") from None


@dataclass(frozen=True)
class ConnectionOptions:
    """Where the server is. `username`/`password` (options `rillet.username` and
    `rillet.password`) override the URL's; TLS is the URL's `rediss://` scheme."""

    url: str = DEFAULT_URL
    socket_timeout_s: float = 60.0
    username: str | None = None
    password: str | None = field(default=None, repr=False)

    @classmethod
    def parse(cls, opts: _Options) -> ConnectionOptions:
        timeout = opts.text("socketTimeout")
        try:
            timeout_s = float(timeout) if timeout is not None else 60.0
        except ValueError:
            raise OptionError(f"option socketTimeout: expected seconds, got {timeout!r}") from None
        return cls(
            url=opts.text("url", DEFAULT_URL) or DEFAULT_URL,
            socket_timeout_s=timeout_s,
            username=opts.text("rillet.username"),
            password=opts.text("rillet.password"),
        )


DURATION_UNITS_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}


def available_cores() -> int:
    """Cores this process may run on: a local master's executors' (local[*]); on a
    cluster, minPartitions says how many the executors have."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def parse_duration_ms(text: str, name: str) -> int:
    """`500ms`, `30s`, `15m`, `1h`, `1d`, or bare milliseconds."""
    import re

    match = re.fullmatch(r"\s*(\d+)\s*(ms|s|m|h|d)?\s*", text)
    if not match:
        raise OptionError(f"option {name}: expected a duration such as 30s or 15m, got {text!r}")
    return int(match.group(1)) * DURATION_UNITS_MS[match.group(2) or "ms"]


def parse_positions(text: str, name: str, *, default_seq: int) -> dict[str, StreamID]:
    """A JSON object stream -> ID (`-`/`+` allowed), as Kafka's per-partition offsets."""
    try:
        decoded = json.loads(text)
    except json.JSONDecodeError as exc:
        raise OptionError(f"option {name}: invalid JSON: {exc}") from None
    if not isinstance(decoded, dict):
        raise OptionError(f'option {name}: expected a JSON object {{"stream": "<id>"}}')
    try:
        return {str(k): parse_id(str(v), default_seq=default_seq) for k, v in decoded.items()}
    except ValueError as exc:
        raise OptionError(f"option {name}: {exc}") from None


def split_streams(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """`a,b,sensor:*` -> (names, glob patterns). A JSON list is accepted too."""
    text = text.strip()
    items: list[str]
    if text.startswith("["):
        try:
            items = [str(x) for x in json.loads(text)]
        except json.JSONDecodeError as exc:
            raise OptionError(f"option streams: invalid JSON list: {exc}") from None
    else:
        items = [part.strip() for part in text.split(",")]
    names = tuple(dict.fromkeys(i for i in items if i and not (PATTERN_CHARS & set(i))))
    patterns = tuple(dict.fromkeys(i for i in items if i and PATTERN_CHARS & set(i)))
    return names, patterns


def parse_timestamp_ms(text: str, name: str) -> int:
    """Epoch milliseconds, or an ISO-8601 date/time (naive means UTC)."""
    text = text.strip()
    if text.lstrip("-").isdigit():
        return int(text)
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise OptionError(
            f"option {name}: expected epoch milliseconds or an ISO-8601 time, got {text!r}"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


@dataclass(frozen=True)
class ReaderOptions:
    """Options of the stream reader and the batch reader.

    `starting` is "earliest", "latest", or a dict stream -> ID (entries after it are
    read, as XREAD and XGROUP CREATE treat IDs). `first_id`/`last_id` bound batch reads
    and cap streaming reads (`endId`), inclusive at both ends.
    """

    connection: ConnectionOptions = field(default_factory=ConnectionOptions)
    streams: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()
    starting: str | dict[str, str] = "latest"
    max_entries_per_trigger: int = 0
    fail_on_data_loss: bool = True
    split: SplitPolicy = field(default_factory=SplitPolicy)
    chunk_size: int = 10_000
    lossless: bool = False
    progress_group: str | None = None
    first_id: StreamID = ZERO
    last_id: StreamID = MAX
    pattern_refresh_ms: int = 5_000
    starting_timestamp_ms: int | None = None
    ending: dict[str, StreamID] = field(default_factory=dict)
    min_entries_per_trigger: int = 0
    max_trigger_delay_ms: int = 15 * 60_000
    consumer_group: str | None = None
    reconnect_timeout_ms: int = 60_000

    def last_id_of(self, stream: str) -> StreamID:
        """The inclusive upper bound for `stream`: endId/to, and endingPosition's entry."""
        return min(self.last_id, self.ending.get(stream, MAX))

    @classmethod
    def parse(cls, raw: Mapping[str, Any], *, batch: bool = False) -> ReaderOptions:
        check_names(raw, READER_OPTIONS, KAFKA_READER_NAMES, "reader")
        opts = _Options(raw)
        streams_text = opts.text("streams") or opts.text("stream")
        if not streams_text:
            raise OptionError("option streams is required: a comma list of keys or patterns")
        names, patterns = split_streams(streams_text)
        if not names and not patterns:
            raise OptionError("option streams names no stream")

        starting_text = opts.text("startingPosition", "earliest" if batch else "latest") or ""
        starting: str | dict[str, str]
        if starting_text.lower() in ("earliest", "latest"):
            starting = starting_text.lower()
        elif starting_text.startswith("{"):
            try:
                decoded = json.loads(starting_text)
            except json.JSONDecodeError as exc:
                raise OptionError(f"option startingPosition: invalid JSON: {exc}") from None
            starting = {str(k): str(v) for k, v in decoded.items()}
            for value in starting.values():
                if value.lower() not in ("earliest", "latest"):
                    parse_id(value)
        else:
            raise OptionError(
                "option startingPosition: expected earliest, latest or a JSON object "
                f'{{"stream": "<id>"}}, got {starting_text!r}'
            )

        fields_as = (opts.text("fieldsAs", "map") or "map").lower()
        if fields_as not in ("map", "pairs"):
            raise OptionError(f"option fieldsAs: expected map or pairs, got {fields_as!r}")

        first_id = opts.stream_id("startId") or ZERO
        last_id = opts.stream_id("endId", default_seq=SEQ_MAX) or MAX
        from_text = opts.text("from")
        to_text = opts.text("to")
        if from_text is not None:
            first_id = max(first_id, StreamID(parse_timestamp_ms(from_text, "from"), 0))
        if to_text is not None:
            # `to` is exclusive, so consecutive [from, to) windows never overlap.
            to_ms = parse_timestamp_ms(to_text, "to")
            last_id = min(last_id, prev_id(StreamID(max(0, to_ms), 0)))

        starting_ts = opts.text("startingTimestamp")
        ending_text = opts.text("endingPosition", "latest") or "latest"
        ending = (
            {}
            if ending_text.lower() == "latest"
            else parse_positions(ending_text, "endingPosition", default_seq=SEQ_MAX)
        )
        delay = opts.text("maxTriggerDelay")
        reconnect = opts.text("reconnectTimeout")
        group = opts.text("consumerGroup")
        progress_group = opts.text("progressGroup")
        if group and progress_group and group != progress_group:
            raise OptionError("options consumerGroup and progressGroup name different groups")
        return cls(
            connection=ConnectionOptions.parse(opts),
            streams=names,
            patterns=patterns,
            starting=starting,
            max_entries_per_trigger=opts.integer("maxEntriesPerTrigger", 0),
            fail_on_data_loss=opts.boolean("failOnDataLoss", True),
            split=SplitPolicy(
                partitions_per_stream=opts.integer("partitionsPerStream", 0),
                entries_per_partition=opts.integer("entriesPerPartition", 1_000_000, minimum=1),
                max_partitions_per_stream=opts.integer("maxPartitionsPerStream", 32, minimum=1),
                min_partitions=opts.integer("minPartitions", 0),
                cores=available_cores(),
            ),
            chunk_size=opts.integer("chunkSize", 10_000, minimum=1),
            lossless=fields_as == "pairs",
            progress_group=group or progress_group,
            first_id=first_id,
            last_id=last_id,
            pattern_refresh_ms=opts.integer("patternRefreshMs", 5_000),
            starting_timestamp_ms=(
                None
                if starting_ts is None
                else parse_timestamp_ms(starting_ts, "startingTimestamp")
            ),
            ending=ending,
            min_entries_per_trigger=opts.integer("minEntriesPerTrigger", 0),
            max_trigger_delay_ms=(
                15 * 60_000 if delay is None else parse_duration_ms(delay, "maxTriggerDelay")
            ),
            consumer_group=group,
            reconnect_timeout_ms=(
                60_000 if reconnect is None else parse_duration_ms(reconnect, "reconnectTimeout")
            ),
        )


@dataclass(frozen=True)
class WriterOptions:
    """Options of the batch and streaming writers (XADD sink)."""

    connection: ConnectionOptions = field(default_factory=ConnectionOptions)
    stream: str | None = None
    maxlen: int | None = None
    minid: str | None = None
    approximate_trim: bool = True
    pipeline_size: int = 1_000
    exactly_once: bool = False
    max_entries_per_transaction: int = 10_000
    sink_id: str | None = None
    batch_id: int | None = None
    id_column: str | None = None
    marker_ttl_s: int = 7 * 24 * 3600

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> WriterOptions:
        check_names(raw, WRITER_OPTIONS, KAFKA_WRITER_NAMES, "writer")
        opts = _Options(raw)
        maxlen_text = opts.text("maxlen")
        batch_id_text = opts.text("batchId")
        sink_id = opts.text("sinkId")
        if sink_id is None:
            checkpoint = opts.text("checkpointLocation")
            if checkpoint is not None:
                import hashlib

                stream_part = opts.text("stream", "") or ""
                digest = hashlib.sha1(f"{checkpoint}\0{stream_part}".encode()).hexdigest()
                sink_id = digest[:16]
        minid = opts.text("minid")
        if minid is not None:
            try:
                parse_id(minid)
            except ValueError as exc:
                raise OptionError(f"option minid: {exc}") from None
        return cls(
            connection=ConnectionOptions.parse(opts),
            stream=opts.text("stream"),
            maxlen=opts.integer("maxlen", 0) if maxlen_text is not None else None,
            minid=minid,
            approximate_trim=opts.boolean("approximateTrim", True),
            pipeline_size=opts.integer("pipelineSize", 1_000, minimum=1),
            exactly_once=opts.boolean("exactlyOnce", False),
            max_entries_per_transaction=opts.integer("maxEntriesPerTransaction", 10_000, minimum=1),
            sink_id=sink_id,
            batch_id=int(batch_id_text) if batch_id_text is not None else None,
            id_column=opts.text("idColumn"),
            marker_ttl_s=opts.integer("markerTtlSeconds", 7 * 24 * 3600, minimum=1),
        )

    def trim_args(self) -> list[str]:
        """XADD's trimming arguments, placed before the ID."""
        marker = ["~"] if self.approximate_trim else []
        if self.maxlen is not None:
            return ["MAXLEN", *marker, str(self.maxlen)]
        if self.minid is not None:
            return ["MINID", *marker, self.minid]
        return []


def _escape_glob(text: str) -> str:
    return "".join("\\" + c if c in "*?[]\\" else c for c in text)


@dataclass(frozen=True)
class TableOptions:
    """Options of a table of hashes (spark-redis's model): one hash per row, its key
    `<table>:<keyColumn's value>`, its fields the other columns."""

    connection: ConnectionOptions = field(default_factory=ConnectionOptions)
    table: str | None = None
    keys_pattern: str = "*"
    key_column: str | None = None
    ttl_s: int = 0
    infer_types: bool = True
    sample_size: int = 1_000
    keys_per_partition: int = 1_000_000
    partitions: int = 0
    scan_count: int = 1_000
    pipeline_size: int = 1_000

    @property
    def prefix(self) -> str:
        """What is cut from a key to give the key column: `<table>:`, or for a bare
        `keysPattern` its literal start up to its last colon (`user:2024:*` ->
        `user:2024:`; a pattern without one keeps whole keys)."""
        if self.table is not None:
            return f"{self.table}:"
        literal = self.keys_pattern
        for i, char in enumerate(literal):
            if char in "*?[\\":
                literal = literal[:i]
                break
        return literal[: literal.rfind(":") + 1]

    def key_of(self, suffix: str) -> str:
        assert self.table is not None
        return f"{self.table}:{suffix}"

    @classmethod
    def parse(cls, raw: Mapping[str, Any], *, writing: bool = False) -> TableOptions:
        renamed = {SPARK_REDIS_NAMES.get(str(k).lower(), k): v for k, v in raw.items()}
        check_names(renamed, TABLE_OPTIONS, {}, "table")
        opts = _Options(renamed)
        table = opts.text("table")
        pattern = opts.text("keysPattern")
        if table is None and (writing or pattern is None):
            raise OptionError(
                "option table is required"
                + (" to write" if writing else "")
                + ": rows are the hashes <table>:<key>"
            )
        if writing and pattern is not None:
            raise OptionError("option keysPattern only selects keys to read; writes use table")
        return cls(
            connection=ConnectionOptions.parse(opts),
            table=table,
            keys_pattern=pattern or f"{_escape_glob(table or '')}:*",
            key_column=opts.text("keyColumn"),
            ttl_s=opts.integer("ttl", 0),
            infer_types=opts.boolean("inferSchema", True),
            sample_size=opts.integer("sampleSize", 1_000, minimum=1),
            keys_per_partition=opts.integer("keysPerPartition", 1_000_000, minimum=1),
            partitions=opts.integer("partitions", 0),
            scan_count=opts.integer("scanCount", 1_000, minimum=1),
            pipeline_size=opts.integer("pipelineSize", 1_000, minimum=1),
        )
