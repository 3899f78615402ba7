"""A real job: the verdict is fixed when triage decides to stop the job. Rank 0 segfaults on the
SIGTERM of the stop while the ranks mismatch; the mismatch stays the verdict, on the console, in
stop.json and in `triage report` afterwards, and the segfault is collateral of the stop."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.helpers.launch import job_env, launch_argv, run_launch, torchrun
from tests.helpers.paths import program
from tests.helpers.processes import triage_cmd
from triage.exitcodes import ExitCode
from triage.layout import RunPaths

pytestmark = pytest.mark.timeout(180)


def test_segfault_on_sigterm_leaves_the_mismatch_as_verdict(tmp_path) -> None:  # type: ignore[no-untyped-def]
    run_dir = tmp_path / "run"
    done = run_launch(launch_argv(run_dir, torchrun(program("mismatch_segv_on_term.py"))), job_env(), run_dir)
    assert done.returncode == int(ExitCode.HANG_DETECTED), done.explain()
    verdict = done.line("triage: verdict: ")
    assert "disagree at seq 4" in verdict and "SIGSEGV" not in verdict, done.explain()
    host = RunPaths(run_dir).hosts()[0]
    record = json.loads(host.stop.read_text())
    assert record["schema"] == "triage.stop/1" and record["host"] == host.host
    assert record["verdict"]["kind"] == "collective_mismatch", record
    # the rank really died of SIGSEGV after the stop (faulthandler says so)
    assert "Segmentation fault" in host.rank(0).faulthandler.read_text(errors="replace"), done.explain()
    report = subprocess.run(triage_cmd("report", str(run_dir), "--format", "json"), capture_output=True,
                            text=True, timeout=120, check=False)
    data = json.loads(report.stdout)
    assert data["verdict"]["kind"] == "collective_mismatch", report.stdout
    assert data["verdict"]["summary"] == record["verdict"]["summary"]
    after = [f for f in data["findings"] if f["kind"] == "after_stop"]
    assert any(0 in f["ranks"] and "SIGSEGV" in f["detail"] for f in after), data["findings"]
    assert not any(f["root_cause"] and "SIGSEGV" in f["detail"] for f in data["findings"])
