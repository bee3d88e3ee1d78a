"""Libraries whose users depend on Lua scripts and pub/sub, run as their users run
them, against rillet and against Redis 8.2.3: redis-py's Lock and pubsub(), walrus's
lock, dramatiq's Redis broker (its dispatch script)."""

from __future__ import annotations

import time

import pytest
from redis.exceptions import LockError

from tests.libs.installed import require


def test_redis_py_lock(server):
    client = server.client()
    lock = client.lock("resource", timeout=5)
    assert lock.acquire(blocking=False)
    other = client.lock("resource", timeout=5)
    assert not other.acquire(blocking=False)
    assert lock.extend(5)
    assert lock.reacquire()
    assert lock.owned()
    lock.release()
    assert other.acquire(blocking=False)
    other.release()
    with pytest.raises(LockError):
        other.release()  # not owned any more: the release script refuses
    # A blocking acquire waits for the holder's timeout to free the key.
    short = client.lock("short", timeout=0.2)
    assert short.acquire(blocking=False)
    assert client.lock("short", timeout=5, blocking_timeout=10).acquire()
    client.close()


def _next_message(pubsub, deadline_s: float = 10.0) -> dict:
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        message = pubsub.get_message(timeout=0.5)
        if message is not None:
            return message
    raise AssertionError("no pub/sub message within the deadline")


def test_redis_py_pubsub(server):
    client = server.client()
    pubsub = client.pubsub()
    pubsub.subscribe("news")
    pubsub.psubscribe("log.*")
    assert _next_message(pubsub)["type"] == "subscribe"
    assert _next_message(pubsub)["type"] == "psubscribe"
    assert client.publish("news", "hello") == 1
    assert client.publish("log.error", "disk") == 1
    assert client.pubsub_numsub("news") == [(b"news", 1)]
    first, second = _next_message(pubsub), _next_message(pubsub)
    assert (first["type"], first["channel"], first["data"]) == ("message", b"news", b"hello")
    assert (second["type"], second["pattern"], second["channel"], second["data"]) == (
        "pmessage", b"log.*", b"log.error", b"disk")
    pubsub.close()
    # The listener thread redis-py users run (run_in_thread with a handler per channel).
    seen = []
    pubsub = client.pubsub(ignore_subscribe_messages=True)
    pubsub.subscribe(**{"jobs": lambda message: seen.append(message["data"])})
    worker = pubsub.run_in_thread(sleep_time=0.05, daemon=True)
    try:
        deadline = time.monotonic() + 10
        while client.pubsub_numsub("jobs") != [(b"jobs", 1)] and time.monotonic() < deadline:
            time.sleep(0.05)
        client.publish("jobs", "j1")
        while not seen and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        worker.stop()
        worker.join(10)
    assert seen == [b"j1"]
    pubsub.close()
    client.close()


def test_walrus_lock(server):
    walrus = require("walrus")
    db = walrus.Database(host=server.host, port=server.port)
    lock = db.lock("job", ttl=5000)
    assert lock.acquire(block=False)
    assert not db.lock("job", ttl=5000).acquire(block=False)
    assert lock.release()
    assert not lock.release()
    with db.lock("job2", ttl=5000):
        assert db.lock("job2", ttl=5000).acquire(block=False) is False


def test_dramatiq_redis_broker(server):
    dramatiq = require("dramatiq")
    from dramatiq.brokers.redis import RedisBroker

    broker = RedisBroker(host=server.host, port=server.port)
    dramatiq.set_broker(broker)
    done = []

    @dramatiq.actor(broker=broker, queue_name="q")
    def work(x):
        done.append(x)

    for i in range(3):
        work.send(i)
    worker = dramatiq.Worker(broker, worker_timeout=100)
    worker.start()
    try:
        broker.join("q", timeout=20000)
        worker.join()
    finally:
        worker.stop()
        broker.close()
    assert sorted(done) == [0, 1, 2]
