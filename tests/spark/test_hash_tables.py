"""Tables of hashes (`option("table", ...)`): DataFrames written as hashes and read back,
with a given and an inferred schema, TTLs, overwrite, keysPattern. Runs against each
`stream_server`."""

from __future__ import annotations

import pytest

from rillet.spark.hashes import HashTableReader, infer_schema, plan
from rillet.spark.options import OptionError, TableOptions

pytestmark = pytest.mark.spark

PEOPLE = [
    ("ann", 31, 1.5, True, "Paris"),
    ("bob", 45, 2.0, False, None),
    ("cy:z", -7, -0.25, True, "Lyon"),
]
DDL = "name string, age bigint, score double, active boolean, city string"


def people(spark, rows=PEOPLE):
    return spark.createDataFrame(rows, DDL)


def write(df, url, mode="append", **options):
    writer = df.write.format("rillet").mode(mode).option("url", url)
    for key, value in options.items():
        writer = writer.option(key, str(value))
    writer.save()


def read(spark, url, schema=None, **options):
    reader = spark.read.format("rillet").option("url", url)
    if schema is not None:
        reader = reader.schema(schema)
    for key, value in options.items():
        reader = reader.option(key, str(value))
    return reader.load()


def rows(df):
    return sorted(tuple(r) for r in df.collect())


def test_written_hashes_read_back_equal_with_given_and_inferred_schema(spark, client, url):
    write(people(spark), url, table="person", keyColumn="name")
    assert client.hgetall("person:bob") == {b"age": b"45", b"score": b"2.0", b"active": b"false"}
    assert client.hget("person:cy:z", "city") == b"Lyon"

    given = read(spark, url, DDL, table="person", keyColumn="name")
    assert rows(given) == sorted(PEOPLE)

    inferred = read(spark, url, table="person", keyColumn="name")
    assert inferred.schema.simpleString() == (
        "struct<name:string,age:bigint,score:double,active:boolean,city:string>"
    )
    assert rows(inferred) == sorted(PEOPLE)


def test_other_types_read_back_with_a_given_schema(spark, client, url):
    import datetime as dt
    from decimal import Decimal

    ddl = "k int, day date, at timestamp, price decimal(7,2), raw binary"
    when = dt.datetime(2024, 5, 6, 7, 8, 9, 123456)
    data = [(1, dt.date(2024, 5, 6), when, Decimal("12.50"), bytearray(b"\x00\xff"))]
    write(spark.createDataFrame(data, ddl), url, table="typed", keyColumn="k")
    assert client.hget("typed:1", "raw") == b"\x00\xff"
    assert rows(read(spark, url, ddl, table="typed", keyColumn="k")) == [tuple(data[0])]


def test_ttl_and_generated_keys(spark, client, url):
    write(people(spark).drop("name"), url, table="t", ttl=500)
    keys = client.keys("t:*")
    assert len(keys) == 3
    assert all(0 < client.ttl(k) <= 500 for k in keys)
    assert sorted(r[0] for r in read(spark, url, table="t").select("age").collect()) == [-7, 31, 45]


def test_overwrite_replaces_the_table_and_append_replaces_rows(spark, client, url):
    write(people(spark), url, table="person", keyColumn="name")
    client.set("person:counter", "3")  # not a hash: not part of the table
    client.hset("personal:x", "a", "1")  # another table sharing the prefix's letters
    write(
        people(spark, [("dee", 20, 0.5, False, "Rome")]),
        url,
        "overwrite",
        table="person",
        keyColumn="name",
    )
    assert rows(read(spark, url, DDL, table="person", keyColumn="name")) == [
        ("dee", 20, 0.5, False, "Rome")
    ]
    assert client.get("person:counter") == b"3"
    assert client.hgetall("personal:x") == {b"a": b"1"}

    write(people(spark, [("dee", 21, 0.5, False, None)]), url, table="person", keyColumn="name")
    assert client.hgetall("person:dee") == {b"age": b"21", b"score": b"0.5", b"active": b"false"}


def test_keys_pattern_reads_hashes_made_elsewhere(spark, client, url):
    client.hset("user:2024:1", mapping={"name": "a", "visits": "3"})
    client.hset("user:2024:2", mapping={"name": "b", "visits": "10"})
    client.hset("user:2023:9", mapping={"name": "old", "visits": "1"})
    client.execute_command("XADD", "user:2024:stream", "*", "f", "v")  # not a hash: skipped
    df = read(spark, url, keysPattern="user:2024:*", keyColumn="id")
    assert df.schema.simpleString() == "struct<id:string,name:string,visits:bigint>"
    assert rows(df) == [("1", "a", 3), ("2", "b", 10)]
    # spark-redis's option names work as they do there
    assert read(spark, url, **{"keys.pattern": "user:*", "key.column": "k"}).count() == 3


def test_empty_table_reads_zero_rows(spark, url):
    assert read(spark, url, "k string, v bigint", table="none", keyColumn="k").count() == 0
    assert read(spark, url, table="none", keyColumn="k").columns == ["k"]


# -- without Spark ---------------------------------------------------------------------


def test_plan_cuts_the_sorted_keys_into_contiguous_partitions():
    keys = [f"t:{i:03d}" for i in range(10)]
    parts = plan(keys[::-1], TableOptions.parse({"table": "t", "keysPerPartition": "4"}))
    assert [p.keys for p in parts] == [tuple(keys[0:4]), tuple(keys[4:8]), tuple(keys[8:])]
    fixed = plan(keys, TableOptions.parse({"table": "t", "partitions": "20"}))
    assert len(fixed) == 10
    assert plan([], TableOptions.parse({"table": "t"})) == []


def test_options_are_checked():
    with pytest.raises(OptionError, match="did you mean keyColumn"):
        TableOptions.parse({"table": "t", "keyColum": "x"})
    with pytest.raises(OptionError, match="table is required to write"):
        TableOptions.parse({"keysPattern": "t:*"}, writing=True)
    assert TableOptions.parse({"table": "a*b"}).keys_pattern == "a\\*b:*"
    assert TableOptions.parse({"keysPattern": "user:2024:*"}).prefix == "user:2024:"
    assert TableOptions.parse({"keysPattern": "user*"}).prefix == ""


def test_inference_needs_rows_or_a_key_column(client, url):
    with pytest.raises(OptionError, match="no hash matches"):
        infer_schema(TableOptions.parse({"url": url, "table": "none"}))
    client.hset("t:1", mapping={"n": "1", "x": "1.5", "b": "TRUE", "s": "1x"})
    schema = infer_schema(TableOptions.parse({"url": url, "table": "t"}))
    assert schema.simpleString() == "struct<n:bigint,x:double,b:boolean,s:string>"
    flat = infer_schema(TableOptions.parse({"url": url, "table": "t", "inferSchema": "false"}))
    assert flat.simpleString() == "struct<n:string,x:string,b:string,s:string>"


def test_nested_columns_are_refused_on_read():
    from pyspark.sql.types import ArrayType, IntegerType, StructType

    schema = StructType().add("a", ArrayType(IntegerType()))
    with pytest.raises(OptionError, match="from_json"):
        HashTableReader(TableOptions.parse({"table": "t"}), schema)
