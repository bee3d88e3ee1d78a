"""A harness written for redis-server starts rillet in its place unchanged.

Each server is started as such harnesses do: `<server> <config file>` with `logfile ""`,
its standard output read line by line until Redis's "Ready to accept connections tcp"
line, in Redis's format. The key lines of a start, a SHUTDOWN and a restart that
loads the data must come in the same order and at the same levels as Redis 8.2.3's.
Also redis-server's `--help`, `--version`, `-` (config on standard input) and CONFIG
SET port.
"""

from __future__ import annotations

import os
import queue
import re
import socket
import subprocess
import sys
import threading
import time

import pytest

from tests.helpers import servers
from tests.helpers.wire import Wire, encode_command

# What harnesses wait for: Redis's line format, and its ready line.
LINE = re.compile(r"^(\d+):([MSCX]) (\d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d\.\d{3}) ([.\-*#]) (.*)$")
READY = re.compile(r"^\d+:M \d\d \w{3} \d{4} [\d:.]+ \* Ready to accept connections tcp$")
SIGNAL = re.compile(r"^\d+:signal-handler \(\d+\) (.*)$")

# The lines compared, by their start (what follows varies: versions, figures, ports).
KEY_LINES = (
    "oO0OoO0OoO0Oo Redis is starting oO0OoO0OoO0Oo",
    "Configuration loaded",
    "monotonic clock:",
    "Running mode=standalone, port=",
    "Server initialized",
    "Reading RDB base file on AOF loading...",
    "Loading RDB produced by version",
    "RDB age",
    "RDB memory usage when created",
    "RDB is base AOF",
    "Done loading RDB, keys loaded:",
    "DB loaded from",
    "Creating AOF",
    "Opening AOF",
    "Ready to accept connections",
    "User requested shutdown...",
    "Calling fsync() on the AOF file.",
    "Saving the final RDB snapshot before exiting.",
    "DB saved on disk",
    "Removing the pid file.",
    "Removing the unix socket file.",
    "Redis is now ready to exit, bye bye...",
)


def redis8() -> str:
    binary = servers.redis8_binary()
    if binary is None:
        pytest.skip("Redis 8.2.3 not available")
    return binary


def command(kind: str) -> list[str]:
    if kind == "rillet":
        return [servers.server_python(), "-m", "rillet", "server"]
    return [redis8()]


class Watched:
    """A server process whose standard output is read line by line, as a harness does."""

    def __init__(self, argv: list[str], cwd: str, stdin: str | None = None) -> None:
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     stdin=subprocess.PIPE if stdin is not None else None,
                                     cwd=cwd, text=True)
        if stdin is not None:
            assert self.proc.stdin is not None
            self.proc.stdin.write(stdin)
            self.proc.stdin.close()
        self.lines: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def _next(self, deadline: float, missing: str) -> str | None:
        """The next line, None at the end of the output; fails (killing the server)
        with `missing` if nothing comes by `deadline`."""
        try:
            return self._queue.get(timeout=max(0.01, deadline - time.monotonic()))
        except queue.Empty:
            self.kill()
            pytest.fail(f"{missing}; got {self.lines}")

    def wait_for(self, pattern: re.Pattern[str], timeout_s: float = 60) -> str:
        deadline = time.monotonic() + timeout_s
        while True:
            line = self._next(deadline, f"no line matching {pattern.pattern!r}")
            if line is None:
                pytest.fail(f"output ended before {pattern.pattern!r}; got {self.lines}")
            self.lines.append(line)
            if pattern.search(line):
                return line

    def wait_exit(self, timeout_s: float = 60) -> int:
        deadline = time.monotonic() + timeout_s
        while True:
            line = self._next(deadline, "the server did not exit")
            if line is None:
                return self.proc.wait(timeout_s)
            self.lines.append(line)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


def key_lines(lines: list[str]) -> list[tuple[str, str, str]]:
    """(role, level, the key line's start) for each key line, with rillet's name read as Redis's."""
    found = []
    for line in lines:
        match = LINE.match(line)
        if match is None:
            continue
        message = re.sub(r"^rillet\b|(?<=oO0OoO0OoO0Oo )rillet\b", "Redis", match[5])
        for key in KEY_LINES:
            if message.startswith(key):
                found.append((match[2], match[4], key))
                break
    return found


def write_conf(path: str, port: int, *extra: str) -> str:
    conf = os.path.join(path, "server.conf")
    with open(conf, "w") as handle:
        handle.write(f'port {port}\nbind 127.0.0.1\ndir {path}\nlogfile ""\nsave "3600 1"\n'
                     + "".join(f"{line}\n" for line in extra))
    return conf


def run_life(kind: str, tmp_path, *extra: str) -> tuple[list[str], list[str]]:
    """Start, write a key, SHUTDOWN (saving), start again (loading), SHUTDOWN: both outputs."""
    workdir = str(tmp_path / kind)
    os.makedirs(workdir)
    port = servers.free_port()
    conf = write_conf(workdir, port, *extra)
    outputs = []
    for _ in range(2):
        server = Watched([*command(kind), conf], workdir)
        try:
            server.wait_for(READY)
            with Wire(port) as wire:
                assert wire.call("SET", "k", "v") == b"+OK\r\n"
                wire.send_raw(encode_command("SHUTDOWN"))
            assert server.wait_exit() == 0
        finally:
            server.kill()
        outputs.append(server.lines)
    return outputs[0], outputs[1]


@pytest.mark.parametrize("persistence", ["rdb", "aof"])
def test_log_lines_as_redis(tmp_path, persistence):
    extra = ("appendonly yes",) if persistence == "aof" else ()
    ours = run_life("rillet", tmp_path, *extra)
    theirs = run_life("redis", tmp_path, *extra)
    for output in (*ours, *theirs):
        # Every line in Redis's format (Redis 8.2.3's own overcommit warning included).
        assert all(LINE.match(line) for line in output), output
    assert key_lines(ours[0]) == key_lines(theirs[0])
    assert key_lines(ours[1]) == key_lines(theirs[1])
    # The key was saved and loaded (with an AOF, from its incr file: the base is empty).
    loaded = "keys loaded: 0" if persistence == "aof" else "keys loaded: 1"
    for output in (ours[1], theirs[1]):
        assert any(f"Done loading RDB, {loaded}, keys expired: 0." in line for line in output)


def test_logo_signal_and_unix_socket_lines(tmp_path):
    """`always-show-logo yes`: the logo in place of the mode line; SIGTERM's line; the
    unix socket's ready and removal lines; the pid file's."""
    results = {}
    for kind in ("rillet", "redis"):
        workdir = str(tmp_path / kind)
        os.makedirs(workdir)
        port = servers.free_port()
        conf = write_conf(workdir, port, "always-show-logo yes", f"unixsocket {workdir}/s.sock",
                          f"pidfile {workdir}/s.pid")
        server = Watched([*command(kind), conf], workdir)
        try:
            server.wait_for(re.compile(r"Ready to accept connections unix$"))
            server.proc.terminate()
            assert server.wait_exit() == 0
        finally:
            server.kill()
        pid = server.proc.pid
        text = "\n".join(server.lines)
        assert re.search(rf"\n {{1,2}}[^\n]*\s+Port: {port}\n[^\n]*\s+PID: {pid}\n", text), text
        assert not any("Running mode=" in line for line in server.lines)
        signals = [m[1] for line in server.lines if (m := SIGNAL.match(line))]
        assert signals == ["Received SIGTERM scheduling shutdown..."]
        assert not os.path.exists(f"{workdir}/s.pid") and not os.path.exists(f"{workdir}/s.sock")
        results[kind] = key_lines(server.lines)
    assert results["rillet"] == results["redis"]
    assert ("M", "*", "Removing the unix socket file.") in results["rillet"]


def test_busy_port_lines_as_redis(tmp_path):
    """A port already taken: Redis's two lines (its test suite looks for "Failed listening
    on port" to pick another), and exit status 1."""
    blocker = socket.create_server(("127.0.0.1", 0))
    port = blocker.getsockname()[1]
    got = {}
    try:
        for kind in ("rillet", "redis"):
            workdir = str(tmp_path / kind)
            os.makedirs(workdir)
            server = Watched([*command(kind), write_conf(workdir, port)], workdir)
            try:
                assert server.wait_exit() == 1
            finally:
                server.kill()
            got[kind] = [(m[2], m[4], m[5]) for line in server.lines if (m := LINE.match(line))
                         if m[4] == "#" and "overcommit" not in m[5]]
    finally:
        blocker.close()
    assert got["rillet"] == got["redis"] == [
        ("M", "#", f"Warning: Could not create server TCP listening socket 127.0.0.1:{port}:"
                   " bind: Address already in use"),
        ("M", "#", f"Failed listening on port {port} (tcp), aborting.")]


def test_replica_lines_carry_s(tmp_path):
    """A replica's lines say S from the start (its role comes from the config)."""
    workdir = str(tmp_path)
    port = servers.free_port()
    conf = write_conf(workdir, port, f"replicaof 127.0.0.1 {servers.free_port()}")
    server = Watched([*command("rillet"), conf], workdir)
    try:
        ready = LINE.match(server.wait_for(re.compile(r"Ready to accept connections tcp$")))
        assert ready is not None and ready[2] == "S"
        with Wire(port) as wire:
            assert wire.call("REPLICAOF", "NO", "ONE") == b"+OK\r\n"
            wire.send_raw(encode_command("SHUTDOWN", "NOSAVE"))
        assert server.wait_exit() == 0
    finally:
        server.kill()
    roles = [m[2] for line in server.lines if (m := LINE.match(line))]
    assert roles[-1] == "M"


# A replica's handshake and full sync, as harnesses wait for them (Redis 8.2.3 without
# its rdb channel, which rillet does not have: docs/compat.md).
REPLICA_LINES = (
    "Connecting to MASTER",
    "MASTER <-> REPLICA sync started",
    "Master replied to PING, replication can continue...",
    "Partial resynchronization not possible (no cached master)",
    "Full resync from master:",
    "MASTER <-> REPLICA sync: receiving streamed RDB from master with EOF to disk",
    "MASTER <-> REPLICA sync: Loading DB in memory",
    "MASTER <-> REPLICA sync: Flushing old data",
    "Done loading RDB, keys loaded: 1, keys expired: 0.",
    "MASTER <-> REPLICA sync: Finished with success",
)
MASTER_LINES = ("Replica 127.0.0.1:{port} asks for synchronization",
                "Full resync requested by replica 127.0.0.1:{port}",
                "Synchronization with replica 127.0.0.1:{port} succeeded")


# FAILOVER's hand-over: the old master's lines, then the new one's.
OLD_MASTER_LINES = (
    "FAILOVER requested to any replica.",
    "Failover target 127.0.0.1:{port} is synced, failing over.",
    "Connecting to MASTER 127.0.0.1:{port}",
    "MASTER <-> REPLICA sync started",
    "Master replied to PING, replication can continue...",
    "Trying a partial resynchronization (request",
    "Successful partial resynchronization with master.",
    "MASTER <-> REPLICA sync: Master accepted a Partial Resynchronization.",
)
NEW_MASTER_LINES = (
    "Failover request received for replid",
    "MASTER MODE enabled (failover request from 'id=",
    "Partial resynchronization request from 127.0.0.1:{port} accepted.",
)


def _seen(lines: list[str], keys: tuple[str, ...], **names: int) -> list[tuple[str, str, str]]:
    """(role, level, key) for each line that starts with one of `keys` (formatted with
    `names`; the key is given unformatted)."""
    return [(m[2], m[4], key) for line in lines if (m := LINE.match(line))
            for key in keys if m[5].startswith(key.format(**names))]


def test_replication_and_failover_lines_as_redis(tmp_path):
    got = {}
    for kind in ("rillet", "redis"):
        master_dir, replica_dir = str(tmp_path / f"{kind}-m"), str(tmp_path / f"{kind}-r")
        os.makedirs(master_dir)
        os.makedirs(replica_dir)
        master_port, replica_port = servers.free_port(), servers.free_port()
        # (Redis 8.2.3 without its rdb channel, which rillet does not have.)
        extra = ("repl-rdb-channel no",) if kind == "redis" else ()
        master = Watched([*command(kind), write_conf(
            master_dir, master_port, "repl-diskless-sync-delay 0", *extra)], master_dir)
        replica = None
        try:
            master.wait_for(READY)
            with Wire(master_port) as wire:
                assert wire.call("SET", "k", "v") == b"+OK\r\n"
            replica = Watched([*command(kind), write_conf(
                replica_dir, replica_port, f"replicaof 127.0.0.1 {master_port}",
                "repl-diskless-sync-delay 0", *extra)], replica_dir)
            replica.wait_for(re.compile(r"^\d+:S .* \* MASTER <-> REPLICA sync: Finished with success$"))
            master.wait_for(re.compile(rf"Synchronization with replica 127.0.0.1:{replica_port} succeeded$"))
            synced = (len(master.lines), len(replica.lines))
            with Wire(master_port) as wire:
                assert wire.call("FAILOVER") == b"+OK\r\n"
            master.wait_for(re.compile(r"^\d+:S .* Master accepted a Partial Resynchronization\.$"))
            replica.wait_for(re.compile(rf"^\d+:M .* Partial resynchronization request from"
                                        rf" 127.0.0.1:{master_port} accepted\."))
            # (What they log as they stop, reconnecting and all, is not compared.)
            handed = (len(master.lines), len(replica.lines))
        finally:
            for proc in (replica, master):
                if proc is not None:
                    proc.proc.terminate()
                    proc.wait_exit()
        master_seen = [key for _, _, key in _seen(master.lines[:synced[0]], MASTER_LINES,
                                                  port=replica_port)]
        assert master_seen == list(MASTER_LINES), master.lines
        got[kind] = (_seen(replica.lines[:synced[1]], REPLICA_LINES),
                     _seen(master.lines[synced[0]:handed[0]], OLD_MASTER_LINES,
                           port=replica_port),
                     _seen(replica.lines[synced[1]:handed[1]], NEW_MASTER_LINES,
                           port=master_port))
    assert got["rillet"] == got["redis"], "\n".join(map(str, (*got["rillet"], *got["redis"])))
    assert [key for _, _, key in got["rillet"][0]] == list(REPLICA_LINES)
    assert len(got["rillet"][1]) == len(OLD_MASTER_LINES)
    assert len(got["rillet"][2]) == len(NEW_MASTER_LINES)


BACKGROUND_LINES = (
    "Background saving started by pid",
    "DB saved on disk",
    "Background saving terminated with success",
    "Creating AOF incr file",
    "Background append only file rewriting started by pid",
    "Successfully created the temporary AOF base file",
    "Background AOF rewrite terminated with success",
    "Successfully renamed the temporary AOF base file",
    "Removing the history file",
    "Background AOF rewrite finished successfully",
)


def test_bgsave_and_bgrewriteaof_lines_as_redis(tmp_path):
    """The parent's and the child's (role C) lines of BGSAVE and BGREWRITEAOF."""
    got = {}
    for kind in ("rillet", "redis"):
        workdir = str(tmp_path / kind)
        os.makedirs(workdir)
        port = servers.free_port()
        server = Watched([*command(kind), write_conf(workdir, port, "appendonly yes")], workdir)
        try:
            server.wait_for(READY)
            start = len(server.lines)
            with Wire(port) as wire:
                assert wire.call("SET", "k", "v") == b"+OK\r\n"
                assert wire.call("BGSAVE") == b"+Background saving started\r\n"
                server.wait_for(re.compile(r"Background saving terminated with success$"))
                assert wire.call("BGREWRITEAOF") == (
                    b"+Background append only file rewriting started\r\n")
                server.wait_for(re.compile(r"Background AOF rewrite finished successfully$"))
                end = len(server.lines)
                wire.send_raw(encode_command("SHUTDOWN", "NOSAVE"))
            assert server.wait_exit() == 0
        finally:
            server.kill()
        got[kind] = _seen(server.lines[start:end], BACKGROUND_LINES)
    assert got["rillet"] == got["redis"], got
    assert [key for _, _, key in got["rillet"]] == [
        *BACKGROUND_LINES[:8], "Removing the history file", *BACKGROUND_LINES[8:]]
    assert got["rillet"][1][0] == got["rillet"][5][0] == "C"


def test_loglevel_levels_and_config_set(tmp_path):
    """`loglevel warning` hides notices; CONFIG SET loglevel brings them back."""
    workdir = str(tmp_path)
    port = servers.free_port()
    conf = write_conf(workdir, port, "loglevel warning")
    server = Watched([*command("rillet"), conf, "--save", ""], workdir)
    try:
        servers.wait_ready(port, server.proc, timeout_s=60)
        with Wire(port) as wire:
            assert wire.call("CONFIG", "SET", "loglevel", "notice") == b"+OK\r\n"
            wire.send_raw(encode_command("SHUTDOWN"))
        assert server.wait_exit() == 0
    finally:
        server.kill()
    lines = [m for line in server.lines if (m := LINE.match(line))]
    assert not any(m[5].startswith("Ready to accept") for m in lines)
    assert [(m[4], m[5]) for m in lines if m[5].startswith(("User requested", "rillet is now"))] == [
        ("*", "User requested shutdown..."), ("#", "rillet is now ready to exit, bye bye...")]


# --- redis-server's command line -----------------------------------------------------------

def test_help_and_version_as_redis_server():
    for kind in ("rillet", "redis"):
        for flag in ("--help", "-h"):
            done = subprocess.run([*command(kind), flag], capture_output=True, text=True, timeout=60)
            assert done.returncode == 1 and done.stdout == "", (kind, flag)
            assert done.stderr.startswith("Usage: "), (kind, done.stderr)
            assert "[/path/to/redis.conf] [options] [-]\n" in done.stderr.splitlines()[0] + "\n"
        for flag in ("-v", "--version"):
            done = subprocess.run([*command(kind), flag], capture_output=True, text=True, timeout=60)
            assert done.returncode == 0 and done.stderr == "", (kind, flag)
            assert re.fullmatch(r"\S+ server v=8\.\d+\.\d+ sha=[0-9a-f]{8}:\d malloc=\S+ bits=64"
                                r" build=\S+\n", done.stdout), done.stdout


@pytest.mark.parametrize("shape", ["stdin alone", "file, options, then stdin"])
def test_config_from_standard_input(tmp_path, shape):
    for kind in ("rillet", "redis"):
        workdir = str(tmp_path / kind)
        os.makedirs(workdir)
        port = servers.free_port()
        stdin = f'port {port}\nbind 127.0.0.1\ndir {workdir}\nsave ""\nlogfile ""\n'
        if shape == "stdin alone":
            argv = [*command(kind), "-"]
        else:
            conf = os.path.join(workdir, "base.conf")
            with open(conf, "w") as handle:
                handle.write("maxclients 77\nhz 15\n")
            argv = [*command(kind), conf, "--hz", "20", "-"]
            stdin += "hz 12\n"  # the options come after standard input and win
        server = Watched(argv, workdir, stdin=stdin)
        try:
            server.wait_for(READY)
            with Wire(port) as wire:
                got = wire.call("CONFIG", "GET", "hz")
                clients = wire.call("CONFIG", "GET", "maxclients")
                wire.send_raw(encode_command("SHUTDOWN", "NOSAVE"))
            assert server.wait_exit() == 0
        finally:
            server.kill()
        if shape == "stdin alone":
            assert got == b"*2\r\n$2\r\nhz\r\n$2\r\n10\r\n", kind
        else:
            assert got == b"*2\r\n$2\r\nhz\r\n$2\r\n20\r\n", kind
            assert clients == b"*2\r\n$10\r\nmaxclients\r\n$2\r\n77\r\n", kind


# --- CONFIG SET port ---------------------------------------------------------------------

def _refused(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            return False
    except OSError:
        return True


def test_config_set_port(tmp_path):
    binary = redis8()
    ours = servers.start_rillet()
    theirs = servers.start_redis(binary, kind="redis8")
    blocker = socket.create_server(("127.0.0.1", 0))
    busy = blocker.getsockname()[1]
    answers: dict[str, list[bytes]] = {}
    try:
        for handle in (ours, theirs):
            old = handle.port
            with Wire(old) as wire:
                replies = [wire.call("CONFIG", "SET", "port", value)
                           for value in ("abc", "70000", "-1", str(busy), str(old))]
                new = servers.free_port()
                moved = wire.call("CONFIG", "SET", "port", str(new))
                # The connection made on the old port stays.
                still = wire.call("PING")
            handle.port = new
            with Wire(new) as wire:
                info = wire.call("INFO", "server")
                got = wire.call("CONFIG", "GET", "port")
            assert _refused(old)
            assert moved == b"+OK\r\n" and still == b"+PONG\r\n"
            assert f"tcp_port:{new}\r\n".encode() in info
            assert got == b"*2\r\n$4\r\nport\r\n$%d\r\n%d\r\n" % (len(str(new)), new)
            answers[handle.kind] = replies
        assert answers["rillet"] == answers["redis8"]
        assert answers["rillet"][3] == (b"-ERR CONFIG SET failed (possibly related to argument"
                                        b" 'port') - Unable to listen on this port. Check server"
                                        b" logs.\r\n")
    finally:
        blocker.close()
        ours.stop()
        theirs.stop()


def test_rillet_version_command_is_unchanged():
    done = subprocess.run([sys.executable, "-m", "rillet", "version"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("rillet ")
