"""The default `--on-hang report-and-stop` under the sbatch wrapper: the detecting node reports on
every node's bundle, names the culprit rank and its host, and the job ends with triage's 75.

The job's output file tells one story: one report, every `triage` line names its host, the stop's
tracebacks (torchrun's SignalException, gloo's "Connection closed by peer") stay in the logs, and
the verdict recorded in stop.json is the one printed."""

from __future__ import annotations

import json
import re
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
    _one_story(text, run_dir)


def _one_story(text: str, run_dir) -> None:  # type: ignore[no-untyped-def]
    lines = text.splitlines()
    print(text)                               # the job's output file, for -s
    agent_lines = [line for line in lines if re.match(r"triage[\[:]", line)]   # not the wrapper's triage.sbatch
    untagged = [line for line in agent_lines if not re.match(r"triage\[node[12]\]: ", line)]
    assert not untagged, untagged
    assert sum(line.startswith("Verdict") or line.lstrip().startswith("HANG: rank 3") for line in lines) <= 2
    verdicts = [line for line in agent_lines if ": verdict: " in line]
    assert len({line.split(": verdict: ", 1)[1] for line in verdicts}) == 1, verdicts
    assert sum("report printed by" in line for line in agent_lines) == 1, agent_lines
    reports = [line for line in lines if line.startswith("triage[") and "next: triage report" in line and "html" in line]
    assert len(reports) == 1, reports
    assert "SignalException" not in text and "Connection closed by peer" not in text, text[-4000:]
    stops = [json.loads(p.read_text()) for p in run_dir.glob("*/stop.json")]
    assert len(stops) == 1 and stops[0]["verdict"]["summary"] in verdicts[0], (stops, verdicts)
