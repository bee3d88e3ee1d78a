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


def test_five_thousand_connections_at_once(tmp_path):
    """5,000 connections opened at once each get PONG; CLIENT LIST and INFO count them
    all, and none once they are closed (the accept path keeps no per-client leftovers)."""
    import resource
    import selectors
    import socket
    import time

    from tests.helpers.servers import start_rillet

    count = 5000
    if resource.getrlimit(resource.RLIMIT_NOFILE)[0] < 2 * count + 200:
        pytest.skip("needs two descriptors per connection (client and server)")
    server = start_rillet(dir=str(tmp_path))
    client = server.client()
    received = client.info("stats")["total_connections_received"]
    selector = selectors.DefaultSelector()
    socks: list[socket.socket] = []
    try:
        for _ in range(count):
            sock = socket.socket()
            sock.setblocking(False)
            sock.connect_ex(("127.0.0.1", server.port))
            selector.register(sock, selectors.EVENT_WRITE, len(socks))
            socks.append(sock)
        replies: dict[int, bytes] = {}
        deadline = time.monotonic() + 120
        while len(replies) < count and time.monotonic() < deadline:
            for key, _ in selector.select(1):
                sock = socks[key.data]
                if key.events == selectors.EVENT_WRITE:
                    assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0
                    sock.sendall(b"PING\r\n")
                    selector.modify(sock, selectors.EVENT_READ, key.data)
                else:
                    replies[key.data] = sock.recv(64)
                    selector.unregister(sock)
        assert list(replies.values()) == [b"+PONG\r\n"] * count
        listed = client.execute_command("CLIENT", "LIST")
        text = listed.decode() if isinstance(listed, bytes) else listed
        assert len(text.strip().splitlines()) == count + 1
        assert client.info("clients")["connected_clients"] == count + 1
        assert client.info("stats")["total_connections_received"] == received + count
        for sock in socks:
            sock.close()
        socks = []
        deadline = time.monotonic() + 30
        while client.info("clients")["connected_clients"] > 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert client.info("clients")["connected_clients"] == 1
        client.close()
    finally:
        selector.close()
        for sock in socks:
            sock.close()
        server.stop()
