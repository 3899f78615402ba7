"""A rendezvous endpoint nobody can reach: a real `torchrun --rdzv-backend c10d --rdzv-endpoint` to a
TEST-NET address (RFC 5737, never routed) under `triage launch`. The verdict is an init failure of
torchrun's rendezvous that names the endpoint, not a hang of some unknown rank; torchrun's own
connect timeout (--rdzv-conf read_timeout) ends the job, not triage."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.helpers.launch import TORCHRUN, job_env, launch_argv, run_launch
from tests.helpers.paths import program
from tests.helpers.processes import triage_cmd
from triage.exitcodes import ExitCode

pytestmark = [pytest.mark.timeout(240), pytest.mark.slow]
ENDPOINT = "192.0.2.1:29999"


def test_an_unreachable_rendezvous_endpoint_is_an_init_failure_naming_the_endpoint(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    job = [TORCHRUN, "--nnodes", "2", "--nproc-per-node", "1", "--rdzv-backend", "c10d", "--rdzv-endpoint",
           ENDPOINT, "--rdzv-id", "unreach", "--rdzv-conf", "read_timeout=5,join_timeout=10",
           str(program("agent_init_hang.py"))]
    done = run_launch(launch_argv(run_dir, job), job_env(), run_dir, timeout=150)
    assert done.returncode not in (0, int(ExitCode.HANG_DETECTED)), done.explain()
    assert "stopping the job (SIGTERM" not in done.stderr          # torchrun's own timeout ended it
    launcher = next(run_dir.glob("*/launcher.log")).read_text()
    assert "RendezvousConnectionError" in launcher or "RendezvousTimeoutError" in launcher, launcher[-2000:]
    report = subprocess.run(triage_cmd("report", str(run_dir), "--format", "json"), capture_output=True, text=True,
                            timeout=120, check=False)
    data = json.loads(report.stdout)
    summary = data["verdict"]["summary"]
    assert data["verdict"]["kind"] == "init_hang", summary
    assert f"rendezvous at {ENDPOINT}" in summary and "no rank has started" in summary, summary
    assert not data["verdict"].get("culprit_ranks"), summary       # no rank is blamed: none started
    assert done.line("triage: verdict: ") == f"triage: verdict: {summary}"
