"""`python -m rillet`: the same command line as the `rillet` script."""

from rillet.cli import main

raise SystemExit(main())
