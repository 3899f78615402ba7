"""The default `--on-hang report-and-stop` under the sbatch wrapper: the detecting node reports on
every node's bundle, names the culprit rank and its host, and the job ends with triage's 75."""

from __future__ import annotations

import time

import pytest

from tests.cluster.clusterjobs import MISMATCH, PYTHON, REMOTE_TRIAGE, SBATCH_WRAPPER, cancel, manifests, submit
from tests.cluster.testcluster import Cluster

pytestmark = pytest.mark.cluster


def test_hang_is_reported_from_all_nodes_and_the_job_stops(fresh_cluster: Cluster) -> None:
    c = fresh_cluster
    run_dir = c.shared / "mismatch-stop"
    env = c.env
    env.update(TRIAGE_BIN=REMOTE_TRIAGE, TRIAGE_PYTHON=PYTHON, TRIAGE_NPROC_PER_NODE="2", TRIAGE_RUN_DIR=str(run_dir),
               TRIAGE_HANG_TIMEOUT="5", TRIAGE_STRACE_SECONDS="0.5", EXAMPLE_HANG_SECONDS="300")
    out = c.tmp / "mismatch-stop.out"
    job = submit(c, ["-N2", "-o", str(out), str(SBATCH_WRAPPER), str(MISMATCH)], env)
    try:
        deadline = time.monotonic() + 120
        while c.job_state(job) in ("PENDING", "RUNNING", "COMPLETING") and time.monotonic() < deadline:
            time.sleep(0.5)
        state = c.slurm("scontrol", "-o", "show", "job", job).stdout
    finally:
        cancel(c, job)
    assert "JobState=FAILED" in state and "ExitCode=75:0" in state, state
    text = out.read_text(errors="replace")
    culprit_host = next(run_dir.glob("*/ranks/3/worker.json")).parents[2].name
    assert f"HANG: rank 3 ({culprit_host}) called all_gather" in text, text[-3000:]
    assert sorted(manifests(run_dir)) == ["node1", "node2"]
    for node in ("node1", "node2"):       # the report read every node's bundle
        assert f"{run_dir}/{node}/bundles/" in text
