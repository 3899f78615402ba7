"""`triage collect --job J` on a real SLURM cluster, without an agent (standalone collection)."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from tests.cluster.clusterjobs import REMOTE_TRIAGE, cancel, manifests, sleeper_job, submit, triage
from tests.cluster.testcluster import Cluster
from tests.helpers.processes import running_program

pytestmark = pytest.mark.cluster


def test_collect_job_gathers_a_bundle_from_every_node(fresh_cluster: Cluster) -> None:
    c = fresh_cluster
    out = c.tmp / "collect-sleeper"
    with sleeper_job(c) as job:
        result = triage(c, "collect", "--job", job, "--run-dir", str(out), "--remote-triage", REMOTE_TRIAGE,
                        "--strace-seconds", "0.3", "--no-report")
    assert result.returncode == 0, result.stderr
    assert f"job {job} (RUNNING) on 2 node(s): node1, node2" in result.stderr
    found = manifests(out)
    assert sorted(found) == ["node1", "node2"]
    ranks = {host: [r["rank"] for r in m[-1]["ranks"]] for host, m in found.items()}  # type: ignore[index, union-attr]
    assert sorted(ranks["node1"] + ranks["node2"]) == [0, 1] and len(ranks["node1"]) == 1
    pyspy = out / "node1" / "bundles"
    assert any("wait_here" in p.read_text() for p in pyspy.glob(f"*/rank-{ranks['node1'][0]}/pyspy.txt"))
    summary = json.loads((out / "collect.json").read_text())
    assert summary["missing"] == [] and all(n["bytes"] > 0 for n in summary["nodes"].values())


def test_collect_job_refuses_pending_finished_unknown_and_bad_ids(fresh_cluster: Cluster) -> None:
    c = fresh_cluster
    pending = submit(c, ["-N1", "--begin=now+3600", "--wrap", "true"])
    finished = submit(c, ["-N1", "-o", "/dev/null", "--wrap", "true"])
    deadline = time.monotonic() + 30
    while c.job_state(finished) not in ("COMPLETED", "") and time.monotonic() < deadline:
        time.sleep(0.2)
    try:
        cases = {pending: "is still pending", finished: "has already finished", "99999": "does not know this job",
                 "12;rm -rf /": "invalid SLURM job id", "-5": "invalid SLURM job id"}
        for job, message in cases.items():
            result = triage(c, "collect", f"--job={job}", "--run-dir", str(c.tmp / "never"))
            assert result.returncode == 2, (job, result.stderr)
            first = result.stderr.splitlines()[0]
            assert first.startswith("triage: error: ") and message in first, (job, result.stderr)
            assert "Traceback" not in result.stderr
        assert not Path(c.tmp / "never").exists()
    finally:
        cancel(c, pending)


def test_collect_job_names_a_node_that_does_not_answer_in_time(fresh_cluster: Cluster) -> None:
    c = fresh_cluster
    out = c.tmp / "collect-stopped-slurmd"
    with sleeper_job(c) as job:
        slurmd = c.node("node2").daemon_pid("slurmd")
        assert slurmd is not None
        os.kill(slurmd, signal.SIGSTOP)           # node2 is there but its slurmd never answers
        try:
            result = triage(c, "collect", "--job", job, "--run-dir", str(out), "--remote-triage", REMOTE_TRIAGE,
                            "--strace-seconds", "0", "--timeout", "6", "--width", "100")
        finally:
            os.kill(slurmd, signal.SIGCONT)
    assert result.returncode in (0, 1), result.stderr
    assert result.stdout.startswith("triage collect: PARTIAL report: no bundle from 1 of 2 node(s): node2")
    assert "node2: no answer within 6s" in result.stderr
    assert sorted(manifests(out)) == ["node1"]


def test_collect_job_adopts_only_the_pids_slurm_gives_the_job(fresh_cluster: Cluster) -> None:
    """An impostor on node1 that sets RANK and the job's SLURM_JOB_ID in its own environment, but
    that SLURM never started, is not collected: the job's processes come from `scontrol listpids`."""
    c = fresh_cluster
    out = c.tmp / "collect-impostor"
    with sleeper_job(c) as job:
        init = c.node("node1").init_pid()
        assert init is not None
        env = {**os.environ, "RANK": "7", "SLURM_PROCID": "7", "SLURM_JOB_ID": job, "LOCAL_RANK": "0"}
        impostor = ["nsenter", "-t", str(init), "--net", "--uts", "--pid", "--mount", "--",
                    sys.executable, "-c", "import time; print('READY', flush=True); time.sleep(120)  # impostor"]
        with running_program(impostor, env=env):
            result = triage(c, "collect", "--job", job, "--run-dir", str(out), "--remote-triage", REMOTE_TRIAGE,
                            "--strace-seconds", "0", "--no-report")
    assert result.returncode == 0, result.stderr
    found = manifests(out)
    ranks = sorted(r["rank"] for m in found.values() for r in m[-1]["ranks"])  # type: ignore[index, union-attr]
    assert ranks == [0, 1], (ranks, result.stderr[-2000:])
