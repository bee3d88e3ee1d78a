"""Exactly-once across a resharding and a failover: a stream query's micro-batches (the
source's and the exactly-once sink's own methods, driven as Spark's MicroBatchExecution
drives them, no JVM) over a 3-master + 3-replica rillet cluster formed over its bus,
while a producer writes, one input stream's slot moves to another master between two
micro-batches, and that master is then killed with SIGKILL mid-batch. Its replica is elected, the
source rides the outage out (reconnectTimeout), and every produced entry is in the
output exactly once.

What "acknowledged" means is Redis's: a write is kept through a failover once WAIT
says a replica has it. The producer WAITs for each of its writes; the driver WAITs on
every master for the sink's output before the kill (the sink itself does not WAIT).
"""

from __future__ import annotations

import time

import pyarrow as pa
import pytest
import redis
from pyspark.sql.streaming.datasource import ReadAllAvailable

from rillet.cluster.keyslot import key_slot
from rillet.spark.cluster import connect_routed
from rillet.spark.options import ConnectionOptions, ReaderOptions, WriterOptions
from rillet.spark.stream_reader import RilletStreamReader
from rillet.spark.writer import RilletStreamWriter
from tests.cluster.test_bus import _agree, _cli, _link_up, _replica_of, _start, _stop, _until

# Serial in ./dev test, as the bus tests: six servers and a 1 s node timeout.
pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.timeout(150)]

STREAMS = [f"in:{n}" for n in range(9)]
PER_STREAM = 40  # entries per stream, written in rounds of ROUND
ROUND = 10


class Producer:
    """XADDs with explicit IDs, each confirmed by WAIT 1: an attempt that failed is
    retried, and one that had landed answers "equal or smaller", which is as good."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.router = connect_routed(ConnectionOptions(url=url, socket_timeout_s=5))
        self.written: set[tuple[str, str]] = set()

    def write(self, stream: str, seq: int, deadline_s: float = 30.0) -> None:
        entry = f"{seq}-0"
        deadline = time.monotonic() + deadline_s
        while True:
            try:
                try:
                    self.router.execute_command("XADD", stream, entry, "n", seq)
                except redis.ResponseError as exc:
                    if "equal or smaller" not in str(exc):
                        raise
                client = self.router.client_for(stream)
                need = self.replicas(client)
                if client.execute_command("WAIT", need, 2000) >= need:
                    self.written.add((stream, entry))
                    return
                if time.monotonic() > deadline:
                    raise AssertionError(f"{stream} {entry} never reached a replica")
            except (redis.ConnectionError, redis.TimeoutError, redis.ResponseError):
                if time.monotonic() > deadline:
                    raise
                self.router.close()
                time.sleep(0.2)
                self.router = connect_routed(ConnectionOptions(url=self.url,
                                                               socket_timeout_s=5))

    @staticmethod
    def replicas(client: redis.Redis) -> int:
        """1, but 0 on the elected master, whose replica was the killed node."""
        info = client.execute_command("INFO", "replication")
        return 0 if b"connected_slaves:0" in info else 1

    def round(self, number: int) -> None:
        for stream in STREAMS:
            for seq in range(number * ROUND + 1, (number + 1) * ROUND + 1):
                self.write(stream, seq)


class Query:
    """One streaming query: source micro-batches into the exactly-once sink."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.reader = RilletStreamReader(ReaderOptions.parse({
            "url": url, "streams": ",".join(STREAMS), "startingPosition": "earliest",
            "reconnectTimeout": "30s"}))
        self.offset = self.reader.initialOffset()
        self.batch_id = 0

    def sink(self, batch_id: int) -> RilletStreamWriter:
        options = WriterOptions.parse({"url": self.url, "exactlyOnce": "true",
                                       "sinkId": "fo", "batchId": str(batch_id)})
        return RilletStreamWriter(options, ["stream", "src"])

    def micro_batch(self, before_read=None) -> tuple[pa.RecordBatch, object]:
        end = self.reader.latestOffset(self.offset, ReadAllAvailable())
        parts = self.reader.partitions(self.offset, end)
        if before_read is not None:  # planned on the old master, read on the new
            before_read()
        rows = [(s, i) for part in parts for b in self.reader.read(part)
                for s, i in zip(b.column("stream").to_pylist(), b.column("id").to_pylist(),
                                strict=True)]
        batch = pa.record_batch({"stream": [s.replace("in:", "out:") for s, _ in rows],
                                 "src": [f"{s}/{i}" for s, i in rows]})
        sink = self.sink(self.batch_id)
        result = _as_a_task(lambda: sink.write(iter([batch])))
        sink.commit([result], self.batch_id)
        self.reader.commit(end)
        self.offset = end
        self.batch_id += 1
        return batch, result


def _as_a_task(write, attempts: int = 5):
    """Spark runs a failed task again (spark.task.maxFailures); the sink's markers make
    the retry add only what the failed attempt had not."""
    for attempt in range(attempts):
        try:
            return write()
        except (redis.ConnectionError, redis.TimeoutError):
            if attempt == attempts - 1:
                raise
            time.sleep(1.0)
    raise AssertionError("unreachable")


def router_address(url: str, key: str) -> tuple[str, int]:
    router = connect_routed(ConnectionOptions(url=url))
    try:
        return router.address_for(key)
    finally:
        router.close()


def _move_slot(key: str, source, target, masters) -> None:
    """`key`'s slot and keys from `source` to `target`, as redis-cli --cluster reshard
    moves a slot: IMPORTING, MIGRATING, MIGRATE ... KEYS, then NODE everywhere."""
    slot = key_slot(key.encode())
    assert target.call("CLUSTER", "SETSLOT", slot, "IMPORTING", source.id) == b"+OK\r\n"
    assert source.call("CLUSTER", "SETSLOT", slot, "MIGRATING", target.id) == b"+OK\r\n"
    client = redis.Redis(port=source.port, socket_timeout=30)
    keys = client.execute_command("CLUSTER", "GETKEYSINSLOT", slot, 1000)
    client.execute_command("MIGRATE", "127.0.0.1", target.port, "", 0, 5000, "KEYS", *keys)
    client.close()
    for node in [target, source, *(m for m in masters if m not in (source, target))]:
        assert node.call("CLUSTER", "SETSLOT", slot, "NODE", target.id) == b"+OK\r\n"


def _output(masters) -> list[str]:
    srcs: list[str] = []
    for node in masters:
        client = redis.Redis(port=node.port, socket_timeout=10)
        for n in range(len(STREAMS)):
            stream = f"out:{n}"
            if client.execute_command("CLUSTER", "COUNTKEYSINSLOT", key_slot(stream.encode())):
                srcs.extend(f[b"src"].decode() for _, f in client.xrange(stream))
        client.close()
    return srcs


def test_exactly_once_through_a_master_killed_mid_batch():
    nodes = _start(["rillet"] * 6)
    try:
        report = _cli("--cluster", "create", *(f"127.0.0.1:{n.port}" for n in nodes),
                      "--cluster-replicas", "1", "--cluster-yes")
        assert "[OK] All 16384 slots covered." in report, report
        view = _until(lambda: _agree(nodes), "six nodes agreeing, cluster_state:ok")
        masters = [n for n in nodes if view[n.id][1] == "master"]
        for master in masters:
            _until(lambda m=master: _link_up(_replica_of(view, m, nodes)), "a first sync")
        seed = masters[0]  # the URL's node stays up; another master is killed
        url = f"redis://127.0.0.1:{seed.port}"
        router = connect_routed(ConnectionOptions(url=url))
        owners = {router.address_for(s) for s in STREAMS}
        assert len(owners) == 3  # the input is spread over every shard
        victim = next(m for m in masters[1:]
                      if ("127.0.0.1", m.port) in {router.address_for(s) for s in STREAMS})
        heir = _replica_of(view, victim, nodes)
        router.close()

        producer = Producer(url)
        query = Query(url)
        producer.round(0)
        query.micro_batch()
        producer.round(1)
        # Resharding: a stream of the seed's shard moves onto the victim's before the kill,
        # so the replica elected must have it too.
        moving = next(s for s in STREAMS if router_address(url, s) == ("127.0.0.1", seed.port))
        _move_slot(moving, seed, victim, masters)
        _until(lambda: _agree(nodes), "the nodes agreeing after the move")
        query.micro_batch()
        assert router_address(url, moving) == ("127.0.0.1", victim.port)
        for master in masters:  # the output so far is acknowledged
            assert master.call("WAIT", 1, 5000) == b":1\r\n"
        producer.round(2)
        alive = [n for n in nodes if n is not victim]

        def promoted():
            view = _agree(alive)
            return view if view and view[heir.id][1] == "master" else None

        killed_batch, killed_result = query.micro_batch(before_read=victim.kill)
        assert killed_result.written == len(STREAMS) * ROUND
        _until(promoted, "the replica promoted and agreed by all")
        # The batch that saw the kill, replayed (a restarted query runs its last batch
        # again when its commit log entry was not written): every row is found already in.
        again = query.sink(2).write(iter([killed_batch]))
        assert (again.written, again.duplicates) == (0, len(STREAMS) * ROUND)
        producer.round(3)  # written through the new master
        query.micro_batch()

        want = {f"{s}/{i}" for s, i in producer.written}
        assert len(want) == len(STREAMS) * PER_STREAM
        got = _output([n for n in alive if promoted()[n.id][1] == "master"])
        assert len(got) == len(want)  # no duplicates ...
        assert set(got) == want  # ... and no loss
        query.reader.stop()
    finally:
        _stop(nodes)
