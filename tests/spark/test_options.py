"""Option parsing: names are case-insensitive, bad values fail with the option's name."""

from __future__ import annotations

import pytest

from rillet.spark.ids import SEQ_MAX, StreamID
from rillet.spark.options import OptionError, ReaderOptions, WriterOptions, split_streams


def test_streams_names_patterns_and_json():
    assert split_streams("a, b,orders:*,a") == (("a", "b"), ("orders:*",))
    assert split_streams('["x", "y?"]') == (("x",), ("y?",))


def test_reader_defaults_and_case_insensitive_names():
    opts = ReaderOptions.parse({"STREAMS": "s", "MaxEntriesPerTrigger": "50", "fieldsas": "PAIRS"})
    assert opts.streams == ("s",) and opts.max_entries_per_trigger == 50 and opts.lossless
    assert opts.starting == "latest" and opts.fail_on_data_loss
    assert ReaderOptions.parse({"streams": "s"}, batch=True).starting == "earliest"


def test_reader_starting_json_and_bounds():
    opts = ReaderOptions.parse(
        {"streams": "a", "startingPosition": '{"a": "5-1"}', "startId": "10", "endId": "20"}
    )
    assert opts.starting == {"a": "5-1"}
    assert opts.first_id == StreamID(10, 0) and opts.last_id == StreamID(20, SEQ_MAX)


def test_reader_time_range_to_is_exclusive():
    opts = ReaderOptions.parse(
        {"streams": "a", "from": "1970-01-01T00:00:01Z", "to": "2000"}, batch=True
    )
    assert opts.first_id == StreamID(1000, 0)
    assert opts.last_id == StreamID(1999, SEQ_MAX)


@pytest.mark.parametrize(
    "raw, name",
    [
        ({}, "streams"),
        ({"streams": "a", "maxEntriesPerTrigger": "x"}, "maxEntriesPerTrigger"),
        ({"streams": "a", "failOnDataLoss": "maybe"}, "failOnDataLoss"),
        ({"streams": "a", "startingPosition": "soon"}, "startingPosition"),
        ({"streams": "a", "fieldsAs": "json"}, "fieldsAs"),
        ({"streams": "a", "endId": "1-x"}, "endId"),
        ({"streams": "a", "from": "yesterday"}, "from"),
    ],
)
def test_reader_errors_name_the_option(raw, name):
    with pytest.raises(OptionError, match=name):
        ReaderOptions.parse(raw)


def test_writer_options():
    opts = WriterOptions.parse({"stream": "out", "maxlen": "100", "exactlyOnce": "true"})
    assert opts.trim_args() == ["MAXLEN", "~", "100"]
    assert opts.exactly_once and opts.sink_id is None
    exact = WriterOptions.parse({"minid": "5-0", "approximateTrim": "false"})
    assert exact.trim_args() == ["MINID", "5-0"]
    a = WriterOptions.parse({"stream": "x", "checkpointLocation": "/tmp/a"})
    b = WriterOptions.parse({"stream": "x", "checkpointLocation": "/tmp/b"})
    assert a.sink_id and a.sink_id != b.sink_id
    assert WriterOptions.parse({"stream": "x", "checkpointLocation": "/tmp/a"}).sink_id == a.sink_id


@pytest.mark.parametrize(
    "raw, message",
    [
        (
            {"streams": "a", "startingPositon": "earliest"},
            "'startingPositon'; did you mean startingPosition?",
        ),
        ({"streams": "a", "maxEntriesPerTriger": "5"}, "did you mean maxEntriesPerTrigger?"),
        ({"streams": "a", "endid": "5", "chunksze": "9"}, "'chunksze'; did you mean chunkSize?"),
        ({"streams": "a", "zzz": "1"}, "unknown reader option 'zzz' \\("),
        ({"streams": "a", "maxlen": "1"}, "unknown reader option 'maxlen'"),
    ],
)
def test_unknown_reader_options_fail_with_the_closest_name(raw, message):
    with pytest.raises(OptionError, match=message):
        ReaderOptions.parse(raw)


@pytest.mark.parametrize(
    "name, rillet",
    [
        ("subscribe", "streams"),
        ("subscribePattern", "streams with a glob"),
        ("startingOffsets", "startingPosition"),
        ("endingOffsets", "endingPosition"),
        ("maxOffsetsPerTrigger", "maxEntriesPerTrigger"),
        ("minOffsetsPerTrigger", "minEntriesPerTrigger"),
        ("kafka.bootstrap.servers", "url"),
    ],
)
def test_kafka_names_are_refused_with_rillets(name, rillet):
    with pytest.raises(OptionError, match=f"option {name} is the Kafka source's.* is {rillet}"):
        ReaderOptions.parse({"streams": "a", name: "100"})


def test_sparks_own_options_pass():
    ReaderOptions.parse({"streams": "a", "path": "x", "CHECKPOINTLOCATION": "/tmp/c"})
    WriterOptions.parse({"stream": "a", "path": "x", "checkpointLocation": "/tmp/c"})
    with pytest.raises(OptionError, match="'maxLenght'; did you mean maxlen?"):
        WriterOptions.parse({"stream": "a", "maxLenght": "5"})
    with pytest.raises(OptionError, match="option topic is the Kafka source's.* is stream"):
        WriterOptions.parse({"topic": "a"})


def test_every_option_is_in_the_documented_table():
    import rillet.spark
    from rillet.spark.options import (
        READER_OPTIONS,
        SPARK_REDIS_NAMES,
        TABLE_OPTIONS,
        WRITER_OPTIONS,
    )

    doc = rillet.spark.__doc__
    for name in {*READER_OPTIONS, *WRITER_OPTIONS, *TABLE_OPTIONS, *SPARK_REDIS_NAMES} - {"stream"}:
        assert name in doc, name
