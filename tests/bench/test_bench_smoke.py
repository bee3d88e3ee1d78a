"""Smoke tests of the benchmark harness: the latency tool's bookkeeping, never its timings.

The run goes against Debian's redis-server (skipped when it is absent), so a
failure here is the harness's fault, not rillet's.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys

import pytest

from rillet.bench import cli, latency
from rillet.bench.report import Row, Target
from rillet.bench.servers import ServerKind, redis7_binary, start_server


@pytest.fixture
def redis_server():
    binary = redis7_binary()
    if not binary or not os.path.exists(binary):
        pytest.skip("Debian's redis-server is not installed")
    server = start_server(ServerKind("redis", "redis", binary))
    yield server
    server.cleanup()


@pytest.mark.needs_redis
def test_latency_tool_accounts_for_every_message(redis_server, tmp_path, capsys):
    out_json = tmp_path / "latency.json"
    plot = tmp_path / "cdf.png"
    code = cli.main([
        "latency", "--port", str(redis_server.port), "--label", "redis",
        "--rate", "500", "--duration", "2", "--warmup", "0.5", "--consumers", "3",
        "--consumer-procs", "2", "--block", "200", "--count", "10",
        "--json", str(out_json), "--plot", str(plot), "--trace",
    ])
    printed = capsys.readouterr().out
    (result,) = json.loads(out_json.read_text())
    assert result["problems"] == []
    assert code == 0 and result["ok"]
    assert result["sent"] > 0
    assert result["sent"] == result["consumed"] == result["acked"] == result["stream_len"]
    assert result["pending"] == 0
    assert 0 < result["measured"] <= result["sent"]
    assert result["cpu"]["server_pid"] == redis_server.pid
    # --trace: one record per consumer process, each slow message as (sent, received).
    assert len(result["trace"]) == 2
    for proc in result["trace"]:
        assert set(proc) == {"pid", "gc", "stalls", "slow"} and len(proc["slow"]) % 2 == 0
    assert "Processed between 0 and 1 ms -> " in printed
    if importlib.util.find_spec("matplotlib"):
        assert plot.stat().st_size > 0


def test_histogram_uses_the_seeds_form():
    stats = latency.latency_stats([100, 900, 1500, 2500, 4999, 60_000, 75_000, 80_000, 10, 20])
    lines = latency.format_histogram(stats)
    assert lines[0] == "Processed between 0 and 1 ms -> 40.00%"
    assert lines[1] == "Processed between 1 and 2 ms -> 10.00%"
    assert lines[4] == "Processed between 4 and 5 ms -> 10.00%"
    assert lines[-1] == "Processed in 50 ms or more -> 30.00%"
    assert stats["percentiles_ms"]["p50"] == 1.5
    assert stats["percentiles_ms"]["max"] == 80.0


def test_targets_print_met_or_missed_by_how_much():
    row = Row("XADD -P 64", "ops/s", targets=[Target("#3", ">=", 0.35), Target("#7", ">=", 0.5)])
    row.add("rillet", 400.0)
    row.add("redis", 1000.0)
    assert row.ratio() == pytest.approx(0.4)
    assert row.verdicts() == ["MET", "MISSED by 20%"]
    memory = Row("RSS per entry", "B", higher_is_better=False, targets=[Target("#3", "<=", 2.0)])
    memory.add("rillet", 50.0)
    memory.add("redis", 20.0)
    assert memory.verdicts() == ["MISSED by 25%"]
    memory.fail("rillet", "n/a: not implemented")
    assert memory.verdicts() == ["n/a"]


def test_per_type_quick_prints_both_tables(capsys, monkeypatch):
    """bench/per_type.py --quick against rillet alone: every command and memory row printed
    (figures are not checked: only that each row has one)."""
    from rillet.bench.redisbench import redis_benchmark_binary

    if redis_benchmark_binary() is None:
        pytest.skip("redis-benchmark is not installed")
    path = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "per_type.py")
    spec = importlib.util.spec_from_file_location("per_type", path)
    per_type = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "per_type", per_type)  # its dataclasses look it up
    monkeypatch.setattr(sys, "path", list(sys.path))  # it puts bench/ first, for its imports
    spec.loader.exec_module(per_type)
    assert per_type.main(["--quick", "--servers", "rillet"]) == 0
    printed = capsys.readouterr().out
    lines = printed.splitlines()
    for name, _, _ in per_type.COMMANDS:
        (line,) = [ln for ln in lines if ln.startswith(f"| {name} |")]
        assert "nan" not in line
    for row in per_type.MEMORY_ROWS:
        assert sum(f"× {row.name} |" in ln for ln in lines) == 1
        assert sum(ln.startswith(f"| {row.name} |") for ln in lines) == 1  # the in-process sizes
