"""The pipelines on a real standalone cluster: a master and one worker started from the
installed pyspark (`spark-class ...Master` / `...Worker`, loopback, free ports, small
memory), each pipeline run as its own `rillet pipeline ... --master spark://...` process
against a rillet server. The worker gets no PYTHONPATH, so executors import the rillet
the driver ships them. Everything started here is stopped at the end of the module.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

from rillet.pipelines.servers import free_port, rillet_server

SRC = str(Path(__file__).resolve().parents[2] / "src")
PIPELINE_TIMEOUT_S = 420  # a loaded 2-core machine can take minutes

# The pipeline's own bound (plus the cluster's start-up) decides, not pytest-timeout's
# 300 s default, which is shorter than PIPELINE_TIMEOUT_S.
pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.timeout(PIPELINE_TIMEOUT_S + 180)]


def _spark_home() -> Path:
    pyspark = pytest.importorskip("pyspark")
    return Path(pyspark.__file__).resolve().parent


def _get_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=5) as reply:
        return json.loads(reply.read())


class Cluster:
    def __init__(self, workdir: Path) -> None:
        self.home = _spark_home()
        self.workdir = workdir
        self.port, self.ui, self.worker_ui = free_port(), free_port(), free_port()
        self.procs: list[subprocess.Popen] = []

    @property
    def master(self) -> str:
        return f"spark://127.0.0.1:{self.port}"

    def _env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        env.update(
            SPARK_HOME=str(self.home),
            SPARK_LOCAL_IP="127.0.0.1",
            SPARK_DAEMON_MEMORY="256m",
            PYSPARK_PYTHON=sys.executable,
            SPARK_LOG_DIR=str(self.workdir),
        )
        return env

    def _spawn(self, name: str, *argv: str) -> None:
        log = open(self.workdir / f"{name}.log", "wb")  # noqa: SIM115 - closed with the process
        cmd = [str(self.home / "bin" / "spark-class"), *argv]
        proc = subprocess.Popen(
            cmd, stdout=log, stderr=subprocess.STDOUT, env=self._env(), start_new_session=True
        )
        self.procs.append(proc)

    def start(self) -> Cluster:
        self._spawn(
            "master",
            "org.apache.spark.deploy.master.Master",
            *("--host", "127.0.0.1", "--port", str(self.port), "--webui-port", str(self.ui)),
        )
        self._spawn(
            "worker",
            "org.apache.spark.deploy.worker.Worker",
            self.master,
            *("--host", "127.0.0.1", "--port", str(free_port())),
            *("--webui-port", str(self.worker_ui), "--cores", "2", "--memory", "1g"),
            *("--work-dir", str(self.workdir / "work")),
        )
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if any(p.poll() is not None for p in self.procs):
                break
            try:
                if _get_json(f"http://127.0.0.1:{self.ui}/json/").get("aliveworkers", 0) >= 1:
                    return self
            except (OSError, ValueError):  # not listening yet, or an empty page while starting
                pass
            time.sleep(0.5)
        logs = {p.name: p.read_text()[-1500:] for p in self.workdir.glob("*.log")}
        self.stop()
        pytest.skip(f"standalone cluster did not start: {logs}")

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)


@pytest.fixture(scope="module")
def cluster():
    with tempfile.TemporaryDirectory(prefix="rillet-cluster-") as tmp:
        handle = Cluster(Path(tmp)).start()
        try:
            yield handle
        finally:
            handle.stop()


@pytest.fixture(scope="module")
def server():
    handle = rillet_server().start(timeout_s=30)
    yield handle
    handle.stop()


@pytest.fixture
def rclient(server):
    import redis

    conn = redis.Redis.from_url(server.url, socket_timeout=30)
    conn.flushall()
    yield conn
    conn.close()


CLUSTER_CONF = [
    "spark.driver.host=127.0.0.1",
    "spark.driver.bindAddress=127.0.0.1",
    "spark.executor.memory=512m",
    "spark.cores.max=2",
]


def pipeline(cluster: Cluster, *argv: str) -> subprocess.Popen:
    """`rillet pipeline ...` as a user runs it: its own process, driver on this machine."""
    env = dict(os.environ, PYTHONPATH=SRC, SPARK_LOCAL_IP="127.0.0.1")
    env["PYSPARK_PYTHON"] = sys.executable
    conf = [arg for item in CLUSTER_CONF for arg in ("--conf", item)]
    cmd = [sys.executable, "-m", "rillet", "pipeline", *argv, "--master", cluster.master, *conf]
    return subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, start_new_session=True
    )


def finish(proc: subprocess.Popen) -> tuple[int, str]:
    try:
        out, _ = proc.communicate(timeout=PIPELINE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        pytest.fail(f"pipeline did not finish in {PIPELINE_TIMEOUT_S}s:\n{out.decode()[-4000:]}")
    return proc.returncode, out.decode("utf-8", "replace")


def test_demo_on_a_cluster_processes_every_reading(cluster, server, rclient, tmp_path):
    import pyarrow.dataset as ds

    out = tmp_path / "demo"
    argv = ["demo", "--url", server.url, "--duration", "1", "--rate", "300"]
    argv += ["--window", "2", "--watermark", "1", "--trigger", "1", "--output", str(out)]
    code, text = finish(pipeline(cluster, *argv))
    assert code == 0, text[-4000:]
    processed = int(re.search(r"readings processed\s+([\d,]+)", text).group(1).replace(",", ""))
    assert processed == rclient.xlen("sensors") > 0, text[-3000:]
    windows = ds.dataset(str(out / "windows"), format="parquet", partitioning="hive").to_table()
    assert windows.num_rows > 0
    assert rclient.xlen("sensors:windows") == windows.num_rows
    # Every reading of a closed window is counted exactly once in the output.
    assert 0 < sum(windows.column("count").to_pylist()) <= processed


def test_archive_on_a_cluster_moves_every_entry(cluster, server, rclient, tmp_path):
    import pyarrow.dataset as ds

    pipe = rclient.pipeline(transaction=False)
    for i in range(1, 3001):
        pipe.execute_command("XADD", "a", f"{1_000_000 + i}-0", "n", str(i))
    pipe.execute()
    out = tmp_path / "archive"
    argv = ["archive", "--url", server.url, "--streams", "a", "--output", out.as_uri()]
    argv += ["--before", f"{1_000_000 + 2001}-0"]
    code, text = finish(pipeline(cluster, *argv))
    assert code == 0, text[-4000:]
    assert "archived 2,000 entries" in text, text[-3000:]
    table = ds.dataset(str(out), format="parquet", partitioning="hive").to_table()
    assert table.num_rows == 2000
    assert sorted(int(i.split("-")[0]) for i in table.column("id").to_pylist()) == list(
        range(1_000_001, 1_002_001)
    )
    assert rclient.xlen("a") == 1000
    assert re.search(r"2 committed Parquet files checked|\d+ committed Parquet files checked", text)


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _driver_jvm(pid: int) -> int | None:
    for child in _descendants(pid):
        try:
            cmdline = (Path("/proc") / str(child) / "cmdline").read_bytes()
        except OSError:
            continue
        if b"org.apache.spark.deploy.SparkSubmit" in cmdline and b"java" in cmdline:
            return child
    return None


def test_killing_the_demo_query_exits_non_zero(cluster, server, rclient, tmp_path):
    """The driver JVM (and with it the query) is killed mid-run, as the OOM killer would:
    the demo must say so and exit non-zero, not print a summary and exit 0."""
    argv = ["demo", "--url", server.url, "--duration", "120", "--rate", "100"]
    argv += ["--trigger", "1", "--output", str(tmp_path / "demo")]
    proc = pipeline(cluster, *argv)
    deadline = time.monotonic() + PIPELINE_TIMEOUT_S
    while time.monotonic() < deadline and proc.poll() is None:
        # The progress group appears at the query's first commit: it is running.
        if rclient.exists("sensors") and rclient.xinfo_groups("sensors"):
            break
        time.sleep(1)
    jvm = _driver_jvm(proc.pid)
    assert jvm is not None, "no driver JVM found under the demo process"
    os.kill(jvm, signal.SIGKILL)
    code, text = finish(proc)
    assert code != 0, text[-3000:]
    assert "error:" in text, text[-3000:]


SHIPPED_PROBE = """
import sys
from rillet.spark.session import build_session
conf = dict(item.split("=", 1) for item in sys.argv[2:])
spark = build_session(sys.argv[1], "rillet-ship-probe", conf)
try:
    def where(_):
        import rillet.spark.reading
        return rillet.spark.reading.__file__
    print("EXECUTOR", spark.sparkContext.parallelize([0], 1).map(where).collect()[0])
    print("SHUFFLE", spark.conf.get("spark.sql.shuffle.partitions"))
finally:
    spark.stop()
"""


def test_executors_import_the_rillet_the_driver_ships(cluster):
    """Workers have no PYTHONPATH: executors must import rillet from the zip the session
    adds, and shuffle partitions must follow the cluster's parallelism, not Spark's 200."""
    env = dict(os.environ, PYTHONPATH=SRC, SPARK_LOCAL_IP="127.0.0.1")
    env["PYSPARK_PYTHON"] = sys.executable
    proc = subprocess.run(
        [sys.executable, "-c", SHIPPED_PROBE, cluster.master, *CLUSTER_CONF],
        capture_output=True,
        env=env,
        timeout=PIPELINE_TIMEOUT_S,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    executor_file = re.search(r"^EXECUTOR (.*)$", proc.stdout, re.M).group(1)
    assert "rillet.zip" in executor_file, executor_file
    shuffle = int(re.search(r"^SHUFFLE (\d+)$", proc.stdout, re.M).group(1))
    assert 2 <= shuffle <= 8
