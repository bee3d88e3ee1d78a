"""The console's HTTP listener in a real server: /metrics, credentials, HTTP itself, TLS,
protected mode, and the page as a person sees it in headless Chromium.

The Chromium test writes a screenshot of the page to its tmp dir (the path is
printed). It skips when Debian's chromium is missing, unless RILLET_LIBS_REQUIRED=1
(`./dev test`, which installs it), where it fails instead.
"""

from __future__ import annotations

import base64
import html.parser
import http.client
import os
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time

import pytest

from rillet import errors
from tests.helpers import netns, servers
from tests.helpers.tls import have_openssl, make_certs, server_args

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
REQUIRED = os.environ.get("RILLET_LIBS_REQUIRED") == "1"


def _start(*extra: str) -> servers.ServerHandle:
    http_port = servers.free_port()
    handle = servers.start_rillet("--http-port", str(http_port), *extra)
    handle.http_port = http_port  # type: ignore[attr-defined]
    return handle


def _get(port: int, path: str, auth: bytes | None = None, method: str = "GET",
         context: ssl.SSLContext | None = None):
    if context is None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    else:
        conn = http.client.HTTPSConnection("127.0.0.1", port, timeout=10, context=context)
    headers = {}
    if auth is not None:
        headers["Authorization"] = "Basic " + base64.b64encode(auth).decode()
    try:
        conn.request(method, path, headers=headers)
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()


def _example(client) -> None:
    for n in range(3):
        client.xadd("orders", {"amount": str(n)})
    client.xgroup_create("orders", "billing", id="0")
    client.xreadgroup("billing", "alice", {"orders": ">"}, count=2)


@pytest.fixture(scope="module")
def example():
    handle = _start()
    try:
        _example(handle.client())
        yield handle
    finally:
        handle.stop()


def test_metrics_over_http(example):
    status, headers, body = _get(example.http_port, "/metrics")
    assert status == 200
    assert headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
    lines = body.decode().splitlines()
    assert 'redis_stream_length{db="db0",stream="orders"} 3' in lines
    assert 'redis_stream_group_lag{db="db0",stream="orders",group="billing"} 1' in lines
    assert 'redis_stream_group_messages_pending{db="db0",stream="orders",group="billing"} 2' in lines
    assert 'redis_stream_group_consumer_messages_pending{db="db0",stream="orders",group="billing",consumer="alice"} 2' in lines
    assert "redis_up 1" in lines
    assert 'redis_commands_total{cmd="xadd"} 3' in lines


def test_http_keep_alive_head_and_errors(example):
    port = example.http_port
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        # Two pipelined requests on one connection, answered in order.
        sock.sendall(b"HEAD /metrics HTTP/1.1\r\nHost: localhost\r\n\r\nGET /nothing HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        data = b""
        while b"not found" not in data:
            chunk = sock.recv(65536)
            assert chunk
            data += chunk
        first, second = data.split(b"HTTP/1.1 404", 1)
        assert first.startswith(b"HTTP/1.1 200 OK\r\n")
        assert first.endswith(b"\r\n\r\n")  # HEAD: headers only
        assert b"Connection: keep-alive" in first
        sock.sendall(b"GET /metrics HTTP/1.1\r\nConnection: close\r\n\r\n")
        rest = b""
        while chunk := sock.recv(65536):
            rest += chunk
        assert rest.startswith(b"HTTP/1.1 200 OK\r\n") and b"Connection: close" in rest
    for request, status in ((b"POST /metrics HTTP/1.1\r\nContent-Length: 2\r\n\r\nhi", b"413"),
                            (b"BREW /pot HTCPCP/1.0\r\n\r\n", b"400"),
                            (b"GET /metrics HTTP/1.1\r\nX: " + b"a" * 20000, b"431")):
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(request)
            reply = b""
            while chunk := sock.recv(65536):
                reply += chunk
            assert reply.startswith(b"HTTP/1.1 " + status), reply[:80]
    # The RESP side never noticed.
    assert example.client().xlen("orders") == 3


def test_a_large_answer_is_sent_whole_and_in_order():
    """Hundreds of streams: /metrics is made over several loop turns, while RESP
    clients are served; a request pipelined behind it is answered after it."""
    handle = _start()
    try:
        client = handle.client()
        pipe = client.pipeline(transaction=False)
        for n in range(450):
            pipe.xadd(f"s{n}", {"f": "v"})
        pipe.execute()
        with socket.create_connection(("127.0.0.1", handle.http_port), timeout=20) as sock:
            sock.sendall(b"GET /metrics HTTP/1.1\r\n\r\nGET /nothing HTTP/1.1\r\n\r\n")
            data = b""
            while b"not found\n" not in data:
                assert client.ping()  # the RESP side answers meanwhile
                chunk = sock.recv(1 << 20)
                assert chunk
                data += chunk
        first, _, second = data.partition(b"HTTP/1.1 404 Not Found\r\n")
        head, _, body = first.partition(b"\r\n\r\n")
        length = int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0])
        assert len(body) == length
        assert body.count(b"\nredis_stream_length{") == 450
    finally:
        handle.stop()


def test_dns_rebinding_is_refused_under_protected_mode(example):
    port = example.http_port

    def ask(host: bytes) -> bytes:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(b"GET / HTTP/1.1\r\nHost: " + host + b"\r\nConnection: close\r\n\r\n")
            reply = b""
            while chunk := sock.recv(65536):
                reply += chunk
            return reply

    refused = ask(b"attacker.example:%d" % port)
    assert refused.startswith(b"HTTP/1.1 403 ")
    assert refused.endswith(errors.HTTP_HOST_DENIED.encode() + b"\n")
    for host in (b"localhost:%d" % port, b"127.0.0.1:%d" % port, b"[::1]:%d" % port, b"localhost"):
        page = ask(host)
        assert page.startswith(b"HTTP/1.1 200 OK\r\n"), host
        assert b"Content-Security-Policy: default-src 'self'" in page


def test_requirepass_401_then_200():
    handle = _start("--requirepass", "s3cret")
    try:
        client = handle.client(password="s3cret")
        _example(client)
        for path in ("/", "/metrics"):
            status, headers, _ = _get(handle.http_port, path)
            assert status == 401
            assert headers["WWW-Authenticate"] == 'Basic realm="rillet", charset="UTF-8"'
            status, _, body = _get(handle.http_port, path, b"default:s3cret")
            assert status == 200
        assert _get(handle.http_port, "/metrics", b"default:wrong")[0] == 401
        (entry,) = client.acl_log()
        assert (entry["reason"], entry["object"], entry["username"]) == ("auth", "AUTH", "default")
        assert b'redis_stream_length{db="db0",stream="orders"} 3' in body
    finally:
        handle.stop()


@pytest.mark.skipif(not have_openssl(), reason="openssl not installed")
def test_console_speaks_tls_with_the_servers_certificates(tmp_path):
    certs = make_certs(str(tmp_path))
    handle = _start(*server_args(certs, servers.free_port(), "no"))
    try:
        status, _, body = _get(handle.http_port, "/metrics", context=certs.client_context(False))
        assert status == 200 and b"redis_up 1" in body
        with pytest.raises((http.client.HTTPException, ConnectionError, OSError)):
            _get(handle.http_port, "/metrics")  # plain HTTP on a TLS port
    finally:
        handle.stop()


@pytest.mark.skipif(netns.available() is not None, reason=str(netns.available()))
def test_protected_mode_refuses_remote_peers():
    with netns.namespace("cn") as ns:
        for extra, expected in (((), 403), (("--requirepass", "pw"), 401)):
            port, http_port = servers.free_port(), servers.free_port()
            workdir = tempfile.mkdtemp(prefix="rillet-console-pm-")
            bind = f"{ns.inside} 127.0.0.1"
            argv = [sys.executable, "-m", "rillet", "server", "--port", str(port), "--bind", bind,
                    "--http-port", str(http_port), "--http-bind", bind, "--save", "",
                    "--dir", workdir, *extra]
            proc = subprocess.Popen([*ns.prefix(), *argv], stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL, cwd=workdir)
            try:
                deadline = time.monotonic() + 20
                while True:
                    try:
                        status, _, body = _get_from(ns.inside, http_port)
                        break
                    except OSError:
                        assert time.monotonic() < deadline, "console did not start"
                        time.sleep(0.1)
                assert status == expected
                if expected == 403:
                    assert body == errors.PROTECTED_MODE_DENIED.encode() + b"\n"
            finally:
                proc.kill()
                proc.wait()


def _get_from(host: str, port: int):
    conn = http.client.HTTPConnection(host, port, timeout=5)
    try:
        conn.request("GET", "/metrics")
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()


# --- the page in a browser -------------------------------------------------------------------


class _Texts(html.parser.HTMLParser):
    """The text under each element with a data-stream or data-group attribute."""

    def __init__(self) -> None:
        super().__init__()
        self.open: list[tuple[str, str | None]] = []
        self.texts: dict[str, list[str]] = {}

    def handle_starttag(self, tag, attrs):
        marks = dict(attrs)
        mark = None
        if "data-stream" in marks:
            mark = "stream:" + marks["data-stream"]
        elif "data-group" in marks:
            mark = "group:" + marks["data-group"]
        if mark is not None:
            self.texts.setdefault(mark, [])
        if tag not in ("br", "img", "input", "meta", "link"):
            self.open.append((tag, mark))

    def handle_endtag(self, tag):
        while self.open:
            if self.open.pop()[0] == tag:
                break

    def handle_data(self, data):
        for _, mark in self.open:
            if mark is not None and data.strip():
                self.texts[mark].append(data.strip())


def _chromium(tmp_path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}", *args],
        capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(CHROMIUM is None and not REQUIRED, reason="chromium not installed (./dev installs it)")
def test_page_in_headless_chromium(example, tmp_path):
    assert CHROMIUM is not None, "chromium is required here (RILLET_LIBS_REQUIRED=1)"
    url = f"http://127.0.0.1:{example.http_port}/"
    dom = _chromium(tmp_path, "--dump-dom", url)
    assert dom.returncode == 0, dom.stderr[-2000:]
    texts = _Texts()
    texts.feed(dom.stdout)
    assert "orders" in texts.texts["stream:orders"]
    assert "3" in texts.texts["stream:orders"]  # its length
    group = texts.texts["group:billing"]
    assert "billing" in group
    assert group[group.index("pending") + 1] == "2"
    assert group[group.index("lag") + 1] == "1"
    assert any(text.startswith("alice · 2 pending") for text in group)
    shot = tmp_path / "console.png"
    done = _chromium(tmp_path, "--window-size=1366,900", f"--screenshot={shot}", url)
    assert done.returncode == 0, done.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    print(f"console screenshot: {shot}")


def test_the_pipelines_embedded_server_has_a_console():
    from rillet.pipelines.servers import free_port, rillet_server

    with rillet_server(http_port=free_port()).start() as server:
        assert server.console_url is not None
        port = int(server.console_url.rsplit(":", 1)[1].rstrip("/"))
        status, _, body = _get(port, "/metrics")
        assert status == 200 and b"redis_up 1" in body


def test_a_pipelining_client_gets_every_answer_in_order(example):
    """Many requests in one write: each answered, in order, over several loop turns."""
    count = 2000
    request = b"GET /nothing-%d HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    with socket.create_connection(("127.0.0.1", example.http_port), timeout=10) as sock:
        sock.sendall(b"".join(request % n for n in range(count)))
        sock.shutdown(socket.SHUT_WR)
        got = b""
        while got.count(b"HTTP/1.1 404 ") < count:
            chunk = sock.recv(65536)
            if not chunk:
                break
            got += chunk
    assert got.count(b"HTTP/1.1 404 ") == count
    assert got.count(errors.HTTP_NOT_FOUND.encode()) == count


def test_an_endless_header_is_closed(example):
    """A header past the head limit: 431 and closed, then a peer that goes on
    sending finds the connection gone (the server stopped reading it)."""
    from rillet.server.http import MAX_HEAD

    with socket.create_connection(("127.0.0.1", example.http_port), timeout=10) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Long: " + b"a" * (MAX_HEAD + 1000))
        got = b""
        while chunk := sock.recv(65536):
            got += chunk
        assert got.startswith(b"HTTP/1.1 431 ")
        with pytest.raises(OSError):
            for _ in range(1000):  # bounded: the server is gone long before
                sock.sendall(b"a" * 1000)


def test_busy_http_port_exits_1_with_redis_lines(tmp_path):
    """The console's port taken: logged as a taken RESP port is, exit status 1, no traceback."""
    blocker = socket.create_server(("127.0.0.1", 0))
    busy = blocker.getsockname()[1]
    try:
        handle = servers.start_rillet("--http-port", str(busy), wait=False)
        try:
            assert handle.proc.wait(timeout=30) == 1
        finally:
            handle.stop()
    finally:
        blocker.close()
    with open(f"{handle.dir}/server.log") as log:
        text = log.read()
    assert f"Failed listening on port {busy} (http), aborting." in text
    assert "Could not create server TCP listening socket" in text
    assert "Traceback" not in text


class _Transport:
    """What HttpConnection asks of a transport, recorded."""

    def __init__(self) -> None:
        self.written: list[bytes] = []
        self.reading = True
        self.closed = False

    def get_extra_info(self, name: str):
        return ("127.0.0.1", 1) if name in ("peername", "sockname") else None

    def write(self, data: bytes) -> None:
        self.written.append(data)

    def pause_reading(self) -> None:
        self.reading = False

    def resume_reading(self) -> None:
        self.reading = True

    def close(self) -> None:
        self.closed = True


def test_the_buffer_stays_bounded_for_a_peer_that_does_not_read():
    """A pipelining peer that never reads its answers: once the transport pauses
    writing, nothing more is answered, and reading pauses before the unanswered
    requests exceed one head."""
    import asyncio

    from rillet.server import http
    from rillet.server.server import Server

    loop = asyncio.new_event_loop()
    try:
        server = Server()
        server.loop = loop
        conn = http.HttpConnection(http.HttpListener(server))
        transport = _Transport()
        conn.connection_made(transport)  # type: ignore[arg-type]
        requests = b"GET /x HTTP/1.1\r\n\r\n" * 1000
        conn.data_received(requests)
        assert len(transport.written) == http.REQUESTS_PER_TURN  # the rest on later turns
        conn.pause_writing()
        fed = 1
        while transport.reading and fed < 100:
            conn.data_received(requests)
            loop.run_until_complete(asyncio.sleep(0))
            fed += 1
        assert not transport.reading
        answered = len(transport.written)
        assert answered < 1000
        assert len(conn.buffer) - conn.offset <= http.MAX_HEAD + len(requests)
        assert len(conn.buffer) <= 2 * (http.MAX_HEAD + len(requests))
        conn.resume_writing()
        for _ in range(fed * 1000):
            if len(transport.written) == fed * 1000:
                break
            loop.run_until_complete(asyncio.sleep(0))
        assert len(transport.written) == fed * 1000
        assert transport.reading and not transport.closed
        assert conn.buffer == b""
    finally:
        loop.close()


def test_dns_rebinding_is_refused_without_protected_mode():
    """protected-mode no, no password: the console still asks no credentials, so a
    page from elsewhere must not read it through a rebound DNS name; with a password
    the credentials protect it and any Host is answered."""
    handle = _start("--protected-mode", "no")
    try:
        port = handle.http_port

        def ask(host: bytes, auth: bytes = b"") -> bytes:
            with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
                sock.sendall(b"GET /api/overview HTTP/1.1\r\nHost: " + host + auth
                             + b"\r\nConnection: close\r\n\r\n")
                reply = b""
                while chunk := sock.recv(65536):
                    reply += chunk
                return reply

        assert ask(b"attacker.example:%d" % port).startswith(b"HTTP/1.1 403 ")
        assert ask(b"127.0.0.1:%d" % port).startswith(b"HTTP/1.1 200 ")
        handle.client().config_set("requirepass", "secret")
        basic = b"\r\nAuthorization: Basic " + base64.b64encode(b"default:secret")
        assert ask(b"attacker.example:%d" % port, basic).startswith(b"HTTP/1.1 200 ")
    finally:
        handle.stop()


@pytest.mark.parametrize("host, refused", [
    ("127.0.0.1", False), ("127.1.2.3", False), ("::1", False),
    ("::ffff:127.0.0.1", True), ("10.0.0.1", True), ("::2", True), ("1127.0.0.1", True)])
def test_one_protected_mode_rule_for_both_listeners(host, refused):
    """Redis's connIsLocal: "127." or "::1" (an IPv4-mapped address never reaches a
    V6ONLY socket, so is not local); the RESP and the console listener ask the same."""
    from rillet.server import http, protected
    from rillet.server.connection import ClientConnection
    from rillet.server.server import Server

    server = Server()
    resp = ClientConnection(server)
    resp._peer_host = host
    listener = http.HttpListener(server)
    assert protected.refuses(server.state, host) is refused
    assert listener.refuses(host) is refused
    assert resp._protected_mode_denies() is refused
    assert not protected.refuses(server.state, host, unix=True)
    server.state.config.set("protected-mode", "no")
    assert not listener.refuses(host) and not resp._protected_mode_denies()
