"""Pipeline helpers that need neither Spark nor a server."""

from __future__ import annotations

import json

import pytest

from rillet.pipelines.archive import cutoff_id, parse_age_ms
from rillet.pipelines.cli import build_parser
from rillet.pipelines.demo import lag_from_progress
from rillet.pipelines.ingest import detect_format, input_identity
from rillet.spark.ids import StreamId


@pytest.mark.parametrize("text, ms", [("90", 90_000), ("30m", 1_800_000), ("7d", 604_800_000)])
def test_archive_ages(text, ms):
    assert parse_age_ms(text) == ms
    with pytest.raises(ValueError):
        parse_age_ms("soon")


def test_archive_cutoffs():
    assert cutoff_id("1h", None, 10_000_000) == StreamId(10_000_000 - 3_600_000, 0)
    assert cutoff_id(None, "1700-5", 0) == StreamId(1700, 5)
    assert cutoff_id(None, "1970-01-01T00:00:02Z", 0) == StreamId(2000, 0)


def test_demo_lag_from_progress_ordinals():
    source = {
        "latestOffset": json.dumps({"s": {"id": "9-0", "entriesRead": 90}}),
        "endOffset": json.dumps({"s": {"id": "5-0", "entriesRead": 50}}),
    }
    assert lag_from_progress({"sources": [source]}) == 40
    assert lag_from_progress({"sources": [{"endOffset": None}]}) is None


def test_ingest_format_and_identity(tmp_path):
    assert detect_format(["a.csv", "b.CSV"], None) == "csv"
    assert detect_format(["a.jsonl"], None) == "json"
    assert detect_format(["x"], "parquet") == "parquet"
    with pytest.raises(ValueError):
        detect_format(["a.csv", "b.parquet"], None)
    data = tmp_path / "a.csv"
    data.write_text("x\n1\n")
    first = input_identity([str(data)])
    assert first == input_identity([str(data)])
    data.write_text("x\n1\n2\n")
    assert input_identity([str(data)]) != first


def test_cli_parses_each_pipeline():
    parser = build_parser()
    args = parser.parse_args(["demo", "--duration", "5"])
    assert args.master == "local[*]" and args.url is None and not args.follow
    args = parser.parse_args(["archive", "--streams", "s", "--older-than", "1d", "--output", "o"])
    assert args.master == "local[*]"
    args = parser.parse_args(["ingest", "f.csv", "--stream", "s", "--master", "local[2]"])
    assert args.files == ["f.csv"]
