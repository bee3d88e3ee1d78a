"""The `rillet` command line: server, pipeline, bench, check-aof, check-rdb.

`rillet server [config-file] [--name value ...]` takes redis-server's flags:
any config parameter as `--name value` (values run until the next `--`),
applied after the config file, as redis-server does.
"""

from __future__ import annotations

import logging
import sys

from rillet import REDIS_COMPAT_VERSION, __version__
from rillet.config import Config, ConfigError

USAGE = """usage: rillet <command> [args]

commands:
  server [config-file] [--name value ...]   run the stream server (redis-server flags)
  pipeline <demo|archive|ingest> [...]      run a Spark pipeline
  lag (--checkpoint DIR | --group G) [...]  entries a Spark query is behind, per stream
  bench <latency|...> [...]                 benchmarks
  check-aof [--fix] FILE                    check and repair an append-only file
  check-rdb FILE                            check an RDB file (like redis-check-rdb)
  version                                   print the version
"""


def parse_server_args(argv: list[str]) -> Config:
    config = Config()
    args = list(argv)
    if args and not args[0].startswith("--"):
        config.load_file(args.pop(0))
    pairs: list[tuple[str, list[str]]] = []
    for arg in args:
        if arg.startswith("--") and len(arg) > 2:
            pairs.append((arg[2:], []))
        elif pairs:
            pairs[-1][1].append(arg)
        else:
            raise ConfigError(f"unexpected argument {arg!r}")
    for name, values in pairs:
        if config.directive(name, [name.encode(), *(v.encode() for v in values)], "command line"):
            continue
        if name not in config.params:
            raise ConfigError(f"Bad directive or wrong number of arguments: {name}")
        config.set(name, " ".join(values), startup=True)
    return config


def _setup_logging(config: Config) -> None:
    level = {
        "debug": logging.DEBUG, "verbose": logging.INFO, "notice": logging.INFO,
        "warning": logging.WARNING, "nothing": logging.CRITICAL,
    }[str(config["loglevel"])]
    logfile = str(config["logfile"])
    handler: logging.Handler = logging.FileHandler(logfile) if logfile else logging.StreamHandler()
    handler.setFormatter(logging.Formatter(
        "%(process)d:M %(asctime)s.%(msecs)03d * %(message)s", "%d %b %Y %H:%M:%S"))
    root = logging.getLogger("rillet")
    root.handlers[:] = [handler]
    root.setLevel(level)


def cmd_server(argv: list[str]) -> int:
    try:
        config = parse_server_args(argv)
    except (ConfigError, OSError) as error:
        print(f"*** FATAL CONFIG FILE ERROR (rillet {__version__}) ***\n{error}", file=sys.stderr)
        return 1
    from rillet import cpuaffinity

    try:  # (the children and the AOF thread read theirs later: all are checked now)
        for name in cpuaffinity.PARAMS:
            if config[name]:
                cpuaffinity.parse_cpulist(str(config[name]))
    except ValueError as error:
        print(error, file=sys.stderr)
        return 1
    cpuaffinity.pin(str(config["server-cpulist"]))
    _setup_logging(config)
    if config["pidfile"]:
        with open(str(config["pidfile"]), "w") as handle:
            import os

            handle.write(f"{os.getpid()}\n")
    from rillet.server.server import run

    return run(config)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help", "help"):
        print(USAGE)
        return 0 if args else 2
    command, rest = args[0], args[1:]
    if command == "server":
        return cmd_server(rest)
    if command in ("version", "--version", "-v"):
        print(f"rillet {__version__} (Redis {REDIS_COMPAT_VERSION} compatible)")
        return 0
    if command in ("pipeline", "lag"):
        from rillet.pipelines.cli import main as pipeline_main

        return pipeline_main(rest if command == "pipeline" else ["lag", *rest])
    if command == "bench":
        from rillet.bench.cli import main as bench_main

        return bench_main(rest)
    if command == "check-aof":
        from rillet.persistence.check import main as check_main

        return check_main(rest)
    if command == "check-rdb":
        from rillet.persistence.check_rdb import main as check_rdb_main

        return check_rdb_main(rest)
    print(USAGE, file=sys.stderr)
    return 2
