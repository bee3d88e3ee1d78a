"""`rename-command` in a config file, against Redis 8.2.3: renamed, disabled, and refused."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.compat.test_acl import _start_redis_with_conf, _start_rillet_with_conf
from tests.helpers import servers
from tests.helpers.diff import Pair


def test_renamed_and_disabled_commands(tmp_path):
    binary = servers.redis8_binary()
    if binary is None:
        pytest.skip("Redis 8.2.3 not available")
    conf = tmp_path / "rename.conf"
    conf.write_text('rename-command get fetch\nrename-command DEL ""\nrename-command xadd XPUT\n')
    ours = _start_rillet_with_conf(str(conf))
    ref = None
    try:
        ref = _start_redis_with_conf(binary, str(conf))
        p = Pair(ours.port, ref.port)
        for args in (("SET", "k", "v"), ("GET", "k"), ("get", "k"), ("FETCH", "k"), ("fetch", "k"),
                     ("DEL", "k"), ("del", "k"), ("XADD", "s", "1-1", "f", "v"),
                     ("XPUT", "s", "1-1", "f", "v"), ("xput", "s", "1-2", "f", "v"), ("XLEN", "s"),
                     ("MULTI",), ("FETCH", "k"), ("EXEC",)):
            p.check(*args)
        p.close()
    finally:
        ours.stop()
        if ref is not None:
            ref.stop()


@pytest.mark.parametrize("line", ["rename-command nosuch x", "rename-command get set"])
def test_bad_rename_stops_the_server(tmp_path, line):
    conf = tmp_path / "bad.conf"
    conf.write_text(line + "\n")
    done = subprocess.run(
        [sys.executable, "-m", "rillet", "server", str(conf), "--port", str(servers.free_port()),
         "--bind", "127.0.0.1", "--save", "", "--dir", str(tmp_path)],
        capture_output=True, timeout=60, env={**os.environ})
    assert done.returncode == 1
    expected = ("No such command in rename-command" if "nosuch" in line
                else "Target command name already exists")
    assert expected in (done.stdout + done.stderr).decode()
