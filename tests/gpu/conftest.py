"""tests/gpu runs only where torch sees a CUDA GPU (scripts/gpu_run.sh on a GPU machine)."""

from __future__ import annotations

import pytest


def _cuda() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _cuda():
        return
    skip = pytest.mark.skip(reason="no CUDA GPU (torch.cuda.is_available() is false): scripts/gpu_run.sh runs these")
    for item in items:
        if item.get_closest_marker("gpu") is not None:
            item.add_marker(skip)
