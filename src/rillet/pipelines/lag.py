"""`rillet lag`: how many entries a Spark query (or a progress group) is behind, per stream.

From a query's checkpoint (`--checkpoint`, a local path or file: URI; the last
committed batch's offsets) or from the consumer group the query mirrors its progress
to (`--group`, the `progressGroup`/`consumerGroup` option; XINFO GROUPS). Prints each
stream's lag and Kafka's min/avg/max OffsetsBehindLatest; needs no Spark.
"""

from __future__ import annotations

import argparse
import json

from rillet.spark.client import stream_infos
from rillet.spark.cluster import Router, connect_routed
from rillet.spark.options import ConnectionOptions
from rillet.spark.progress import lag_summary
from rillet.spark.stream_reader import group_positions


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--url", default="redis://127.0.0.1:6379/0", help="stream server URL")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--checkpoint", help="the query's checkpoint directory")
    source.add_argument("--group", help="the query's progressGroup / consumerGroup")
    parser.add_argument("--streams", help="comma list of streams (default: the checkpoint's)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def lag_per_stream(
    client: Router, positions: dict[str, tuple[str, int | None]]
) -> dict[str, int | None]:
    """Entries added after each position (None when the server or offset has no ordinal)."""
    infos = stream_infos(client, sorted(positions))
    out: dict[str, int | None] = {}
    for stream, (_, read) in sorted(positions.items()):
        info = infos.get(stream)
        if info is None or info.entries_added is None or read is None:
            out[stream] = None
        else:
            out[stream] = max(0, info.entries_added - read)
    return out


def run(args: argparse.Namespace) -> int:
    from rillet.pipelines.archive import committed_offset

    # Each stream is asked of the master owning it, when the URL names a cluster node.
    client = connect_routed(ConnectionOptions(url=args.url, socket_timeout_s=30))
    try:
        if args.checkpoint:
            committed = committed_offset(args.checkpoint) or {}
            positions = {s: (str(p.id), p.entries_read) for s, p in committed.items()}
        else:
            streams = [s.strip() for s in (args.streams or "").split(",") if s.strip()]
            if not streams:
                raise ValueError("--group needs --streams")
            found = group_positions(client, streams, args.group)
            positions = {s: (str(p.id), p.entries_read) for s, p in found.items()}
        if args.streams:
            wanted = {s.strip() for s in args.streams.split(",")}
            positions = {s: p for s, p in positions.items() if s in wanted}
        lags = lag_per_stream(client, positions)
        # On a cluster, which master each stream was read from.
        where = {}
        if client.is_cluster:
            where = {s: "{}:{}".format(*client.address_for(s)) for s in positions}
    finally:
        client.close()
    summary = lag_summary({s: n for s, n in lags.items() if n is not None})
    if args.json:
        print(
            json.dumps({
                "streams": lags,
                **({"nodes": where} if where else {}),
                **{k: v for k, v in summary.items() if k != "perStream"},
            })
        )
        return 0
    if not positions:
        print("no committed position found")
        return 1
    for stream, (position, _) in sorted(positions.items()):
        lag = lags.get(stream)
        node = f"  on {where[stream]}" if stream in where else ""
        print(f"{stream:<32} at {position:<28} lag {'?' if lag is None else f'{lag:,}'}{node}")
    if summary:
        print(
            f"min/avg/max entries behind latest: {summary['minOffsetsBehindLatest']:,} / "
            f"{summary['avgOffsetsBehindLatest']:,.1f} / {summary['maxOffsetsBehindLatest']:,}"
        )
    return 0
