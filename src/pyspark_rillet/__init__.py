"""Auto-registration hook: Spark imports top-level `pyspark_*` modules and registers their
`DefaultSource`, so `format("rillet")` works with no `spark.dataSource.register` call.
"""

from rillet.spark.source import RilletDataSource as DefaultSource

__all__ = ["DefaultSource"]
