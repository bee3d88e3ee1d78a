"""Instructions per command, counted by callgrind, in-process (no sockets, no client).

    .venv/bin/python bench/command_instructions.py [--command "XADD s * f v"] [--pipeline 64]
        [--reads 100 300] [--setup "XADD s * f v" ...] [--pure] [--keep PREFIX]

A server and one client connection are built in this process (a stand-in
transport that drops the replies); each read hands the connection
`--pipeline` copies of the command, as redis-benchmark -P does, through
`data_received`, the compiled command loop when it is built. The process runs
under `valgrind --tool=callgrind` once per run length in --reads; the
difference of the two totals over the difference of the command counts is what
one command costs (startup, imports and the first read cancel out). --setup
commands run once first (a stream for XRANGE to read, say). A --command of
several commands joined by " ; " pipelines the sequence (XADD then XREADGROUP
`>`, so that each read has a new entry) and counts per sequence. --pure sets
RILLET_PURE=1 (the Python as written). --keep keeps the callgrind files
(PREFIX.<reads>) for callgrind_annotate. Counts are deterministic up to a few
tens of instructions: no timing, so a loaded machine does not move them.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class _Transport:
    """Enough of asyncio's transport for ClientConnection; replies are dropped."""

    def write(self, data: bytes) -> None:
        pass

    def get_extra_info(self, key: str, default: object = None) -> object:
        return {"peername": ("127.0.0.1", 1), "sockname": ("127.0.0.1", 2)}.get(key)

    def set_write_buffer_limits(self, high: int | None = None) -> None:
        pass

    def get_write_buffer_size(self) -> int:
        return 0

    def is_closing(self) -> bool:
        return False

    def close(self) -> None:
        pass


def _encode(argv: list[bytes]) -> bytes:
    return b"*%d\r\n" % len(argv) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in argv)


def inner(command: str, pipeline: int, reads: int, setup: list[str]) -> None:
    sys.path.insert(0, os.path.join(ROOT, "src"))
    from rillet import gcpolicy
    from rillet.server.connection import ClientConnection
    from rillet.server.server import Server

    server = Server()
    conn = ClientConnection(server)
    conn.connection_made(_Transport())  # type: ignore[arg-type]
    gcpolicy.start()  # the server's collector policy, as server.py sets it
    for line in setup:
        conn.data_received(_encode([part.encode() for part in line.split()]))
    data = b"".join(_encode([part.encode() for part in one.split()])
                    for one in command.split(" ; ")) * pipeline
    feed = conn.data_received
    for _ in range(reads):
        feed(data)


def _total(path: str) -> int:
    with open(path) as fh:
        for line in fh:
            if line.startswith(("summary:", "totals:")):
                return int(line.split()[1])
    raise RuntimeError(f"no totals in {path}")


def count(command: str, pipeline: int, reads: tuple[int, int], setup: list[str], pure: bool,
          keep: str) -> float:
    env = {**os.environ, "PYTHONPATH": os.path.join(ROOT, "src")}
    env.pop("RILLET_PURE", None)
    if pure:
        env["RILLET_PURE"] = "1"
    totals = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in reads:
            out = f"{keep}.{n}" if keep else os.path.join(tmp, f"cg.{n}")
            subprocess.run(
                ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                 sys.executable, __file__, "--inner", str(n), "--command", command,
                 "--pipeline", str(pipeline), *(f"--setup={line}" for line in setup)],
                env=env, check=True, capture_output=True)
            totals.append(_total(out))
    return (totals[1] - totals[0]) / ((reads[1] - reads[0]) * pipeline)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--command", default="XADD s * f v")
    parser.add_argument("--pipeline", type=int, default=64)
    parser.add_argument("--reads", type=int, nargs=2, default=(100, 300))
    parser.add_argument("--setup", action="append", default=[])
    parser.add_argument("--pure", action="store_true")
    parser.add_argument("--keep", default="")
    parser.add_argument("--inner", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inner:
        inner(args.command, args.pipeline, args.inner, args.setup)
        return
    for line in (args.command, *args.setup):
        if not re.fullmatch(r"[\x21-\x7e ]+", line):
            parser.error("--command, --setup: printable ASCII words")
    per = count(args.command, args.pipeline, tuple(args.reads), args.setup, args.pure, args.keep)
    print(f"{args.command!r} -P {args.pipeline}{' RILLET_PURE=1' if args.pure else ''}: "
          f"{per:,.0f} instructions per command")


if __name__ == "__main__":
    main()
