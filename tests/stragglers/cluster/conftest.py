"""The real test cluster for the multi-node straggler test: a 2-node cluster of its own (module
scope; testcluster names every cluster uniquely, so it runs beside the session cluster of
tests/cluster), and tests/cluster's leftover-process check (the cluster's daemons excepted)."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest

CLUSTER_TESTS = Path(__file__).resolve().parents[2] / "cluster"
_spec = importlib.util.spec_from_file_location("triage_cluster_conftest_stragglers", CLUSTER_TESTS / "conftest.py")
if _spec is None or _spec.loader is None:
    raise ImportError(f"cannot load {CLUSTER_TESTS / 'conftest.py'}")
_shared = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_shared)

from tests.cluster import testcluster

no_leftover_processes = _shared.no_leftover_processes


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
