"""Libraries that pin a redis-py older than the project's (arq: redis<6, while
taskiq-redis needs 8 and kombu 6.4+). They cannot share the main venv, so
`./dev test` runs this directory a second time from .venv-libs (tests/libs/pinned/
requirements.txt), with RILLET_LIBS_PINNED=1 and the rillet servers started by the
main venv's Python (RILLET_SERVER_PYTHON). Elsewhere, without the library, the
directory is not collected."""

from __future__ import annotations

import importlib.util
import os

if os.environ.get("RILLET_LIBS_PINNED") != "1" and importlib.util.find_spec("arq") is None:
    collect_ignore_glob = ["test_*.py"]
