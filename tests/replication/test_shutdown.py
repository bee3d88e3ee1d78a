"""Shutting down a master whose replica lags (shutdown-timeout), side by side with Redis 8.2.3.

The replica is stopped (SIGSTOP) while ~10 MB of writes are made: more than
the sockets hold, so whatever the master still buffers when it exits is lost
to the replica. A shutdown waits (writes paused) until the replica has it all,
or until shutdown-timeout; SHUTDOWN NOW does not wait; SHUTDOWN ABORT cancels.
"""

from __future__ import annotations

import os
import signal
import threading

import pytest
import redis

from tests.helpers import servers
from tests.replication import support

KINDS = ["rillet", pytest.param("redis8", marks=pytest.mark.needs_redis)]


@pytest.fixture(params=KINDS)
def lagging(request):
    """(master, replica) with shutdown-timeout 60; the replica is stopped and ~10 MB behind."""
    kind = request.param
    if kind == "redis8" and servers.redis8_binary() is None:
        pytest.skip("Redis 8.2.3 not available")
    master = support.start(kind, "--shutdown-timeout", "60")
    replica = support.start(kind, "--replicaof", "127.0.0.1", str(master.port))
    stopped = False
    try:
        support.wait_synced(master.client(), replica.client())
        os.kill(replica.proc.pid, signal.SIGSTOP)
        stopped = True
        pipe = master.client().pipeline(transaction=False)
        for i in range(2000):
            pipe.set(f"k{i}", "x" * 5000)
        pipe.execute()
        yield master, replica
    finally:
        if stopped:
            os.kill(replica.proc.pid, signal.SIGCONT)
        replica.stop()
        master.stop(sig_kill=True)


def _log(handle: servers.ServerHandle) -> str:
    with open(os.path.join(handle.dir, "server.log"), errors="replace") as f:
        return f.read()


def _waiting(master: servers.ServerHandle) -> None:
    support.wait_until(lambda: "Waiting for replicas before shutting down." in _log(master),
                       10, "the shutdown to wait for the replica")


def test_sigterm_waits_for_the_replica_to_catch_up(lagging):
    master, replica = lagging
    master.proc.send_signal(signal.SIGTERM)
    _waiting(master)
    assert master.client().get("k1999") == b"x" * 5000  # reads are served meanwhile
    os.kill(replica.proc.pid, signal.SIGCONT)
    assert master.proc.wait(30) == 0
    assert replica.client().dbsize() == 2000  # nothing was lost
    assert "1 of 1 replicas are in sync when shutting down." in _log(master)


def test_shutdown_timeout_bounds_the_wait(lagging):
    master, replica = lagging
    master.client().config_set("shutdown-timeout", 1)
    master.proc.send_signal(signal.SIGTERM)
    assert master.proc.wait(30) == 0  # with the replica still stopped
    text = _log(master)
    assert "Lagging replica 127.0.0.1:" in text
    assert "0 of 1 replicas are in sync when shutting down." in text


def test_shutdown_abort_and_now(lagging):
    master, replica = lagging
    m = master.client()
    with pytest.raises(redis.ResponseError, match="^No shutdown in progress.$"):
        m.execute_command("SHUTDOWN", "ABORT")
    master.proc.send_signal(signal.SIGTERM)
    _waiting(master)
    done: list[object] = []
    writer = threading.Thread(target=lambda: done.append(master.client().set("during", 1)))
    writer.start()  # paused until the shutdown is aborted
    assert m.execute_command("SHUTDOWN", "ABORT") in (True, b"OK")
    writer.join(10)
    assert done == [True]
    with pytest.raises(redis.ConnectionError):
        m.execute_command("SHUTDOWN", "NOW")
    assert master.proc.wait(30) == 0  # at once: the replica is still stopped


class _Loop:
    def __init__(self) -> None:
        self.soon: list = []

    def call_soon(self, callback) -> None:
        self.soon.append(callback)


def test_writes_stay_paused_until_the_shutdown_runs():
    """The verdict (replicas in sync) and the shutdown are one step for writers: the
    pause holds until the deferred shutdown has run."""
    from types import SimpleNamespace

    from rillet.replication.shutdown import ShutdownWait

    entry = SimpleNamespace(ack_offset=0, ip="127.0.0.1", port=1, state=0, ack_time=0)
    loop = _Loop()
    repl = SimpleNamespace(
        config={"shutdown-timeout": 10}, master_repl_offset=5, update_guard=lambda: None,
        master_side=SimpleNamespace(online=lambda: [entry], request_ack=lambda: None),
        server=SimpleNamespace(loop=loop))
    wait = ShutdownWait(repl)
    finished: list[bool] = []
    assert wait.start(lambda: finished.append(wait.waiting))
    wait.check()
    assert wait.waiting and not loop.soon  # the replica lags
    entry.ack_offset = 5
    wait.check()
    wait.check()  # (a second tick before the loop runs it: still one shutdown)
    assert wait.waiting and len(loop.soon) == 1 and finished == []
    loop.soon.pop()()
    assert finished == [False] and not wait.waiting
