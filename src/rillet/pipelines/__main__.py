"""`python -m rillet.pipelines demo|archive|ingest ...`."""

import sys

from rillet.pipelines.cli import main

sys.exit(main())
