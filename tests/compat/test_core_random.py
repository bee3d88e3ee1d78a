"""Seeded random command sequences, replayed on rillet and Redis 8, replies compared byte for byte.

The commands and arguments come from the fuzz test's vocabulary, minus what is
not deterministic across two servers (ids, times, hash-table order, short expiries).
"""

from __future__ import annotations

import random

import pytest

from tests.server import test_fuzz as vocabulary

NONDETERMINISTIC = {
    "TIME", "INFO", "CLIENT ID", "CLIENT INFO", "CLIENT LIST", "COMMAND", "COMMAND COUNT",
    "COMMAND INFO", "COMMAND DOCS", "COMMAND LIST", "HELLO", "RANDOMKEY", "LASTSAVE", "KEYS",
    "SCAN", "TTL", "PTTL", "MEMORY USAGE", "CONFIG GET", "QUIT", "CLIENT HELP", "CONFIG HELP",
    "COMMAND HELP", "EXPIRETIME", "OBJECT ENCODING", "AUTH", "CLIENT NO-EVICT", "COMMAND GETKEYS",
    "EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT",
}
TIMED_OPTIONS = {"EX", "PX", "EXAT", "PXAT"}


@pytest.mark.parametrize("seed,resp", [(1, "2"), (2, "3"), (3, "2")])
def test_random_sequences_match_redis8(pair8, seed, resp):
    commands = [c for c in vocabulary.COMMANDS if c not in NONDETERMINISTIC]
    args = [a for a in vocabulary.ARGS if a not in TIMED_OPTIONS]
    rng = random.Random(seed)
    pair8.both("HELLO", resp)
    history = []
    for _ in range(700):
        words = rng.choice(commands).split()
        arity = vocabulary._arity(words)
        if rng.random() < 0.8:
            count = arity - len(words) if arity > 0 else -arity - len(words) + rng.randint(0, 3)
        else:
            count = rng.choice([0, 1, 2, 4])
        argv = words + [rng.choice(args) for _ in range(max(0, count))]
        if argv[0] == "RESET":
            argv = ["PING"]  # would switch the protocol back mid-sequence
        ours, ref = pair8.both(*argv)
        history.append(argv)
        assert ours == ref, f"{argv}\n  rillet: {ours[:200]!r}\n  redis:  {ref[:200]!r}\n" \
                            f"  after: {history[-15:-1]}"
