"""Throwaway TLS material for tests: a CA, a server and a client certificate, made with openssl."""

from __future__ import annotations

import os
import shutil
import socket
import ssl
import subprocess
import time
from dataclasses import dataclass


@dataclass
class Certs:
    dir: str
    ca: str
    server_cert: str
    server_key: str
    client_cert: str
    client_key: str

    def client_context(self, with_cert: bool = True) -> ssl.SSLContext:
        context = ssl.create_default_context(cafile=self.ca)
        context.check_hostname = False
        if with_cert:
            context.load_cert_chain(self.client_cert, self.client_key)
        return context


def have_openssl() -> bool:
    return shutil.which("openssl") is not None


def _run(*args: str, cwd: str) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def make_certs(directory: str) -> Certs:
    """A CA and two certificates it signed (server: CN=localhost, IP 127.0.0.1; client)."""
    _run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=rillet-test-ca",
         "-keyout", "ca.key", "-out", "ca.crt", cwd=directory)
    with open(os.path.join(directory, "ext.cnf"), "w") as handle:
        handle.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    for name in ("server", "client"):
        _run("req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={name}",
             "-keyout", f"{name}.key", "-out", f"{name}.csr", cwd=directory)
        _run("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
             "-CAcreateserial", "-days", "2", "-extfile", "ext.cnf", "-out", f"{name}.crt",
             cwd=directory)
    path = lambda name: os.path.join(directory, name)  # noqa: E731
    return Certs(directory, path("ca.crt"), path("server.crt"), path("server.key"),
                 path("client.crt"), path("client.key"))


def server_args(certs: Certs, tls_port: int, auth_clients: str = "yes") -> list[str]:
    return ["--tls-port", str(tls_port), "--tls-cert-file", certs.server_cert,
            "--tls-key-file", certs.server_key, "--tls-ca-cert-file", certs.ca,
            "--tls-auth-clients", auth_clients]


def tls_call(port: int, context: ssl.SSLContext, payload: bytes, timeout: float = 5.0) -> bytes:
    """Send raw RESP over TLS and read one reply's first chunk."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as raw:
        with context.wrap_socket(raw, server_hostname="localhost") as sock:
            sock.sendall(payload)
            return sock.recv(65536)


def wait_tls_ready(port: int, context: ssl.SSLContext, timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if tls_call(port, context, b"PING\r\n", timeout=1.0).startswith(b"+PONG"):
                return
        except (OSError, ssl.SSLError):
            pass
        time.sleep(0.1)
    raise RuntimeError(f"no TLS server on port {port}")
