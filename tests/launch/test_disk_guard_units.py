"""The in-worker disk guard's reserve, read from TRIAGE_MIN_FREE_MB (the guard itself runs on a real
full tmpfs in tests/launch/test_launch_disk_full.py)."""

from __future__ import annotations

import pytest

from triage.worker.diskguard import DEFAULT_MIN_FREE, min_free_from_env


@pytest.mark.parametrize(("value", "expected"), [
    ("", DEFAULT_MIN_FREE), ("16", 16 << 20), ("0.5", 1 << 19), ("0", 0),
    ("nan", DEFAULT_MIN_FREE), ("-1", DEFAULT_MIN_FREE), ("inf", DEFAULT_MIN_FREE), ("lots", DEFAULT_MIN_FREE),
])
def test_the_reserve_is_read_safely(monkeypatch: pytest.MonkeyPatch, value: str, expected: int) -> None:
    monkeypatch.setenv("TRIAGE_MIN_FREE_MB", value)
    assert min_free_from_env() == expected
