"""Multi-node: a 2-node x 2-rank torchrun gloo job on the real test cluster (slurm/triage.sbatch),
whose rank 3 sleeps 45 ms more before each collective. The ranks' clocks are those of two hosts:
the 10 ms bound applies, and the straggler is still named, alone, as a rank of its host."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.cluster.clusterjobs import PYTHON, REMOTE_TRIAGE, SBATCH_WRAPPER, cancel, submit, triage
from tests.cluster.testcluster import Cluster

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(600)]
JOB = Path(__file__).resolve().parents[2] / "programs" / "straggler_job.py"


def test_straggler_on_one_node(cluster: Cluster) -> None:
    run_dir = cluster.shared / "straggler"
    env = cluster.env
    env.update(TRIAGE_BIN=REMOTE_TRIAGE, TRIAGE_PYTHON=PYTHON, TRIAGE_NPROC_PER_NODE="2", TRIAGE_RUN_DIR=str(run_dir),
               STRAG_SLOW_RANK="3", STRAG_EXTRA_MS="45", STRAG_STEPS="100")
    job = submit(cluster, ["-N2", "-o", str(cluster.tmp / "straggler-%j.out"), str(SBATCH_WRAPPER), str(JOB)], env)
    try:
        deadline = time.monotonic() + 300
        while cluster.job_state(job) in ("PENDING", "RUNNING", "COMPLETING", "CONFIGURING"):
            assert time.monotonic() < deadline, f"job {job} still {cluster.job_state(job)}"
            time.sleep(1.0)
    finally:
        cancel(cluster, job)
    exits = sorted(run_dir.glob("*/ranks/*/fr-exit.json"))
    log = Path(str(cluster.tmp / "straggler-%j.out").replace("%j", job))
    assert len(exits) == 4, log.read_text() if log.exists() else "no job output"
    hosts = {p.parents[2].name for p in exits}
    assert len(hosts) == 2, hosts
    done = triage(cluster, "report", str(run_dir), "--format", "json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    found = [f for f in doc["findings"] if f["kind"] == "straggler"]
    assert [f["ranks"] for f in found] == [[3]], doc["findings"]
    figures = doc["extra"]["stragglers"][0]
    assert figures["clock"] == "clock offset bound 10 ms assumed" and figures["is_host"] is False
    assert figures["median_lag_ms"] >= 30.0
    rank3_host = next(p.parents[2].name for p in exits if p.parent.name == "3")
    assert figures["host"] == rank3_host
