"""A SparkSession set up for rillet: one call that works on a fresh machine or a cluster.

Pins the Python workers to this interpreter (Spark would use whatever `python3` is on
PATH; set PYSPARK_PYTHON when the executors' machines have it elsewhere), keeps local
masters on loopback with the UI off, quiets logging, and registers the `rillet` format
explicitly. Off local masters it also:

- sizes `spark.sql.shuffle.partitions` from the cluster's default parallelism (Spark's
  200 makes every stateful micro-batch run 200 tiny tasks; on a small cluster batch 0
  of a windowed aggregation then never finishes), unless the caller sets it;
- ships rillet to the executors: the installed package is zipped once and added with
  `addPyFile`, so workers import the driver's rillet whatever their own environment has
  (turn off with `spark.rillet.shipPackage=false`, e.g. when using `--py-files`).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any


class SparkSetupError(RuntimeError):
    """Spark cannot start here (no Java, no pyspark); the message says what to install."""


def _package_root() -> str:
    import rillet

    return str(Path(rillet.__file__).resolve().parent.parent)


def is_local(master: str) -> bool:
    return master.startswith("local")


def package_zip(directory: str | None = None) -> str:
    """A zip of the installed rillet package (pure Python sources only), for executors.

    Compiled extension modules are left out: a zip cannot import them, and the pure
    fallbacks are what executors need (the connector never uses the server's fast paths).
    """
    import tempfile
    import zipfile

    import rillet

    package = Path(rillet.__file__).resolve().parent
    target = Path(directory or tempfile.mkdtemp(prefix="rillet-pyfiles-")) / "rillet.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(package.rglob("*")):
            if path.is_dir() or "__pycache__" in path.parts:
                continue
            if path.suffix in (".py", ".typed", ".json", ".txt"):
                archive.write(path, Path("rillet") / path.relative_to(package))
    return str(target)


def default_shuffle_partitions(spark: Any) -> int:
    """Shuffle partitions for a session: the cluster's parallelism, at least 2."""
    return max(2, int(spark.sparkContext.defaultParallelism))


def prepare_environment(master: str) -> None:
    """Environment for the JVM and Python workers Spark is about to start."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        raise SparkSetupError("pyspark is not installed: pip install 'rillet[spark]'") from None
    if not os.environ.get("JAVA_HOME") and shutil.which("java") is None:
        raise SparkSetupError(
            "Spark needs a Java runtime (17 or newer): install one (e.g. apt-get install "
            "openjdk-17-jre-headless) or set JAVA_HOME"
        )
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    if is_local(master):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        # Workers of a local master are our children: make sure they import this rillet.
        root = _package_root()
        paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        if root not in paths:
            os.environ["PYTHONPATH"] = os.pathsep.join([root, *paths])


def pin_local_python(spark: Any) -> None:
    """Point a started local session's Python workers at this interpreter.

    Without PYSPARK_PYTHON, Spark runs `python3` from PATH for its workers, and a
    venv's rillet, pyspark and pyarrow are not there: the read fails with
    DATA_SOURCE_NOT_FOUND or `No module named 'rillet'`. The JVM's environment is fixed
    once it runs, but the SparkContext's `pythonExec` is what every Python function
    registered afterwards (this data source included) carries to the JVM. A local
    master's workers are this machine's, so this interpreter is right for them; on a
    cluster the executors' Python is the cluster's business (PYSPARK_PYTHON).
    """
    context = spark.sparkContext
    if not is_local(context.master) or os.environ.get("PYSPARK_PYTHON"):
        return
    context.pythonExec = context.getConf().get("spark.pyspark.python") or sys.executable


_LOG4J2 = """\
rootLogger.level = {level}
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{{HH:mm:ss}} %p %c{{1}}: %m%n
"""


def _quiet_logging_options(level: str) -> str:
    """JVM options pointing log4j2 at a config with `level`, so start-up stays quiet too."""
    import os
    import stat
    import tempfile

    # A directory only this user can write: a log4j2 config someone else planted
    # under a predictable /tmp name would run in our JVM.
    home = Path(tempfile.gettempdir()) / f"rillet-{os.getuid()}"
    home.mkdir(mode=0o700, exist_ok=True)
    info = home.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o022:
        raise RuntimeError(f"{home} is not a private directory of this user")
    path = home / f"log4j2-{level.lower()}.properties"
    # Written whole under a temporary name, then renamed: a JVM starting in another
    # process meanwhile reads the old file or the new one, never half of one.
    fd, temporary = tempfile.mkstemp(dir=home, suffix=".tmp")
    with os.fdopen(fd, "w") as out:
        out.write(_LOG4J2.format(level=level.lower()))
    os.replace(temporary, path)
    return f"-Dlog4j2.configurationFile={path.as_uri()}"


def build_session(
    master: str = "local[*]",
    app_name: str = "rillet",
    conf: Mapping[str, Any] | None = None,
    *,
    register: bool = True,
    log_level: str = "ERROR",
) -> Any:
    """Get or create a SparkSession for rillet pipelines and register the `rillet` format.

    `conf` entries override the defaults (they are Spark's `--conf key=value`);
    `log_level` also applies while the JVM starts. See the module docstring for what
    happens off local masters.
    """
    prepare_environment(master)
    import warnings

    warnings.filterwarnings("ignore", message=".*pandas >= 3.0.0.*", category=FutureWarning)
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master(master).appName(app_name)
    defaults: dict[str, Any] = {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.streaming.stopTimeout": "30s",
        "spark.driver.extraJavaOptions": _quiet_logging_options(log_level),
    }
    if is_local(master):
        defaults.update({"spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1"})
    extra = {str(k): v for k, v in (conf or {}).items()}
    ship = str(extra.pop("spark.rillet.shipPackage", "true")).lower() not in ("false", "0", "no")
    java_options = extra.pop("spark.driver.extraJavaOptions", None)
    defaults.update(extra)
    if java_options:  # keep the logging option when a caller adds its own
        defaults["spark.driver.extraJavaOptions"] += f" {java_options}"
    for key, value in defaults.items():
        builder = builder.config(key, str(value))
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(log_level)
    if "spark.sql.shuffle.partitions" not in extra:
        spark.conf.set("spark.sql.shuffle.partitions", str(default_shuffle_partitions(spark)))
    if ship and not is_local(master):
        spark.sparkContext.addPyFile(package_zip())
    if register:
        from rillet.spark.source import RilletDataSource

        spark.dataSource.register(RilletDataSource)
    return spark


@contextmanager
def spark_session(
    master: str, app_name: str, conf: Mapping[str, Any] | None = None
) -> Iterator[Any]:
    """A session for one pipeline run: reuses an active session (and leaves it running),
    otherwise builds one and stops it at the end."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        from rillet.spark.source import RilletDataSource

        active.dataSource.register(RilletDataSource)
        yield active
        return
    spark = build_session(master, app_name, conf)
    try:
        yield spark
    finally:
        spark.stop()
