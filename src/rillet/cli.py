"""The `rillet` command line: server, pipeline, bench, check-aof, check-rdb.

`rillet server [config-file] [--name value ...] [-]` takes redis-server's flags:
any config parameter as `--name value` (values run until the next `--`),
applied after the config file and standard input (`-`), as redis-server does;
`-v`/`--version` and `-h`/`--help` answer as redis-server's.
"""

from __future__ import annotations

import gc
import os
import sys
from typing import TextIO

from rillet import REDIS_COMPAT_VERSION, __version__, serverlog
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


SERVER_USAGE = """Usage: rillet server [/path/to/redis.conf] [options] [-]
       rillet server - (read config from stdin)
       rillet server -v or --version
       rillet server -h or --help

Examples:
       rillet server (run the server with default conf)
       echo 'maxmemory 128mb' | rillet server -
       rillet server /etc/redis/6379.conf
       rillet server --port 7777
       rillet server --port 7777 --replicaof 127.0.0.1 8888
       rillet server /etc/myredis.conf --loglevel verbose -
       rillet server /etc/myredis.conf --loglevel verbose
"""


def server_version_line() -> str:
    """redis-server --version's line: its fields, rillet's name; `v=` is the Redis
    version rillet answers as (INFO's redis_version), `build=` rillet's own."""
    return (f"rillet server v={REDIS_COMPAT_VERSION} sha=00000000:0 malloc=libc bits=64"
            f" build=rillet-{__version__}")


def parse_server_args(argv: list[str], stdin: TextIO | None = None) -> Config:
    """redis-server's order: the config file, then standard input (`-`, first or last
    argument), then the `--name value` options."""
    config = Config()
    args = list(argv)
    if args and not args[0].startswith("-"):
        config.load_file(args.pop(0))
    for end in (0, -1):
        if args and args[end] == "-":
            args.pop(end)
            config.load_lines(stdin or sys.stdin, "stdin")
            break
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
    if config["cluster-enabled"] and config["replicaof"]:
        # Redis's sanity check after the whole configuration: CLUSTER REPLICATE instead.
        raise ConfigError("replicaof directive not allowed in cluster mode")
    return config


def cmd_server(argv: list[str]) -> int:
    if argv and argv[0] in ("-v", "--version"):
        print(server_version_line())
        return 0
    if argv and argv[0] in ("-h", "--help"):
        print(SERVER_USAGE, file=sys.stderr, end="")
        return 1
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
    serverlog.setup(config)
    log = serverlog.log
    # Redis's first lines, in its words with rillet's name (docs/compat.md).
    log.info("oO0OoO0OoO0Oo rillet is starting oO0OoO0OoO0Oo")
    log.info("rillet version=%s, redis_version=%s, bits=64, commit=00000000, modified=0,"
             " pid=%d, just started", __version__, REDIS_COMPAT_VERSION, os.getpid())
    if argv:
        log.info("Configuration loaded")
    else:
        log.warning("Warning: no config file specified, using the default config. In order to"
                    " specify a config file use rillet server /path/to/redis.conf")
    if config["pidfile"]:
        with open(str(config["pidfile"]), "w") as handle:
            handle.write(f"{os.getpid()}\n")
    # What importing the server builds stays (functions, classes, tables): the
    # collections the allocations would trigger meanwhile find next to nothing, at
    # ~5% of the import's work. run() collects once, then freezes (gcpolicy.py).
    gc.disable()
    try:
        from rillet.server.server import run
    finally:
        gc.enable()
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
