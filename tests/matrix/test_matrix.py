"""The real-process scenarios of the torch-version matrix (docs/compatibility.md).

Each test runs one real torchrun gloo job under `triage launch` on the torch of this interpreter
and checks the verdict. Where this torch has no Flight Recorder for gloo (torch 2.4), the same
culprit must be named from heartbeats and stacks, and a job that finishes must not be called
"all match". scripts/torch_matrix.sh runs this module in one virtual environment per version
(``-m matrix``, RUN_TORCH_MATRIX=1) and writes the table; the test names are its rows.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.helpers.launch import TIMEOUT_S, Finished, job_env, launch_argv, run_launch, torchrun
from tests.helpers.paths import example, program
from triage.exitcodes import ExitCode

pytestmark = [pytest.mark.matrix, pytest.mark.slow, pytest.mark.timeout(300)]


def _recorded(run_dir: Path) -> bool:
    """False when the ranks' heartbeats said this torch has no (working) Flight Recorder."""
    for beat in run_dir.glob("*/ranks/*/heartbeat.json"):
        state = json.loads(beat.read_text()).get("fr_state") or ""
        if state.startswith("unavailable:"):
            return False
    return True


def _launch(tmp_path: Path, job: list[str], *options: str, **env: str) -> Finished:
    run_dir = tmp_path / "run"
    return run_launch(launch_argv(run_dir, job, *options), job_env(**env), run_dir)


def _verdict(done: Finished) -> str:
    return done.line("triage: verdict: ").removeprefix("triage: verdict: ")


def test_mismatch(tmp_path: Path) -> None:
    done = _launch(tmp_path, torchrun(example("mismatch_hang.py")))
    assert done.returncode == int(ExitCode.HANG_DETECTED), done.explain()
    assert done.line("triage: hang suspected: ") == (
        f"triage: hang suspected: rank 0 waiting in all_reduce seq 4 (pg 0) for {int(TIMEOUT_S)} s; "
        "rank 1 waiting in all_gather seq 4 (pg 0)")
    verdict = _verdict(done)
    assert "all_gather" in verdict and "all_reduce" in verdict and "rank 1" in verdict, verdict


def test_stall(tmp_path: Path) -> None:
    done = _launch(tmp_path, torchrun(example("stuck_in_python.py")), "--stop-timeout", "8")
    assert done.returncode == int(ExitCode.HANG_DETECTED), done.explain()
    assert done.line("triage: hang suspected: ") == (
        f"triage: hang suspected: rank 0 waiting in all_reduce seq 3 (pg 0) for {int(TIMEOUT_S)} s; "
        "rank 1 has not entered it (last seq 2)")
    assert done.line("triage: rank 1 busy in busy_wait_for_data")
    verdict = _verdict(done)
    assert "rank 1" in verdict and "busy_wait_for_data" in verdict, verdict
    if not _recorded(tmp_path / "run"):
        report = done.stdout
        assert "collectives not recorded: " in report and "all match" not in report, report


def test_exception(tmp_path: Path) -> None:
    done = _launch(tmp_path, torchrun(program("matrix_job.py"), 2, "exception"))
    assert done.returncode != 0, done.explain()
    verdict = _verdict(done)
    assert verdict.startswith("EXCEPTION: rank 1") and "ValueError" in verdict, verdict


def test_segfault(tmp_path: Path) -> None:
    done = _launch(tmp_path, torchrun(example("segfault_rank.py")))
    assert done.returncode != 0, done.explain()
    verdict = _verdict(done)
    assert verdict.startswith("CRASH: rank 1") and "SIGSEGV" in verdict, verdict


def test_dtype(tmp_path: Path) -> None:
    done = _launch(tmp_path, torchrun(program("matrix_job.py"), 2, "dtype"))
    assert done.returncode == 0, done.explain()
    report = done.stdout + done.stderr
    assert "all match" not in report, report
    if _recorded(tmp_path / "run"):
        assert re.search(r"rank 1 \(\S+\) called all_reduce\(count=8, int32\)", report), report
    else:
        assert "collectives not recorded: torch " in report, report
        assert "dtype and count mismatches cannot be ruled out" in report, report


def test_subgroup(tmp_path: Path) -> None:
    done = _launch(tmp_path, torchrun(program("matrix_job.py"), 3, "subgroup"))
    assert done.returncode == int(ExitCode.HANG_DETECTED), done.explain()
    verdict = _verdict(done)
    assert "rank 1" in verdict and "broadcast" in verdict, verdict


def test_init_hang(tmp_path: Path) -> None:
    done = _launch(tmp_path, torchrun(program("agent_init_hang.py"), 3))
    assert done.returncode == int(ExitCode.HANG_DETECTED), done.explain()
    line = done.line("triage: hang suspected: init hang: ")
    assert "rank 0 has not reached it" in line and "load_before_init" in line, line
    assert "NO PROBLEM FOUND" not in _verdict(done)


def test_dataloader_worker(tmp_path: Path) -> None:
    done = _launch(tmp_path, torchrun(program("agent_dataloader_worker.py")))
    assert done.returncode == int(ExitCode.HANG_DETECTED), done.explain()
    verdict = _verdict(done)
    assert "rank 1 waits on its DataLoader worker 1" in verdict and "read_from_store" in verdict, verdict


def test_long_checkpoint(tmp_path: Path) -> None:
    done = _launch(tmp_path, torchrun(program("agent_busy_checkpoint.py"), 3), "--hang-timeout", "5",
                   AGENT_BUSY_SECONDS="15")
    assert done.returncode == 0, done.explain()
    assert "stopping the job (SIGTERM" not in done.stderr
    assert done.line("triage: rank 0 busy in save_checkpoint")
