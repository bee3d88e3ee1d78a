"""arq as its users run it (enqueue, then a burst worker), against rillet and Redis 8.2.3.
arq pins redis-py below 6, so this runs from .venv-libs (see conftest.py)."""

from __future__ import annotations

import asyncio

from tests.libs.installed import require


def test_arq_enqueue_and_burst_worker(server):
    arq = require("arq")
    from arq.connections import RedisSettings

    from tests.libs.jobs import async_add

    async def scenario() -> object:
        settings = RedisSettings(host=server.host, port=server.port)
        pool = await arq.create_pool(settings)
        job = await pool.enqueue_job("async_add", 4, 5)
        worker = arq.Worker(functions=[arq.func(async_add, name="async_add")], redis_settings=settings,
                            burst=True, handle_signals=False, poll_delay=0.05)
        await worker.async_run()
        result = await job.result(timeout=10)
        info = await job.info()
        await worker.close()
        await pool.aclose() if hasattr(pool, "aclose") else await pool.close()
        return result, info.success

    assert asyncio.run(scenario()) == (9, True)
