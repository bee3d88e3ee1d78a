"""`rillet server` as a process: config file and flags, unix socket, maxclients, idle
timeout, SHUTDOWN and SIGTERM, and Redis's own tools (redis-cli, redis-benchmark) against it.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

import pytest
import redis

from tests.helpers import servers
from tests.helpers.wire import Wire


def spawn(args: list[str], workdir: str, port: int) -> servers.ServerHandle:
    log = open(os.path.join(workdir, "server.log"), "ab")
    proc = subprocess.Popen([sys.executable, "-m", "rillet", "server", *args], stdout=log,
                            stderr=subprocess.STDOUT, cwd=workdir)
    handle = servers.ServerHandle("rillet", port, proc, workdir, args)
    try:
        servers.wait_ready(port, proc)
    except RuntimeError:
        handle.stop(sig_kill=True)
        raise
    return handle


def server_log(handle: servers.ServerHandle) -> str:
    with open(os.path.join(handle.dir, "server.log"), encoding="utf-8", errors="replace") as f:
        return f.read()


def wait_exit(handle: servers.ServerHandle, timeout_s: float = 10) -> int:
    try:
        return handle.proc.wait(timeout_s)
    except subprocess.TimeoutExpired:
        handle.stop(sig_kill=True)
        pytest.fail("server did not exit")


@pytest.fixture(scope="module")
def configured():
    """A server configured by a redis.conf file, with flags overriding some of it."""
    workdir = tempfile.mkdtemp(prefix="rillet-cli-")
    port = servers.free_port()
    sock_path = os.path.join(workdir, "rillet.sock")
    conf = os.path.join(workdir, "rillet.conf")
    with open(conf, "w") as f:
        f.write(
            "# rillet test configuration, redis.conf syntax\n"
            f"port {port + 1}\n"
            "bind 127.0.0.1\n"
            f"unixsocket {sock_path}\n"
            "unixsocketperm 700\n"
            "\n"
            "   timeout 1\n"
            "MAXCLIENTS 100\n"
            'dbfilename "my dump.rdb"\n'
            "save ''\n"
            "appendonly no\n"
            "stream-node-max-entries 50\n"
            "stream-node-max-bytes 2kb\n"
            "hz 20\n"
        )
    # Flags come after the file and win, as with redis-server.
    handle = spawn([conf, "--port", str(port), "--maxclients", "3", "--databases", "4",
                    "--dir", workdir, "--loglevel", "verbose"], workdir, port)
    handle.unixsocket = sock_path  # type: ignore[attr-defined]
    yield handle
    handle.stop()


def test_config_file_and_flags(configured):
    with Wire(configured.port) as wire:
        got = redis.Redis(port=configured.port).config_get("*")
        wire.call("PING")
    assert got["port"] == str(configured.port)
    assert got["maxclients"] == "3"
    assert got["timeout"] == "1"
    assert got["databases"] == "4"
    assert got["dbfilename"] == "my dump.rdb"
    assert got["save"] == ""
    assert got["stream-node-max-entries"] == "50"
    assert got["stream-node-max-bytes"] == "2048"
    assert got["hz"] == "20"
    assert got["unixsocketperm"] == "700"


def test_startup_log_line(configured):
    text = server_log(configured)
    assert f"pid={configured.proc.pid}, just started" in text
    assert f"Running mode=standalone, port={configured.port}." in text
    assert "Ready to accept connections tcp\n" in text
    assert "Ready to accept connections unix\n" in text


def test_unix_socket(configured):
    path = configured.unixsocket
    assert oct(os.stat(path).st_mode & 0o777) == "0o700"
    client = redis.Redis(unix_socket_path=path)
    try:
        assert client.ping() is True
        client.set("over-unix", "yes")
        assert client.get("over-unix") == b"yes"
        info = client.client_info()
        assert info["addr"] == info["laddr"] == f"{path}:0"  # as Redis shows unix clients
        assert info["flags"] == "U"
    finally:
        client.delete("over-unix")
        client.close()


def test_maxclients_rejection(configured):
    held = [socket.create_connection(("127.0.0.1", configured.port), timeout=5) for _ in range(3)]
    try:
        for sock in held:
            sock.sendall(b"PING\r\n")
            assert sock.recv(100) == b"+PONG\r\n"
        with socket.create_connection(("127.0.0.1", configured.port), timeout=5) as extra:
            data = b""
            while True:
                chunk = extra.recv(100)
                if not chunk:
                    break
                data += chunk
        assert data == b"-ERR max number of clients reached\r\n"
    finally:
        for sock in held:
            sock.close()
    stats = {}
    for _ in range(50):  # the held sockets' slots free up as the server sees them close
        try:
            stats = redis.Redis(port=configured.port).info("stats")
            break
        except redis.ConnectionError:
            time.sleep(0.1)
    assert stats["rejected_connections"] >= 1


def test_idle_clients_are_closed(configured):
    with socket.create_connection(("127.0.0.1", configured.port), timeout=10) as idle:
        idle.sendall(b"PING\r\n")
        assert idle.recv(100) == b"+PONG\r\n"
        # timeout is 1 s: the server closes the connection without a reply.
        assert idle.recv(100) == b""


def test_bad_configuration_exits_with_an_error(tmp_path):
    for args in (["--nosuchoption", "1"], ["--maxclients", "abc"], [str(tmp_path / "missing.conf")]):
        done = subprocess.run([sys.executable, "-m", "rillet", "server", *args],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 1, args
        assert "FATAL CONFIG FILE ERROR" in done.stderr, done.stderr
    bad = tmp_path / "bad.conf"
    bad.write_text("port 1234\nnosuchdirective yes\n")
    done = subprocess.run([sys.executable, "-m", "rillet", "server", str(bad)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "nosuchdirective" not in done.stdout


def test_shutdown_command_stops_the_server():
    handle = servers.start_rillet()
    try:
        with socket.create_connection(("127.0.0.1", handle.port), timeout=10) as sock:
            sock.sendall(b"*1\r\n$8\r\nSHUTDOWN\r\n")
            assert sock.recv(100) == b""  # no reply: the connection just closes
        assert wait_exit(handle) == 0
        assert "ready to exit" in server_log(handle)
    finally:
        handle.stop(sig_kill=True)


def test_sigterm_stops_the_server():
    handle = servers.start_rillet()
    try:
        with Wire(handle.port) as wire:
            assert wire.call("SET", "k", "v") == b"+OK\r\n"
            handle.proc.send_signal(signal.SIGTERM)
            assert wait_exit(handle) == 0
        assert "ready to exit" in server_log(handle)
    finally:
        handle.stop(sig_kill=True)


# --- Redis's own tools -------------------------------------------------------------------

def tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} not installed")
    return path


def test_redis_cli(rillet_server, configured):
    cli = tool("redis-cli")
    port = str(rillet_server.port)

    def run(*args: str, via: list[str] | None = None) -> str:
        done = subprocess.run([cli, *(via or ["-p", port]), *args], capture_output=True,
                              text=True, timeout=30)
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert run("ping") == "PONG\n"
    assert run("set", "cli-key", "hello world") == "OK\n"
    assert run("get", "cli-key") == "hello world\n"
    assert run("incr", "cli-counter") == "1\n"
    assert "redis_version:8.8.0" in run("info", "server")
    assert run("--no-raw", "get", "missing") == "(nil)\n"
    assert run("--no-raw", "incr", "cli-key").startswith("(error) ERR value is not an integer")
    assert run("-3", "--no-raw", "hello", "3").startswith("1# \"server\" => \"redis\"")
    assert run("ping", via=["-s", configured.unixsocket]) == "PONG\n"
    # Commands on stdin, as in scripts.
    done = subprocess.run([cli, "-p", port], input="set a 1\nget a\ndel a cli-key cli-counter\n",
                          capture_output=True, text=True, timeout=30)
    assert done.stdout.split() == ["OK", "1", "3"]


def test_redis_benchmark(rillet_server):
    bench = tool("redis-benchmark")
    done = subprocess.run([bench, "-p", str(rillet_server.port), "-n", "1000", "-c", "5", "-q",
                           "-t", "ping,set,get"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.replace("\r", "\n").split("\n") if "requests per second" in line]
    names = {line.split(":")[0] for line in lines}
    assert {"PING_INLINE", "PING_MBULK", "SET", "GET"} <= names, done.stdout
    pipelined = subprocess.run([bench, "-p", str(rillet_server.port), "-n", "2000", "-P", "16",
                                "-q", "-t", "set,get"], capture_output=True, text=True, timeout=120)
    assert pipelined.returncode == 0 and pipelined.stdout.count("requests per second") == 2


def test_redis_cli_interactive(rillet_server):
    """Interactive redis-cli fetches COMMAND DOCS for its hints at start; it must cope."""
    import fcntl
    import pty
    import select
    import termios

    cli = tool("redis-cli")
    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover - the child becomes redis-cli
        os.execv(cli, [cli, "-p", str(rillet_server.port)])
    # A screen size: linenoise shows no hints on a terminal 0 columns wide.
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 200, 0, 0))
    out = b""

    def pump(seconds: float) -> None:
        nonlocal out
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            ready, _, _ = select.select([fd], [], [], 0.05)
            if not ready:
                continue
            try:
                data = os.read(fd, 4096)
            except OSError:
                return
            out += data
            if b"\x1b[6n" in data:  # linenoise asks where the cursor is
                os.write(fd, b"\x1b[1;1R")

    try:
        pump(1.0)
        # Typing a command name shows its arguments, built from COMMAND DOCS.
        for char in b"xread ":
            os.write(fd, bytes([char]))
            pump(0.05)
        pump(0.4)
        hinted = out
        os.write(fd, b"\x15")  # ^U: clear the line
        for line in (b"set tty-key hello\r", b"get tty-key\r", b"del tty-key\r", b"quit\r"):
            os.write(fd, line)
            pump(0.4)
    finally:
        deadline = time.monotonic() + 5
        while (done := os.waitpid(pid, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        if done[0] == 0:
            os.kill(pid, signal.SIGKILL)
            done = os.waitpid(pid, 0)
        os.close(fd)
        status = done[1]
    text = out.decode(errors="replace")
    assert os.WEXITSTATUS(status) == 0
    assert b"[COUNT count] [BLOCK milliseconds] STREAMS key [key ...] id [id ...]" in hinted
    assert "OK" in text and '"hello"' in text and "(integer) 1" in text


def test_config_rewrite_keeps_the_file_and_survives_a_restart(tmp_path):
    """CONFIG REWRITE as Redis: comments and order kept, values updated, new ones appended."""
    conf = tmp_path / "rillet.conf"
    port = servers.free_port()
    conf.write_text(f"# the operator's note\nport {port}\ntimeout 1\n\nhz 20\n")
    args = [str(conf), "--save", "", "--dir", str(tmp_path)]
    handle = spawn(args, str(tmp_path), port)
    try:
        client = redis.Redis(port=port)
        assert client.config_get("config_file") == {}  # not a CONFIG parameter
        assert client.info("server")["config_file"] == str(conf)
        client.config_set("timeout", "7")
        client.config_set("maxclients", "123")
        assert client.execute_command("CONFIG", "REWRITE") == b"OK"
    finally:
        handle.stop()
    text = conf.read_text()
    assert text.startswith(f"# the operator's note\nport {port}\ntimeout 7\n\nhz 20\n")
    assert "# Generated by CONFIG REWRITE\n" in text and "maxclients 123\n" in text
    assert 'save ""' in text and f"dir {tmp_path}" in text
    handle = spawn([str(conf)], str(tmp_path), port)
    try:
        got = redis.Redis(port=port).config_get("*")
        assert (got["timeout"], got["maxclients"], got["hz"]) == ("7", "123", "20")
    finally:
        handle.stop()
