"""Client bytes inside error texts go out as Redis sends them: raw, with CR and LF as spaces.

A raw LF inside an error line breaks every line-reading client; a byte >= 0x80
re-encoded as UTF-8 (or replaced by U+FFFD) is not what the client sent.
"""

from __future__ import annotations

import socket

import pytest


def _raw_exchange(port: int, payload: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(payload)
        out = b""
        while chunk := sock.recv(65536):
            out += chunk
        return out


@pytest.mark.parametrize("payload", [
    b"*1\r\n\n\r\n",  # LF where '$' belongs
    b"*1\r\n\r\r\n",  # CR there
    b"*1\r\n\x80\r\n",  # a byte >= 0x80
    b"*1\r\n\xff\r\n",
    b"*2\r\n$4\r\nPING\r\nx\r\n",
])
def test_protocol_error_text(rillet_server, redis8_server, payload):
    assert _raw_exchange(rillet_server.port, payload) == _raw_exchange(redis8_server.port, payload)


@pytest.mark.parametrize("name", [b"g\xff\xfe", b"g\r\nx", b"caf\xc3\xa9", b"a\x00b"])
def test_names_in_errors_are_raw(pair8, name):
    pair8.check("XADD", "s", "1-1", "f", "v")
    pair8.check("XREADGROUP", "GROUP", name, "c", "STREAMS", "s", ">")
    pair8.check("XGROUP", "CREATECONSUMER", "s", name, "c")
    pair8.check("XREADGROUP", "GROUP", "g", "c", "STREAMS", name, ">")
    pair8.check("HELLO", "3", name)
    pair8.check("CLIENT", "LIST", "TYPE", name)
    pair8.check("CONFIG", "SET", name, "1")
    pair8.check("XCLAIM", "s", "g", "c", "0", "1-1", name)

