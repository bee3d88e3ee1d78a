"""Consumer groups end to end through redis-py on a real rillet server.

Blocking reads over real sockets (woken by another client's XADD, FIFO among
parked consumers, timeouts, NOGROUP when the group or key goes away) and the
seeds' consumer pattern: read your own history from 0, switch to '>', XACK,
and recover a dead consumer's messages with XAUTOCLAIM.
"""

from __future__ import annotations

import threading
import time

import pytest
import redis

WAIT_S = 10.0


def wait_blocked(r: redis.Redis, count: int) -> None:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if int(r.info("clients")["blocked_clients"]) >= count:
            return
        time.sleep(0.01)
    raise AssertionError(f"{count} clients never blocked")


class Reader(threading.Thread):
    """Runs one blocking XREADGROUP on its own connection and keeps the outcome."""

    def __init__(self, server, consumer: str, block_ms: int = 0, count: int | None = None,
                 group: str = "g", key: str = "s") -> None:
        super().__init__(daemon=True)
        self.client = server.client()
        self.args = dict(groupname=group, consumername=consumer, streams={key: ">"},
                         block=block_ms, count=count)
        self.result = None
        self.error: Exception | None = None

    def run(self) -> None:
        try:
            self.result = self.client.xreadgroup(**self.args)
        except Exception as error:  # noqa: BLE001 - the test inspects it
            self.error = error
        finally:
            self.client.close()

    def outcome(self):
        self.join(WAIT_S)
        assert not self.is_alive(), "reader still blocked"
        return self.error if self.error is not None else self.result


def ids(reply) -> list[bytes]:
    return [entry_id for _, entries in reply for entry_id, _ in entries]


def test_blocked_reader_is_woken_by_xadd_from_another_client(r, rillet_server):
    r.xgroup_create("s", "g", "$", mkstream=True)
    reader = Reader(rillet_server, "alice", count=10)
    reader.start()
    wait_blocked(r, 1)
    r.xadd("s", {"f": "v"}, id="1-0")
    assert ids(reader.outcome()) == [b"1-0"]
    assert r.xpending("s", "g")["consumers"] == [{"name": b"alice", "pending": 1}]


def test_blocked_readers_are_served_first_come_first_served(r, rillet_server):
    r.xgroup_create("s", "g", "$", mkstream=True)
    readers = []
    for name in ("c1", "c2", "c3"):
        reader = Reader(rillet_server, name)
        reader.start()
        wait_blocked(r, len(readers) + 1)
        readers.append(reader)
    for n in range(1, 4):
        r.xadd("s", {"n": n}, id=f"{n}-0")
        assert ids(readers[n - 1].outcome()) == [f"{n}-0".encode()]
    assert int(r.info("clients")["blocked_clients"]) == 0


def test_one_entry_wakes_one_reader_the_others_keep_waiting(r, rillet_server):
    r.xgroup_create("s", "g", "$", mkstream=True)
    first, second = Reader(rillet_server, "a"), Reader(rillet_server, "b", block_ms=300)
    first.start()
    wait_blocked(r, 1)
    second.start()
    wait_blocked(r, 2)
    r.xadd("s", {"f": "v"}, id="1-0")
    assert ids(first.outcome()) == [b"1-0"]
    assert not second.outcome()  # timed out (nil): nothing new was left for it


def test_block_timeout_returns_nil(r):
    r.xgroup_create("s", "g", "$", mkstream=True)
    started = time.monotonic()
    assert not r.xreadgroup("g", "c", {"s": ">"}, block=100)  # nil
    assert time.monotonic() - started >= 0.05


def test_block_without_count_returns_waiting_entries_at_once(r):
    r.xgroup_create("s", "g", "0", mkstream=True)
    for n in range(1, 4):
        r.xadd("s", {"n": n}, id=f"{n}-0")
    assert ids(r.xreadgroup("g", "c", {"s": ">"}, block=0)) == [b"1-0", b"2-0", b"3-0"]


@pytest.mark.parametrize("action", ["destroy", "delete"])
def test_group_or_key_removed_while_blocked_gives_nogroup(r, rillet_server, action):
    r.xgroup_create("s", "g", "$", mkstream=True)
    reader = Reader(rillet_server, "c")
    reader.start()
    wait_blocked(r, 1)
    if action == "destroy":
        assert r.xgroup_destroy("s", "g") == 1
    else:
        assert r.delete("s") == 1
    error = reader.outcome()
    assert isinstance(error, redis.ResponseError)
    assert str(error) == (
        "NOGROUP No such key 's' or consumer group 'g' in XREADGROUP with GROUP option"
    )


def test_multi_with_block_does_not_block(r):
    r.xgroup_create("s", "g", "$", mkstream=True)
    pipe = r.pipeline(transaction=True)
    pipe.xreadgroup("g", "c", {"s": ">"}, block=0)
    assert [bool(reply) for reply in pipe.execute()] == [False]


def test_seed_consumer_pattern_recovers_dead_consumer_without_loss(r, rillet_server):
    """The seeds' Ruby consumer, in redis-py: history from 0, then '>', XACK; a
    consumer dies holding messages and another one takes them with XAUTOCLAIM."""
    total = 60
    r.xgroup_create("jobs", "workers", "$", mkstream=True)
    for n in range(total):
        r.xadd("jobs", {"job": n})
    processed: dict[bytes, str] = {}
    acked: list[bytes] = []
    lock = threading.Lock()

    def process(consumer: str, client: redis.Redis, reply) -> None:
        for _, entries in reply or []:
            for entry_id, fields in entries:
                if fields is None:
                    continue
                with lock:
                    assert entry_id not in processed, f"{entry_id} processed twice"
                    processed[entry_id] = consumer
                assert client.xack("jobs", "workers", entry_id) == 1
                with lock:
                    acked.append(entry_id)

    def consumer_loop(name: str, die_after: int | None = None) -> None:
        client = rillet_server.client()
        last_id = "0"  # first our own history, then new messages
        check_backlog = True
        taken = 0
        while True:
            stream_id = last_id if check_backlog else ">"
            reply = client.xreadgroup("workers", name, {"jobs": stream_id}, count=5,
                                      block=200)
            if not reply:
                break
            entries = reply[0][1]
            if check_backlog and not entries:
                check_backlog = False  # history drained: switch to new messages
                continue
            if die_after is not None:
                # A consumer that crashes mid-work: takes messages, acks none.
                taken += len(entries)
                if taken >= die_after:
                    client.close()
                    return
                continue
            process(name, client, reply)
            if check_backlog:
                last_id = entries[-1][0]
        client.close()

    dead = threading.Thread(target=consumer_loop, args=("dead", 10))
    dead.start()
    dead.join(WAIT_S)
    workers = [threading.Thread(target=consumer_loop, args=(f"w{i}",)) for i in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(WAIT_S * 3)
    pending = r.xpending("jobs", "workers")
    assert pending["pending"] == 10
    assert pending["consumers"] == [{"name": b"dead", "pending": 10}]
    # The dead consumer's messages wait; a survivor claims them by idle time.
    time.sleep(0.05)
    rescuer = rillet_server.client()
    cursor = "0-0"
    while True:
        cursor, claimed, deleted = rescuer.xautoclaim("jobs", "workers", "rescuer", 20, cursor,
                                                      count=3)
        assert deleted == []
        process("rescuer", rescuer, [(b"jobs", claimed)])
        if cursor == b"0-0":
            break
    rescuer.close()
    assert len(processed) == total and sorted(acked) == sorted(processed)
    assert r.xpending("jobs", "workers")["pending"] == 0
    assert {c["name"]: c["pending"] for c in r.xinfo_consumers("jobs", "workers")} == {
        b"dead": 0, b"rescuer": 0, b"w0": 0, b"w1": 0}
    group = r.xinfo_groups("jobs")[0]
    assert (group["lag"], group["entries-read"]) == (0, total)


def test_consumer_survives_reconnect_and_reads_its_history(r, rillet_server):
    r.xgroup_create("s", "g", "0", mkstream=True)
    r.xadd("s", {"f": "v"}, id="1-0")
    first = rillet_server.client()
    assert ids(first.xreadgroup("g", "alice", {"s": ">"})) == [b"1-0"]
    first.close()
    again = rillet_server.client()
    assert ids(again.xreadgroup("g", "alice", {"s": "0"})) == [b"1-0"]
    assert again.xpending_range("s", "g", "-", "+", 10)[0]["times_delivered"] == 2
    again.close()
