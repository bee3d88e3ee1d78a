"""Real client libraries as their users run them, against rillet and Redis 8.2.3: each
scenario runs on both (the `server` fixture).

rq (enqueue + SimpleWorker), celery (Redis broker and result backend, a solo worker
thread), redis-om (HashModel save/get), walrus (Hash, rate limiter, containers).
arq pins an old redis-py and lives in pinned/.
"""

from __future__ import annotations

import uuid

from tests.libs.installed import require


def test_rq_enqueue_and_simple_worker(server):
    rq = require("rq")
    from tests.libs.jobs import add

    conn = server.client()
    queue = rq.Queue("default", connection=conn)
    job = queue.enqueue(add, 2, 3)
    assert queue.count == 1
    worker = rq.SimpleWorker([queue], connection=conn)
    assert worker.work(burst=True)
    job.refresh()
    assert job.get_status() == "finished"
    assert job.return_value() == 5
    assert queue.count == 0
    assert rq.Queue("default", connection=conn).finished_job_registry.get_job_ids() == [job.id]
    conn.close()


def test_celery_broker_and_backend(server):
    celery = require("celery")
    from celery.contrib.testing.worker import start_worker

    url = f"{server.url}/0"
    app = celery.Celery(f"t{uuid.uuid4().hex[:6]}", broker=url, backend=url)
    app.conf.update(broker_connection_retry_on_startup=False, worker_hijack_root_logger=False,
                    result_expires=3600, broker_transport_options={"visibility_timeout": 60})

    @app.task(name=f"{app.main}.add")
    def add(a: int, b: int) -> int:
        return a + b

    # A solo-pool worker in a thread; every wait below is bounded.
    with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=10):
        assert add.delay(6, 7).get(timeout=30) == 13
        group = celery.group(add.s(i, i) for i in range(3))()
        assert group.get(timeout=30) == [0, 2, 4]


def test_redis_om_hash_model(server):
    redis_om = require("redis_om")
    from redis_om import Field, HashModel

    conn = redis_om.get_redis_connection(url=f"{server.url}/0", decode_responses=True)

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
    conn.close()


def test_walrus_hash_and_rate_limit(server):
    walrus = require("walrus")

    db = walrus.Database(host=server.host, port=server.port)
    h = db.Hash("user:1")
    h.update(name="ada", visits="1")
    h.incr("visits", 2)
    assert h.as_dict(decode=True) == {"name": "ada", "visits": "3"}
    assert len(h) == 2 and "name" in h
    del h["name"]
    assert list(h.keys()) == [b"visits"]
    limiter = db.rate_limit("api", limit=2, per=60)
    assert [limiter.limit("client") for _ in range(3)] == [False, False, True]
    # The Lua flavour of the rate limiter (EVALSHA over a list).
    lua_limiter = db.rate_limit_lua("api-lua", limit=2, per=60)
    assert [lua_limiter.limit("client") for _ in range(3)] == [False, False, True]
    lst = db.List("queue")
    lst.extend(["a", "b"])
    zs = db.ZSet("scores")
    zs.add({"x": 1.5, "y": 2})
    assert zs.rank("y") == 1 and list(zs) == [(b"x", 1.5), (b"y", 2.0)]
    st = db.Set("tags")
    st.add("a", "b")
    assert st.members() == {b"a", b"b"} and lst.popleft() == b"a"
