"""Hangs before the first collective, on real gloo jobs under `triage launch --hang-timeout 3`:

- a rank that never reaches init_process_group (sleeping) while its peers wait in it: init hang,
  detected within --hang-timeout + 2 s of the peers entering init, stopped (exit 75);
- a rank slow to start (computing) while its peers wait: busy, not stopped, the job finishes;
- every local rank waits in init for ranks that never started: init hang, stopped.
"""

from __future__ import annotations

import re
import sys

import pytest

from tests.helpers.launch import TIMEOUT_S, job_env, launch_argv, run_launch, torchrun
from tests.helpers.paths import program
from triage.bundle import Trigger, read_manifest
from triage.exitcodes import ExitCode

pytestmark = [pytest.mark.timeout(240), pytest.mark.slow]


def _entered_init(run_dir, ranks) -> float:  # type: ignore[no-untyped-def]
    times = []
    for rank in ranks:
        text = next(run_dir.glob(f"*/ranks/{rank}/output.log")).read_text()
        times += [float(t) for t in re.findall(r"entering init_process_group at ([0-9.]+)", text)]
    assert times, "no rank said when it entered init"
    return max(times)


def test_a_rank_that_never_reaches_init_is_an_init_hang(tmp_path) -> None:  # type: ignore[no-untyped-def]
    run_dir = tmp_path / "run"
    done = run_launch(launch_argv(run_dir, torchrun(program("agent_init_hang.py"), nproc=3)), job_env(), run_dir)
    assert done.returncode == int(ExitCode.HANG_DETECTED), done.explain()
    line = done.line("triage: hang suspected: init hang: ")
    assert re.match(r"triage: hang suspected: init hang: ranks 1,2 waiting in init_process_group "
                    r"\(store [^)]+:\d+\) for \d+ s; rank 0 has not reached it "
                    r"\(blocked in load_before_init \(agent_init_hang.py:\d+\)\)$", line), line
    assert done.line("triage: the hang is certain: rank 0 blocked in load_before_init")
    bundle = done.bundle()
    manifest = read_manifest(bundle)
    assert manifest.trigger == Trigger.HANG
    assert manifest.extra["hang_source"] == "init" and manifest.extra["verdict_kind"] == "init_hang"
    assert "load_before_init" in (bundle / "rank-0" / "pyspy.txt").read_text()
    assert "init_process_group" in (bundle / "rank-1" / "pyspy.txt").read_text()
    latency = manifest.created - (_entered_init(run_dir, [1, 2]) + TIMEOUT_S)
    assert latency <= 2.0, f"detected {latency:.2f} s after hang_timeout"
    verdict = done.line("triage: verdict: ")
    assert "NO PROBLEM FOUND" not in verdict, verdict


def test_a_rank_slow_to_start_is_not_stopped(tmp_path) -> None:  # type: ignore[no-untyped-def]
    run_dir = tmp_path / "run"
    env = job_env(AGENT_INIT_MODE="busy", AGENT_INIT_SECONDS=str(4 * TIMEOUT_S))
    done = run_launch(launch_argv(run_dir, torchrun(program("agent_init_hang.py"), nproc=3)), env, run_dir)
    assert done.returncode == 0, done.explain()
    assert done.line("triage: rank 0 busy in load_before_init")
    assert "stopping the job (SIGTERM" not in done.stderr
    assert done.line("triage: finding: slow rank: rank 0 busy in load_before_init")
    for rank in range(3):
        assert f"rank {rank}: last line" in next(run_dir.glob(f"*/ranks/{rank}/output.log")).read_text()


def test_ranks_waiting_for_peers_that_never_started_are_an_init_hang(tmp_path) -> None:  # type: ignore[no-untyped-def]
    run_dir = tmp_path / "run"
    job = [sys.executable, str(program("agent_partial_world.py")), "2", "4", str(program("agent_init_hang.py"))]
    done = run_launch(launch_argv(run_dir, job), job_env(AGENT_INIT_RANK="99"), run_dir)
    assert done.returncode == int(ExitCode.HANG_DETECTED), done.explain()
    line = done.line("triage: hang suspected: init hang: ")
    assert line.startswith("triage: hang suspected: init hang: ranks 0,1 waiting in init_process_group (store 127.0.0.1:")
    assert line.endswith("; the ranks they wait for are not on this node (never started, or on another node)")
    assert done.line("triage: the hang is certain: every rank here waits in its start-up")
