"""`python -m rillet.bench ...`: the same as `rillet bench ...`."""

import sys

from rillet.bench.cli import main

sys.exit(main(sys.argv[1:]))
