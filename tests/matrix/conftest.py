"""The torch-version matrix runs only when asked (scripts/torch_matrix.sh sets RUN_TORCH_MATRIX=1):
on the suite's own torch its scenarios are covered by tests/hang, tests/launch and tests/golden."""

from __future__ import annotations

import os

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("RUN_TORCH_MATRIX") == "1":
        return
    skip = pytest.mark.skip(reason="the torch matrix runs under scripts/torch_matrix.sh (RUN_TORCH_MATRIX=1)")
    for item in items:
        if item.get_closest_marker("matrix") is not None:
            item.add_marker(skip)
