"""Faults triage's stop must survive, on real 2-rank gloo jobs under `triage launch`.

- a rank in the middle of an import (its main thread and a second thread in each rank import
  without end) when triage stops the job: every rank ends by SIGTERM, none by SIGSEGV (repeated);
- a rank that ignores SIGTERM: the job still ends, nothing is left behind;
- a rank whose SIGTERM handler segfaults: the job ends and the evidence is all there;
- the node agent killed by SIGKILL: the job goes on untouched (its output still lands in the
  ranks' output.log) and `triage report` says the agent died.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.launch import HOST, job_env, launch_argv, rank_dir, read_json, run_launch, torchrun
from tests.helpers.paths import REPO, program
from tests.helpers.processes import running_program, wait_for

STOPPED = 75


def _launch(tmp_path: Path, fault: str, *options: str) -> tuple[int, str, Path]:
    run = tmp_path / "run"
    argv = launch_argv(run, torchrun(program("stop_faults_job.py"), 2), "--stop-timeout", "3",
                       "--kill-grace", "2", *options, host=HOST)
    done = run_launch(argv, job_env(STOP_FAULT=fault, STOP_FAULT_DIR=str(tmp_path)), run, timeout=240)
    return done.returncode, done.explain(), run


def _no_segfault(run: Path, explain: str) -> None:
    for rank in (0, 1):
        log = (rank_dir(run, rank) / "faulthandler.log").read_text(errors="replace")
        assert "Segmentation fault" not in log, (rank, log[-3000:])
    launcher = next(run.glob("*/launcher.log")).read_text(errors="replace")
    assert "SIGSEGV" not in launcher and "Signal 11" not in launcher, launcher[-3000:]
    assert "SIGSEGV" not in explain, explain


@pytest.mark.parametrize("attempt", range(3))
def test_a_rank_stopped_in_the_middle_of_an_import_ends_by_sigterm(tmp_path: Path, attempt: int) -> None:
    code, explain, run = _launch(tmp_path, "import")
    assert code == STOPPED, explain
    _no_segfault(run, explain)
    launcher = next(run.glob("*/launcher.log")).read_text(errors="replace")
    assert "SIGTERM" in launcher or "Signal 15" in launcher, launcher[-3000:]


def test_a_rank_that_ignores_sigterm_still_ends(tmp_path: Path) -> None:
    code, explain, run = _launch(tmp_path, "ignore")
    assert code == STOPPED, explain
    _no_segfault(run, explain)
    assert list(run.glob("*/bundles/*-hang/rank-1/pyspy.json")), explain


def test_a_rank_that_segfaults_in_its_sigterm_handler_loses_nothing(tmp_path: Path) -> None:
    code, explain, run = _launch(tmp_path, "segv")
    assert code == STOPPED, explain
    # The stop's bundle is the last one; under load an earlier check may have found rank 1 busy
    # (still starting) and saved a bundle of its own without stopping.
    bundles = sorted(run.glob("*/bundles/*-hang"))
    assert bundles, explain
    bundle = bundles[-1]
    for rank in (0, 1):
        assert (bundle / f"rank-{rank}" / "pyspy.json").is_file()
        assert (bundle / f"rank-{rank}" / "fr.json").is_file()
    assert "rank 1: segv" in (rank_dir(run, 1) / "output.log").read_text()
    report = subprocess.run([sys.executable, "-m", "triage", "report", str(run), "--width", "160"],
                            capture_output=True, text=True, timeout=120, cwd=REPO, check=False)
    assert report.returncode != 2 and "Traceback" not in report.stderr, report.stderr


def test_the_agent_killed_by_sigkill_leaves_the_job_untouched(tmp_path: Path) -> None:
    run = tmp_path / "run"
    argv = launch_argv(run, torchrun(program("stop_faults_job.py"), 2), quick_hang=False, host=HOST)
    with running_program(argv, env=job_env(STOP_FAULT="finish", STOP_FAULT_SECONDS="6", STOP_FAULT_DIR=str(tmp_path)),
                         ready="READY",
                         timeout=120) as proc:
        node = wait_for(lambda: _json_or_none(run / HOST / "node.json"), 30, "node.json")
        assert node["agent_pid"] == proc.pid
        workers = [read_json(rank_dir(run, r) / "worker.json")["pid"] for r in (0, 1)]
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        for rank in (0, 1):               # the ranks go on and end by themselves
            wait_for(lambda r=rank: (_json_or_none(rank_dir(run, r) / "exit.json") or {}).get("how") == "exit",
                     120, f"rank {rank} exit record")
        wait_for(lambda: not any(os.path.exists(f"/proc/{pid}") and _state(pid) != "Z" for pid in workers), 60,
                 "the workers' end")
    for rank in (0, 1):
        assert read_json(rank_dir(run, rank) / "exit.json")["exit_code"] == 0
        assert f"rank {rank}: done" in (rank_dir(run, rank) / "output.log").read_text()
    report = subprocess.run([sys.executable, "-m", "triage", "report", str(run), "--width", "200"],
                            capture_output=True, text=True, timeout=120, cwd=REPO, check=False)
    assert f"pid {proc.pid} on {HOST} died (no end record)" in report.stdout, report.stdout + report.stderr
    as_json = subprocess.run([sys.executable, "-m", "triage", "report", str(run), "--format", "json"],
                             capture_output=True, text=True, timeout=120, cwd=REPO, check=False)
    assert "agent_died" in as_json.stdout


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "X"


def _json_or_none(path: Path) -> dict[str, object] | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def test_the_workers_sigterm_dump_survives_threads_in_the_middle_of_imports(tmp_path: Path) -> None:
    """Thousands of SIGTERMs into a sleeping thread while three threads import: walking the
    importing threads from the handler crashed (SIGSEGV, 3 of 3 runs of 8 s with all_threads=True);
    the worker dumps the receiving thread only."""
    run = subprocess.run([sys.executable, str(REPO / "tests" / "programs" / "sigterm_storm.py"), str(tmp_path), "6"],
                         capture_output=True, text=True, timeout=120, cwd=REPO, check=False)
    assert run.returncode == 0, (run.returncode, run.stderr[-2000:])
    sent = int(run.stdout.split()[-1])
    assert sent > 100
    assert (tmp_path / "faulthandler.log").read_text(errors="replace").count("most recent call first") >= 50
