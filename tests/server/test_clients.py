"""End to end through real clients: redis-py sync and asyncio, RESP2 and RESP3, pipelines."""

from __future__ import annotations

import asyncio

import pytest
import redis
import redis.asyncio as aioredis


@pytest.mark.parametrize("protocol", [2, 3])
def test_redis_py_sync(rillet_server, protocol):
    client = redis.Redis(port=rillet_server.port, protocol=protocol)
    assert client.ping() is True
    assert client.set("greeting", "hello") is True
    assert client.get("greeting") == b"hello"
    assert client.incr("counter") == 1
    assert client.exists("greeting", "counter", "missing") == 2
    assert client.type("greeting") == b"string"
    assert client.delete("greeting", "counter") == 2
    info = client.info("server")
    assert info["redis_version"] == "8.8.0"
    client.close()


@pytest.mark.parametrize("protocol", [2, 3])
def test_redis_py_asyncio(rillet_server, protocol):
    async def main():
        client = aioredis.Redis(port=rillet_server.port, protocol=protocol)
        assert await client.ping() is True
        await client.set("k", "v")
        assert await client.get("k") == b"v"
        await client.aclose()

    asyncio.run(main())


def test_pipeline_replies_in_order(r):
    pipe = r.pipeline(transaction=False)
    for i in range(200):
        pipe.set(f"k{i}", i)
        pipe.get(f"k{i}")
    results = pipe.execute()
    assert results[1::2] == [str(i).encode() for i in range(200)]


def test_transaction_and_watch(rillet_server, r):
    r.set("balance", 10)
    with r.pipeline() as pipe:
        pipe.watch("balance")
        other = rillet_server.client()
        other.incr("balance")
        other.close()
        pipe.multi()
        pipe.incr("balance")
        with pytest.raises(redis.WatchError):
            pipe.execute()
    assert r.get("balance") == b"11"


def test_select_and_dbsize(rillet_server):
    client = redis.Redis(port=rillet_server.port, db=3)
    client.flushdb()
    client.set("a", 1)
    assert client.dbsize() == 1
    assert redis.Redis(port=rillet_server.port, db=0).get("a") is None
    client.flushdb()
    client.close()


# Newer redis-py deprecates lib_name/lib_version for driver_info; they are what
# older clients still send (CLIENT SETINFO on connect), so they are what we test.
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_client_setinfo_on_connect_is_recorded(rillet_server):
    client = redis.Redis(port=rillet_server.port, lib_name="mylib", lib_version="1.2")
    info = client.client_info()
    assert info["lib-name"] == "mylib"
    assert info["lib-ver"] == "1.2"
    client.close()
