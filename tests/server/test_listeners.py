"""Server.start binds every listener before any accepts.

A client that got PONG on the plain port must find the TLS port and the unix
socket open too (a loaded CI run once saw the TLS port refuse a connection
after the plain port answered). The test watches the plain port while the later
listeners are being created: it must refuse connections until all exist.
"""

from __future__ import annotations

import asyncio
import os
import ssl

import pytest

from rillet.config import Config
from rillet.server.server import Server
from tests.helpers.servers import free_port


async def _refused(port: int) -> bool:
    try:
        _reader, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError:
        return True
    writer.close()
    return False


async def _start_and_probe(tmp_path) -> dict:
    config = Config()
    port, tls_port = free_port(), free_port()
    unixsocket = os.path.join(str(tmp_path), "rillet.sock")
    config.set_many([("port", str(port)), ("bind", "127.0.0.1"), ("tls-port", str(tls_port)),
                     ("unixsocket", unixsocket), ("save", "")], startup=True)
    server = Server(config)
    # A context without a certificate is enough to bind; no handshake is made here.
    server.tls_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    loop = asyncio.get_running_loop()
    seen: dict = {"while_binding": []}
    create_server, create_unix_server = loop.create_server, loop.create_unix_server

    async def probing_create_server(*args, **kwargs):
        if kwargs.get("ssl") is not None:
            seen["while_binding"].append(("tls", await _refused(port)))
        return await create_server(*args, **kwargs)

    async def probing_create_unix_server(*args, **kwargs):
        seen["while_binding"].append(("unix", await _refused(port)))
        return await create_unix_server(*args, **kwargs)

    loop.create_server = probing_create_server  # type: ignore[method-assign]
    loop.create_unix_server = probing_create_unix_server  # type: ignore[method-assign]
    try:
        await server.start()
    finally:
        del loop.create_server, loop.create_unix_server
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"PING\r\n")
        seen["pong"] = await asyncio.wait_for(reader.readline(), 30)
        writer.close()
        seen["tls_refused"] = await _refused(tls_port)
        _reader, unix_writer = await asyncio.open_unix_connection(unixsocket)
        unix_writer.close()
        seen["serving"] = [listener.is_serving() for listener in server._listeners]
    finally:
        server.request_shutdown(save=False)
    return seen


@pytest.mark.parametrize("loop_kind", ["asyncio", "uvloop"])
def test_plain_port_refuses_until_every_listener_exists(tmp_path, loop_kind):
    if loop_kind == "uvloop":
        uvloop = pytest.importorskip("uvloop")
        seen = uvloop.run(_start_and_probe(tmp_path))
    else:
        seen = asyncio.run(_start_and_probe(tmp_path))
    assert seen["while_binding"] == [("tls", True), ("unix", True)]
    assert seen["pong"] == b"+PONG\r\n"
    assert seen["tls_refused"] is False
    assert seen["serving"] == [True, True, True]
