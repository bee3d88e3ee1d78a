"""What monitors and tools read of a running server (issue 29's observability bullet),
against Redis 8.2.3: the slow log and MONITOR, INFO's counters, CLIENT's views."""

from __future__ import annotations

import re
import time

import redis

from tests.helpers.wire import Wire, encode_command

_MASK = re.compile(rb"^\+\d+\.\d{6} \[(\d+) [^\]]*\]")


def _wait_blocked(admin: redis.Redis, count: int) -> None:
    deadline = time.monotonic() + 10
    while admin.info("clients")["blocked_clients"] != count:
        assert time.monotonic() < deadline, "the client never blocked"
        time.sleep(0.01)


def _blocked_run(admin: redis.Redis, port: int, command: tuple[str, ...],
                 wake: tuple[str, ...] | None) -> bytes:
    """`command` from a client of its own, left blocked until `wake` (or its timeout)."""
    with Wire(port) as blocked:
        blocked.send_raw(encode_command(*command))
        if wake is not None:
            _wait_blocked(admin, 1)
            admin.execute_command(*wake)
        return blocked.read_reply()


def _slowlog_and_monitor(port: int) -> tuple[list[list[bytes]], list[bytes]]:
    admin = redis.Redis(port=port)
    mon, conn = Wire(port), Wire(port)
    try:
        admin.execute_command("CONFIG", "SET", "slowlog-log-slower-than", "0")
        admin.execute_command("SLOWLOG", "RESET")
        assert mon.call("MONITOR") == b"+OK\r\n"
        conn.call("SET", "k", "v")
        for _ in range(8):  # the compiled fast path's calls, each logged
            conn.call("GET", "k")
        conn.call("SET", "x" * 200, "y")  # trimmed to 128 bytes
        conn.call("RPUSH", "l", *[str(n) for n in range(40)])  # trimmed to 32 arguments
        conn.call("CONFIG", "SET", "maxmemory-samples", "5", "masterauth", "secret")
        conn.call("AUTH", "no-such-user", "pw1")
        conn.call("SET", "k", "v", "EX", "100")  # propagated in another form: logged as sent
        conn.call("INCRBYFLOAT", "n", "1.5")
        conn.call("BLPOP", "l", "0")
        assert _blocked_run(admin, port, ("BLPOP", "bl", "0"), ("RPUSH", "bl", "z")) \
            == b"*2\r\n$2\r\nbl\r\n$1\r\nz\r\n"
        admin.execute_command("XADD", "x", "1-1", "f", "v")
        assert _blocked_run(admin, port, ("XREAD", "BLOCK", "0", "STREAMS", "x", "$"),
                            ("XADD", "x", "2-1", "f", "w")).startswith(b"*1\r\n")
        assert _blocked_run(admin, port, ("BLPOP", "nothing", "0.05"), None) == b"*-1\r\n"
        conn.call("PING", "end")
        lines = []
        while not lines or b'"end"' not in lines[-1]:
            lines.append(_MASK.sub(rb"+T [\1 addr]", mon.read_reply()))
        # _wait_blocked's INFO calls: as many as it took.
        lines = [line for line in lines if b'"INFO"' not in line]
        admin.execute_command("CONFIG", "SET", "slowlog-log-slower-than", "10000",
                              "masterauth", "")
        entries = admin.execute_command("SLOWLOG", "GET", "-1")
        logged = [entry[3] for entry in reversed(entries)
                  if entry[3][:2] not in ([b"HELLO", b"3"], [b"CLIENT", b"SETINFO"])
                  and entry[3][0] != b"INFO"]
        return logged, lines
    finally:
        mon.close()
        conn.close()
        admin.close()


def test_slowlog_and_monitor_show_each_command_once(rillet_server, redis8_server):
    ours = _slowlog_and_monitor(rillet_server.port)
    assert ours == _slowlog_and_monitor(redis8_server.port)
    assert ours[0].count([b"GET", b"k"]) == 8
    assert ours[0].count([b"BLPOP", b"bl", b"0"]) == 1


_READS = [
    ("GET", "s"), ("GET", "nope"), ("SET", "s2", "v", "GET"), ("SET", "s3", "v"),
    ("MGET", "s", "nope", "s2"), ("EXISTS", "s", "nope"), ("TYPE", "h"), ("TTL", "nope"),
    ("HGET", "h", "f"), ("HGETALL", "nope"), ("LRANGE", "l", "0", "-1"), ("LLEN", "nope"),
    ("XRANGE", "x", "-", "+"), ("XREAD", "STREAMS", "x", "nope", "0", "0"),
    ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "x", ">"), ("XACK", "x", "g", "1-1"),
    ("GETDEL", "s2"), ("GETEX", "nope"), ("INCR", "n"), ("LPUSH", "l", "b"), ("DEL", "s3"),
    ("SUNIONSTORE", "dest", "st", "nope"), ("SINTER", "st", "nope"), ("ZSCORE", "z", "m"),
    ("OBJECT", "ENCODING", "s"), ("KEYS", "*"), ("SCAN", "0"), ("TOUCH", "s", "nope"),
    ("GET", "h"),  # WRONGTYPE: a hit all the same
]


def _hits_and_misses(port: int) -> list[tuple[int, int]]:
    admin = redis.Redis(port=port)
    try:
        admin.flushall()
        admin.set("s", "v")
        admin.hset("h", "f", "v")
        admin.rpush("l", "a")
        admin.sadd("st", "a")
        admin.zadd("z", {"m": 1})
        admin.execute_command("XADD", "x", "1-1", "f", "v")
        admin.execute_command("XGROUP", "CREATE", "x", "g", "0")
        seen = []
        with Wire(port) as wire:
            for command in _READS:
                admin.config_resetstat()
                wire.call(*command)
                stats = admin.info("stats")
                seen.append((stats["keyspace_hits"], stats["keyspace_misses"]))
            # A pipeline of reads, run by the compiled loop in one go.
            admin.config_resetstat()
            wire.send_raw(b"".join(encode_command("GET", key) for key in ("s", "nope") * 8)
                          + encode_command("HGET", "h", "f") + encode_command("LLEN", "nope"))
            for _ in range(18):
                wire.read_reply()
            stats = admin.info("stats")
            seen.append((stats["keyspace_hits"], stats["keyspace_misses"]))
            # A script's reads: redis.call's own fast case counts each call too.
            admin.config_resetstat()
            wire.call("EVAL", _SCRIPT_READS, "0")
            stats = admin.info("stats")
            seen.append((stats["keyspace_hits"], stats["keyspace_misses"]))
        return seen
    finally:
        admin.close()


_SCRIPT_READS = (
    "for i = 1, 40 do redis.call('GET', 's'); redis.call('GET', 'nope') end "
    "redis.call('MGET', 's', 'nope'); redis.call('HGET', 'h', 'f'); redis.pcall('LLEN', 'nope') "
    "redis.call('SET', 's2', 'v', 'GET'); redis.call('EXISTS', 's', 'nope'); return 1")


def test_keyspace_hits_and_misses(rillet_server, redis8_server):
    ours = _hits_and_misses(rillet_server.port)
    named = _READS + [("pipeline",), ("script",)]
    assert list(zip(named, ours, strict=True)) == \
        list(zip(named, _hits_and_misses(redis8_server.port), strict=True))
    assert ours[-2] == (9, 9)
    assert ours[-1] == (43, 44)


def test_client_kill_filter_errors(pair8):
    for command in (
        ("TYPE", "bogus"), ("TYPE", "BOGUS", "ID", "0"), ("ID", "1", "TYPE", "bogus"),
        ("MAXAGE", "-1"), ("MAXAGE", "0"), ("MAXAGE", "x"), ("MAXAGE", "-1", "TYPE", "bogus"),
        ("TYPE", "bogus", "MAXAGE", "-1"), ("USER", "nouser", "TYPE", "bogus"),
        ("MAXAGE", "99999999999999999999"), ("TYPE", "pubsub"), ("MAXAGE", "100000"),
        ("SKIPME", "maybe", "TYPE", "bogus"),
    ):
        pair8.check("CLIENT", "KILL", *command)


def _lazyfree_and_unblocked(port: int) -> list[object]:
    admin = redis.Redis(port=port)
    seen: list[object] = []
    try:
        admin.flushall()
        admin.config_resetstat()
        for flush in (("FLUSHALL", "ASYNC"), ("FLUSHDB", "ASYNC"), ("FLUSHALL",), ("FLUSHDB", "SYNC")):
            admin.rpush("list", *range(200))
            admin.set("a", 1)
            admin.execute_command(*flush)
            seen.append(admin.info("memory")["lazyfreed_objects"])
        admin.config_set("lazyfree-lazy-user-flush", "yes")
        admin.set("a", 1)
        admin.flushall()
        admin.config_set("lazyfree-lazy-user-flush", "no")
        seen.append(admin.info("memory")["lazyfreed_objects"])
        with Wire(port) as blocked:
            client_id = int(blocked.call("CLIENT", "ID")[1:-2])
            blocked.send_raw(encode_command("BLPOP", "nothing", "0"))
            _wait_blocked(admin, 1)
            admin.execute_command("CLIENT", "UNBLOCK", client_id, "ERROR")
            seen.append(blocked.read_reply())
        stats = admin.info("stats")
        seen.append((admin.info("errorstats"), stats["total_error_replies"]))
        return seen
    finally:
        admin.config_set("lazyfree-lazy-user-flush", "no")
        admin.close()


def test_lazyfreed_objects_and_unblocked_errors(rillet_server, redis8_server):
    ours = _lazyfree_and_unblocked(rillet_server.port)
    assert ours == _lazyfree_and_unblocked(redis8_server.port)
    assert ours[:5] == [2, 4, 6, 8, 9]


def _avg_ttl(port: int) -> tuple[int, int]:
    admin = redis.Redis(port=port)
    try:
        admin.flushall()
        for n in range(10):
            admin.set(f"t{n}", 1, ex=1000)
            admin.set(f"n{n}", 1)
        deadline = time.monotonic() + 10
        while (db := admin.info("keyspace")["db0"])["avg_ttl"] == 0:
            assert time.monotonic() < deadline, "avg_ttl stayed 0"
            time.sleep(0.05)
        average = db["avg_ttl"]
        admin.execute_command("DEL", *[f"t{n}" for n in range(10)])
        while (emptied := admin.info("keyspace")["db0"]["avg_ttl"]) != 0:
            assert time.monotonic() < deadline + 10, "avg_ttl stayed as it was"
            time.sleep(0.05)
        return average, emptied
    finally:
        admin.close()


def test_avg_ttl_is_estimated(rillet_server, redis8_server):
    """Redis's estimate (a running average of sampled TTLs, ms); 0 without TTLs."""
    for average, emptied in (_avg_ttl(rillet_server.port), _avg_ttl(redis8_server.port)):
        assert 990_000 < average <= 1_000_000
        assert emptied == 0


def _fragmentation_loaded(port: int) -> float:
    admin = redis.Redis(port=port)
    try:
        admin.flushall()
        pipe = admin.pipeline(transaction=False)
        for n in range(100_000):
            pipe.set(f"key:{n}", "x" * 300)
            if n % 5000 == 4999:
                pipe.execute()
        pipe.execute()
        ratio = float(admin.info("memory")["mem_fragmentation_ratio"])
        admin.flushall()
        return ratio
    finally:
        admin.close()


def test_fragmentation_ratio_under_load(rillet_server, redis8_server):
    """~40 MB of strings: RSS per byte of data, not the interpreter's size (a standard
    alert fires over 1.5; the bound leaves room for what other tests left on the shared
    servers and for the allocator's state)."""
    for ratio in (_fragmentation_loaded(rillet_server.port), _fragmentation_loaded(redis8_server.port)):
        assert 0.9 < ratio < 2.0


_BUSY_SCRIPT = "local i = 0 while i < 3000000 do i = i + 1 end return i"


def _latency_monitor(port: int) -> list[bytes]:
    admin = redis.Redis(port=port)
    try:
        with Wire(port) as wire:
            shown = [wire.call("LATENCY", "DOCTOR")[:60]]
            wire.call("CONFIG", "SET", "latency-monitor-threshold", "1")
            shown.append(wire.call("LATENCY", "DOCTOR"))  # enabled, nothing seen yet
            wire.call("EVAL", _BUSY_SCRIPT, "0")
            latest = admin.execute_command("LATENCY", "LATEST")
            assert [row[0] for row in latest] == [b"command"] and latest[0][2] >= 1
            assert len(admin.execute_command("LATENCY", "HISTORY", "command")) == 1
            shown.append(re.sub(rb"\d+", b"N", wire.call("LATENCY", "DOCTOR")))
            shown.append(wire.call("LATENCY", "RESET", "command", "bogus"))
            shown.append(wire.call("LATENCY", "LATEST"))
            # Keys expiring by the thousand: the expire cycle takes over 1 ms.
            wire.send_raw(b"".join(encode_command("SET", f"e{n}", "v", "PX", "50")
                                   for n in range(20_000)))
            for _ in range(20_000):
                wire.read_reply()
            deadline = time.monotonic() + 10
            while not any(row[0] == b"expire-cycle"
                          for row in admin.execute_command("LATENCY", "LATEST")):
                assert time.monotonic() < deadline, "no expire-cycle event"
                time.sleep(0.05)
            # (Redis may have more events by now: expire-del, module-acquire-GIL...)
            assert int(wire.call("LATENCY", "RESET")[1:-2]) >= 1
            wire.call("CONFIG", "SET", "latency-monitor-threshold", "0")
            # (The RESET itself may have taken over 1 ms on a loaded machine, an event
            # that later tests' LATENCY GRAPH would see: gone now the monitor is off.)
            wire.call("LATENCY", "RESET")
            return shown
    finally:
        admin.close()


def test_latency_monitor(rillet_server, redis8_server):
    assert _latency_monitor(rillet_server.port) == _latency_monitor(redis8_server.port)


def _client_views(port: int) -> list[object]:
    seen: list[object] = []
    admin = redis.Redis(port=port)
    with Wire(port) as mon, Wire(port) as other:
        assert mon.call("MONITOR") == b"+OK\r\n"
        other.call("PING", "a")
        seen.append(_MASK.sub(rb"+T [\1 addr]", mon.read_reply()))
        seen.append(mon.call("RESET"))  # no longer a monitor, and not shown its RESET
        other.call("CLIENT", "NO-EVICT", "ON")
        other.call("CLIENT", "NO-TOUCH", "ON")
        seen.append(re.search(rb"flags=\S+", other.call("CLIENT", "INFO")).group())
        other.call("RESET")
        seen.append(re.search(rb"flags=\S+", other.call("CLIENT", "INFO")).group())
        seen.append(mon.call("PING", "after"))
    admin.set("k", "v")
    time.sleep(1.5)
    assert admin.object("idletime", "k") >= 1
    admin.touch("k")
    seen.append(admin.object("idletime", "k"))
    admin.close()
    return seen


def test_client_flags_monitor_reset_and_touch(rillet_server, redis8_server):
    ours = _client_views(rillet_server.port)
    assert ours == _client_views(redis8_server.port)
    assert ours[2:4] == [b"flags=eT", b"flags=N"]


def _buffers(line: bytes) -> tuple[int, int]:
    found = re.search(rb" qbuf=(\d+) .* argv-mem=(\d+) ", line)
    assert found is not None, line
    return int(found.group(1)), int(found.group(2))


def test_client_info_shows_the_running_command(pair8):
    for wire in (pair8.ours, pair8.ref):
        info = wire.call("CLIENT", "INFO")
        own_id = re.search(rb"id=(\d+)", info).group(1)
        listed = wire.call("CLIENT", "LIST", "ID", own_id)
        assert [_buffers(info), _buffers(listed)] == [
            (26, 10), (len(encode_command("CLIENT", "LIST", "ID", own_id)), 12 + len(own_id))]


def _waits_in_slowlog(port: int) -> list[list[bytes]]:
    admin = redis.Redis(port=port)
    try:
        admin.config_set("slowlog-log-slower-than", 0)
        admin.slowlog_reset()
        for command in (("WAIT", "1", "100"), ("WAITAOF", "0", "1", "100")):
            with Wire(port) as waiting:
                waiting.send_raw(encode_command(*command))
                _wait_blocked(admin, 1)
                admin.execute_command("PING", "during")
                waiting.read_reply()
            admin.execute_command("PING", "after")
        admin.config_set("slowlog-log-slower-than", 10000)
        return [entry[3] for entry in reversed(admin.execute_command("SLOWLOG", "GET", "-1"))
                if entry[3][0] not in (b"INFO", b"CONFIG")]
    finally:
        admin.close()


def test_wait_and_waitaof_are_logged_once_when_they_return(rillet_server, redis8_server):
    # Redis logs a blocked WAIT/WAITAOF when it unblocks (after what ran meanwhile).
    ours = _waits_in_slowlog(rillet_server.port)
    assert ours == _waits_in_slowlog(redis8_server.port)
    assert ours[1:] == [[b"PING", b"during"], [b"WAIT", b"1", b"100"], [b"PING", b"after"],
                        [b"PING", b"during"], [b"WAITAOF", b"0", b"1", b"100"],
                        [b"PING", b"after"]]
