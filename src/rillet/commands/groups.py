"""groups commands (being written)."""
