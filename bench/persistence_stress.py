"""Kill -9 stress for persistence: many more trials than the test suite runs.

    .venv/bin/python bench/persistence_stress.py --trials 200 [--seed N]

Runs tests/persistence/test_kill.py (strings, and streams once the stream
commands exist) with RILLET_KILL_TRIALS / RILLET_KILL_SEED set; every trial
SIGKILLs a server under `appendfsync always` load and checks that every
acknowledged write survived. Exit status is pytest's.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--seed", type=int, default=random.randrange(1 << 30))
    args = parser.parse_args()
    env = dict(os.environ, RILLET_KILL_TRIALS=str(args.trials), RILLET_KILL_SEED=str(args.seed))
    print(f"kill -9 stress: {args.trials} trials per test, RILLET_KILL_SEED={args.seed}")
    return subprocess.call(
        [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider",
         "tests/persistence/test_kill.py", "--timeout", str(60 + 5 * args.trials)],
        cwd=ROOT, env=env,
    )


if __name__ == "__main__":
    sys.exit(main())
