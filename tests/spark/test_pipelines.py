"""The pipelines through their CLI entry point, on the shared session (marked `spark`)."""

from __future__ import annotations

import json

import pytest

from rillet.pipelines.archive import committed_offset
from rillet.pipelines.cli import main
from rillet.spark.ids import StreamID

pytestmark = pytest.mark.spark


def load(client, stream, first, last):
    pipe = client.pipeline(transaction=False)
    for i in range(first, last + 1):
        pipe.execute_command("XADD", stream, f"{i}-0", "n", str(i))
    pipe.execute()


def test_archive_moves_old_entries_then_trims_and_is_idempotent(spark, client, url, tmp_path):
    day = 86_400_000
    load(client, "a", 10 * day, 10 * day + 299)  # 300 entries on day 10
    load(client, "a", 11 * day, 11 * day + 199)  # 200 on day 11
    load(client, "b", 10 * day + 5, 10 * day + 9)
    out = tmp_path / "archive"
    argv = ["archive", "--url", url, "--streams", "a,b", "--output", str(out)]
    argv += ["--master", "local[2]", "--before", f"{11 * day + 100}-0"]
    assert main(argv) == 0
    table = spark.read.parquet(str(out))
    assert table.count() == 300 + 100 + 5
    dates = {r.date.isoformat() for r in table.select("date").distinct().collect()}
    assert dates == {"1970-01-11", "1970-01-12"}
    assert client.xlen("a") == 100 and client.xlen("b") == 0
    assert client.xrange("a", count=1)[0][0] == f"{11 * day + 100}-0".encode()

    assert main(argv) == 0  # a re-run adds nothing and trims nothing more
    assert spark.read.parquet(str(out)).count() == 405
    assert client.xlen("a") == 100
    committed = committed_offset(out / "_checkpoint")
    assert committed["a"].id == StreamID(11 * day + 99, 2**64 - 1)


def test_archive_never_trims_beyond_committed_parquet(spark, client, url, tmp_path):
    load(client, "a", 1000, 1099)
    out = tmp_path / "archive"
    argv = ["archive", "--url", url, "--streams", "a", "--output", str(out)]
    argv += ["--master", "local[2]", "--before", "1050-0", "--no-trim"]
    assert main(argv) == 0
    assert client.xlen("a") == 100
    # A later batch that was planned but never committed (offsets/N without commits/N).
    ck = out / "_checkpoint"
    last = max(int(p.name) for p in (ck / "offsets").iterdir() if p.name.isdigit())
    lines = (ck / "offsets" / str(last)).read_text().splitlines()
    lines[2] = json.dumps({"a": {"id": "1099-0"}})
    (ck / "offsets" / str(last + 1)).write_text("\n".join(lines))
    assert committed_offset(ck)["a"].id == StreamID(1049, 2**64 - 1)


def test_ingest_csv_and_json_lines(spark, client, url, tmp_path):
    csv = tmp_path / "readings.csv"
    csv.write_text("sensor-id,temperature\n1,19.8\n2,20.1\n3,\n")
    assert main(["ingest", str(csv), "--url", url, "--stream", "in", "--master", "local[2]"]) == 0
    rows = [fields for _, fields in client.xrange("in")]
    assert sorted(r[b"sensor-id"] for r in rows) == [b"1", b"2", b"3"]
    assert {r.get(b"temperature") for r in rows} == {b"19.8", b"20.1", None}

    jsonl = tmp_path / "events.jsonl"
    jsonl.write_text("".join(json.dumps({"id": f"{i}-1", "kind": "x"}) + "\n" for i in range(1, 6)))
    argv = ["ingest", str(jsonl), "--url", url, "--stream", "ev", "--id-column", "id"]
    argv += ["--exactly-once", "--master", "local[2]"]
    assert main(argv) == 0
    assert main(argv) == 0
    assert [i for i, _ in client.xrange("ev")] == [f"{i}-1".encode() for i in range(1, 6)]


def test_demo_runs_and_writes_windows(spark, stream_server, client, tmp_path):
    argv = ["demo", "--duration", "1", "--rate", "400", "--window", "2", "--watermark", "1"]
    argv += ["--trigger", "1", "--output", str(tmp_path / "demo"), "--master", "local[2]"]
    if stream_server.kind == "redis":
        argv += ["--url", stream_server.url]
    # With no --url (the rillet case) the demo starts its own embedded server.
    assert main(argv) == 0
    windows = spark.read.parquet(str(tmp_path / "demo" / "windows"))
    assert windows.count() > 0
    assert set(windows.columns) >= {"window_start", "sensor", "avg", "min", "max", "count"}
    if stream_server.kind == "redis":
        assert client.xlen("sensors:windows") == windows.count()
