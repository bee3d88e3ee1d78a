"""Query builders shared by the crash test and its subprocess (crash_job.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

BATCH_ENTRIES = 2_000
TRANSACTION_ENTRIES = 250


def copy_query(spark: Any, url: str, target: str, checkpoint: Path, *, exactly_once: bool) -> Any:
    """`src` -> `target`, keeping each source ID as field `src_id`, availableNow."""
    from pyspark.sql import functions as F

    df = (
        spark.readStream.format("rillet")
        .option("url", url)
        .option("streams", "src")
        .option("startingPosition", "earliest")
        .option("maxEntriesPerTrigger", BATCH_ENTRIES)
        .option("partitionsPerStream", 2)
        .load()
        .select(F.map_concat("fields", F.create_map(F.lit("src_id"), "id")).alias("fields"))
    )
    return (
        df.writeStream.format("rillet")
        .option("url", url)
        .option("stream", target)
        .option("exactlyOnce", str(exactly_once).lower())
        .option("maxEntriesPerTransaction", TRANSACTION_ENTRIES)
        .option("pipelineSize", 100)
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
