"""`triage report --explain` on a real run directory: a real torchrun job whose ranks mismatch,
stopped by triage, with rank 0 segfaulting on the stop's SIGTERM. The explanation names the rule
that won (the mismatch), says the crash rule had nothing (the segfault is the stop's collateral)
and shows the stop decision as a final step."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.helpers.launch import job_env, launch_argv, run_launch, torchrun
from tests.helpers.paths import program
from tests.helpers.processes import triage_cmd
from triage.analysis.verdict.rules import RULES
from triage.exitcodes import ExitCode

pytestmark = pytest.mark.timeout(180)


def test_explain_on_a_stopped_mismatch(tmp_path) -> None:  # type: ignore[no-untyped-def]
    run_dir = tmp_path / "run"
    done = run_launch(launch_argv(run_dir, torchrun(program("mismatch_segv_on_term.py"))), job_env(), run_dir)
    assert done.returncode == int(ExitCode.HANG_DETECTED), done.explain()
    plain = subprocess.run(triage_cmd("report", str(run_dir), "--width", "160"), capture_output=True, text=True,
                           timeout=120, check=False)
    explained = subprocess.run(triage_cmd("report", str(run_dir), "--width", "160", "--explain"),
                               capture_output=True, text=True, timeout=120, check=False)
    assert explained.returncode == plain.returncode == int(ExitCode.PROBLEM_FOUND), explained.stderr
    assert explained.stdout.startswith(plain.stdout), explained.stdout
    lines = explained.stdout[len(plain.stdout):].splitlines()
    assert lines[0].startswith("how the verdict was decided"), lines
    names = [r.name for r in RULES]                  # the rules' places as they are now
    rule, crash = names.index("mismatch") + 1, names.index("first crash") + 1
    assert f"winner: mismatch (rule {rule})" in lines[1], lines
    assert any(line.startswith(f"* {rule:2d}. mismatch: won") for line in lines), lines
    assert any(f"{crash}. first crash: no candidate" in line for line in lines), lines
    stop = next(i for i, line in enumerate(lines) if "final step stop decision" in line)
    assert "stopped the job" in lines[stop + 1] or "stopped the job" in lines[stop + 2], lines[stop:]
    report = subprocess.run(triage_cmd("report", str(run_dir), "--format", "json", "--explain"),
                            capture_output=True, text=True, timeout=120, check=False)
    assert json.loads(report.stdout)["verdict"]["kind"] == "collective_mismatch"
    assert f"{rule}. mismatch: won" in report.stderr, report.stderr
