"""Suite-wide checks: no test may leave a process behind; the suites that run real jobs are `slow`.

The fast suite, for a developer's loop: ``python -m pytest tests -m "not slow"`` (parsers, loaders,
pure analysis, renderers, the recorded runs and the real-world corpus). The directories in
:data:`REAL_JOB_SUITES` start torchrun jobs, clusters, cores or attackers: every test there is
marked ``slow`` except the ``*_units.py`` files; a test elsewhere that runs a real job marks itself."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

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


TESTS = Path(__file__).resolve().parent
REAL_JOB_SUITES = frozenset({"check", "cluster", "collectors", "gpu", "hang", "launch", "matrix", "numerics",
                             "postmortem", "security", "stragglers"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        try:
            relative = item.path.resolve().relative_to(TESTS)
        except ValueError:
            continue
        if relative.parts[0] in REAL_JOB_SUITES and not relative.name.endswith("_units.py"):
            item.add_marker(pytest.mark.slow)
