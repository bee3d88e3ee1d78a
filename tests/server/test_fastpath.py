"""The compiled hot path (_fastpath.pyx, _multibulk.pyx) against the pure-Python one.

The same reads go through a `ClientConnection` in two processes, one with
RILLET_PURE=1; the bytes written back and the statistics the commands leave
(commandstats, errorstats, per-client totals) must be identical.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

import rillet
from rillet.compiled import compiled

SRC = str(Path(rillet.__file__).resolve().parent.parent)

# Each item is one read; the script prints what came back and the counters.
READS = [
    b"*1\r\n$4\r\nPING\r\n" * 40,
    b"*2\r\n$4\r\nping\r\n$5\r\nhello\r\n*2\r\n$4\r\nECHO\r\n$0\r\n\r\n",
    b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\nabc\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"
    b"*2\r\n$3\r\nGET\r\n$7\r\nmissing\r\n",
    b"*5\r\n$4\r\nXADD\r\n$1\r\ns\r\n$3\r\n1-1\r\n$1\r\nf\r\n$1\r\nv\r\n"
    b"*5\r\n$4\r\nXADD\r\n$1\r\ns\r\n$3\r\n1-1\r\n$1\r\nf\r\n$1\r\nv\r\n"  # handler error
    b"*2\r\n$4\r\nXLEN\r\n$1\r\ns\r\n*2\r\n$6\r\nDBSIZE\r\n$1\r\nx\r\n",  # arity error
    b"*1\r\n$4\r\nPiNg\r\n*2\r\n$7\r\nNOSUCHC\r\n$1\r\na\r\n*1\r\n$6\r\nDBSIZE\r\n",
    b"*1\r\n$5\r\nMULTI\r\n*1\r\n$4\r\nPING\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n*1\r\n$4\r\nEXEC\r\n",
    b"*2\r\n$4\r\nINCR\r\n$1\r\nn\r\n*3\r\n$6\r\nINCRBY\r\n$1\r\nn\r\n$4\r\n5000\r\n",
    # Writes in a row (their effects are compared too), one that changes nothing,
    # one that fails, and a transaction.
    b"*5\r\n$4\r\nXADD\r\n$1\r\ns\r\n$3\r\n2-\x2a\r\n$1\r\nf\r\n$1\r\nv\r\n" * 3
    + b"*3\r\n$3\r\nDEL\r\n$7\r\nmissing\r\n$4\r\nnone\r\n"
    + b"*2\r\n$4\r\nINCR\r\n$1\r\nk\r\n"
    + b"*1\r\n$5\r\nMULTI\r\n*2\r\n$4\r\nINCR\r\n$1\r\nn\r\n*1\r\n$4\r\nEXEC\r\n",
    # A write with several effects (wrapped in MULTI/EXEC); NOACK keeps the time out.
    b"*5\r\n$6\r\nXGROUP\r\n$6\r\nCREATE\r\n$1\r\ns\r\n$1\r\ng\r\n$1\r\n0\r\n"
    b"*8\r\n$10\r\nXREADGROUP\r\n$5\r\nGROUP\r\n$1\r\ng\r\n$1\r\nc\r\n$5\r\nNOACK\r\n"
    b"$7\r\nSTREAMS\r\n$1\r\ns\r\n$1\r\n>\r\n",
    b"*3\r\n$6\r\nCONFIG\r\n$3\r\nGET\r\n$10\r\nmaxclients\r\n*1\r\n$4\r\nPING",  # split
    b"\r\n*2\r\n$4\r\nPING\r\n$2\r\nab\r\nPING\r\n",  # the split one ends, inline
    b"*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n*2\r\n$3\r\nGET\r\n$7\r\nmissing\r\n*1\r\n$4\r\nPING\r\n",
    b"*2\r\n$4\r\nINFO\r\n$10\r\nerrorstats\r\n",
    b"*1\r\n$4\r\nPING\r\n*1\r\n$4\r\nQUIT\r\n*1\r\n$4\r\nPING\r\n",
]
# A protocol error (a leading zero) after good commands in the same read.
BROKEN = [b"*1\r\n$4\r\nPING\r\n" * 3 + b"*01\r\n$4\r\nPING\r\n", b"*1\r\n$4\r\nPING\r\n"]

SCRIPT = r"""
import ast, sys
from rillet.commands.table import COMMANDS
from rillet.state import effect_argv
from rillet.resp import parser
from rillet.server import connection
from rillet.server.connection import ClientConnection
from rillet.server.server import Server

class Transport:
    def __init__(self): self.out = []
    def write(self, data): self.out.append(bytes(data))
    def get_extra_info(self, key, default=None):
        return {"peername": ("127.0.0.1", 1), "sockname": ("127.0.0.1", 2)}.get(key)
    def set_write_buffer_limits(self, high=None): pass
    def get_write_buffer_size(self): return 0
    def is_closing(self): return False
    def close(self): pass

server = Server()
effects = []  # what the AOF and replicas would get
server.state.effect_sinks.append(
    lambda batch: effects.extend((db, effect_argv(argv)) for db, argv in batch))
conn = ClientConnection(server)
transport = Transport()
conn.connection_made(transport)
for data in ast.literal_eval(sys.stdin.read()):
    conn.data_received(data)
out = b"".join(transport.out)
stats = server.state.stats
print(repr({
    "compiled": connection._fastpath is not None and parser._scan is not None,
    "out": out,
    "calls": {n: (s.calls, s.rejected_calls, s.failed_calls)
              for n, s in COMMANDS.items() if s.calls or s.rejected_calls or s.failed_calls},
    "errors": stats.errors, "error_replies": stats.total_error_replies,
    "net": (stats.net_input_bytes, stats.net_output_bytes, conn.net_in, conn.net_out),
    "commands": conn.commands, "last": conn.client.last_command,
    "effects": effects,
}))
"""


def _run(reads: list[bytes], pure: bool) -> dict:
    env = {**os.environ, "PYTHONPATH": SRC}
    env.pop("RILLET_PURE", None)
    if pure:
        env["RILLET_PURE"] = "1"
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], input=repr(reads).encode(), env=env,
        capture_output=True, check=True, timeout=60,
    )
    return ast.literal_eval(done.stdout.decode())


def _compiled() -> bool:
    # (compiled(): None under RILLET_PURE, where the compiled loop cannot even be
    # imported: it cimports state.py's extension types.)
    return None not in (compiled("rillet.resp._multibulk"), compiled("rillet.server._fastpath"))


def test_pure_mode_runs_without_the_extension():
    pure = _run(READS, pure=True)
    assert not pure["compiled"]
    assert pure["out"].startswith(b"+PONG\r\n" * 40 + b"$5\r\nhello\r\n")
    assert pure["calls"]["ping"][0] > 40


@pytest.mark.skipif(not _compiled(), reason="compiled hot path not built")
@pytest.mark.parametrize("reads", [READS, BROKEN], ids=["commands", "protocol-error"])
def test_compiled_and_pure_paths_agree_byte_for_byte(reads):
    fast = _run(reads, pure=False)
    pure = _run(reads, pure=True)
    assert fast.pop("compiled") and not pure.pop("compiled")
    assert fast["out"] == pure["out"]
    assert fast == pure


@pytest.mark.skipif(not _compiled(), reason="compiled hot path not built")
def test_compiled_path_is_the_one_in_use():
    from rillet.resp import parser
    from rillet.server import _fastpath, connection

    if os.environ.get("RILLET_PURE"):
        pytest.skip("RILLET_PURE is set")
    assert connection.ClientConnection._run is _fastpath.run
    assert connection.ClientConnection.data_received is _fastpath.data_received
    assert parser._scan is not None


@pytest.mark.parametrize("pure", [False, True], ids=["compiled", "pure"])
def test_counts_are_current_whenever_a_command_can_read_them(pure):
    """The compiled path keeps a pipelined fast command's count aside: never visibly."""
    ping = b"*1\r\n$4\r\nPING\r\n"
    info = b"*2\r\n$4\r\nINFO\r\n$12\r\ncommandstats\r\n"
    client_info = b"*2\r\n$6\r\nCLIENT\r\n$4\r\nINFO\r\n"
    result = _run([ping * 2 + info + info + ping + client_info + ping], pure=pure)
    out = result["out"]
    # INFO is not fast: the second one counts the first; PING's two calls show in both.
    assert out.count(b"cmdstat_ping:calls=2,") == 2
    assert b"cmdstat_info:calls=1," in out
    assert b" cmd=client|info " in out
    assert result["calls"]["ping"][0] == 4
    assert result["last"] == b"ping"
