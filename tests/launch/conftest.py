"""Fixtures of the launch tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.disk import mounted_tmpfs


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A real 64 MiB tmpfs for one test (root only: the tests that use it skip otherwise)."""
    with mounted_tmpfs(tmp_path / "disk") as disk:
        yield disk
