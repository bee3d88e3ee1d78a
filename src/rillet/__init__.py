"""rillet: a Redis-Streams-compatible stream server, with a PySpark connector."""

__version__ = "0.1.0"
# The Redis version whose behaviour we implement; INFO reports it as redis_version
# so clients that gate features on the server version enable everything we have.
REDIS_COMPAT_VERSION = "8.8.0"

# Before any other rillet import: chooses between the .py and the compiled form of the
# modules compiled in Cython's pure mode (see rillet/compiled.py).
from rillet import compiled as _compiled  # noqa: E402,F401
