"""Command line of `rillet bench`: `latency` (the seeds' test) and `run` (the whole suite).

The lead's `rillet` CLI forwards `rillet bench ARGS` to `main(ARGS)`.
"""

from __future__ import annotations

import argparse

from rillet.bench import latency


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="rillet bench", description="Benchmarks: rillet side by side with redis-server."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    lat = sub.add_parser(
        "latency",
        help="end-to-end latency test (producers, consumer group, XACK) against any server",
        description=latency.__doc__,
    )
    latency.add_arguments(lat)
    run = sub.add_parser(
        "run", help="the side-by-side suite (the same as bench/run)",
        description="Start rillet and redis-server and compare them; write RESULTS.md and plots.",
    )
    from rillet.bench import suite

    suite.add_arguments(run)
    args = parser.parse_args(argv)
    if args.command == "latency":
        return latency.run_from_args(args)
    return suite.run_from_args(args, argv[1:])
