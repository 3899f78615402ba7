"""One story after a stop from outside (real `triage launch` of real torchrun/gloo jobs): the agent's
closing line and a later `triage report RUN_DIR` agree. A Ctrl-C passed to a healthy job is the
verdict (the ranks' KeyboardInterrupts after it are its consequence); a rank that failed before it
stays the verdict, with the stop said after it."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import pytest

from tests.helpers.launch import HOST, job_env, launch_argv, rank_dir, torchrun
from tests.helpers.paths import program
from tests.helpers.processes import running_program, triage_cmd, wait_for

pytestmark = pytest.mark.timeout(300)


def _stop_job(tmp_path: Path, fail_rank: int | None, sig: int) -> tuple[bytes, dict[str, object], int]:
    """Start the job, wait until it stepped (and, with ``fail_rank``, until that rank's exception is
    recorded), send ``sig`` to triage launch; its console and `triage report RUN --format json`."""
    run = tmp_path / "run"
    args = ["--fail-rank", str(fail_rank)] if fail_rank is not None else []
    # torchrun looks at its workers once a minute: the failed rank's end is still unnoticed at the stop
    before = ("--monitor-interval", "60") if fail_rank is not None else ()
    job = torchrun(program("stop_story_job.py"), 2, str(tmp_path), *args, before=before)
    argv = launch_argv(run, job, "--console", "none", quick_hang=False, host=HOST)
    with running_program(argv, env=job_env(), ready=None) as proc:
        wait_for(lambda: all((tmp_path / f"ready-{r}").exists() for r in (0, 1)), 120, "both ranks stepping")
        if fail_rank is not None:
            wait_for(lambda: (rank_dir(run, fail_rank) / "exit.json").exists(), 60, "the failed rank's exit record")
        proc.send_signal(sig)
        out, _ = proc.communicate(timeout=180)
        pid = proc.pid
    report = subprocess.run(triage_cmd("report", str(run), "--format", "json"), capture_output=True, timeout=120,
                            env=job_env(), check=False)
    assert report.returncode in (0, 1), report.stderr
    doc = json.loads(report.stdout)
    return out, {**doc["verdict"], "next_steps": doc["next_steps"]}, pid


def _closing_verdict(out: bytes) -> str:
    lines = [line for line in out.decode("utf-8", "replace").splitlines() if line.startswith("triage: verdict: ")]
    assert lines, out.decode("utf-8", "replace")[-4000:]
    return lines[-1].removeprefix("triage: verdict: ")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_stop_passed_to_a_healthy_job_is_the_verdict_live_and_in_the_report(tmp_path: Path, sig: int) -> None:
    out, verdict, pid = _stop_job(tmp_path, None, sig)
    name = signal.Signals(sig).name
    assert verdict["kind"] == "stopped", verdict
    who = f"triage launch (pid {pid}) on host {HOST} received {name} and passed it to the launcher"
    assert who in verdict["summary"]
    assert _closing_verdict(out) == verdict["summary"]
    assert "KeyboardInterrupt" not in verdict["summary"] and "raised" not in verdict["summary"]


def test_a_rank_that_failed_before_the_stop_stays_the_verdict(tmp_path: Path) -> None:
    out, verdict, pid = _stop_job(tmp_path, 1, signal.SIGINT)
    assert verdict["kind"] == "exception" and verdict["culprit_ranks"] == [1], verdict
    assert "RuntimeError: stop story failure" in verdict["summary"]
    assert verdict["summary"].endswith(f"; then triage launch (pid {pid}) on host {HOST} received SIGINT and passed "
                                       "it to the launcher")
    assert _closing_verdict(out) == verdict["summary"]


def test_a_run_directory_removed_mid_job_neither_stops_the_job_nor_is_guessed_at(tmp_path: Path) -> None:
    import shutil

    run = tmp_path / "run"
    job = torchrun(program("launch_spew.py"), 2, "300", "--slow", "6")
    argv = launch_argv(run, job, "--console", "none", quick_hang=False, host=HOST)
    with running_program(argv, env=job_env(SPEW_MARKERS=str(tmp_path)), ready=None) as proc:
        wait_for(lambda: all((rank_dir(run, r) / "worker.json").exists() for r in (0, 1)), 120, "both ranks")
        shutil.rmtree(run)
        out, _ = proc.communicate(timeout=180)
    assert proc.returncode == 0, out
    assert all((tmp_path / f"done-{r}").exists() for r in (0, 1))        # the ranks wrote every line
    assert b"SIGKILL?" not in out
    assert f"triage: {run / HOST / 'ranks'} is gone (removed while the job ran?)".encode() in out
    report = subprocess.run(triage_cmd("report", str(run)), capture_output=True, text=True, timeout=120,
                            env=job_env(), check=False)
    assert report.returncode == 2 and "Traceback" not in report.stderr
    assert report.stderr.startswith(f"triage: error: {run}: run directory holds no rank data")
    assert f"({HOST}/node.json: its launcher exited 0): the rank files were removed" in report.stderr
