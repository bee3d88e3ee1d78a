"""Vector sets in-process: VADD and VSIM COUNT 10 with the compiled distance kernels
(engine/_vdist.pyx) beside the Python reference (engine/vectorset.py), in one run.

Each case fills a set of N elements (Q8, the default, unless given) through the
command dispatcher (FP32 vectors, as clients send them), then times, in interleaved
chunks, VSIM FP32 <random> COUNT 10 (on the N elements) and VADD of new elements
(the set grows by the VADDs timed) with the compiled kernels and with the Python
ones swapped in (all of engine/_vdist's: distance, ranking, link checks, encoding). The figures are CPU time of this
process per command (time.process_time, so a loaded machine slows them less than
wall-clock), and the ratio. The Python side runs fewer commands (it is 10-100x
slower); --py-seconds bounds it per case.

    .venv/bin/python bench/vectorset_kernels.py [--sizes 1000,10000] [--dims 64,300]
        [--vadds 1000] [--vsims 200] [--quant Q8|NOQUANT|BIN] [--py-seconds 20]
"""

from __future__ import annotations

import argparse
import random
import struct
import time
from collections.abc import Callable

import rillet.commands  # noqa: F401  (registers the commands)
from rillet.clock import ManualClock
from rillet.engine import vectorset as vs
from rillet.errors import ReplyError
from rillet.server.server import Server


class Env:
    def __init__(self) -> None:
        self.server = Server(clock=ManualClock(1_700_000_000_000))
        self.client = self.server.state.new_client(None)

    def __call__(self, *argv: bytes) -> object:
        reply = self.server.dispatcher.execute(self.client, list(argv))
        if isinstance(reply, ReplyError):
            raise reply
        return reply


def _blob(rng: random.Random, dim: int) -> bytes:
    return struct.pack(f"<{dim}f", *(rng.gauss(0, 1) for _ in range(dim)))


_SWAPPED = ("distance", "rank", "nearer_link", "worst_link", "normalize", "quantize_q8")
_compiled = {name: getattr(vs, name) for name in _SWAPPED}


def _python_kernels(on: bool) -> None:
    """vectorset.py's module functions: the Python references (py_*) or the compiled ones."""
    for name in _SWAPPED:
        setattr(vs, name, getattr(vs, "py_" + name) if on else _compiled[name])


def _cpu_per_op(op: Callable[[int], object], count: int, budget: float | None = None) -> tuple[float, int]:
    started = time.process_time()
    done = 0
    while done < count:
        op(done)
        done += 1
        if budget is not None and time.process_time() - started > budget:
            break
    return (time.process_time() - started) / done, done


def run_case(size: int, dim: int, quant: bytes, vadds: int, vsims: int, py_seconds: float) -> None:
    rng = random.Random(size * 1000 + dim)
    env = Env()
    key = b"v"
    opts = [] if quant == b"Q8" else [quant]
    built = time.perf_counter()
    for i in range(size):
        env(b"VADD", key, b"FP32", _blob(rng, dim), b"e%d" % i, *opts)
    built = time.perf_counter() - built
    queries = [_blob(rng, dim) for _ in range(64)]
    added = [0]

    def vadd(_: int) -> object:
        added[0] += 1
        return env(b"VADD", key, b"FP32", _blob(rng, dim), b"n%d" % added[0], *opts)

    def vsim(n: int) -> object:
        return env(b"VSIM", key, b"FP32", queries[n % len(queries)], b"COUNT", b"10")

    figures = {}
    # VSIM first, on exactly `size` elements; the VADDs then grow the set by their count.
    for name, op, count in (("VSIM COUNT 10", vsim, vsims), ("VADD", vadd, vadds)):
        times: dict[str, list[tuple[float, int]]] = {"compiled": [], "python": []}
        chunks = 4
        for _ in range(chunks):  # interleaved: compiled, python, compiled, python...
            _python_kernels(False)
            times["compiled"].append(_cpu_per_op(op, max(1, count // chunks)))
            _python_kernels(True)
            try:
                times["python"].append(_cpu_per_op(op, max(1, count // chunks), py_seconds / chunks))
            finally:
                _python_kernels(False)
        figures[name] = {k: (sum(t * n for t, n in v) / sum(n for _, n in v), sum(n for _, n in v))
                         for k, v in times.items()}
    for name, fig in figures.items():
        (c, cn), (p, pn) = fig["compiled"], fig["python"]
        print(f"| {quant.decode()} | {dim} | {size:,} | {name} | {p * 1e3:,.2f} ms (x{pn}) | "
              f"{c * 1e3:,.3f} ms (x{cn}) | {p / c:,.0f}x |", flush=True)
    print(f"|   |   |   | (fill: {size:,} VADDs compiled in {built:.1f} s wall) | | | |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--dims", default="64,300")
    parser.add_argument("--quant", default="Q8", choices=["Q8", "NOQUANT", "BIN"])
    parser.add_argument("--vadds", type=int, default=1000)
    parser.add_argument("--vsims", type=int, default=200)
    parser.add_argument("--py-seconds", type=float, default=20.0)
    args = parser.parse_args()
    if vs._vdist is None:
        raise SystemExit("engine/_vdist is not built (or RILLET_PURE is set): nothing to compare")
    print("| quant | dim | elements | command | Python reference, CPU/op | compiled, CPU/op | ratio |")
    print("|---|---|---|---|---|---|---|")
    for dim in (int(d) for d in args.dims.split(",")):
        for size in (int(s) for s in args.sizes.split(",")):
            run_case(size, dim, args.quant.encode(), args.vadds, args.vsims, args.py_seconds)


if __name__ == "__main__":
    main()
