"""Real client libraries against rillet and Redis 8.2.3: each scenario runs on both.

rq (enqueue + SimpleWorker), arq (enqueue + burst worker), celery (Redis broker
and result backend, a solo worker), redis-om (HashModel save/get), walrus (Hash
and the rate limiter). Each library is skipped when it is not installed (the
`libs` extra); arq and redis-om pin redis-py below 6/8, so they are kept out
of the `test` extra.
"""

from __future__ import annotations

import asyncio
import uuid

import pytest
import redis


@pytest.fixture(params=["rillet", "redis8"])
def port(request, rillet_server):
    if request.param == "rillet":
        server = rillet_server
    else:
        server = request.getfixturevalue("redis8_server")
    client = redis.Redis(port=server.port)
    client.flushall()
    client.close()
    return server.port


def test_rq_enqueue_and_simple_worker(port):
    rq = pytest.importorskip("rq")
    from tests.libs.jobs import add

    conn = redis.Redis(port=port)
    queue = rq.Queue("default", connection=conn)
    job = queue.enqueue(add, 2, 3)
    assert queue.count == 1
    worker = rq.SimpleWorker([queue], connection=conn)
    assert worker.work(burst=True)
    job.refresh()
    assert job.get_status() == "finished"
    assert job.return_value() == 5
    assert queue.count == 0


def test_arq_enqueue_and_burst_worker(port):
    arq = pytest.importorskip("arq")
    from arq.connections import RedisSettings

    from tests.libs.jobs import async_add

    async def scenario() -> object:
        settings = RedisSettings(host="127.0.0.1", port=port)
        pool = await arq.create_pool(settings)
        job = await pool.enqueue_job("async_add", 4, 5)
        worker = arq.Worker(functions=[arq.func(async_add, name="async_add")], redis_settings=settings,
                            burst=True, handle_signals=False, poll_delay=0.05)
        await worker.async_run()
        result = await job.result(timeout=10)
        await worker.close()
        await pool.aclose() if hasattr(pool, "aclose") else await pool.close()
        return result

    assert asyncio.run(scenario()) == 9


def test_celery_broker_and_backend(port, rillet_server):
    celery = pytest.importorskip("celery")
    if port == rillet_server.port:
        # kombu's Redis transport takes a lock with EVALSHA and listens with SUBSCRIBE.
        pytest.skip("celery's Redis transport needs scripting and pub/sub, which rillet lacks")
    from celery.contrib.testing.worker import start_worker

    url = f"redis://127.0.0.1:{port}/0"
    app = celery.Celery(f"t{uuid.uuid4().hex[:6]}", broker=url, backend=url)
    app.conf.update(broker_connection_retry_on_startup=False, worker_hijack_root_logger=False,
                    result_expires=3600)

    @app.task(name="tests.add")
    def add(a: int, b: int) -> int:
        return a + b

    with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=10):
        assert add.delay(6, 7).get(timeout=20) == 13
        group = celery.group(add.s(i, i) for i in range(3))()
        assert group.get(timeout=20) == [0, 2, 4]


def test_redis_om_hash_model(port, monkeypatch):
    pytest.importorskip("redis_om")
    from redis_om import Field, HashModel, get_redis_connection

    conn = get_redis_connection(url=f"redis://127.0.0.1:{port}/0", decode_responses=True)

    class Customer(HashModel, index=True):
        first_name: str
        age: int = Field(index=False)

        class Meta:
            database = conn

    customer = Customer(first_name="Ada", age=36)
    customer.save()
    loaded = Customer.get(customer.pk)
    assert loaded.first_name == "Ada" and loaded.age == 36
    customer.expire(100)
    assert 0 < conn.ttl(customer.key()) <= 100
    Customer.delete(customer.pk)
    assert conn.exists(customer.key()) == 0


def test_walrus_hash_and_rate_limit(port):
    walrus = pytest.importorskip("walrus")

    db = walrus.Database(port=port)
    h = db.Hash("user:1")
    h.update(name="ada", visits="1")
    h.incr("visits", 2)
    assert h.as_dict(decode=True) == {"name": "ada", "visits": "3"}
    assert len(h) == 2 and "name" in h
    del h["name"]
    assert list(h.keys()) == [b"visits"]
    limiter = db.rate_limit("api", limit=2, per=60)
    assert [limiter.limit("client") for _ in range(3)] == [False, False, True]
    lst = db.List("queue")
    lst.extend(["a", "b"])
    zs = db.ZSet("scores")
    zs.add({"x": 1.5, "y": 2})
    assert zs.rank("y") == 1 and list(zs) == [(b"x", 1.5), (b"y", 2.0)]
    st = db.Set("tags")
    st.add("a", "b")
    assert st.members() == {b"a", b"b"} and lst.popleft() == b"a"
