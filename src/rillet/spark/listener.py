"""`LagListener`: Kafka's lag numbers for rillet sources, on every progress event.

Kafka's source puts `minOffsetsBehindLatest`, `maxOffsetsBehindLatest` and
`avgOffsetsBehindLatest` in `StreamingQueryProgress.sources[].metrics` through Spark's
`ReportsSourceMetrics`. A Python source cannot: in PySpark 4.3 the JVM side of a
Python stream (`PythonMicroBatchStream`) implements `MicroBatchStream`,
`SupportsAdmissionControl`, `SupportsTriggerAvailableNow` and
`AcceptsLatestSeenOffset` but not `ReportsSourceMetrics`, and the Python source runner
serves no metrics call (its calls are initialOffset, latestOffset, partitions, commit,
getDefaultReadLimit, prepareForTriggerAvailableNow and reportLatestOffset), so
`metrics` stays `{}`. What each report does carry is the source's `endOffset` and
`latestOffset` (from `reportLatestOffset`) with every stream's entry ordinal, and a
listener sees every report: this one turns them into the same three numbers, as the
monitoring that reads Kafka's would.

    listener = LagListener(lambda progress, source, lag: print(progress["name"], lag))
    spark.streams.addListener(listener)
    ...
    listener.lag(query.id)   # {"minOffsetsBehindLatest": ..., "perStream": {...}}
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from pyspark.sql.streaming.listener import StreamingQueryListener

from rillet.spark.progress import source_lag

LagCallback = Callable[[Any, int, dict[str, Any]], None]


class LagListener(StreamingQueryListener):
    """Keeps the latest lag of each rillet source of each query; calls `callback`
    (progress, source index, lag) for every report that has one."""

    def __init__(self, callback: LagCallback | None = None) -> None:
        self.callback = callback
        self._lock = threading.Lock()  # Spark calls listeners on its own thread
        self._latest: dict[tuple[str, int], dict[str, Any]] = {}

    def lag(self, query_id: Any, source: int = 0) -> dict[str, Any]:
        """The last lag reported for a query's source (empty before its first report)."""
        with self._lock:
            return dict(self._latest.get((str(query_id), source), {}))

    def onQueryProgress(self, event: Any) -> None:  # noqa: N802 - Spark's name
        progress = event.progress
        for index in range(len(progress.get("sources") or [])):
            lag = source_lag(progress, index)
            if not lag:  # not a rillet source, or a server without ordinals
                continue
            with self._lock:
                self._latest[(str(progress["id"]), index)] = lag
            if self.callback is not None:
                self.callback(progress, index, lag)

    def onQueryStarted(self, event: Any) -> None:  # noqa: N802
        pass

    def onQueryIdle(self, event: Any) -> None:  # noqa: N802
        pass

    def onQueryTerminated(self, event: Any) -> None:  # noqa: N802
        pass  # the last lag stays readable after the query ends
