"""The connector on a Redis Cluster, given one node's URL: two rillet masters that know
each other through their nodes.conf, and three Redis 8.2.3 masters joined by
`redis-cli --cluster create`. The readers and writers are called directly (no JVM) but
for one Spark read and write; slots are moved with CLUSTER SETSLOT and MIGRATE between
the micro-batches of a stream reader, which must go on with no entry lost or repeated.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import time

import pyarrow as pa
import pytest
import redis
from pyspark.sql.streaming.datasource import ReadAllAvailable

from rillet.cluster.keyslot import key_slot
from rillet.pipelines import lag
from rillet.spark.batch_reader import RilletBatchReader
from rillet.spark.cluster import Router, connect_routed
from rillet.spark.options import ConnectionOptions, ReaderOptions, WriterOptions
from rillet.spark.stream_reader import RilletStreamReader
from rillet.spark.writer import RilletWriter
from tests.cluster import support
from tests.helpers.wire import Wire

pytestmark = pytest.mark.spark

A = "a" * 40
B = "b" * 40


def _line(name: str, port: int, flags: str, slots: str, shard: str) -> str:
    address = ":0@0" if "myself" in flags else f"127.0.0.1:{port}@{port + 10000}"
    return f"{name} {address},,tls-port=0,shard-id={shard * 40} {flags} - 0 0 1 connected {slots}\n"


class Nodes:
    def __init__(self, kind: str, handles) -> None:
        self.kind = kind
        self.handles = handles
        self.clients = [redis.Redis(port=h.port, socket_timeout=30) for h in handles]

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.handles[0].port}"

    def owner(self, key: str) -> redis.Redis:
        """The node whose CLUSTER SHARDS slot ranges hold `key` (each node is asked)."""
        slot = key_slot(key.encode())
        for client in self.clients:
            if client.execute_command("CLUSTER", "COUNTKEYSINSLOT", slot) and client.exists(key):
                return client
        raise AssertionError(f"no node holds {key!r}")

    def flush(self) -> None:
        for client in self.clients:
            client.flushall()

    def stop(self) -> None:
        for client in self.clients:
            client.close()
        for handle in self.handles:
            handle.stop()


def _wait_ok(handles) -> None:
    for handle in handles:
        wire = Wire(handle.port)
        support.wait_state(wire, b"ok", timeout_s=30)
        wire.close()


def rillet_cluster() -> Nodes:
    a_port, b_port = support.free_cluster_port(), support.free_cluster_port()
    end = "vars currentEpoch 2 lastVoteEpoch 0\n"
    started = time.monotonic()
    a = support.start("rillet", port=a_port, dir=support.with_nodes_conf(
        _line(A, a_port, "myself,master", "0-8191", "1")
        + _line(B, b_port, "master", "8192-16383", "2") + end))
    b = support.start("rillet", port=b_port, dir=support.with_nodes_conf(
        _line(A, a_port, "master", "0-8191", "1")
        + _line(B, b_port, "myself,master", "8192-16383", "2") + end))
    support.past_writable_delay(started)
    _wait_ok([a, b])
    return Nodes("rillet", [a, b])


def redis_cluster() -> Nodes:
    cli = shutil.which("redis-cli")
    if cli is None:
        pytest.skip("redis-cli not available")
    handles = [support.start("redis8") for _ in range(3)]
    try:
        done = subprocess.run(
            [cli, "--cluster", "create", *(f"127.0.0.1:{h.port}" for h in handles),
             "--cluster-yes"], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stdout + done.stderr
        _wait_ok(handles)
    except BaseException:
        for handle in handles:
            handle.stop()
        raise
    return Nodes("redis8", handles)


@pytest.fixture(scope="module", params=["rillet", "redis8"])
def nodes(request):
    handle = rillet_cluster() if request.param == "rillet" else redis_cluster()
    yield handle
    handle.stop()


@pytest.fixture
def cluster(nodes):
    nodes.flush()
    return nodes


def routed(url: str) -> Router:
    return connect_routed(ConnectionOptions(url=url, socket_timeout_s=30))


def add(router: Router, stream: str, first: int, last: int) -> None:
    pipe = router.pipeline()
    for i in range(first, last + 1):
        pipe.execute_command("XADD", stream, f"{i}-0", "n", str(i))
    pipe.execute()


def move_slot(nodes: Nodes, key: str) -> None:
    """Migrate `key`'s slot (and keys) to another master, as redis-cli --cluster reshard
    does: IMPORTING, MIGRATING, MIGRATE ... KEYS, then NODE on both."""
    slot = key_slot(key.encode())
    source = nodes.owner(key)
    target = next(c for c in nodes.clients if c is not source)
    source_id = source.execute_command("CLUSTER", "MYID").decode()
    target_id = target.execute_command("CLUSTER", "MYID").decode()
    target.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", source_id)
    source.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", target_id)
    keys = source.execute_command("CLUSTER", "GETKEYSINSLOT", slot, 1000)
    migrate(source, target, *keys)
    for client in nodes.clients:
        client.execute_command("CLUSTER", "SETSLOT", slot, "NODE", target_id)


def migrate(source: redis.Redis, target: redis.Redis, *keys: bytes | str) -> None:
    port = target.connection_pool.connection_kwargs["port"]
    # In a cluster MIGRATE restores with RESTORE-ASKING, which the importing target
    # accepts before it owns the slot.
    source.execute_command("MIGRATE", "127.0.0.1", port, "", 0, 5000, "KEYS", *keys)


def read_batch(url: str, **options) -> pa.Table:
    raw = {"url": url, **{k: str(v) for k, v in options.items()}}
    reader = RilletBatchReader(ReaderOptions.parse(raw, batch=True))
    return pa.Table.from_batches([b for p in reader.partitions() for b in reader.read(p)])


STREAMS = [f"shard:{n}" for n in range(12)]


def test_batch_read_covers_every_shard(cluster):
    router = routed(cluster.url)
    assert router.is_cluster
    for n, stream in enumerate(STREAMS):
        add(router, stream, 1, 20 + n)
    router.close()
    holders = {id(cluster.owner(s)) for s in STREAMS}
    assert len(holders) == len(cluster.clients)  # the streams are spread over every master
    want = sorted((s, f"{i}-0") for n, s in enumerate(STREAMS) for i in range(1, 21 + n))
    for options in ({"streams": ",".join(STREAMS)}, {"streams": "shard:*"},
                    {"streams": "shard:*", "partitionsPerStream": 3}):
        table = read_batch(cluster.url, **options)
        got = sorted(zip(table.column("stream").to_pylist(), table.column("id").to_pylist(),
                         strict=True))
        assert got == want, options


def test_sink_writes_each_row_to_its_slots_master(cluster):
    streams = [f"out:{n}" for n in range(8)] + ["{tagged}a", "{tagged}b"]
    batch = pa.record_batch({"stream": streams * 3, "v": [str(i) for i in range(30)]})
    for exactly_once in (False, True):
        options = {"url": cluster.url, "exactlyOnce": str(exactly_once).lower(),
                   "sinkId": "t", "batchId": "0"}
        sink = RilletWriter(WriterOptions.parse(options), batch.schema.names)
        result = sink.write(iter([batch]))
        assert (result.written, result.duplicates) == (30, 0)
        if exactly_once:
            # A replayed task adds nothing: each slot's chunk has its marker there.
            again = sink.write(iter([batch]))
            assert (again.written, again.duplicates) == (0, 30)
            sink.commit([result])
    for stream in streams:
        assert cluster.owner(stream).xlen(stream) == 6
    assert cluster.owner("{tagged}a") is cluster.owner("{tagged}b")
    assert len({id(cluster.owner(s)) for s in streams}) == len(cluster.clients)


def test_moved_and_ask_are_followed(cluster):
    router = routed(cluster.url)
    add(router, "hop", 1, 5)
    other = next(c for c in cluster.clients if c is not cluster.owner("hop"))
    port = other.connection_pool.connection_kwargs["port"]
    slot = key_slot(b"hop")
    router._slots[slot] = ("127.0.0.1", port)  # a stale map: that node answers -MOVED
    assert len(router.execute_command("XRANGE", "hop", "-", "+")) == 5
    assert router._slots[slot] != ("127.0.0.1", port)
    # Mid-migration: the key is already on the importing node, which the source's -ASK
    # names; the map keeps the source until the slot is handed over.
    source = cluster.owner("hop")
    target_id = other.execute_command("CLUSTER", "MYID").decode()
    other.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING",
                          source.execute_command("CLUSTER", "MYID").decode())
    source.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", target_id)
    migrate(source, other, "hop")
    before = router._slots[slot]
    assert len(router.execute_command("XRANGE", "hop", "-", "+")) == 5
    pipe = router.pipeline()
    pipe.execute_command("XLEN", "hop")
    pipe.execute_command("XLEN", "shard:0")
    assert pipe.execute() == [5, 0]
    assert read_batch(cluster.url, streams="hop").num_rows == 5  # the executor's decoder
    assert router._slots[slot] == before
    for client in cluster.clients:
        client.execute_command("CLUSTER", "SETSLOT", slot, "NODE", target_id)
    assert len(router.execute_command("XRANGE", "hop", "-", "+")) == 5
    assert router._slots[slot] == ("127.0.0.1", port)
    router.close()


def test_stream_reader_goes_on_across_a_migration(cluster):
    router = routed(cluster.url)
    add(router, "moving", 1, 100)
    add(router, "staying:{x}", 1, 10)
    reader = RilletStreamReader(ReaderOptions.parse(
        {"url": cluster.url, "streams": "moving,staying:{x}", "startingPosition": "earliest"}))
    seen: list[tuple[str, str]] = []

    def micro_batch(start, move_before_read=False):
        end = reader.latestOffset(start, ReadAllAvailable())
        parts = reader.partitions(start, end)
        if move_before_read:  # planned on the old owner, read on the new
            move_slot(cluster, "moving")
        for part in parts:
            for batch in reader.read(part):
                seen.extend(zip(batch.column("stream").to_pylist(),
                                batch.column("id").to_pylist(), strict=True))
        reader.commit(end)
        return end

    offset = micro_batch(reader.initialOffset())
    move_slot(cluster, "moving")  # between two micro-batches
    add(router, "moving", 101, 150)
    add(router, "staying:{x}", 11, 20)
    offset = micro_batch(offset)
    add(router, "moving", 151, 200)
    offset = micro_batch(offset, move_before_read=True)
    assert offset["moving"] == {"id": "200-0", "entriesRead": 200}
    moving = [i for s, i in seen if s == "moving"]
    assert moving == [f"{i}-0" for i in range(1, 201)]  # once each, in order
    assert [i for s, i in seen if s == "staying:{x}"] == [f"{i}-0" for i in range(1, 21)]
    reader.stop()
    router.close()


def test_exactly_once_markers_move_with_their_slot(cluster):
    """A task replayed after its streams' slot moved finds its markers on the new master:
    they share the slot (a hash tag), so MIGRATE takes them along."""
    batch = pa.record_batch({"stream": ["eo:{m}"] * 5, "v": [str(i) for i in range(5)]})
    options = {"url": cluster.url, "exactlyOnce": "true", "sinkId": "mv", "batchId": "3"}
    first = RilletWriter(WriterOptions.parse(options), batch.schema.names).write(iter([batch]))
    assert first.written == 5
    before = cluster.owner("eo:{m}")
    move_slot(cluster, "eo:{m}")
    assert cluster.owner("eo:{m}") is not before
    again = RilletWriter(WriterOptions.parse(options), batch.schema.names).write(iter([batch]))
    assert (again.written, again.duplicates) == (0, 5)
    assert cluster.owner("eo:{m}").xlen("eo:{m}") == 5


def test_a_lost_master_sends_the_router_to_the_new_map(cluster):
    """Failover, as the connector sees it: the node its map names stops answering; the
    connection error refreshes the map from a node that answers, and the reader's
    reconnecting retries there."""
    from rillet.spark.client import reconnecting

    router = routed(cluster.url)
    add(router, "fo", 1, 3)
    slot = key_slot(b"fo")
    router._slots[slot] = ("127.0.0.1", support.free_cluster_port())  # nobody listens
    options = ReaderOptions.parse({"url": cluster.url, "streams": "fo"})
    assert reconnecting(lambda: router.execute_command("XLEN", "fo"), options, "xlen") == 3
    assert router.address_for("fo")[1] in {h.port for h in cluster.handles}
    router.close()


def test_lag_asks_each_streams_master(cluster, capsys):
    router = routed(cluster.url)
    streams = [f"lagging:{n}" for n in range(6)]
    for stream in streams:
        add(router, stream, 1, 10)
        router.execute_command("XGROUP", "CREATE", stream, "q", "4-0", "ENTRIESREAD", 4)
    router.close()
    args = argparse.Namespace(url=cluster.url, checkpoint=None, group="q",
                              streams=",".join(streams), json=True)
    assert lag.run(args) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["streams"] == dict.fromkeys(streams, 6)
    ports = {h.port for h in cluster.handles}
    assert {int(n.rsplit(":", 1)[1]) for n in report["nodes"].values()} == ports


def test_tables_of_hashes_span_the_shards(cluster):
    from pyspark.sql.types import StringType, StructField, StructType

    from rillet.spark.hashes import HashTableReader, HashTableWriter
    from rillet.spark.options import TableOptions

    raw = {"url": cluster.url, "table": "person", "keyColumn": "name"}
    batch = pa.record_batch({"name": [f"p{n}" for n in range(20)],
                             "city": [f"c{n}" for n in range(20)]})
    for overwrite in (False, True):  # overwrite first deletes the table on every master
        sink = HashTableWriter(TableOptions.parse(raw, writing=True), batch.schema.names,
                               overwrite)
        assert sink.write(iter([batch])).written == 20
    assert len({id(cluster.owner(f"person:p{n}")) for n in range(20)}) == len(cluster.clients)
    schema = StructType([StructField("name", StringType()), StructField("city", StringType())])
    reader = HashTableReader(TableOptions.parse(raw), schema)
    table = pa.Table.from_batches([b for p in reader.partitions() for b in reader.read(p)])
    assert sorted(zip(table.column("name").to_pylist(), table.column("city").to_pylist(),
                      strict=True)) == sorted((f"p{n}", f"c{n}") for n in range(20))


class FakeNode:
    """Answers CLUSTER SHARDS / SLOTS as told (an exception is raised)."""

    def __init__(self, **replies) -> None:
        self.replies = replies

    def execute_command(self, *args):
        reply = self.replies[args[1].lower()]
        if isinstance(reply, Exception):
            raise reply
        return reply


SHARDS = [
    [b"slots", [0, 99, 200, 16383], b"nodes", [
        [b"id", b"r" * 40, b"port", 7002, b"ip", b"127.0.0.1", b"endpoint", b"127.0.0.1",
         b"role", b"replica", b"health", b"online"],
        [b"id", b"m" * 40, b"port", 7000, b"ip", b"10.0.0.1", b"endpoint", b"?",
         b"role", b"master", b"health", b"online"]]],
    [b"slots", [100, 199], b"nodes", [
        [b"id", b"n" * 40, b"port", 7001, b"tls-port", 7101, b"ip", b"127.0.0.1",
         b"endpoint", b"node-b", b"role", b"master", b"health", b"online"]]],
]


def test_discovery_from_shards_slots_or_nothing():
    from rillet.spark.cluster import discover

    table = discover(FakeNode(shards=SHARDS), "seed", tls=False)
    assert table[0] == table[16383] == ("10.0.0.1", 7000)  # the master; `?` endpoint: its ip
    assert table[150] == ("node-b", 7001)
    assert discover(FakeNode(shards=SHARDS), "seed", tls=True)[150] == ("node-b", 7101)
    # Before 7.0 there is no SHARDS: CLUSTER SLOTS, whose empty host is the seed's.
    slots = [[0, 8191, [b"", 7000, b"m" * 40]], [8192, 16383, [b"127.0.0.2", 7001, b"n" * 40],
                                                 [b"127.0.0.3", 7002, b"r" * 40]]]
    unknown = redis.ResponseError("unknown subcommand 'SHARDS'. Try CLUSTER HELP.")
    table = discover(FakeNode(shards=unknown, slots=slots), "seed", tls=False)
    assert (table[0], table[16383]) == (("seed", 7000), ("127.0.0.2", 7001))
    # Just after a failover a shard can name its failed old master first, with no
    # slots: those ranges come from CLUSTER SLOTS.
    orphaned = [SHARDS[0], [b"slots", [], b"nodes", [
        [b"id", b"o" * 40, b"port", 7003, b"ip", b"127.0.0.1", b"role", b"master",
         b"health", b"fail"],
        [b"id", b"p" * 40, b"port", 7004, b"ip", b"127.0.0.1", b"role", b"master",
         b"health", b"online"]]]]
    table = discover(FakeNode(shards=orphaned, slots=[[100, 199, [b"127.0.0.1", 7004]]]),
                     "seed", tls=False)
    assert (table[0], table[150]) == (("10.0.0.1", 7000), ("127.0.0.1", 7004))
    disabled = redis.ResponseError("This instance has cluster support disabled")
    assert discover(FakeNode(shards=disabled), "seed", tls=False) is None
    assert discover(FakeNode(shards=unknown, slots=unknown), "seed", tls=False) is None
    # A user who may not run CLUSTER (redis-py drops NOPERM from the message).
    refused = redis.exceptions.NoPermissionError("this user has no permissions to run it")
    assert discover(FakeNode(shards=refused, slots=refused), "seed", tls=False) is None
    with pytest.raises(redis.ResponseError, match="LOADING"):
        discover(FakeNode(shards=redis.ResponseError("LOADING")), "seed", tls=False)


def test_a_plain_server_keeps_one_client(url, client):
    router = routed(url)
    assert not router.is_cluster
    assert router.masters() == [router.seed]
    client.xadd("p", {"a": "1"})
    assert router.execute_command("XLEN", "p") == 1
    router.close()


def test_spark_writes_and_reads_every_shard(cluster, spark):
    if cluster.kind != "rillet":
        pytest.skip("one Spark round trip is enough (the JVM's time); Redis is covered above")
    # Two streams, one on each master: each stream read is a task (a Python worker).
    streams = [support.key_in(0, 8191, "sp:"), support.key_in(8192, 16383, "sp:")]
    rows = [(streams[n % 2], str(n)) for n in range(40)]
    frame = spark.createDataFrame(rows, "stream string, v string").coalesce(1)
    (frame.write.format("rillet").option("url", cluster.url).option("exactlyOnce", "true")
     .option("sinkId", "spark").option("batchId", "0").mode("append").save())
    assert {id(cluster.owner(s)) for s in streams} == {id(c) for c in cluster.clients}
    read = spark.read.format("rillet").option("url", cluster.url).option("streams", "sp:*").load()
    got = sorted((r["stream"], r["fields"]["v"]) for r in read.collect())
    assert got == sorted(rows)
