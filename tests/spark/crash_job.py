"""Run by test_crash.py in a subprocess: copy a stream with two sink modes, then die.

argv: url checkpoint_dir crash_at_entries. Two queries, one after the other, copy
`src` into `out_plain` (at-least-once) and `out_eo` (exactlyOnce); a watcher hard-exits the whole process
(os._exit, no cleanup, like kill -9 of the driver) once `out_eo` holds
`crash_at_entries` entries, which lands in the middle of a micro-batch.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))
warnings.filterwarnings("ignore")

import redis  # noqa: E402
from crash_queries import copy_query  # noqa: E402

CRASH_EXIT_CODE = 17


def main() -> None:
    url, checkpoints, crash_at = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
    from rillet.spark.session import build_session

    conf = {
        "spark.sql.shuffle.partitions": "2",
        # C1 only: this JVM lives for seconds, so quick warm-up beats peak speed.
        "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1",
    }
    spark = build_session("local[2]", "crash-job", conf)
    client = redis.Redis.from_url(url)

    def watch() -> None:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            if client.xlen("out_eo") >= crash_at:
                os._exit(CRASH_EXIT_CODE)
            time.sleep(0.005)
        os._exit(3)

    threading.Thread(target=watch, daemon=True).start()
    # One query at a time: two concurrent Python-data-source queries in one
    # session intermittently fail Spark's task serialization ("Illegal size of
    # collection"). The at-least-once copy runs first and the crash lands in
    # the exactly-once copy's micro-batches.
    copy_query(spark, url, "out_plain", checkpoints / "plain", exactly_once=False).awaitTermination(240)
    copy_query(spark, url, "out_eo", checkpoints / "eo", exactly_once=True).awaitTermination(240)
    os._exit(0)  # finished before the crash point: the test treats this as a failure


if __name__ == "__main__":
    main()
