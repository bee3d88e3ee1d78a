"""`RilletDataSource`: the `rillet` format for Spark (stream and batch reads, XADD sink).

Options are parsed here, on the driver, so a typo fails when the query is defined
rather than inside a task. Everything this class hands to Spark holds only frozen
option dataclasses, which pickle cleanly to executors.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    DataSourceStreamWriter,
    DataSourceWriter,
)

from rillet.spark.arrow import schema_ddl
from rillet.spark.options import (
    OptionError,
    ReaderOptions,
    TableOptions,
    WriterOptions,
    _Options,
    is_table,
)


class RilletDataSource(DataSource):
    """Redis Streams for Spark: `spark.readStream.format("rillet")`, `spark.read`, and sinks.

    Works with any server speaking Redis's stream commands (rillet, Redis >= 6.2,
    Valkey). See `rillet.spark` for the options. With `table` (or `keysPattern`) the
    rows are hashes instead, as in spark-redis (`rillet.spark.hashes`).
    """

    @classmethod
    def name(cls) -> str:
        return "rillet"

    def _lossless(self) -> bool:
        fields_as = (_Options(self.options).text("fieldsAs", "map") or "map").lower()
        if fields_as not in ("map", "pairs"):
            raise OptionError(f"option fieldsAs: expected map or pairs, got {fields_as!r}")
        return fields_as == "pairs"

    def schema(self) -> Any:
        if is_table(self.options):
            from rillet.spark.hashes import infer_schema

            return infer_schema(TableOptions.parse(self.options))
        return schema_ddl(self._lossless())

    def reader(self, schema: Any) -> DataSourceReader:
        if is_table(self.options):
            from rillet.spark.hashes import HashTableReader

            return HashTableReader(TableOptions.parse(self.options), schema)
        from rillet.spark.batch_reader import RilletBatchReader

        return RilletBatchReader(ReaderOptions.parse(self.options, batch=True))

    def streamReader(self, schema: Any) -> DataSourceStreamReader:  # noqa: N802 - Spark's name
        if is_table(self.options):
            raise OptionError("tables of hashes are read in batch (spark.read), not streamed")
        from rillet.spark.stream_reader import RilletStreamReader

        return RilletStreamReader(ReaderOptions.parse(self.options))

    def writer(self, schema: Any, overwrite: bool) -> DataSourceWriter:
        if is_table(self.options):
            from rillet.spark.hashes import HashTableWriter

            options = TableOptions.parse(self.options, writing=True)
            return HashTableWriter(options, list(schema.fieldNames()), overwrite)
        from rillet.spark.writer import RilletWriter

        return RilletWriter(WriterOptions.parse(self.options), list(schema.fieldNames()))

    def streamWriter(self, schema: Any, overwrite: bool) -> DataSourceStreamWriter:  # noqa: N802
        from rillet.spark.writer import RilletStreamWriter

        if is_table(self.options):
            raise OptionError("tables of hashes are written in batch (df.write or foreachBatch)")
        if overwrite:
            raise OptionError(
                "the rillet sink appends to streams; complete output mode is not supported "
                "(use append with a watermark, or foreachBatch)"
            )
        return RilletStreamWriter(WriterOptions.parse(self.options), list(schema.fieldNames()))
