"""The asyncio network layer: connections, blocking waits, timers, limits."""
