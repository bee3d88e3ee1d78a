"""Pub/sub against Redis 8.2.3, raw bytes: subscribe frames, message order, patterns,
shard channels, RESP2's subscribed-mode rule and RESP3 pushes, PUBSUB introspection."""

from __future__ import annotations

import pytest

from tests.helpers.wire import Wire, encode_command


def _cmd(*args: str) -> bytes:
    parts = [a.encode() for a in args]
    return b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts)


@pytest.fixture
def ports(pair8, rillet_server, redis8_server):
    return rillet_server.port, redis8_server.port


def _open(ports) -> tuple[Wire, Wire]:
    return Wire(ports[0]), Wire(ports[1])


def _both(conns, *args: str, replies: int = 1) -> bytes:
    results = []
    for conn in conns:
        conn.send_raw(_cmd(*args))
        results.append(b"".join(conn.read_reply() for _ in range(replies)))
    assert results[0] == results[1], f"{args!r}:\n  rillet: {results[0]!r}\n  redis:  {results[1]!r}"
    return results[0]


def _read(conns, replies: int = 1) -> bytes:
    results = [b"".join(conn.read_reply() for _ in range(replies)) for conn in conns]
    assert results[0] == results[1], f"rillet: {results[0]!r}\nredis:  {results[1]!r}"
    return results[0]


def _read_unordered(conns, replies: int) -> None:
    """Frames whose order Redis leaves to its hash tables (several matching patterns)."""
    results = [sorted(conn.read_reply() for _ in range(replies)) for conn in conns]
    assert results[0] == results[1], f"rillet: {results[0]!r}\nredis:  {results[1]!r}"


@pytest.mark.parametrize("protocol", ["2", "3"])
def test_subscribe_publish_and_order(ports, protocol):
    sub, pub = _open(ports), _open(ports)
    if protocol == "3":
        for conn in sub:
            conn.call("HELLO", "3")
    _both(sub, "SUBSCRIBE", "news", "sport", replies=2)
    _both(sub, "PSUBSCRIBE", "n*", "*", replies=2)
    _both(sub, "SSUBSCRIBE", "shard1", replies=1)
    _both(pub, "PUBSUB", "NUMSUB", "news", "sport", "none")
    _both(pub, "PUBSUB", "NUMPAT")
    _both(pub, "PUBSUB", "SHARDNUMSUB", "shard1", "x")
    _both(pub, "PUBSUB", "SHARDCHANNELS")
    _both(pub, "PUBSUB", "SHARDCHANNELS", "sh*")
    _both(pub, "PUBSUB", "CHANNELS", "sp*")
    _both(pub, "PUBLISH", "sport", "goal")
    _read(sub)  # the channel's message first
    _read(sub)  # then the "*" pmessage
    _both(pub, "PUBLISH", "nobody", "x")
    _read_unordered(sub, 2)  # the n* and "*" pmessages
    _both(pub, "SPUBLISH", "shard1", "hello")
    _read(sub)
    for i in range(5):
        _both(pub, "PUBLISH", "sport", f"m{i}")
    _read(sub, replies=10)
    if protocol == "2":
        _both(sub, "GET", "x")
        _both(sub, "PING")
        _both(sub, "PING", "hi")
        _both(sub, "MULTI")
    else:
        _both(sub, "GET", "x")
        _both(sub, "PING")
    _both(sub, "UNSUBSCRIBE", "sport", "nosuch", replies=2)
    _both(sub, "PUNSUBSCRIBE", "n*", "*", replies=2)  # without names: hash order in Redis
    _both(sub, "SUNSUBSCRIBE", replies=1)
    _both(sub, "UNSUBSCRIBE", replies=1)
    _both(sub, "UNSUBSCRIBE", replies=1)
    _both(sub, "PUNSUBSCRIBE", replies=1)
    _both(sub, "PING")
    for conn in (*sub, *pub):
        conn.close()


def test_pubsub_errors_and_reset(ports):
    conns = _open(ports)
    _both(conns, "SUBSCRIBE")
    _both(conns, "PUBLISH", "a")
    _both(conns, "PUBSUB", "bogus")
    _both(conns, "PUBSUB", "NUMPAT", "x")
    _both(conns, "PUBSUB", "NUMSUB")
    _both(conns, "SUBSCRIBE", "a")
    _both(conns, "RESET")
    _both(conns, "GET", "x")
    for conn in conns:
        conn.close()


def test_pipelined_bursts_mixed_protocols(ports):
    """Messages to several channels, a pattern and a shard channel in one pipeline, to a
    RESP2 and a RESP3 subscriber, then a subscriber switching protocol: every frame in order."""
    sub2, sub3, pub = _open(ports), _open(ports), _open(ports)
    for conn in sub3:
        conn.call("HELLO", "3")
    _both(sub2, "SUBSCRIBE", "a", "b", replies=2)
    _both(sub2, "PSUBSCRIBE", "a*")
    _both(sub3, "SUBSCRIBE", "a")
    _both(sub3, "SSUBSCRIBE", "s")
    verbs = [("PUBLISH", "a"), ("PUBLISH", "b"), ("SPUBLISH", "s")]
    burst = [(*verbs[i % 3], f"m{i}") for i in range(30)]
    for conn in pub:
        conn.send_raw(b"".join(_cmd(*args) for args in burst))
    _read(pub, replies=len(burst))
    _read(sub2, replies=10 * 2 + 10)  # a: message and pmessage; b: message
    _read(sub3, replies=10 + 10)  # a and s
    # A subscriber's own message comes with its pipeline's replies.
    for conn in sub3:
        conn.send_raw(_cmd("PUBLISH", "a", "self") + _cmd("PING"))
    _read(sub3, replies=3)
    _read(sub2, replies=2)
    for conn in sub3:
        assert b"proto\r\n:2\r\n" in conn.call("HELLO", "2")  # (versions and modules differ)
    _both(pub, "PUBLISH", "a", "after-hello")
    _read(sub3)
    _read(sub2, replies=2)
    _both(sub3, "HELLO", "3")  # refused in RESP2's subscribed mode
    for conn in (*sub2, *sub3, *pub):
        conn.close()


def test_own_frames_follow_the_reply(ports):
    """A RESP3 subscriber's own messages (PUBLISH, in MULTI, from a script, with CLIENT REPLY
    OFF, keyspace events) come right after its command's reply, before the next one's."""
    sub = _open(ports)
    for conn in sub:
        conn.call("HELLO", "3")
    _both(sub, "SUBSCRIBE", "a", "__keyevent@0__:set", replies=2)
    pipelines = [
        ([("MULTI",), ("PING", "abc"), ("PUBLISH", "a", "x"), ("PUBLISH", "a", "y"), ("PING", "def"),
          ("EXEC",), ("PING",)], 9),
        ([("EVAL", "redis.call('publish', 'a', 'z'); return 1", "0"), ("PING",)], 3),
        ([("CLIENT", "REPLY", "OFF"), ("PUBLISH", "a", "w"), ("CLIENT", "REPLY", "ON"), ("PING",)], 3),
        ([("SET", "own:k", "v"), ("PING",)], 3),
    ]
    for conn in sub:
        old = conn.call("CONFIG", "GET", "notify-keyspace-events").split(b"\r\n")[-2].decode()
        conn.call("CONFIG", "SET", "notify-keyspace-events", "E$")
    try:
        for commands, replies in pipelines:
            for conn in sub:
                conn.send_raw(b"".join(_cmd(*args) for args in commands))
            _read(sub, replies=replies)
    finally:
        for conn in sub:
            conn.call("CONFIG", "SET", "notify-keyspace-events", old)
            conn.call("DEL", "own:k")
            conn.close()


def test_pubsub_channels_takes_one_pattern(pair8):
    """PUBSUB CHANNELS/SHARDCHANNELS with more than one pattern: Redis's subcommand syntax
    error (the subcommand as typed). Found by the command fuzzer."""
    for sub in ("CHANNELS", "channels", "SHARDCHANNELS"):
        pair8.check("PUBSUB", sub, "?1", "")
        pair8.check("PUBSUB", sub, "*")
        pair8.check("PUBSUB", sub)


def _pipeline(conns, commands, replies: int) -> None:
    """Send `commands` in one write to each, read `replies` frames from each, compare."""
    for conn in conns:
        conn.send_raw(b"".join(_cmd(*args) for args in commands))
    _read(conns, replies=replies)


@pytest.fixture
def quick(ports):
    """Connections that give up after 3 s: a frame never sent fails the test, not hangs it."""
    opened: list[Wire] = []

    def open_pair() -> tuple[Wire, Wire]:
        conns = (Wire(ports[0], timeout=3.0), Wire(ports[1], timeout=3.0))
        opened.extend(conns)
        return conns

    yield open_pair
    for conn in opened:
        conn.close()


@pytest.mark.parametrize("protocol", ["2", "3"])
@pytest.mark.parametrize("mode", ["OFF", "SKIP"])
def test_reply_off_still_sends_pubsub_frames(quick, protocol, mode):
    """CLIENT REPLY OFF|SKIP silences replies, not pushes: (P|S)SUBSCRIBE and
    (P|S)UNSUBSCRIBE confirmations and the messages still reach the client, in RESP2
    and RESP3 (Redis's CLIENT_PUSHING). A client waiting for them used to wait forever."""
    sub, pub = quick(), quick()
    if protocol == "3":
        for conn in sub:
            conn.call("HELLO", "3")
    _pipeline(sub, [("CLIENT", "REPLY", mode), ("SUBSCRIBE", "a", "b")], 2)
    _both(pub, "PUBLISH", "a", "m1")
    _read(sub)
    _pipeline(sub, [("PSUBSCRIBE", "p*"), ("SSUBSCRIBE", "s1")], 2)
    _both(pub, "PUBLISH", "px", "m2")
    _read(sub)
    _both(pub, "SPUBLISH", "s1", "m3")
    _read(sub)
    # PING is a reply (muted under OFF, the SKIP is spent by now): only the frames follow.
    pings = 1 if mode == "SKIP" else 0
    _pipeline(sub, [("PING",), ("UNSUBSCRIBE", "a", "zz"), ("PUNSUBSCRIBE",), ("SUNSUBSCRIBE",),
                    ("UNSUBSCRIBE",), ("UNSUBSCRIBE",)], pings + 6)
    # Nothing else was sent: the next reply read is this OK.
    _both(sub, "CLIENT", "REPLY", "ON")


@pytest.mark.parametrize("protocol", ["2", "3"])
def test_reply_off_keeps_keyspace_and_tracking_pushes(quick, protocol):
    """Under CLIENT REPLY OFF keyspace notifications and CLIENT TRACKING invalidations (RESP3
    pushes; RESP2's redirection to a subscriber of __redis__:invalidate) are still sent."""
    sub, other = quick(), quick()
    for conn in other:
        conn.call("CONFIG", "SET", "notify-keyspace-events", "KEA")
    try:
        if protocol == "3":
            for conn in sub:
                conn.call("HELLO", "3")
            _pipeline(sub, [("CLIENT", "TRACKING", "ON"), ("CLIENT", "REPLY", "OFF"),
                            ("PSUBSCRIBE", "__key*__:*"), ("GET", "rk"), ("SET", "rk", "v")],
                      1 + 1 + 2 + 1)  # TRACKING's OK, the confirmation, two events, its own invalidation
            _both(other, "SET", "rk", "w")
            _read(sub, replies=2)
            # The OK says the muted GET ran (it tracks the key) before the DEL below.
            _pipeline(sub, [("GET", "rk"), ("CLIENT", "REPLY", "ON")], 1)
            _pipeline(sub, [("CLIENT", "REPLY", "OFF"), ("PING",)], 0)
            _both(other, "DEL", "rk")
            _read(sub, replies=3)  # the invalidation, then the two notifications
            _both(sub, "CLIENT", "REPLY", "ON")
        else:
            tracked = quick()
            ids = [conn.call("CLIENT", "ID")[1:-2].decode() for conn in sub]
            _pipeline(sub, [("CLIENT", "REPLY", "OFF"), ("SUBSCRIBE", "__redis__:invalidate"),
                            ("PSUBSCRIBE", "__keyevent@0__:*")], 2)
            for conn, target in zip(tracked, ids, strict=True):
                conn.call("CLIENT", "TRACKING", "ON", "REDIRECT", target)
                conn.call("GET", "rk")
            _both(other, "SET", "rk", "w")
            _read(sub, replies=2)  # the redirected invalidation, the notification
            _both(other, "FLUSHALL")
            _read(sub)  # the null invalidation (FLUSHALL has no keyspace event)
            _pipeline(sub, [("UNSUBSCRIBE",), ("PUNSUBSCRIBE",)], 2)
            _both(sub, "CLIENT", "REPLY", "ON")
    finally:
        for conn in other:
            conn.call("CONFIG", "SET", "notify-keyspace-events", "")


def test_reply_off_mutes_early_errors(quick):
    """Errors found before a command runs (unknown command or subcommand, arity) are replies:
    muted under CLIENT REPLY OFF, and each one spends a SKIP; SKIP does not end an OFF."""
    conns = quick()
    _pipeline(conns, [("CLIENT", "REPLY", "OFF"), ("GET",), ("NOSUCH",), ("CLIENT", "NOSUCH"),
                      ("SUBSCRIBE",), ("CLIENT", "REPLY", "SKIP"), ("PING", "off"),
                      ("CLIENT", "REPLY", "ON")], 1)
    for skipped in [("NOSUCH",), ("GET",), ("CLIENT", "REPLY"), ("CLIENT", "REPLY", "BAD")]:
        _pipeline(conns, [("CLIENT", "REPLY", "SKIP"), skipped, ("PING", "after")], 1)


def test_fanout_to_many_mixed_subscribers_is_byte_identical(ports):
    """Pipelined PUBLISHes (empty, binary, 100 kB messages) to three RESP2 and three RESP3
    subscribers of a channel, two of them also on a pattern: every subscriber gets Redis's
    bytes, and the subscribers of one protocol and subscriptions get the same bytes."""
    sub2 = [_open(ports) for _ in range(3)]
    sub3 = [_open(ports) for _ in range(3)]
    pub = _open(ports)
    for pair in sub3:
        for conn in pair:
            conn.call("HELLO", "3")
    for pair in (*sub2, *sub3):
        _both(pair, "SUBSCRIBE", "fan")
    for pair in (sub2[0], sub3[0]):
        _both(pair, "PSUBSCRIBE", "fa*")
    messages = [b"", b"\x00\r\n\xff", b"x" * 100_000, *(b"m%d" % i for i in range(40))]
    for conn in pub:
        conn.send_raw(b"".join(encode_command("PUBLISH", "fan", m) for m in messages))
    replies = [_read(pub) for _ in messages]
    assert replies == [b":8\r\n"] * len(messages)
    received: dict[tuple[int, ...], set[bytes]] = {}
    for pairs, resp3 in ((sub2, 0), (sub3, 1)):
        for index, pair in enumerate(pairs):
            extra = len(messages) if index == 0 else 0  # the pmessages, each after its message
            data = _read(pair, replies=len(messages) + extra)
            received.setdefault((resp3, index == 0), set()).add(data)
    assert all(len(same) == 1 for same in received.values())
    for pair in (*sub2, *sub3, pub):
        for conn in pair:
            conn.close()
