"""A full run directory, then `triage report RUN_DIR` (a real tmpfs, a real torchrun job): what is
known of the ranks' end is said, never a guessed SIGKILL. The agent's end record survives (node.json
rewritten in the blocks it holds); with the agent gone (SIGKILL) the ranks' end is "not recorded"."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import psutil
import pytest

from tests.helpers.disk import disk_job_argv, fill_around_the_guard, rank_output
from tests.helpers.launch import HOST, background_launch, job_env
from tests.helpers.processes import kill_pids, triage_cmd, wait_for

pytestmark = [pytest.mark.timeout(300),
              pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small tmpfs needs root")]


def _report(run: Path) -> dict[str, object]:
    done = subprocess.run(triage_cmd("report", str(run), "--format", "json"), capture_output=True, timeout=120,
                          env=job_env(), check=False)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def _fill_while_running(run: Path, markers: Path):  # type: ignore[no-untyped-def]
    argv, env = disk_job_argv(run, markers)
    return background_launch(argv, env, run)


def test_the_end_is_what_is_known_when_the_disk_is_full(small_disk: Path, tmp_path: Path) -> None:
    run = small_disk / "run"
    launch = _fill_while_running(run, tmp_path)
    with launch as proc:
        fill_around_the_guard(small_disk, run, tmp_path)
        _, err = proc.communicate(timeout=180)
    assert proc.returncode == 0, err
    assert "SIGKILL?" not in err
    assert (f"triage: ranks on {HOST}: ranks 0,1: how they ended is not recorded (the run directory's disk was "
            "full); the launcher exited 0") in err
    node = json.loads((run / HOST / "node.json").read_text())
    assert node["status"] == "exited" and node["launcher_returncode"] == 0, err
    assert not list(run.glob("*/ranks/*/exit.json"))
    report = _report(run)
    verdict = report["verdict"]
    assert isinstance(verdict, dict) and verdict["kind"] == "no_problem_found", verdict
    kinds = [f["kind"] for f in report["findings"]]  # type: ignore[attr-defined]
    assert "disk_full" in kinds and "agent_died" not in kinds


def test_with_the_agent_gone_too_the_ranks_end_is_not_recorded(small_disk: Path, tmp_path: Path) -> None:
    run = small_disk / "run"
    launch = _fill_while_running(run, tmp_path)
    pids: list[int] = []
    try:
        with launch as proc:
            wait_for(lambda: all(b"READY" in rank_output(run, r) for r in (0, 1)), 120, "both ranks ready")
            node = json.loads((run / HOST / "node.json").read_text())
            pids.append(node["launcher_pid"])
            proc.send_signal(signal.SIGKILL)          # the agent dies; the job goes on without it
            proc.wait(timeout=30)
            fill_around_the_guard(small_disk, run, tmp_path)
            launcher = psutil.Process(pids[0])
            launcher.wait(timeout=180)               # torchrun ends by itself when its workers are done
        for rank in (0, 1):
            assert (tmp_path / f"done-{rank}").read_text() == "ok"
    finally:
        kill_pids(pids)
    verdict = _report(run)["verdict"]
    assert isinstance(verdict, dict) and verdict["kind"] == "missing_rank", verdict
    assert "how ranks 0,1 (testhost) ended is not recorded: the run directory's disk was full" in verdict["summary"]
    assert "SIGKILL" not in verdict["summary"] and "no dump" not in verdict["summary"]
