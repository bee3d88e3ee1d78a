"""Transactions that Redis 8.2.3 aborts: WATCHed keys a SWAPDB makes appear or vanish,
and commands refused while they are queued (a BUSY script, NOREPLICAS, MASTERDOWN)
or found refused at EXEC. Replies compared byte for byte with Redis's."""

from __future__ import annotations

import time

import pytest

from tests.helpers import servers
from tests.helpers.wire import Wire, encode_command


@pytest.fixture(scope="module")
def pair():
    yield from servers.own_pair8()


def _both(pair, scenario) -> None:
    ours, ref = pair
    assert scenario(ours.port) == scenario(ref.port)


@pytest.mark.parametrize("watched_from", [0, 1])
def test_swapdb_touches_watched_keys_that_appear_or_vanish(pair, watched_from):
    def scenario(port: int) -> list[bytes]:
        replies = []
        with Wire(port) as client, Wire(port) as other:
            for in_db0, in_db1 in ((False, False), (True, False), (False, True), (True, True)):
                client.call("FLUSHALL")
                for db, present in ((0, in_db0), (1, in_db1)):
                    if present:
                        other.call("SELECT", db)
                        other.call("SET", "x", db)
                client.call("SELECT", watched_from)
                client.call("WATCH", "x")
                other.call("SWAPDB", "0", "1")
                client.call("MULTI")
                client.call("SET", "y", "1")
                replies.append(client.call("EXEC"))
        return replies

    _both(pair, scenario)


def _wait_busy(port: int) -> None:
    deadline = time.monotonic() + 10
    with Wire(port) as probe:
        while not probe.call("PING").startswith(b"-BUSY"):
            assert time.monotonic() < deadline, "the script never became busy"
            time.sleep(0.02)


def test_commands_queued_while_a_script_is_busy_abort_exec(pair):
    def scenario(port: int) -> list[bytes]:
        with Wire(port) as client, Wire(port) as killer, Wire(port) as runner:
            killer.call("CONFIG", "SET", "busy-reply-threshold", "20")
            replies = [client.call("MULTI")]
            runner.send_raw(encode_command("EVAL", "while true do end", "0"))
            _wait_busy(port)
            replies += [client.call("SET", "k", "v"), client.call("PING"), client.call("DISCARD")]
            replies += [client.call("MULTI"), client.call("GET", "k")]
            killer.call("SCRIPT", "KILL")
            runner.read_reply()
            replies += [client.call("EXEC")]
            killer.call("CONFIG", "SET", "busy-reply-threshold", "5000")
            return replies

    _both(pair, scenario)


def test_writes_without_enough_replicas_abort_exec(pair):
    def scenario(port: int) -> list[bytes]:
        with Wire(port) as client, Wire(port) as admin:
            admin.call("DEL", "k")
            admin.call("CONFIG", "SET", "min-replicas-to-write", "1")
            try:
                replies = [client.call("MULTI"), client.call("SET", "k", "v"), client.call("GET", "k"),
                           client.call("EXEC")]
                # Queued while replicas sufficed, refused at EXEC.
                admin.call("CONFIG", "SET", "min-replicas-to-write", "0")
                replies += [client.call("MULTI"), client.call("SET", "k", "v")]
                admin.call("CONFIG", "SET", "min-replicas-to-write", "1")
                replies += [client.call("EXEC")]
                replies += [client.call("MULTI"), client.call("GET", "k"), client.call("EXEC")]
                return replies
            finally:
                admin.call("CONFIG", "SET", "min-replicas-to-write", "0")

    _both(pair, scenario)


def test_stale_replica_aborts_exec(pair):
    def scenario(port: int) -> list[bytes]:
        with Wire(port) as client, Wire(port) as admin:
            replies = [client.call("MULTI"), client.call("GET", "k")]
            admin.call("CONFIG", "SET", "replica-serve-stale-data", "no")
            admin.call("REPLICAOF", "127.0.0.1", servers.free_port())  # nobody there: the link stays down
            try:
                # Queued before the link was down, refused at EXEC.
                replies += [client.call("EXEC")]
                # Refused while queued: EXEC answers EXECABORT.
                replies += [client.call("MULTI"), client.call("GET", "k"), client.call("PING"),
                            client.call("EXEC")]
                return replies
            finally:
                admin.call("REPLICAOF", "NO", "ONE")
                admin.call("CONFIG", "SET", "replica-serve-stale-data", "yes")

    _both(pair, scenario)
