"""streams commands (being written)."""
