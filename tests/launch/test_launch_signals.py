"""Signal forwarding, exit codes, the agent killed with -9, and no leftover processes."""

from __future__ import annotations

import signal
import sys
import time
from pathlib import Path

import psutil
import pytest

from tests.helpers.launch import HOST, job_env, launch_argv, rank_dir, read_json, run_launch, sha, torchrun
from tests.helpers.paths import program
from tests.helpers.processes import kill_pids, running_program, wait_for
from tests.programs.launch_spew import expected_stream


@pytest.mark.parametrize("code", [0, 7])
def test_exit_code_is_the_launchers(tmp_path: Path, code: int) -> None:
    result = run_launch(launch_argv(tmp_path / "run", [sys.executable, program("launch_signals.py"), str(code)], quick_hang=False, host=HOST),
                        None, tmp_path / "run")
    assert result.returncode == code
    assert read_json(tmp_path / "run" / HOST / "node.json")["exit_code"] == code


@pytest.mark.parametrize("sig, expected, said", [
    (signal.SIGHUP, 42, b"got SIGHUP"),
    (signal.SIGINT, 130, b"got SIGINT"),
    (signal.SIGTERM, 128 + signal.SIGTERM, None),
])
def test_signals_are_forwarded(tmp_path: Path, sig: int, expected: int, said: bytes | None) -> None:
    run = tmp_path / "run"
    argv = launch_argv(run, [sys.executable, program("launch_signals.py")], quick_hang=False, host=HOST)
    with running_program(argv, env=job_env()) as proc:
        proc.send_signal(sig)
        assert proc.wait(timeout=30) == expected
        assert proc.stdout is not None
        rest = proc.stdout.read()
    if said:
        assert b"[testhost:launcher] " + said in rest
    name = signal.Signals(sig).name             # who stopped the job, said (stderr is merged into stdout here)
    stopped = f"STOPPED (from outside the job): triage launch (pid {proc.pid}) on host {HOST} received {name} " \
        "and passed it to the launcher"
    assert f"verdict: {stopped}".encode() in rest
    if expected != 0:      # said before the report too: a scheduler's SIGKILL may cut the report short
        early = [line for line in rest.splitlines() if line.endswith(
            f"; the report follows (if it is cut short: triage report {run})".encode())]
        assert len(early) == 1 and early[0].startswith(f"triage: {stopped}".encode()), early
        assert rest.index(early[0]) < rest.index(b"verdict: STOPPED")
    node = read_json(run / HOST / "node.json")
    assert node["forwarded_signals"] == [name] and isinstance(node["forwarded_at"], float)
    assert node["exit_code"] == expected
    assert node["status"] == ("signalled" if sig == signal.SIGTERM else "exited")


def test_agent_killed_with_sigkill_job_keeps_running(tmp_path: Path) -> None:
    run = tmp_path / "run"
    lines = 20_000
    argv = launch_argv(run, torchrun(program("launch_spew.py"), 2, str(lines), "--slow", "3"),
                       quick_hang=False, host=HOST)
    pids: list[int] = []
    try:
        with running_program(argv, env=job_env(), ready="start of rank", timeout=90) as proc:
            node = wait_for(lambda: _json_or_none(run / HOST / "node.json"), 10, "node.json")
            pids.append(node["launcher_pid"])
            for rank in (0, 1):
                worker = wait_for(lambda r=rank: _json_or_none(rank_dir(run, r) / "worker.json"), 30, "worker.json")
                pids.append(worker["pid"])
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=10)
            dead = [p for p in pids if not psutil.pid_exists(p)]
            done = sorted(str(p) for p in run.glob("*/ranks/*/exit.json"))
            assert not dead, f"the job must survive the agent: {dead} of {pids} gone; {done}"
            for rank in (0, 1):
                wait_for(lambda r=rank: (rank_dir(run, r) / "exit.json").exists(), 60, f"rank {rank} to finish")
                own = (rank_dir(run, rank) / "output.log").read_bytes()
                assert sha(own) == sha(expected_stream(rank, lines, False, False, None))
            launcher = psutil.Process(pids[0])
            launcher.wait(timeout=30)          # torchrun (orphaned) ends by itself when its workers are done
    finally:
        kill_pids(pids)


def test_no_leftover_workers_when_launcher_is_killed(tmp_path: Path) -> None:
    """The launcher dies by SIGKILL and leaves its workers running: triage kills them after the grace."""
    run = tmp_path / "run"
    argv = launch_argv(run, torchrun(program("launch_spew.py"), 2, "200", "--slow", "60"), "--kill-grace", "1",
                       quick_hang=False, host=HOST)
    with running_program(argv, env=job_env(), ready="start of rank", timeout=90) as proc:
        node = wait_for(lambda: _json_or_none(run / HOST / "node.json"), 10, "node.json")
        workers = [wait_for(lambda r=r: _json_or_none(rank_dir(run, r) / "worker.json"), 30, "worker")["pid"]
                   for r in (0, 1)]
        psutil.Process(node["launcher_pid"]).kill()
        code = proc.wait(timeout=30)
        assert code == 128 + signal.SIGKILL
        assert proc.stdout is not None
        assert b"triage: killed 2 process(es) left behind by the launcher" in proc.stdout.read()
        gone = [not psutil.pid_exists(p) or psutil.Process(p).status() == psutil.STATUS_ZOMBIE for p in workers]
        assert all(gone)
    assert (rank_dir(run, 0) / "faulthandler.log").read_bytes().count(b"most recent call first") >= 1


def _json_or_none(path: Path) -> dict[str, object] | None:
    try:
        return read_json(path)  # type: ignore[no-any-return]
    except (OSError, ValueError):
        return None


def test_third_interrupt_kills_a_launcher_that_ignores_them(tmp_path: Path) -> None:
    code = ("import signal, time; signal.signal(signal.SIGINT, signal.SIG_IGN); print('READY', flush=True); "
            "time.sleep(120)")
    argv = launch_argv(tmp_path / "run", [sys.executable, "-c", code], quick_hang=False, host=HOST)
    with running_program(argv, env=job_env()) as proc:
        for _ in range(3):
            proc.send_signal(signal.SIGINT)
            time.sleep(0.5)               # signals sent back to back are merged into one
        assert proc.wait(timeout=30) == 128 + signal.SIGKILL
        assert proc.stdout is not None
        assert b"the launcher is still running: killing the job (SIGKILL)" in proc.stdout.read()


def test_a_signal_ignored_when_triage_started_is_not_forwarded(tmp_path: Path) -> None:
    """`nohup triage launch ...`: the terminal closing (SIGHUP) must not stop the job. triage starts the
    launcher in a session of its own, so only triage's forwarding could have reached it."""
    run = tmp_path / "run"
    argv = launch_argv(run, [sys.executable, program("launch_signals.py")], quick_hang=False, host=HOST)
    with running_program(["nohup", *argv], env=job_env()) as proc:
        proc.send_signal(signal.SIGHUP)
        proc.send_signal(signal.SIGINT)        # signals still arrive in order: SIGINT is forwarded
        assert proc.wait(timeout=30) == 130
        assert proc.stdout is not None
        rest = proc.stdout.read()
    assert b"got SIGINT" in rest and b"got SIGHUP" not in rest
