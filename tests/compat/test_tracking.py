"""CLIENT TRACKING against Redis 8.2.3, raw bytes: option errors, TRACKINGINFO and
GETREDIR, invalidation as RESP3 pushes and as RESP2 `__redis__:invalidate`
messages to a REDIRECT client, OPTIN/OPTOUT with CACHING, BCAST with PREFIX,
NOLOOP, FLUSHDB/FLUSHALL nulls, expiry, a broken redirect, scripts and MULTI."""

from __future__ import annotations

import time

import pytest

from tests.helpers.wire import Wire


@pytest.fixture
def ports(pair8, rillet_server, redis8_server):
    return rillet_server.port, redis8_server.port


class Both:
    """The same connection to rillet and to Redis; client ids are compared as placeholders."""

    def __init__(self, ports) -> None:
        self.conns = [Wire(port) for port in ports]
        self.ids = [int(conn.call("CLIENT", "ID")[1:-2]) for conn in self.conns]

    def _norm(self, side: int, data: bytes, others: list[Both]) -> bytes:
        if len(others) == 1:
            return data  # ids are compared only where a test names a connection
        for n, other in enumerate(others):
            data = data.replace(b":%d\r\n" % other.ids[side], b":<id%d>\r\n" % n)
        return data

    def call(self, *args: object, others: tuple[Both, ...] = (), replies: int = 1) -> bytes:
        """Send to both (an argument `Both` becomes that connection's id there) and compare."""
        results = []
        for side, conn in enumerate(self.conns):
            argv = [a.ids[side] if isinstance(a, Both) else a for a in args]
            conn.sock.sendall(_encode(argv))
            raw = b"".join(conn.reader.read() for _ in range(replies))
            results.append(self._norm(side, raw, [self, *others]))
        assert results[0] == results[1], f"{args!r}:\n  rillet: {results[0]!r}\n  redis:  {results[1]!r}"
        return results[0]

    def read(self, others: tuple[Both, ...] = (), replies: int = 1) -> bytes:
        results = [self._norm(side, b"".join(conn.reader.read() for _ in range(replies)),
                              [self, *others]) for side, conn in enumerate(self.conns)]
        assert results[0] == results[1], f"rillet: {results[0]!r}\nredis:  {results[1]!r}"
        return results[0]

    def hello3(self) -> None:
        """HELLO 3 on both (its reply names the server's version: not compared)."""
        for conn in self.conns:
            conn.call("HELLO", "3")

    def nothing_pending(self) -> None:
        """Neither side has sent anything more (a PING's reply comes next)."""
        self.call("PING")

    def close(self) -> None:
        for conn in self.conns:
            conn.sock.close()


def _encode(argv: list) -> bytes:
    parts = [a if isinstance(a, bytes) else str(a).encode() for a in argv]
    return b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts)


def test_options_errors_and_trackinginfo(ports):
    a, b = Both(ports), Both(ports)
    a.call("CLIENT", "TRACKINGINFO")
    a.call("CLIENT", "GETREDIR")
    for args in (
        ("CLIENT", "TRACKING"),
        ("CLIENT", "TRACKING", "maybe"),
        ("CLIENT", "TRACKING", "on", "foo"),
        ("CLIENT", "TRACKING", "on", "prefix"),
        ("CLIENT", "TRACKING", "on", "redirect"),
        ("CLIENT", "TRACKING", "on", "redirect", "x"),
        ("CLIENT", "TRACKING", "on", "redirect", "0"),
        ("CLIENT", "TRACKING", "on", "redirect", "-5"),
        ("CLIENT", "TRACKING", "on", "redirect", "99999999"),
        ("CLIENT", "TRACKING", "on", "redirect", b, "redirect", b),
        ("CLIENT", "TRACKING", "off", "redirect", "99999999"),
        ("CLIENT", "TRACKING", "on", "prefix", "a"),
        ("CLIENT", "TRACKING", "on", "optin", "optout"),
        ("CLIENT", "TRACKING", "on", "bcast", "optin"),
        ("CLIENT", "TRACKING", "on", "optout", "optin", "prefix", "x"),
        ("CLIENT", "TRACKING", "on", "bcast", "prefix", "a", "prefix", "ab"),
        ("CLIENT", "TRACKING", "on", "bcast", "prefix", "a", "prefix", "a"),
        ("CLIENT", "TRACKING", "off", "bcast", "prefix", "a", "prefix", "ab"),
        ("CLIENT", "TRACKING", "off", "foo"),
        ("CLIENT", "CACHING", "yes"),
        ("CLIENT", "CACHING", "maybe"),
        ("CLIENT", "CACHING"),
        ("CLIENT", "TRACKINGINFO", "x"),
        ("CLIENT", "GETREDIR", "x"),
    ):
        a.call(*args, others=(b,))
    a.call("CLIENT", "TRACKING", "on")
    a.call("CLIENT", "CACHING", "yes")
    a.call("CLIENT", "CACHING", "no")
    a.call("CLIENT", "TRACKINGINFO")
    a.call("CLIENT", "TRACKING", "on", "bcast")
    a.call("CLIENT", "TRACKING", "on", "optin")
    a.call("CLIENT", "CACHING", "yes")
    a.call("CLIENT", "CACHING", "no")
    a.call("CLIENT", "TRACKINGINFO")
    a.call("CLIENT", "TRACKING", "on", "optout")
    a.call("CLIENT", "TRACKING", "off")
    a.call("CLIENT", "TRACKING", "on", "optout", "noloop")
    a.call("CLIENT", "CACHING", "yes")
    a.call("CLIENT", "CACHING", "no")
    a.call("CLIENT", "CACHING", "maybe")
    a.call("CLIENT", "TRACKINGINFO")
    a.call("CLIENT", "TRACKING", "off")
    a.call("CLIENT", "TRACKING", "ON", "BCAST")
    a.call("CLIENT", "TRACKINGINFO")
    a.call("CLIENT", "TRACKING", "on", "bcast", "prefix", "x")
    a.call("CLIENT", "TRACKING", "off")
    a.call("CLIENT", "TRACKING", "on", "bcast", "prefix", "a", "prefix", "b", "noloop")
    a.call("CLIENT", "TRACKING", "on", "bcast", "prefix", "ab")
    a.call("CLIENT", "TRACKING", "on", "bcast", "prefix", "c")
    a.call("CLIENT", "TRACKINGINFO")
    a.call("CLIENT", "TRACKING", "off")
    # Redis answers an overlap past the first prefix with an error and +OK, tracking on.
    a.call("CLIENT", "TRACKING", "on", "bcast", "prefix", "b", "prefix", "a", "prefix", "ab",
           replies=2)
    a.call("CLIENT", "TRACKINGINFO")
    a.hello3()
    a.call("CLIENT", "TRACKINGINFO")
    a.call("RESET")
    a.call("CLIENT", "TRACKINGINFO")
    a.call("CLIENT", "TRACKING", "on", "redirect", b, others=(b,))
    a.call("CLIENT", "GETREDIR", others=(b,))
    a.call("CLIENT", "TRACKINGINFO", others=(b,))
    a.call("CLIENT", "TRACKING", "on")
    a.call("CLIENT", "GETREDIR")
    a.close()
    b.close()


def test_resp3_push_invalidation(ports):
    writer, a = Both(ports), Both(ports)
    a.hello3()
    a.call("CLIENT", "TRACKING", "on")
    a.call("GET", "k1")
    a.call("MGET", "k2", "k3")
    a.call("HGET", "h", "f")
    writer.call("SET", "k1", "v")
    a.read()
    writer.call("MSET", "k2", "1", "k3", "2")
    a.read(replies=2)
    writer.call("HSET", "h", "f", "1")
    a.read()
    writer.call("SET", "k1", "again")  # no longer tracked: nothing
    a.nothing_pending()
    # The client's own write: the push follows the reply.
    a.call("GET", "own")
    a.call("SET", "own", "1", replies=2)
    a.call("GET", "own")
    a.call("MULTI")
    a.call("SET", "own", "2")
    a.call("INCR", "other")
    a.call("EXEC", replies=2)
    a.call("GET", "s")
    a.call("EVAL", "return redis.call('SET', KEYS[1], 'x')", "1", "s", replies=2)
    a.call("EVAL", "return redis.call('GET', KEYS[1])", "1", "s")
    writer.call("APPEND", "s", "y")
    a.read()
    a.call("GET", "st")
    writer.call("XADD", "st", "1-1", "f", "v")
    a.read()
    a.call("XRANGE", "st", "-", "+")
    writer.call("XTRIM", "st", "MAXLEN", "0")
    a.read()
    # FLUSHDB by the client itself: Redis 8.2 writes the null before the reply.
    a.call("GET", "f1")
    a.call("FLUSHDB", replies=2)
    a.call("GET", "f1")
    writer.call("FLUSHALL")
    a.read()
    a.nothing_pending()
    a.close()
    writer.close()


def test_noloop_optin_optout(ports):
    writer, a = Both(ports), Both(ports)
    a.hello3()
    a.call("CLIENT", "TRACKING", "on", "noloop")
    a.call("GET", "n1")
    a.call("SET", "n1", "v")
    a.call("GET", "n1")
    writer.call("SET", "n1", "w")
    a.read()
    a.call("CLIENT", "TRACKING", "off")
    a.call("CLIENT", "TRACKING", "on", "optin")
    a.call("GET", "o1")
    a.call("CLIENT", "CACHING", "yes")
    a.call("GET", "o2")
    a.call("GET", "o3")
    writer.call("MSET", "o1", "1", "o2", "2", "o3", "3")
    a.read()
    a.nothing_pending()
    a.call("CLIENT", "CACHING", "yes")
    a.call("PING")
    a.call("GET", "o3")
    writer.call("MSET", "o1", "1", "o2", "2", "o3", "3")
    a.nothing_pending()
    a.call("CLIENT", "CACHING", "yes")
    a.call("MULTI")
    a.call("GET", "o1")
    a.call("GET", "o2")
    a.call("EXEC")
    writer.call("MSET", "o1", "1", "o2", "2", "o3", "3")
    a.read(replies=2)
    a.call("CLIENT", "CACHING", "yes")
    a.call("CLIENT", "ID", others=(a,))
    a.call("GET", "o3")
    a.call("CLIENT", "CACHING", "yes")
    a.call("EVAL", "return redis.call('GET', KEYS[1])", "1", "o1")
    writer.call("MSET", "o1", "1", "o3", "3")
    a.read(replies=2)
    a.call("CLIENT", "TRACKING", "off")
    a.call("CLIENT", "TRACKING", "on", "optout")
    a.call("GET", "p1")
    a.call("CLIENT", "CACHING", "no")
    a.call("GET", "p2")
    writer.call("MSET", "p1", "1", "p2", "2")
    a.read()
    a.nothing_pending()
    a.close()
    writer.close()


def test_bcast_prefixes(ports):
    writer, a, b = Both(ports), Both(ports), Both(ports)
    a.hello3()
    b.hello3()
    a.call("CLIENT", "TRACKING", "on", "bcast", "prefix", "p:", "prefix", "q:")
    b.call("CLIENT", "TRACKING", "on", "bcast", "noloop")
    writer.call("MSET", "p:1", "1", "q:1", "2", "z", "3", "p:2", "4")
    a.read(replies=2)
    b.read()
    a.call("SET", "p:9", "1", replies=2)
    b.read()
    b.call("SET", "p:8", "1")  # NOLOOP: its own change is not sent back
    a.read()
    b.nothing_pending()
    writer.call("FLUSHALL")
    a.read()
    b.read()
    a.close()
    b.close()
    writer.close()


def test_resp2_redirect_and_broken_redirect(ports):
    writer, a, target = Both(ports), Both(ports), Both(ports)
    a.call("CLIENT", "TRACKING", "on", "redirect", target, others=(target,))
    a.call("GET", "k1")
    writer.call("SET", "k1", "v")
    target.nothing_pending()  # not subscribed: RESP2 has nowhere to put it
    target.call("SUBSCRIBE", "unrelated")
    a.call("GET", "k1")
    writer.call("SET", "k1", "w")
    target.read()
    a.call("GET", "k2")
    writer.call("FLUSHDB")
    target.read()
    a.call("GET", "k3")
    writer.call("SWAPDB", "0", "1")
    target.call("PING")
    writer.call("SWAPDB", "0", "1")
    writer.call("SET", "k3", "x")
    target.read()
    # A RESP3 tracker redirecting to a RESP2 subscriber: its FLUSHALL null is RESP3's.
    r3 = Both(ports)
    r3.hello3()
    r3.call("CLIENT", "TRACKING", "on", "redirect", target, others=(target,))
    r3.call("GET", "z")
    writer.call("SET", "z", "1")
    target.read()
    writer.call("FLUSHALL")
    target.read(replies=2)
    target.close()
    time.sleep(0.2)  # both servers notice the closed connection
    r3.call("GET", "gone")
    r3.call("SET", "gone", "1", others=(target,), replies=2)
    r3.call("CLIENT", "TRACKINGINFO", others=(target,))
    r3.call("CLIENT", "GETREDIR", others=(target,))
    a.call("SET", "k9", "1")  # RESP2 tracker: the broken redirect is only flagged
    for conn in (r3, a, writer):
        conn.close()


def test_expiry_invalidates(ports):
    writer, a = Both(ports), Both(ports)
    a.hello3()
    a.call("CLIENT", "TRACKING", "on")
    writer.call("SET", "ex", "v", "PX", "150")
    a.call("GET", "ex")
    # Active expiry (or the lazy one on the next access) sends the invalidation.
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if all(conn.call("EXISTS", "ex") == b":0\r\n" for conn in writer.conns):
            break
        time.sleep(0.05)
    a.read()
    a.nothing_pending()
    a.close()
    writer.close()


@pytest.mark.parametrize("server", ["rillet", "redis8"])
def test_redis_py_client_side_cache(server, rillet_server, redis8_server):
    """redis-py's client-side caching (RESP3, CLIENT TRACKING on) sees other clients' writes."""
    redis = pytest.importorskip("redis")
    cache_module = pytest.importorskip("redis.cache")
    port = (rillet_server if server == "rillet" else redis8_server).port
    cached = redis.Redis(port=port, protocol=3, cache_config=cache_module.CacheConfig())
    other = redis.Redis(port=port)
    try:
        other.delete("csc:a", "csc:b")
        other.set("csc:a", "1")
        assert cached.get("csc:a") == b"1"
        assert cached.get("csc:a") == b"1"  # from the cache
        cache = cached.get_cache()
        assert cache is not None and cache.size >= 1
        other.set("csc:a", "2")
        deadline = time.monotonic() + 10
        while cached.get("csc:a") != b"2" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert cached.get("csc:a") == b"2"
        other.hset("csc:b", "f", "x")
        assert cached.hget("csc:b", "f") == b"x"
        other.hset("csc:b", "f", "y")
        deadline = time.monotonic() + 10
        while cached.hget("csc:b", "f") != b"y" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert cached.hget("csc:b", "f") == b"y"
        other.flushall()
        deadline = time.monotonic() + 10
        while cached.get("csc:a") is not None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert cached.get("csc:a") is None
    finally:
        cached.close()
        other.close()


def test_help_texts(pair8):
    """CLIENT HELP (with the tracking subcommands), FUNCTION HELP and SCRIPT HELP, as Redis 8.2.3."""
    pair8.check("CLIENT", "HELP")
    pair8.check("FUNCTION", "HELP")
    pair8.check("SCRIPT", "HELP")


def _until_pong(conn) -> list[bytes]:
    """The invalidation pushes read before a PING's reply (the PING is sent here)."""
    conn.sock.sendall(_encode(["PING"]))
    pushes = []
    while True:
        frame = conn.reader.read()
        if frame == b"+PONG\r\n":
            return pushes
        assert frame.startswith(b">2\r\n$10\r\ninvalidate\r\n*1\r\n"), frame
        pushes.append(frame.rsplit(b"\r\n", 2)[-2])


def _tracking_info(conn) -> dict[str, int]:
    raw = conn.call("INFO", "stats").decode()
    return {k: int(v) for k, v in (line.split(":") for line in raw.split("\r\n") if line.startswith("tracking_"))}


def test_table_max_keys_evicts_with_invalidations(ports):
    """tracking-table-max-keys: past it, keys leave the table and their clients get
    invalidations (which keys is random in Redis: their number is compared)."""
    admin, a = Both(ports), Both(ports)
    admin.call("CONFIG", "SET", "tracking-table-max-keys", "-1")
    admin.call("CONFIG", "SET", "tracking-table-max-keys", "x")
    admin.call("CONFIG", "SET", "tracking-table-max-keys", "3")
    try:
        a.hello3()
        a.call("CLIENT", "TRACKING", "on")
        keys = [f"mk{i}" for i in range(10)]
        a.call("MGET", *keys)
        for conn in a.conns:
            evicted = _until_pong(conn)
            assert len(evicted) == 7 and len(set(evicted)) == 7
            assert set(evicted) <= {k.encode() for k in keys}
            assert _tracking_info(conn) == {"tracking_total_keys": 3, "tracking_total_items": 3,
                                            "tracking_total_prefixes": 0}
        admin.call("CONFIG", "SET", "tracking-table-max-keys", "1")  # a lower limit
        for conn in a.conns:
            assert len(_until_pong(conn)) == 2
            assert _tracking_info(conn)["tracking_total_keys"] == 1
        admin.call("CONFIG", "SET", "tracking-table-max-keys", "0")  # no limit
        a.call("MGET", "nk1", "nk2", "nk3")
        for conn in a.conns:
            assert _until_pong(conn) == []
            assert _tracking_info(conn)["tracking_total_keys"] == 4
        admin.call("FLUSHALL")
        a.read()  # the null
        for conn in a.conns:
            assert _tracking_info(conn)["tracking_total_keys"] == 0
    finally:
        admin.call("CONFIG", "SET", "tracking-table-max-keys", "1000000")
        a.close()
        admin.close()
