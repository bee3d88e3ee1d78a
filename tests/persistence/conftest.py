"""Fixtures for persistence tests (helpers live in support.py)."""

from __future__ import annotations

import pytest

from tests.persistence.support import Node


@pytest.fixture
def node_factory():
    made: list[Node] = []

    def make(*args: str, env: dict | None = None) -> Node:
        node = Node(*args, env=env)
        made.append(node)
        return node

    yield make
    for node in made:
        node.cleanup()


