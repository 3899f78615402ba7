"""Suite-wide checks: no test may leave a process behind."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator

import psutil
import pytest

# Launched jobs must not inherit a developer's TRIAGE_* settings.
for _name in list(os.environ):
    if _name.startswith("TRIAGE_"):
        del os.environ[_name]


def _descendants() -> list[psutil.Process]:
    try:
        return psutil.Process().children(recursive=True)
    except psutil.Error:
        return []


@pytest.fixture(autouse=True)
def no_leftover_processes() -> Iterator[None]:
    """Fail a test that leaves a child process running (after a short grace period)."""
    before = {p.pid for p in _descendants()}
    yield
    deadline = time.monotonic() + 5.0
    leftovers: list[psutil.Process] = []
    while time.monotonic() < deadline:
        leftovers = [p for p in _descendants() if p.pid not in before and _is_running(p)]
        if not leftovers:
            return
        time.sleep(0.1)
    described = []
    for proc in leftovers:
        try:
            described.append(f"{proc.pid} {' '.join(proc.cmdline())[:120]}")
        except psutil.Error:
            continue
        with contextlib.suppress(psutil.Error):
            proc.kill()
    if described:
        pytest.fail("test left processes running: " + "; ".join(described))


def _is_running(proc: psutil.Process) -> bool:
    try:
        return proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False
