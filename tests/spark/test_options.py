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
