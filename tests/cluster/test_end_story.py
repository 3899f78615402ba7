"""A job of two nodes that ends without triage stopping it, under the real sbatch wrapper: one
report per job, never one per node, and the story is the job's own.

- a healthy job sent SIGTERM by the real `scancel --signal=TERM` (what a preemption notice or
  `--signal=TERM@T` before a time limit does: the step's tasks get SIGTERM and the job is left to end;
  a plain scancel does the same, then SIGKILLs what is left after KillWait, 2 s on this test cluster
  where a loaded 2-core machine may not finish a report in time, 30 s by Slurm's default): the agents
  forward it; no rank failed, so the verdict is the stop, the ranks' unrecorded end is said as such
  (not "missing"), and the advice never asks to collect from a job that is gone;
- one rank segfaults: the node that ends first prints the report, the other points to it, and both
  say the same verdict."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from tests.cluster.clusterjobs import PROGRAMS, PYTHON, REMOTE_TRIAGE, REPO, SBATCH_WRAPPER, cancel, submit, triage
from tests.cluster.testcluster import Cluster

pytestmark = pytest.mark.cluster


def _env(c: Cluster, run_dir: Path, **extra: str) -> dict[str, str]:
    env = c.env
    env.update(TRIAGE_BIN=REMOTE_TRIAGE, TRIAGE_PYTHON=PYTHON, TRIAGE_NPROC_PER_NODE="1", TRIAGE_RUN_DIR=str(run_dir),
               **extra)
    return env


def _wait_gone(c: Cluster, job: str) -> None:
    deadline = time.monotonic() + 120
    while c.job_state(job) in ("PENDING", "CONFIGURING", "RUNNING", "COMPLETING") and time.monotonic() < deadline:
        time.sleep(0.5)
    assert c.job_state(job) not in ("PENDING", "CONFIGURING", "RUNNING", "COMPLETING"), c.job_state(job)


def _one_report(text: str) -> list[str]:
    """The job's output printed one report (its findings once), and every node said one verdict, the same."""
    said = "\n".join(line for line in text.splitlines() if line.startswith(("triage[", "Findings", "srun", "slurmstepd")))
    assert text.count("\nFindings\n") == 1, said
    verdicts = re.findall(r"^triage\[(node\d)\]: verdict: (.*)$", text, re.MULTILINE)
    assert sorted(host for host, _ in verdicts) == ["node1", "node2"], verdicts
    assert len({said for _, said in verdicts}) == 1, verdicts
    pointers = re.findall(r"^triage\[(node\d)\]: report printed by (node\d); triage report ", text, re.MULTILINE)
    assert len(pointers) == 1 and pointers[0][0] != pointers[0][1], pointers
    return [said for _, said in verdicts]


def test_a_healthy_job_signalled_by_the_scheduler_is_one_stop_from_outside(fresh_cluster: Cluster) -> None:
    c = fresh_cluster
    run_dir = c.shared / "scancel-healthy"
    out = c.tmp / "scancel-healthy.out"
    job = submit(c, ["-N2", "-o", str(out), str(SBATCH_WRAPPER), str(PROGRAMS / "collect_healthy.py")],
                 _env(c, run_dir, COLLECT_SECONDS="600"))
    try:
        deadline = time.monotonic() + 120
        while not (out.exists() and re.search(r"\[node\d:0\] READY", out.read_text(errors="replace"))):
            assert time.monotonic() < deadline, out.read_text(errors="replace")[-3000:] if out.exists() else job
            time.sleep(0.5)
        c.slurm("scancel", "--signal=TERM", job)
        _wait_gone(c, job)
    finally:
        cancel(c, job)
    text = out.read_text(errors="replace")
    said = _one_report(text)
    assert said[0].startswith("STOPPED (from outside the job)"), said
    assert "collect again while it hangs" not in text and "missing_rank" not in text, text[-4000:]
    done = triage(c, "report", str(run_dir), "--format", "json")
    assert done.returncode in (0, 1), done.stderr
    doc = json.loads(done.stdout[done.stdout.index("{"):])
    assert doc["verdict"]["kind"] == "stopped" and not doc["verdict"].get("culprit_ranks"), doc["verdict"]
    kinds = [f["kind"] for f in doc["findings"]]
    assert "missing_rank" not in kinds, doc["findings"]
    assert not any("collect again while it hangs" in step for step in doc["next_steps"]), doc["next_steps"]


def test_a_rank_that_crashes_on_one_node_gives_one_report(fresh_cluster: Cluster) -> None:
    c = fresh_cluster
    run_dir = c.shared / "segfault-two-nodes"
    out = c.tmp / "segfault-two-nodes.out"
    job = submit(c, ["-N2", "-o", str(out), str(SBATCH_WRAPPER), str(REPO / "examples" / "segfault_rank.py")],
                 _env(c, run_dir))
    try:
        _wait_gone(c, job)
    finally:
        cancel(c, job)
    text = out.read_text(errors="replace")
    said = _one_report(text)
    assert said[0].startswith("CRASH: rank 1"), said
    assert json.loads((run_dir / "end_report.json").read_text())["verdict"]["kind"] == "crash"
