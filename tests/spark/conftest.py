"""Fixtures for the connector and pipeline tests.

- `stream_server`: a server per parameter, "redis" (Debian's redis-server) and "rillet"
  (`python -m rillet server`), one process each for the session; skipped with a reason
  when it cannot start. The same connector tests run against both.
- `client` / `url`: a raw redis-py client on that server, flushed before each test.
- `spark`: ONE local[2] SparkSession for the whole directory (UI off, 2 shuffle
  partitions), created without explicit registration so auto-registration is tested.
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
if str(SRC) not in sys.path:  # the tests also run from a checkout that is not installed
    sys.path.insert(0, str(SRC))

from rillet.pipelines.servers import (  # noqa: E402
    ServerProcess,
    ServerStartError,
    redis_server,
    rillet_server,
)

SPARK_CONF = {
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
    "spark.ui.enabled": "false",
    # C1 only: test queries are short, so quick JIT warm-up beats peak speed.
    "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1",
}


def _start(kind: str) -> ServerProcess:
    if kind == "redis":
        handle = redis_server()
        if not Path(handle.argv[0]).exists():
            pytest.skip(f"redis-server not installed ({handle.argv[0]})")
    else:
        handle = rillet_server()
    try:
        return handle.start(timeout_s=30)
    except ServerStartError as exc:
        pytest.skip(f"{kind} server did not start: {str(exc)[:600]}")
    except OSError as exc:
        pytest.skip(f"{kind} server could not be launched: {exc}")


def _missing_commands(handle: ServerProcess) -> list[str]:
    """Stream commands the connector needs that the server answers with 'unknown command'."""
    import redis

    conn = redis.Redis(host="127.0.0.1", port=handle.port, socket_timeout=10)
    probes = [
        ("XADD", "rillet:probe", "1-0", "f", "v"),
        ("XRANGE", "rillet:probe", "-", "+", "COUNT", "1"),
        ("XINFO", "STREAM", "rillet:probe"),
        ("XGROUP", "CREATE", "rillet:probe", "g", "0"),
        ("XTRIM", "rillet:probe", "MINID", "0"),
        ("SCAN", "0", "TYPE", "stream"),
        ("MULTI",),
        ("EXEC",),
        ("DEL", "rillet:probe"),
    ]
    missing = []
    try:
        for probe in probes:
            try:
                conn.execute_command(*probe)
            except redis.ResponseError as exc:
                if (
                    "unknown command" in str(exc).lower()
                    or "unknown subcommand" in str(exc).lower()
                ):
                    missing.append(
                        " ".join(probe[:2]) if probe[0] in ("XINFO", "XGROUP") else probe[0]
                    )
    finally:
        conn.close()
    return missing


@pytest.fixture(scope="session", params=["redis", "rillet"])
def stream_server(request):
    handle = _start(request.param)
    missing = _missing_commands(handle)
    if missing:
        handle.stop()
        pytest.skip(f"{request.param} server lacks commands the connector needs: {missing}")
    yield handle
    handle.stop()


@pytest.fixture
def client(stream_server):
    import redis

    conn = redis.Redis(host="127.0.0.1", port=stream_server.port, socket_timeout=30)
    conn.flushall()
    yield conn
    conn.close()


@pytest.fixture
def url(stream_server, client):
    return stream_server.url


@pytest.fixture(scope="session")
def spark_session_info():
    """(session, auto_registered): the one Spark session of this directory."""
    pytest.importorskip("pyspark")
    warnings.filterwarnings("ignore", message=".*pandas >= 3.0.0.*")
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from rillet.spark.session import SparkSetupError, build_session

    try:
        session = build_session("local[2]", "rillet-tests", SPARK_CONF, register=False)
    except SparkSetupError as exc:
        pytest.skip(str(exc))
    try:
        # Resolving the schema needs the format, not a server.
        assert session.read.format("rillet").option("streams", "probe").load().columns
        auto_registered = True
    except Exception:
        auto_registered = False
        from rillet.spark import register

        register(session)
    yield session, auto_registered
    session.stop()


@pytest.fixture
def spark(spark_session_info):
    return spark_session_info[0]
