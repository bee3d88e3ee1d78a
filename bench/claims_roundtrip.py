"""Stuck-message recovery (XAUTOCLAIM, XCLAIM, XPENDING): rillet beside redis-server in one run.

Task queues on Redis streams (celery, dramatiq, taskiq, faststream) recover stuck
messages with XAUTOCLAIM, or XPENDING then XCLAIM, in a loop. Over a stream of
--entries entries, all delivered to one consumer and left pending, each server answers
--ops pipelined commands of each form (batches of --batch), moving through the PEL:

    XAUTOCLAIM s g w<i%2> 0 <start> COUNT 10            (start steps 10 entries on)
    XAUTOCLAIM s g w<i%2> 0 <start> COUNT 10 JUSTID
    XCLAIM s g w<i%2> 0 <10 consecutive pending IDs>    (each claim changes the owner)
    XCLAIM s g w<i%2> 0 <10 IDs> JUSTID
    XPENDING s g <start> + 10
    XPENDING s g                                         (the summary: 3 consumers)

and the server's CPU per command is read from /proc. The servers run one after the
other, interleaved over --reps repetitions; medians and rillet/redis ratios are printed.

    .venv/bin/python bench/claims_roundtrip.py [--entries 20000] [--ops 20000] [--reps 3]
        [--baseline /path/to/other/checkout/src]
"""

from __future__ import annotations

import argparse
import statistics
import sys

from rillet.bench import procinfo
from rillet.bench.client import SyncClient, encode_command
from rillet.bench.servers import (
    ServerKind,
    baseline_kind,
    measure_interleaved,
    server_kinds,
    start_server,
)


def _autoclaim(i: int, entries: int, justid: bool) -> list[bytes]:
    start = b"%d-1" % (1 + (i * 10) % (entries - 10))
    argv = [b"XAUTOCLAIM", b"s", b"g", b"w%d" % (i % 2), b"0", start, b"COUNT", b"10"]
    return [*argv, b"JUSTID"] if justid else argv


def _claim(i: int, entries: int, justid: bool) -> list[bytes]:
    first = 1 + (i * 10) % (entries - 10)
    argv = [b"XCLAIM", b"s", b"g", b"w%d" % (i % 2), b"0",
            *[b"%d-1" % (first + j) for j in range(10)]]
    return [*argv, b"JUSTID"] if justid else argv


def _pending(i: int, entries: int, justid: bool) -> list[bytes]:
    return [b"XPENDING", b"s", b"g", b"%d-1" % (1 + (i * 10) % (entries - 10)), b"+", b"10"]


def _summary(i: int, entries: int, justid: bool) -> list[bytes]:
    return [b"XPENDING", b"s", b"g"]


FORMS = {
    "XAUTOCLAIM COUNT 10": (_autoclaim, False),
    "XAUTOCLAIM COUNT 10 JUSTID": (_autoclaim, True),
    "XCLAIM 10 IDs": (_claim, False),
    "XCLAIM 10 IDs JUSTID": (_claim, True),
    "XPENDING start + 10 (extended)": (_pending, False),
    "XPENDING s g (summary)": (_summary, False),
}


def load(client: SyncClient, entries: int) -> None:
    batch = []
    for i in range(1, entries + 1):
        batch.append([b"XADD", b"s", b"%d-1" % i, b"sensor-id", b"%d" % (i % 1000),
                      b"temperature", b"%.1f" % (20 + (i % 97) / 10)])
        if len(batch) == 1000:
            client.pipeline(batch)
            batch = []
    if batch:
        client.pipeline(batch)
    client.call("XGROUP", "CREATE", "s", "g", "0")
    client.call("XREADGROUP", "GROUP", "g", "backlog", "COUNT", str(entries), "STREAMS", "s", ">")


def run_form(client: SyncClient, make, justid: bool, entries: int, ops: int, batch: int) -> None:
    for at in range(0, ops, batch):
        payload = b"".join(encode_command(make(i, entries, justid))
                           for i in range(at, min(at + batch, ops)))
        client.send_raw(payload, min(batch, ops - at))


def measure(kind: ServerKind, args: argparse.Namespace) -> dict[str, float]:
    server = start_server(kind)
    try:
        client = server.client(timeout_s=120)
        load(client, args.entries)
        out = {}
        for name, (make, justid) in FORMS.items():
            run_form(client, make, justid, args.entries, min(args.ops, 2000), args.batch)  # warm-up
            cpu0 = procinfo.cpu_seconds(server.pid)
            run_form(client, make, justid, args.entries, args.ops, args.batch)
            out[name] = (procinfo.cpu_seconds(server.pid) - cpu0) / args.ops * 1e6
        client.close()
        return out
    finally:
        server.cleanup()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=20_000)
    parser.add_argument("--ops", type=int, default=20_000)
    parser.add_argument("--batch", type=int, default=50)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--baseline", default="", help="src dir of another rillet checkout")
    args = parser.parse_args()
    kinds = server_kinds(include_redis8=False)
    if args.baseline:
        kinds.append(baseline_kind(args.baseline))
    results = measure_interleaved(kinds, args.reps, lambda kind: measure(kind, args))
    print(f"server CPU µs per command, {args.entries:,} pending, pipelines of {args.batch}"
          f" ({args.reps} interleaved reps, medians)\n")
    shown = [kind for kind in kinds if results[kind.name]]
    print("| command | " + " | ".join(kind.label for kind in shown) + " | rillet/redis CPU |")
    print("|---|" + "---|" * len(shown) + "---|")
    for name in FORMS:
        cost = {kind.name: statistics.median(r[name] for r in results[kind.name]) for kind in shown}
        ratio = (f"{cost['rillet'] / cost['redis']:.2f}x"
                 if "rillet" in cost and "redis" in cost else "n/a")
        print(f"| {name} | " + " | ".join(f"{cost[kind.name]:.1f}" for kind in shown)
              + f" | {ratio} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
