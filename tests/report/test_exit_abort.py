"""A process that aborts at exit with ``terminate called without an active exception`` after its own last line.

A real program (compiled here) prints its end-of-training line and returns while a thread of its own still runs;
C++ then calls std::terminate (SIGABRT), as a gloo or NCCL process that ends without destroy_process_group does
now and then (pytorch/pytorch#190489). Run by a real torchrun (``--no-python``), its log is a crash of that rank,
and the steps say what ends it (destroy_process_group, join the threads), not to hunt CUDA errors.
"""

from __future__ import annotations

import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.launch import TORCHRUN
from tests.helpers.paths import PROGRAMS, REPO
from triage.analysis.advice import THREAD_AT_EXIT, THREAD_AT_EXIT_STEP, excerpt_steps
from triage.exitcodes import ExitCode
from triage.model import Finding, Verdict, VerdictKind

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++ to build the test program")


def _no_core() -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))   # the abort must leave no core in the test's directory


def test_the_abort_at_exit_is_told_as_a_thread_left_running() -> None:
    verdict = Verdict(VerdictKind.CRASH, f"rank 3 (node2) failed: {THREAD_AT_EXIT}", culprit_ranks=(3,))
    steps = excerpt_steps(verdict, "torchrun")
    assert steps[0] == THREAD_AT_EXIT_STEP and "destroy_process_group()" in steps[0]
    assert "rank 3" in steps[1]
    assert not any("CUDA_LAUNCH_BLOCKING" in step for step in steps)
    other = Verdict(VerdictKind.CRASH, "rank 3 (node2) failed: Segmentation fault", culprit_ranks=(3,))
    assert THREAD_AT_EXIT_STEP not in excerpt_steps(other, "torchrun")


def test_a_real_torchrun_log_of_the_abort_at_exit(tmp_path: Path) -> None:
    binary = tmp_path / "exit_with_thread"
    subprocess.run(["g++", "-O0", "-pthread", str(PROGRAMS / "exit_with_thread.cpp"), "-o", str(binary)], check=True)
    run = subprocess.run([TORCHRUN, "--standalone", "--nproc-per-node", "1", "--no-python", str(binary)],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300, preexec_fn=_no_core, check=False)
    log = tmp_path / "job.log"
    log.write_text(run.stdout + run.stderr)
    assert run.returncode != 0 and THREAD_AT_EXIT in log.read_text(), log.read_text()[-2000:]
    report = subprocess.run([sys.executable, "-m", "triage", "report", str(log), "--format", "text"],
                            cwd=REPO, capture_output=True, text=True, timeout=300, check=False)
    out = " ".join(report.stdout.split())
    assert report.returncode == ExitCode.PROBLEM_FOUND, report.stdout + report.stderr
    first = out.split("Coverage")[0]
    assert "CRASH" in first and "rank 0" in first and THREAD_AT_EXIT in first, out
    assert "destroy_process_group()" in out and "CUDA_LAUNCH_BLOCKING" not in out, out
    assert not list(tmp_path.glob("core*"))
    # the finding rests on two lines of one file (the abort and torchrun's record): the file is said once
    assert report.stdout.count(f"evidence: {log}") == 1, report.stdout


def test_a_finding_names_each_evidence_path_once() -> None:
    finding = Finding("crash", (0,), "rank 0 failed", evidence=("job.log", "b.log", "job.log"))
    assert finding.evidence == ("job.log", "b.log") and finding.to_json()["evidence"] == ["job.log", "b.log"]
