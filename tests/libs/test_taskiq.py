"""taskiq-redis's RedisStreamBroker as its workers use it: two messages delivered and
acked, then a message abandoned by a dead consumer auto-claimed (XAUTOCLAIM under
redis-py's Lock, i.e. Lua scripts), against rillet and Redis 8.2.3."""

from __future__ import annotations

import asyncio
import uuid

from tests.libs.installed import require


def _message(body: bytes):
    from taskiq import BrokerMessage

    return BrokerMessage(task_id=uuid.uuid4().hex, task_name="t", message=body, labels={})


async def _scenario(url: str) -> list[bytes]:
    from taskiq_redis import RedisStreamBroker

    queue = f"q-{uuid.uuid4().hex[:8]}"
    options = dict(queue_name=queue, consumer_group_name="g", consumer_id="0", xread_block=100,
                   idle_timeout=200, unacknowledged_lock_timeout=5)
    broker = RedisStreamBroker(url, consumer_name="alive", **options)
    dead = RedisStreamBroker(url, consumer_name="dead", **options)
    await broker.startup()
    await dead.startup()
    received = []
    try:
        listener = broker.listen()
        for body in (b"one", b"two"):
            await broker.kick(_message(body))
        while len(received) < 2:
            message = await asyncio.wait_for(listener.__anext__(), 10)
            received.append(message.data)
            await message.ack()
        # A consumer takes a message and dies without acknowledging it.
        await broker.kick(_message(b"abandoned"))
        abandoned = await asyncio.wait_for(dead.listen().__anext__(), 10)
        assert abandoned.data == b"abandoned"
        await asyncio.sleep(0.4)  # past idle_timeout
        await broker.kick(_message(b"four"))  # the listener autoclaims after a read
        while len(received) < 4:
            message = await asyncio.wait_for(listener.__anext__(), 10)
            received.append(message.data)
            await message.ack()
    finally:
        await broker.shutdown()
        await dead.shutdown()
    return received


def test_stream_broker(server):
    require("taskiq_redis")
    received = asyncio.run(_scenario(server.url))
    assert received[:2] == [b"one", b"two"]
    assert sorted(received[2:]) == [b"abandoned", b"four"]  # the order follows the listener's reads
