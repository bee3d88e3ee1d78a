"""Blocking XREAD over real sockets against a running rillet.

Woken by XADD from another client, several clients served in FIFO order (seen
through the commands each one pipelined behind its XREAD), a timeout that
answers nil no earlier than asked, BLOCK 0, keys deleted while clients wait,
disconnects while blocked, and redis-py's view of it all. (The orderings and
deadlines asserted here were checked to hold on Redis 8.2.3 as well.)
"""

from __future__ import annotations

import re
import socket
import threading
import time

import redis

from tests.helpers.wire import Wire, encode_command

_BLOCKED = re.compile(rb"blocked_clients:(\d+)")
NIL_ARRAY = b"*-1\r\n"


def blocked_count(control: Wire) -> int:
    return int(_BLOCKED.search(control.call("INFO", "clients")).group(1))


def wait_blocked(control: Wire, count: int, limit_s: float = 10.0) -> None:
    deadline = time.monotonic() + limit_s
    while blocked_count(control) < count:
        assert time.monotonic() < deadline, "clients never blocked"
        time.sleep(0.005)


def no_reply_yet(wire: Wire, wait_s: float = 0.2) -> bool:
    wire.sock.settimeout(wait_s)
    try:
        wire.sock.recv(1, socket.MSG_PEEK)
    except TimeoutError:
        return True
    finally:
        wire.sock.settimeout(10)
    return False


def entry_reply(key: bytes, sid: bytes, *fields: bytes) -> bytes:
    body = b"".join(b"$%d\r\n%s\r\n" % (len(f), f) for f in fields)
    return (b"*1\r\n*2\r\n$%d\r\n%s\r\n*1\r\n*2\r\n$%d\r\n%s\r\n*%d\r\n" %
            (len(key), key, len(sid), sid, len(fields)) + body)


def connect(rillet_server, count: int = 1) -> list[Wire]:
    wires = [Wire(rillet_server.port) for _ in range(count)]
    wires[0].call("FLUSHALL")
    return wires


def test_woken_by_xadd_from_another_client(rillet_server):
    control, blocked = connect(rillet_server, 2)
    blocked.send_raw(encode_command("XREAD", "BLOCK", "0", "STREAMS", "s", "$"))
    wait_blocked(control, 1)
    assert control.call("XADD", "s", "1-1", "f", "v") == b"$3\r\n1-1\r\n"
    assert blocked.read_reply() == entry_reply(b"s", b"1-1", b"f", b"v")
    assert blocked_count(control) == 0


def test_several_clients_served_fifo(rillet_server):
    control, *clients = connect(rillet_server, 6)
    for client in clients:
        # Each client pipelines an INCR behind its XREAD: the INCRs run in the
        # order the clients are served, so the counter values show that order.
        client.send_raw(encode_command("XREAD", "BLOCK", "0", "STREAMS", "s", "$")
                        + encode_command("INCR", "order"))
        wait_blocked(control, clients.index(client) + 1)
    control.call("XADD", "s", "7-1", "f", "v")
    for position, client in enumerate(clients, start=1):
        assert client.read_reply() == entry_reply(b"s", b"7-1", b"f", b"v")
        assert client.read_reply() == b":%d\r\n" % position


def test_fifo_across_keys_and_ids(rillet_server):
    control, first, second, third = connect(rillet_server, 4)
    control.call("XADD", "a", "1-1", "f", "v")
    first.send_raw(encode_command("XREAD", "BLOCK", "0", "STREAMS", "a", "b", "$", "$")
                   + encode_command("INCR", "order"))
    wait_blocked(control, 1)
    second.send_raw(encode_command("XREAD", "BLOCK", "0", "STREAMS", "b", "0")
                    + encode_command("INCR", "order"))
    wait_blocked(control, 2)
    third.send_raw(encode_command("XREAD", "BLOCK", "0", "STREAMS", "a", "1-1")
                   + encode_command("INCR", "order"))
    wait_blocked(control, 3)
    control.call("MULTI")
    control.call("XADD", "b", "2-1", "f", "v")
    control.call("XADD", "a", "3-1", "f", "v")
    control.call("EXEC")
    replies = {}
    for name, client in (("first", first), ("second", second), ("third", third)):
        client.read_reply()
        replies[name] = client.read_reply()
    # Keys are served in the order they became ready (b then a), clients FIFO per key.
    assert replies == {"first": b":1\r\n", "second": b":2\r\n", "third": b":3\r\n"}


def test_timeout_answers_nil_not_before_it_is_due(rillet_server):
    control, blocked = connect(rillet_server, 2)
    started = time.monotonic()
    blocked.send_raw(encode_command("XREAD", "BLOCK", "200", "STREAMS", "s", "$"))
    assert blocked.read_reply() == NIL_ARRAY
    assert time.monotonic() - started >= 0.19
    assert blocked_count(control) == 0
    # The connection goes on normally afterwards.
    assert blocked.call("PING") == b"+PONG\r\n"


def test_timeout_keeps_its_deadline_across_wakeups(rillet_server):
    control, blocked = connect(rillet_server, 2)
    control.call("XADD", "s", "5-1", "f", "v")
    started = time.monotonic()
    blocked.send_raw(encode_command("XREAD", "BLOCK", "400", "STREAMS", "s", "$"))
    wait_blocked(control, 1)
    for _ in range(3):  # changes that are not new entries: the client keeps waiting
        control.call("XSETID", "s", "5-1")
        control.call("XDEL", "s", "4-0")
    assert blocked.read_reply() == NIL_ARRAY
    elapsed = time.monotonic() - started
    assert elapsed >= 0.39


def test_block_zero_waits_until_data(rillet_server):
    control, blocked = connect(rillet_server, 2)
    blocked.send_raw(encode_command("XREAD", "BLOCK", "0", "STREAMS", "s", "$"))
    wait_blocked(control, 1)
    assert no_reply_yet(blocked, 0.3)
    control.call("XADD", "s", "1-1", "f", "v")
    assert blocked.read_reply() == entry_reply(b"s", b"1-1", b"f", b"v")


def test_key_deleted_while_blocked(rillet_server):
    control, blocked = connect(rillet_server, 2)
    control.call("XADD", "s", "5-1", "f", "v")
    blocked.send_raw(encode_command("XREAD", "BLOCK", "0", "STREAMS", "s", "$"))
    wait_blocked(control, 1)
    assert control.call("DEL", "s") == b":1\r\n"
    assert no_reply_yet(blocked)
    assert blocked_count(control) == 1
    # Re-created below the pinned 5-1: still nothing to read.
    control.call("XADD", "s", "2-1", "f", "v")
    assert no_reply_yet(blocked)
    control.call("XADD", "s", "6-1", "f", "v")
    assert blocked.read_reply() == entry_reply(b"s", b"6-1", b"f", b"v")


def test_key_overwritten_while_blocked_times_out(rillet_server):
    control, blocked = connect(rillet_server, 2)
    control.call("XADD", "s", "5-1", "f", "v")
    blocked.send_raw(encode_command("XREAD", "BLOCK", "300", "STREAMS", "s", "$"))
    wait_blocked(control, 1)
    control.call("SET", "s", "now a string")
    assert blocked.read_reply() == NIL_ARRAY


def test_disconnect_while_blocked(rillet_server):
    control, blocked = connect(rillet_server, 2)
    blocked.send_raw(encode_command("XREAD", "BLOCK", "0", "STREAMS", "s", "$"))
    wait_blocked(control, 1)
    blocked.close()
    deadline = time.monotonic() + 10
    while blocked_count(control) and time.monotonic() < deadline:
        time.sleep(0.005)
    assert blocked_count(control) == 0
    assert control.call("XADD", "s", "1-1", "f", "v") == b"$3\r\n1-1\r\n"


def test_commands_pipelined_behind_a_block_wait(rillet_server):
    control, blocked = connect(rillet_server, 2)
    blocked.send_raw(encode_command("XREAD", "BLOCK", "0", "STREAMS", "s", "$")
                     + encode_command("XLEN", "s") + encode_command("PING"))
    wait_blocked(control, 1)
    assert no_reply_yet(blocked)
    control.call("XADD", "s", "1-1", "f", "v")
    assert blocked.read_reply() == entry_reply(b"s", b"1-1", b"f", b"v")
    assert blocked.read_reply() == b":1\r\n"
    assert blocked.read_reply() == b"+PONG\r\n"


def test_block_inside_multi_acts_as_timed_out(rillet_server):
    control, = connect(rillet_server, 1)
    control.call("MULTI")
    control.call("XREAD", "BLOCK", "0", "STREAMS", "s", "$")
    assert control.call("EXEC") == b"*1\r\n*-1\r\n"


def test_redis_py_blocking_read(rillet_server):
    client = redis.Redis(port=rillet_server.port)
    client.flushall()
    got: list = []

    def reader() -> None:
        reading = redis.Redis(port=rillet_server.port)
        got.append(reading.xread({"s": "$"}, block=5000))
        reading.close()

    thread = threading.Thread(target=reader)
    thread.start()
    control = Wire(rillet_server.port)
    wait_blocked(control, 1)
    sid = client.xadd("s", {"k": "v"})
    thread.join(10)
    assert got == [[[b"s", [(sid, {b"k": b"v"})]]]]
    assert client.xread({"s": "$"}, block=50) in ([], None, {})
    client.close()
    control.close()
