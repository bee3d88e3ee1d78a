"""`rillet pipeline ...`: the command line of the Spark pipelines (demo, archive, ingest).

`main(argv)` takes the arguments after `pipeline` and returns an exit status; the
top-level `rillet` CLI forwards to it, and `python -m rillet.pipelines` runs it alone.
Heavy imports (pyspark) happen inside each pipeline, so `--help` is instant.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

Runner = Callable[[argparse.Namespace], int]


def conf_pair(text: str) -> tuple[str, str]:
    """`key=value` of `--conf`, as spark-submit takes it."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected key=value, got {text!r}")
    return key.strip(), value


def add_spark_arguments(parser: argparse.ArgumentParser) -> None:
    """The options every pipeline shares: where Spark runs and how it is configured."""
    parser.add_argument(
        "--master",
        default="local[*]",
        help="Spark master: local[N], spark://host:port, yarn, k8s://... (default local[*])",
    )
    parser.add_argument(
        "--conf",
        action="append",
        type=conf_pair,
        default=[],
        metavar="KEY=VALUE",
        help="a Spark configuration property, as spark-submit's --conf (repeatable)",
    )


def spark_conf(args: argparse.Namespace) -> dict[str, str]:
    return dict(getattr(args, "conf", None) or [])


def build_parser() -> argparse.ArgumentParser:
    from rillet.pipelines import archive, demo, ingest, lag

    parser = argparse.ArgumentParser(
        prog="rillet pipeline",
        description="Spark pipelines over rillet / Redis streams (need the [spark] extra and Java 17+).",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, module, text in (
        ("demo", demo, "sensor readings -> windowed aggregates -> stream + Parquet"),
        ("archive", archive, "move entries older than a cutoff to Parquet, then XTRIM them"),
        ("ingest", ingest, "load CSV / JSON lines / Parquet files into a stream"),
    ):
        sub = commands.add_parser(name, help=text, description=(module.__doc__ or text).strip())
        module.add_arguments(sub)
        add_spark_arguments(sub)
        sub.set_defaults(runner=module.run)
    sub = commands.add_parser(
        "lag", help="entries a query is behind, per stream", description=lag.__doc__
    )
    lag.add_arguments(sub)
    sub.set_defaults(runner=lag.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] == ["pipeline"]:
        args_list = args_list[1:]
    args = build_parser().parse_args(args_list)
    runner: Runner = args.runner
    from rillet.spark.session import SparkSetupError

    try:
        return runner(args)
    except SparkSetupError as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        return 2
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # one line for the user; the traceback helps nobody here
        message = str(exc).strip().splitlines()
        print(f"error: {type(exc).__name__}: {message[0] if message else ''}", file=sys.stderr)
        for line in message[1:12]:
            print(f"  {line}", file=sys.stderr)
        return 1
