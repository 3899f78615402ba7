"""The real test cluster of tests/cluster (slurmctld, and per node a network namespace with its own
slurmd and sshd), reused here: its fixtures are loaded from tests/cluster/conftest.py.

testcluster names each cluster's namespaces uniquely, so this 3-node cluster runs beside the one of
tests/cluster in the same pytest session.
"""

from __future__ import annotations

import importlib.util
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

CLUSTER_TESTS = Path(__file__).resolve().parents[2] / "cluster"
_spec = importlib.util.spec_from_file_location("triage_cluster_conftest", CLUSTER_TESTS / "conftest.py")
assert _spec is not None and _spec.loader is not None
_shared = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_shared)

from tests.cluster import testcluster

N_NODES = 3
fresh_cluster = _shared.fresh_cluster
no_leftover_processes = _shared.no_leftover_processes


@pytest.fixture(scope="session")
def cluster() -> Iterator[testcluster.Cluster]:
    reason = testcluster.unavailable_reason()
    if reason:
        pytest.skip(reason)
    if shutil.which("nft") is None:
        pytest.skip("nft (nftables) is needed to block traffic inside a node: apt-get install nftables")
    made = testcluster.start_cluster(N_NODES)
    try:
        yield made
    finally:
        testcluster.stop_cluster(made)
