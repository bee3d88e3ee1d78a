"""The console in process: the stream finder, /metrics under redis_exporter's names, access.

A ServerState on a manual clock (tests/helpers/bodies.Server) runs the commands;
`Console.handle` answers as the HTTP listener would have it answer.
"""

from __future__ import annotations

import base64
import json
import re

import pytest

from rillet.console import Console
from rillet.console.streams import live_streams
from rillet.engine.keyspace import Keyspace
from rillet.engine.stream import Stream
from tests.helpers.bodies import Server

EXAMPLE = [
    [b"XADD", b"orders", b"1-1", b"amount", b"10"],
    [b"XADD", b"orders", b"2-1", b"amount", b"20"],
    [b"XADD", b"orders", b"3-1", b"amount", b"30"],
    [b"XGROUP", b"CREATE", b"orders", b"billing", b"0"],
    [b"XREADGROUP", b"GROUP", b"billing", b"alice", b"COUNT", b"2", b"STREAMS", b"orders", b">"],
]


def _server(*commands: list[bytes]) -> Server:
    server = Server(sinks=False)
    for argv in commands:
        reply = server.run(argv)
        assert not reply.startswith(b"-"), (argv, reply)
    return server


def _get(console: Console, path: str, auth: bytes | None = None):
    header = None if auth is None else "Basic " + base64.b64encode(auth).decode()
    return console.handle("GET", path, header, "id=0 addr=127.0.0.1:1 laddr=127.0.0.1:2").finish()


def _samples(body: bytes) -> dict[str, str]:
    """`name{labels}` -> value, after checking the text format (TYPE before samples,
    each family in one block, label values quoted and escaped)."""
    sample = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*"'
                        r'(?:,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*")*\})? (\S+)$')
    out: dict[str, str] = {}
    typed: list[str] = []
    current = None
    for line in body.decode().splitlines():
        if line.startswith("# TYPE "):
            name, kind = line.split()[2:4]
            assert name not in typed, f"family {name} in two blocks"
            assert kind in ("gauge", "counter")
            typed.append(name)
            current = name
            continue
        if line.startswith("# HELP "):
            continue
        match = sample.match(line)
        assert match, line
        assert match.group(1) == current, line
        float(match.group(3))
        out[match.group(1) + (match.group(2) or "")] = match.group(3)
    return out


def test_metrics_of_the_issue_example():
    # Per-command call counts live on the process's one command table: other tests in
    # this process have counted theirs there too.
    server = _server([b"CONFIG", b"RESETSTAT"], *EXAMPLE)
    server.clock.advance(1500)
    response = _get(Console(server.state), "/metrics")
    assert response.status == 200
    assert response.content_type == "text/plain; version=0.0.4; charset=utf-8"
    samples = _samples(response.body)
    stream = 'db="db0",stream="orders"'
    group = stream + ',group="billing"'
    consumer = group + ',consumer="alice"'
    assert samples[f"redis_stream_length{{{stream}}}"] == "3"
    assert samples[f"redis_stream_groups{{{stream}}}"] == "1"
    assert samples[f"redis_stream_first_entry_id{{{stream}}}"] == "1"
    assert samples[f"redis_stream_last_entry_id{{{stream}}}"] == "3"
    assert samples[f"redis_stream_last_generated_id{{{stream}}}"] == "3"
    assert samples[f"redis_stream_group_lag{{{group}}}"] == "1"
    assert samples[f"redis_stream_group_messages_pending{{{group}}}"] == "2"
    assert samples[f"redis_stream_group_consumers{{{group}}}"] == "1"
    assert samples[f"redis_stream_group_entries_read{{{group}}}"] == "2"
    assert samples[f"redis_stream_group_last_delivered_id{{{group}}}"] == "2"
    assert samples[f"redis_stream_group_consumer_messages_pending{{{consumer}}}"] == "2"
    assert samples[f"redis_stream_group_consumer_idle_seconds{{{consumer}}}"] == "1.5"
    assert samples["redis_up"] == "1"
    assert samples['redis_commands_total{cmd="xadd"}'] == "3"
    assert samples['redis_commands_total{cmd="xreadgroup"}'] == "1"
    assert samples['redis_commands_processed_total'] == "6"  # RESETSTAT counts as it returns
    assert samples['redis_db_keys{db="db0"}'] == "1"
    assert samples['redis_db_keys{db="db15"}'] == "0"
    assert samples["redis_connected_clients"] == "1"
    assert "redis_memory_used_bytes" in samples
    assert samples["redis_keyspace_hits_total"].isdigit()
    assert samples["redis_master_repl_offset"] == "0"
    assert "rillet_console_last_render_seconds" in samples
    # The types redis_exporter gives them.
    text = response.body.decode()
    assert "# TYPE redis_commands_total counter" in text
    assert "# TYPE redis_keyspace_misses_total counter" in text
    assert "# TYPE redis_stream_length gauge" in text


def test_metrics_count_the_stream_policies():
    server = _server([b"CONFIG", b"SET", b"stream-node-max-entries", b"1"],  # XADD trims whole nodes
                     *EXAMPLE, [b"XADD", b"orders", b"4-1", b"amount", b"40"],
                     [b"RILLET.XDEADLETTER", b"orders", b"billing", b"1", b"orders:dead"],
                     [b"XREADGROUP", b"GROUP", b"billing", b"alice", b"STREAMS", b"orders", b"0"],
                     [b"RILLET.XRETENTION", b"orders", b"1000"],
                     [b"XADD", b"orders", b"*", b"amount", b"50"])  # the clock is far past 4-1
    samples = _samples(_get(Console(server.state), "/metrics").body)
    assert samples["rillet_stream_deadlettered_total"] == "2"
    assert samples["rillet_stream_retention_trimmed_total"] == "4"
    assert "# TYPE rillet_stream_deadlettered_total counter" in _get(
        Console(server.state), "/metrics").body.decode()


def test_nil_lag_is_left_out_and_names_are_escaped():
    # A deletion between the group and the end makes Redis's lag nil.
    server = _server(*EXAMPLE, [b"XDEL", b"orders", b"3-1"], [b"XADD", b"orders", b"4-1", b"a", b"b"],
                     [b"XADD", b'we"ird\\name', b"1-1", b"a", b"b"])
    samples = _samples(_get(Console(server.state), "/metrics").body)
    assert not any(name.startswith("redis_stream_group_lag") for name in samples)
    assert samples['redis_stream_length{db="db0",stream="we\\"ird\\\\name"}'] == "1"


def test_replica_offsets_of_a_master():
    server = _server()
    info = "\r\n".join(["# Replication", "role:master", "connected_slaves:1",
                        "slave0:ip=127.0.0.1,port=7001,state=online,offset=120,lag=1",
                        "master_repl_offset:150"])
    from rillet.console import metrics

    out = metrics.Exposition()
    metrics.add_info(out, info, 1)
    samples = _samples(out.render())
    replica = 'slave_ip="127.0.0.1",slave_port="7001",slave_state="online"'
    assert samples[f"redis_connected_slave_offset_bytes{{{replica}}}"] == "120"
    assert samples[f"redis_connected_slave_lag_seconds{{{replica}}}"] == "1"
    assert samples["redis_master_repl_offset"] == "150"
    assert samples["redis_connected_slaves"] == "1"
    assert server  # (the state is not needed: INFO's text is the input)


def test_overview_json():
    server = _server(*EXAMPLE)
    server.clock.advance(4000)
    response = _get(Console(server.state), "/api/overview")
    assert response.content_type == "application/json"
    data = json.loads(response.body)
    (stream,) = data["streams"]
    assert (stream["key"], stream["length"], stream["first_id"], stream["last_id"]) == (
        "orders", 3, "1-1", "3-1")
    (group,) = stream["groups"]
    assert (group["name"], group["lag"], group["pending"], group["oldest_pending_id"]) == (
        "billing", 1, 2, "1-1")
    assert group["oldest_pending_idle_ms"] == 4000
    assert group["consumers"] == [{"name": "alice", "pending": 2, "idle_ms": 4000}]
    assert data["replication"]["role"] == "master"
    assert data["dead_letters"] == []


def test_page_carries_its_first_data():
    server = _server(*EXAMPLE, [b"XADD", b"</script><b>x", b"1-1", b"a", b"b"])
    response = _get(Console(server.state), "/")
    assert response.content_type == "text/html; charset=utf-8"
    assert b"/*INITIAL*/" not in response.body
    assert b'"billing"' in response.body
    # A key name cannot close the script element it is inlined in.
    assert b"</script><b>" not in response.body
    assert _get(Console(server.state), "/console.js").status == 200
    assert _get(Console(server.state), "/console.css").status == 200
    assert _get(Console(server.state), "/nothing").status == 404
    post = Console(server.state).handle("POST", "/metrics", None, "")
    assert (post.status, post.headers) == (405, [("Allow", "GET, HEAD")])


def test_throughput_history():
    server = _server(*EXAMPLE)
    console = Console(server.state)
    console.tick()
    server.clock.advance(2000)
    for i in range(10):
        server.run([b"XADD", b"orders", b"*", b"n", str(i).encode()])
    console.tick()
    data = json.loads(_get(console, "/api/overview").body)
    assert data["streams"][0]["rates"] == [5.0]  # 10 entries in 2 s
    assert data["ops_rates"] == [5.0]


# --- access ---------------------------------------------------------------------------------


def test_requirepass_asks_for_credentials():
    server = _server(*EXAMPLE, [b"CONFIG", b"SET", b"requirepass", b"s3cret"])
    console = Console(server.state)
    for path in ("/", "/metrics", "/api/overview"):
        refused = _get(console, path)
        assert refused.status == 401
        assert ("WWW-Authenticate", 'Basic realm="rillet", charset="UTF-8"') in refused.headers
        assert _get(console, path, b"default:s3cret").status == 200
    # No credentials is a question, not a failure: nothing logged yet.
    assert server.run([b"ACL", b"LOG"]) == b"*0\r\n"
    assert _get(console, "/metrics", b"default:wrong").status == 401
    log = server.run([b"ACL", b"LOG"])
    assert b"auth" in log and b"toplevel" in log and b"AUTH" in log and b"default" in log
    assert b"acl_access_denied_auth:1" in server.run([b"INFO", b"stats"])


def test_acl_users_see_their_keys_only():
    server = _server(
        *EXAMPLE, [b"XADD", b"secret", b"1-1", b"a", b"b"],
        [b"ACL", b"SETUSER", b"ops", b"on", b">pw", b"~orders", b"+@read", b"+info"],
        [b"ACL", b"SETUSER", b"app", b"on", b">pw", b"~*", b"+xinfo"])
    console = Console(server.state)
    # Other users exist: the (passwordless) default user must name itself too.
    assert _get(console, "/metrics").status == 401
    assert _get(console, "/metrics", b"default:anything").status == 200
    ops = _samples(_get(console, "/metrics", b"ops:pw").body)
    assert 'redis_stream_length{db="db0",stream="orders"}' in ops
    assert not any('stream="secret"' in name for name in ops)
    assert "redis_connected_clients" in ops
    app = _samples(_get(console, "/metrics", b"app:pw").body)
    assert 'redis_stream_length{db="db0",stream="secret"}' in app
    assert "redis_connected_clients" not in app  # no INFO for this user
    overview = json.loads(_get(console, "/api/overview", b"ops:pw").body)
    assert [s["key"] for s in overview["streams"]] == ["orders"]
    assert _get(console, "/metrics", b"ops:nope").status == 401
    assert _get(console, "/metrics", b"nobody:pw").status == 401


@pytest.mark.parametrize("header", ["Bearer abc", "Basic !!!", "Basic " + base64.b64encode(b"nocolon").decode()])
def test_malformed_credentials(header):
    server = _server([b"CONFIG", b"SET", b"requirepass", b"pw"])
    assert Console(server.state).handle("GET", "/metrics", header, "").status == 401


# --- finding streams ------------------------------------------------------------------------


def _found(keyspace: Keyspace, now: int = 1_700_000_000_000) -> set[tuple[int, bytes]]:
    return {(db, key) for db, key, _ in live_streams(keyspace, now)}


def test_the_keyspace_keeps_its_stream_keys():
    from rillet.clock import ManualClock

    keyspace = Keyspace(2, ManualClock())
    db0, db1 = keyspace[0], keyspace[1]
    for i in range(50):
        db0.set(b"k%d" % i, Stream() if i % 5 == 0 else b"v")
    streams = {b"k%d" % i for i in range(0, 50, 5)}
    assert set(db0.streams) == streams  # strings are not in the index
    assert _found(keyspace) == {(0, key) for key in streams}
    db0.delete(b"k0")  # a stream goes
    db0.set(b"k5", b"now a string")  # overwritten in place: still indexed, not listed
    db0.set(b"new", Stream())
    db1.set(b"other", Stream())
    db0.rename(b"k10", b"k10-renamed")
    db0.set_expire(b"k15", 1)  # due: skipped, not deleted
    expected = {(0, key) for key in streams - {b"k0", b"k5", b"k10", b"k15"}}
    assert _found(keyspace) == expected | {(0, b"new"), (1, b"other"), (0, b"k10-renamed")}
    assert b"k15" in db0.data and b"k0" not in db0.streams and b"k10" not in db0.streams
    db0.swap_contents(db1)  # SWAPDB
    assert _found(keyspace) == {(1, key) for _, key in expected} | {
        (1, b"new"), (0, b"other"), (1, b"k10-renamed")}
    db0.flush()
    assert not db0.streams
    db0.set(b"again", Stream())
    assert _found(keyspace) == {(1, key) for _, key in expected} | {
        (1, b"new"), (1, b"k10-renamed"), (0, b"again")}


def test_commands_keep_the_index():
    server = _server(
        [b"XADD", b"a", b"1-1", b"f", b"v"], [b"XGROUP", b"CREATE", b"b", b"g", b"$", b"MKSTREAM"],
        [b"SET", b"s", b"v"], [b"COPY", b"a", b"c"], [b"RENAME", b"b", b"d"],
        [b"MOVE", b"c", b"3"], [b"XADD", b"gone", b"1-1", b"f", b"v"], [b"DEL", b"gone"])
    dump = server.run([b"DUMP", b"a"])
    payload = dump[dump.index(b"\r\n") + 2:-2]
    server.run([b"RESTORE", b"s", b"0", payload, b"REPLACE"])  # a string becomes a stream
    assert _found(server.state.keyspace) == {(0, b"a"), (0, b"d"), (3, b"c"), (0, b"s")}
    server.run([b"SWAPDB", b"0", b"3"])
    assert _found(server.state.keyspace) == {(3, b"a"), (3, b"d"), (0, b"c"), (3, b"s")}
    server.run([b"FLUSHALL"])
    assert _found(server.state.keyspace) == set()


def test_large_answers_are_made_in_steps():
    from rillet.console import STEP_STREAMS

    server = _server(*([b"XADD", b"s%d" % n, b"1-1", b"a", b"b"] for n in range(STEP_STREAMS * 2 + 50)))
    console = Console(server.state)
    user = server.state.acl.default
    for steps in (console.metrics_steps(user), console.overview_steps(user)):
        slices = 0
        while True:
            try:
                next(steps)
                slices += 1
            except StopIteration as done:
                result = done.value
                break
        assert slices == 3  # INFO, then three slices of streams: three turns in between
    assert len(result["streams"]) == STEP_STREAMS * 2 + 50
    body = console.metrics(user)
    assert body.count(b"\nredis_stream_length{") == STEP_STREAMS * 2 + 50


def test_history_is_bounded_per_stream_and_in_count():
    from rillet.console.history import History

    history = History(points=3, max_series=2)
    for n in range(6):
        history.sample(n * 2000, 0, (((0, b"s%d" % i), n * (i + 1)) for i in range(5)))
    assert len(history.streams) == 2  # the first two seen; the others none
    assert {len(series) for series in history.streams.values()} == {3}
    assert list(history.streams[(0, b"s1")]) == [1.0, 1.0, 1.0]  # 2 entries in 2 s
    history.sample(14000, 0, [((0, b"s1"), 20)])
    assert list(history.streams) == [(0, b"s1")]  # a stream gone takes its series along


def test_a_sample_walks_the_streams_in_slices():
    from rillet.console.history import SAMPLE_STREAMS

    server = _server(*([b"XADD", b"s%d" % n, b"1-1", b"a", b"b"] for n in range(SAMPLE_STREAMS * 2 + 5)))
    console = Console(server.state)
    console.tick()
    server.clock.advance(2000)
    slices = sum(1 for _ in console.tick_steps())
    assert slices == 2  # three slices, two turns of the loop in between
    assert len(console.history.streams) == SAMPLE_STREAMS * 2 + 5


def test_a_restricted_user_gets_bounded_slices_too():
    """The ACL check per stream is made in the steps, STEP_STREAMS streams looked at
    a step: a user who may read none of many streams is sliced too."""
    from rillet.console import STEP_STREAMS

    server = _server(*([b"XADD", b"s%d" % n, b"1-1", b"a", b"b"] for n in range(STEP_STREAMS * 2 + 5)),
                     [b"ACL", b"SETUSER", b"few", b"on", b">pw", b"~other*", b"+@all"])
    console = Console(server.state)
    few = server.state.acl.authenticate(b"few", b"pw")
    assert few is not None
    steps = console.overview_steps(few)
    slices = 0
    while True:
        try:
            next(steps)
            slices += 1
        except StopIteration as done:
            assert done.value["streams"] == []
            break
    assert slices == 2  # INFO, then two full slices looked at; the last five none to show
