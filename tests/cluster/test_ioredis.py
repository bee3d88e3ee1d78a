"""ioredis's Cluster (Node) on two rillet masters: keys, a stream with a consumer group,
a pipeline, pub/sub and Lua with keys in one slot (tests/cluster/js/ioredis_cluster.js).
Skipped where Node or ioredis is missing (./dev installs ioredis in tests/cluster/js)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.cluster import support

pytestmark = pytest.mark.slow

JS = Path(__file__).parent / "js"


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.skip("Node.js not available")
    found = subprocess.run([node, "-e", "require.resolve('ioredis')"], cwd=JS,
                           capture_output=True, timeout=30)
    if found.returncode != 0:
        pytest.skip("ioredis not installed (npm install in tests/cluster/js)")
    return node


def test_ioredis_cluster():
    node = _node()
    a, b = support.two_rillet_masters("a" * 40, "b" * 40)
    try:
        done = subprocess.run([node, str(JS / "ioredis_cluster.js"), str(a.port)], cwd=JS,
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        out = json.loads(done.stdout.strip().splitlines()[-1])
        assert out == {
            "keys": True, "masters": 2, "xgroup": "OK", "read": True, "xack": 2, "pending": 1,
            "pipeline": 50, "lua": "ann",
            "crossslot": "CROSSSLOT Keys in request don't hash to the same slot",
            "messages": 2,
        }, out
    finally:
        a.stop()
        b.stop()
