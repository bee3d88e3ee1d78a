"""Pipeline helpers that need neither Spark nor a server."""

from __future__ import annotations

import json

import pytest

from rillet.pipelines.archive import committed_offset, cutoff_id, parse_age_ms
from rillet.pipelines.cli import build_parser, spark_conf
from rillet.pipelines.demo import lag_from_progress
from rillet.pipelines.ingest import detect_format, input_identity
from rillet.pipelines.storage import has_scheme, join, location
from rillet.spark.ids import StreamID
from rillet.spark.offsets import StreamPosition


@pytest.mark.parametrize("text, ms", [("90", 90_000), ("30m", 1_800_000), ("7d", 604_800_000)])
def test_archive_ages(text, ms):
    assert parse_age_ms(text) == ms
    with pytest.raises(ValueError):
        parse_age_ms("soon")


def test_archive_cutoffs():
    assert cutoff_id("1h", None, 10_000_000) == StreamID(10_000_000 - 3_600_000, 0)
    assert cutoff_id(None, "1700-5", 0) == StreamID(1700, 5)
    assert cutoff_id(None, "1970-01-01T00:00:02Z", 0) == StreamID(2000, 0)


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


def test_every_pipeline_takes_conf_pairs():
    parser = build_parser()
    for argv in (["demo"], ["archive", "--streams", "s", "--before", "1", "--output", "o"]):
        args = parser.parse_args([*argv, "--conf", "spark.a=1", "--conf", "spark.b=x=y"])
        assert spark_conf(args) == {"spark.a": "1", "spark.b": "x=y"}
    assert spark_conf(parser.parse_args(["ingest", "f.csv", "--stream", "s"])) == {}
    with pytest.raises(SystemExit):
        parser.parse_args(["demo", "--conf", "novalue"])


def test_locations_keep_uris_and_make_paths_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert location("s3a://bucket/dir/") == "s3a://bucket/dir"
    assert location("hdfs:///x") == "hdfs:///x"
    assert location("out") == str(tmp_path / "out")
    assert not has_scheme("C:/data") and has_scheme("file:/x")
    assert join("s3a://b/out/", "_checkpoint", "commits") == "s3a://b/out/_checkpoint/commits"


def test_committed_offset_reads_file_uris(tmp_path):
    ck = tmp_path / "ck"
    (ck / "commits").mkdir(parents=True)
    (ck / "offsets").mkdir()
    (ck / "commits" / "0").write_text("v1\n{}")
    (ck / "offsets" / "0").write_text('v1\n{}\n{"s": {"id": "5-0", "entriesRead": 5}}')
    (ck / "offsets" / "1").write_text('v1\n{}\n{"s": {"id": "9-0", "entriesRead": 9}}')
    for where in (ck, ck.as_uri(), f"file:{ck}"):
        assert committed_offset(where)["s"] == StreamPosition(StreamID(5, 0), 5)
