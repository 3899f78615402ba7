"""The real test cluster for the multi-node straggler test: the same session cluster as
tests/cluster (testcluster.py), 2 nodes, and its leftover-process check."""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "cluster"))

import testcluster


@pytest.fixture(scope="module")
def cluster() -> Iterator[testcluster.Cluster]:
    reason = testcluster.unavailable_reason()
    if reason:
        pytest.skip(reason)
    made = testcluster.start_cluster(2)
    try:
        yield made
    finally:
        testcluster.stop_cluster(made)


def _descendants() -> list[psutil.Process]:
    try:
        return [p for p in psutil.Process().children(recursive=True) if p.status() != psutil.STATUS_ZOMBIE]
    except psutil.Error:
        return []


def _infrastructure(proc: psutil.Process) -> bool:
    """Daemons of the cluster itself (slurmd, sshd listeners)."""
    try:
        cmd = " ".join(proc.cmdline())
        return proc.name() in ("slurmd", "sshd") and ("[listener]" in cmd or proc.name() == "slurmd")
    except psutil.Error:
        return True


@pytest.fixture(autouse=True)
def no_leftover_processes() -> Iterator[None]:
    """As tests/cluster does: any process the test leaves (job steps, workers), other than the
    cluster's own daemons, fails it."""
    before = {p.pid for p in _descendants()}
    yield
    deadline = time.monotonic() + 10.0
    leftovers: list[psutil.Process] = []
    while time.monotonic() < deadline:
        leftovers = [p for p in _descendants() if p.pid not in before and not _infrastructure(p)]
        if not leftovers:
            return
        time.sleep(0.2)
    described = []
    for proc in leftovers:
        with contextlib.suppress(psutil.Error):
            described.append(f"{proc.pid} {' '.join(proc.cmdline())[:120]}")
            proc.kill()
    if described:
        pytest.fail("test left processes running: " + "; ".join(described))
