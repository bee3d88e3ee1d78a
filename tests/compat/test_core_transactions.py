"""MULTI/EXEC/DISCARD/WATCH/UNWATCH against Redis, including the error paths."""

from __future__ import annotations

from tests.compat.test_core_connection import another, hello_normalise


def test_exec_and_discard_without_multi(pair):
    pair.check("EXEC")
    pair.check("DISCARD")
    pair.check("UNWATCH")
    pair.check("MULTI", "x")
    pair.check("EXEC", "x")


def test_simple_transaction(pair):
    pair.check("MULTI")
    pair.check("MULTI")  # nested: an error, but the transaction stays open
    pair.check("SET", "a", "1")
    pair.check("INCR", "a")
    pair.check("GET", "a")
    pair.check("EXEC")
    pair.check("GET", "a")


def test_empty_transaction(pair):
    pair.check("MULTI")
    pair.check("EXEC")


def test_queue_time_errors_abort_the_transaction(pair):
    pair.check("MULTI")
    pair.check("SET", "a", "1")
    pair.check("NOSUCHCOMMAND", "x")
    pair.check("GET")
    pair.check("CONFIG", "NOSUCH")
    pair.check("EXEC")
    pair.check("GET", "a")
    pair.check("EXEC")


def test_wrong_arity_inside_multi_then_discard(pair):
    pair.check("MULTI")
    pair.check("SET", "a")
    pair.check("DISCARD")
    pair.check("GET", "a")
    pair.check("EXEC")


def test_runtime_error_inside_exec_does_not_stop_the_rest(pair):
    pair.check("SET", "s", "not-a-number")
    pair.check("MULTI")
    pair.check("INCR", "s")
    pair.check("SET", "b", "2")
    pair.check("INCRBY", "b", "x")
    pair.check("EXPIRE", "b", "10", "NX", "XX")
    pair.check("GET", "b")
    pair.check("EXEC")
    pair.check("GET", "b")


def test_commands_not_allowed_in_multi(pair):
    pair.check("MULTI")
    pair.check("WATCH", "x")
    pair.check("SHUTDOWN")
    pair.check("PING")
    pair.check("EXEC")


def test_multi_with_select_and_resp3(pair):
    pair.check("MULTI")
    pair.check("SELECT", "4")
    pair.check("SET", "k", "db4")
    pair.check("GET", "nothing")
    pair.check("SELECT", "0")
    pair.check("EXEC")
    pair.check("SELECT", "4")
    pair.check("GET", "k")
    pair.check("HELLO", "3", normalise=hello_normalise)
    pair.check("MULTI")
    pair.check("GET", "nothing")
    pair.check("TTL", "k")
    pair.check("EXEC")
    pair.check("FLUSHALL")


def test_exec_after_watched_key_changed(pair):
    other = another(pair)
    try:
        pair.check("SET", "balance", "10")
        pair.check("WATCH", "balance", "unrelated")
        other.check("INCR", "balance")
        pair.check("MULTI")
        pair.check("INCRBY", "balance", "5")
        pair.check("EXEC")
        pair.check("GET", "balance")
        # The failed EXEC unwatched everything: the next transaction runs.
        other.check("INCR", "balance")
        pair.check("MULTI")
        pair.check("INCRBY", "balance", "5")
        pair.check("EXEC")
    finally:
        other.close()


def test_watch_untouched_keys_and_unwatch(pair):
    other = another(pair)
    try:
        pair.check("WATCH", "w")
        other.check("SET", "unrelated", "1")
        pair.check("MULTI")
        pair.check("SET", "w", "mine")
        pair.check("EXEC")
        pair.check("WATCH", "w")
        other.check("SET", "w", "theirs")
        pair.check("UNWATCH")
        pair.check("MULTI")
        pair.check("GET", "w")
        pair.check("EXEC")
    finally:
        other.close()


def test_watch_sees_expiry_delete_flush_and_own_writes(pair):
    other = another(pair)
    try:
        for change in (("DEL", "w"), ("EXPIRE", "w", "100"), ("FLUSHDB",), ("FLUSHALL",),
                       ("RENAME", "w", "w2"), ("SET", "w", "same")):
            pair.check("SET", "w", "same")
            pair.check("WATCH", "w")
            other.check(*change)
            pair.check("MULTI")
            pair.check("PING")
            pair.check("EXEC")
        # A change made by the watching client itself also aborts the EXEC.
        pair.check("SET", "w", "x")
        pair.check("WATCH", "w")
        pair.check("SET", "w", "y")
        pair.check("MULTI")
        pair.check("PING")
        pair.check("EXEC")
        # Watching a missing key: creating it counts as a change.
        pair.check("WATCH", "nokey")
        other.check("SET", "nokey", "1")
        pair.check("MULTI")
        pair.check("PING")
        pair.check("EXEC")
    finally:
        other.close()


def test_watch_in_another_db(pair):
    other = another(pair)
    try:
        pair.check("SELECT", "2")
        pair.check("WATCH", "k")
        other.check("SET", "k", "db0 only")
        pair.check("MULTI")
        pair.check("PING")
        pair.check("EXEC")
    finally:
        other.close()


def test_discard_unwatches(pair):
    other = another(pair)
    try:
        pair.check("WATCH", "k")
        pair.check("MULTI")
        pair.check("DISCARD")
        other.check("SET", "k", "changed")
        pair.check("MULTI")
        pair.check("GET", "k")
        pair.check("EXEC")
    finally:
        other.close()


def test_pipelined_transaction_in_one_write(pair):
    payload = (b"*1\r\n$5\r\nMULTI\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n"
               b"*2\r\n$4\r\nINCR\r\n$1\r\nk\r\n*1\r\n$4\r\nEXEC\r\n")
    replies = []
    for wire in (pair.ours, pair.ref):
        wire.send_raw(payload)
        replies.append([wire.read_reply() for _ in range(4)])
    assert replies[0] == replies[1]


def test_flush_dirties_only_watched_keys_that_existed(pair):
    other = another(pair)
    try:
        for flush in (("FLUSHDB",), ("FLUSHALL",), ("FLUSHDB", "ASYNC")):
            pair.check("WATCH", "absent")
            other.check(*flush)
            pair.check("MULTI")
            pair.check("PING")
            pair.check("EXEC")  # runs: the watched key did not exist
            pair.check("SET", "present", "1")
            pair.check("WATCH", "present", "absent")
            other.check(*flush)
            pair.check("MULTI")
            pair.check("PING")
            pair.check("EXEC")  # aborted
    finally:
        other.close()
