"""Lag from a streaming query's progress: how far each stream's read is behind its end.

PySpark's Python data source API (4.3) has no way to attach per-source metrics to
`StreamingQueryProgress.sources[].metrics` (the JVM wrapper of a Python stream does not
implement ReportsSourceMetrics), so Kafka's `minOffsetsBehindLatest` etc. cannot appear
there. Every progress report does carry the source's `endOffset` and `latestOffset`
(from `reportLatestOffset`), and both hold each stream's entry ordinal; `source_lag`
turns them into the same three numbers, and `rillet.spark.listener.LagListener` does so
on every progress event. `rillet lag` reads the same from a checkpoint or a progress
group without Spark.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


def _ordinals(offset: Any) -> dict[str, int]:
    if not offset:
        return {}
    decoded = json.loads(offset) if isinstance(offset, str) else offset
    return {
        str(stream): int(value["entriesRead"])
        for stream, value in decoded.items()
        if isinstance(value, Mapping) and value.get("entriesRead") is not None
    }


def lag_summary(behind: Mapping[str, int]) -> dict[str, Any]:
    """Kafka's source metric names over per-stream lags (entries behind the stream's end)."""
    if not behind:
        return {}
    values = list(behind.values())
    return {
        "minOffsetsBehindLatest": min(values),
        "avgOffsetsBehindLatest": sum(values) / len(values),
        "maxOffsetsBehindLatest": max(values),
        "perStream": dict(sorted(behind.items())),
    }


def source_lag(progress: Mapping[str, Any], source: int = 0) -> dict[str, Any]:
    """Lag of one source of a progress report (`query.lastProgress`), Kafka's metric names.

    Empty when the report has no ordinals (servers before Redis 7, or no batch yet).
    """
    sources = progress.get("sources") or []
    if len(sources) <= source:
        return {}
    latest = _ordinals(sources[source].get("latestOffset"))
    end = _ordinals(sources[source].get("endOffset"))
    behind = {s: max(0, latest[s] - end[s]) for s in latest if s in end}
    return lag_summary(behind)
