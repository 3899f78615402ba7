"""Session-scoped real test cluster: slurmctld + munged in the root namespace, and per node a
network + pid + UTS namespace running its own slurmd and sshd (see testcluster.py)."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator

import psutil
import pytest

from tests.cluster import testcluster

N_NODES = int(os.environ.get("TRIAGE_TEST_CLUSTER_NODES", "3"))


@pytest.fixture(scope="session")
def cluster() -> Iterator[testcluster.Cluster]:
    reason = testcluster.unavailable_reason()
    if reason:
        pytest.skip(reason)
    made = testcluster.start_cluster(N_NODES)
    try:
        yield made
    finally:
        testcluster.stop_cluster(made)


@pytest.fixture()
def fresh_cluster(cluster: testcluster.Cluster) -> Iterator[testcluster.Cluster]:
    """The session cluster with no job left from an earlier test, all sshd running."""
    cluster.cancel_all()
    cluster.restart_missing_sshd()
    cluster.wait_nodes_idle()
    yield cluster
    cluster.cancel_all()


def _infrastructure(proc: psutil.Process) -> bool:
    """Daemons of the session cluster (a node's sshd listener restarted by a test, slurmd)."""
    try:
        cmd = " ".join(proc.cmdline())
        return proc.name() in ("slurmd", "sshd") and ("[listener]" in cmd or proc.name() == "slurmd")
    except psutil.Error:
        return True


@pytest.fixture(autouse=True)
def no_leftover_processes() -> Iterator[None]:
    """The suite-wide check (tests/conftest.py), except for the session cluster's own daemons:
    any other process a test leaves (job steps, workers, ssh sessions) fails the test."""
    before = {p.pid for p in _descendants()}
    yield
    deadline = time.monotonic() + 10.0
    leftovers: list[psutil.Process] = []
    while time.monotonic() < deadline:
        leftovers = [p for p in _descendants() if p.pid not in before and _running(p) and not _infrastructure(p)]
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


def _descendants() -> list[psutil.Process]:
    try:
        return psutil.Process().children(recursive=True)
    except psutil.Error:
        return []


def _running(proc: psutil.Process) -> bool:
    try:
        return proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False
