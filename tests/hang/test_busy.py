"""Do no harm: a rank busy outside any collective is not a hang (real torchrun gloo jobs).

- rank 0 writes a "checkpoint" for 3x --hang-timeout while ranks 1-2 wait in a barrier: the
  evidence is collected, one busy line is printed per check, and the job finishes with exit 0;
- rank 0 sleeps instead: blocked (no CPU, no I/O, same stack), stopped within
  --hang-timeout + --sample-interval;
- rank 0 computes in one C call but gets almost no CPU (an overloaded node): no CPU share, no I/O,
  the same stack, but runnable: busy, not stopped, and the job finishes;
- a rank spinning forever is stopped at --stop-timeout.
"""

from __future__ import annotations

import json

import pytest

from tests.helpers.launch import job_env, launch_argv, run_launch, torchrun
from tests.helpers.paths import program
from triage.bundle import Trigger, read_manifest
from triage.exitcodes import ExitCode
from triage.parsing.flight_recorder.parse import load_fr_file

pytestmark = [pytest.mark.timeout(240), pytest.mark.slow]

HANG_TIMEOUT = 5.0
SAMPLE_INTERVAL = 3.0
SLACK_S = 2.0          # one tick, the samples themselves and a loaded 2-core machine


def _waiting_since(bundle, ranks) -> float:  # type: ignore[no-untyped-def]
    """When the waiting ranks entered the collective they hang in (from the bundle's fr.json)."""
    entered = []
    for rank in ranks:
        dump = load_fr_file(bundle / f"rank-{rank}" / "fr.json", rank)
        entered += [c.time_ns / 1e9 for c in dump.collectives if c.state.value != "completed" and c.time_ns]
    assert entered, "no collective in flight"
    return min(entered)


def test_a_rank_busy_writing_a_checkpoint_is_not_stopped(tmp_path) -> None:  # type: ignore[no-untyped-def]
    run_dir = tmp_path / "run"
    env = job_env(AGENT_BUSY_SECONDS=str(3 * HANG_TIMEOUT))
    done = run_launch(launch_argv(run_dir, torchrun(program("agent_busy_checkpoint.py"), nproc=3),
                                  "--hang-timeout", str(HANG_TIMEOUT)), env, run_dir, timeout=180)
    assert done.returncode == 0, done.explain()
    for rank in range(3):
        output = (run_dir / "vm").parent.glob(f"*/ranks/{rank}/output.log")
        assert f"rank {rank}: last line" in next(output).read_text(), done.explain()
    assert "stopping the job (SIGTERM" not in done.stderr
    # evidence at --hang-timeout, then one line per check naming the busy rank and where it is
    assert done.line("triage: hang suspected: ").startswith("triage: hang suspected: ranks 1,2 waiting in barrier")
    busy = [line for line in done.stderr.splitlines() if line.startswith("triage: rank 0 busy in save_checkpoint")]
    assert busy, done.explain()
    assert "; ranks 1,2 waiting in barrier; not stopping the job" in busy[0]
    assert "stopping after --stop-timeout 1800 s" in busy[0]
    finding = done.line("triage: finding: slow rank: rank 0 busy in save_checkpoint (agent_busy_checkpoint.py:")
    # how the wait ended: the agent saw the ranks move on, or (on a loaded machine, between two
    # checks) saw them finish first; either way the slow rank is named and nothing was stopped
    assert "; the job went on by itself" in finding or "; then a rank of it exited" in finding, finding
    bundles = sorted(run_dir.glob("*/bundles/*"))
    assert len(bundles) == 1
    manifest = read_manifest(bundles[0])
    assert manifest.trigger == Trigger.HANG
    [activity] = manifest.extra["activity"]
    assert activity["rank"] == 0 and activity["activity"] == "busy"


def test_a_rank_starved_of_cpu_is_busy_not_stopped(tmp_path) -> None:  # type: ignore[no-untyped-def]
    run_dir = tmp_path / "run"
    env = job_env(AGENT_BUSY_MODE="starved", AGENT_BUSY_SECONDS=str(3 * HANG_TIMEOUT))
    done = run_launch(launch_argv(run_dir, torchrun(program("agent_busy_checkpoint.py"), nproc=2),
                                  "--hang-timeout", str(HANG_TIMEOUT)), env, run_dir, timeout=180)
    assert done.returncode == 0, done.explain()
    assert "stopping the job (SIGTERM" not in done.stderr
    busy = [line for line in done.stderr.splitlines() if line.startswith("triage: rank 0 busy in compute_while_starved")]
    assert busy, done.explain()
    assert "runnable, waiting for a CPU" in busy[0] and "same stack" in busy[0], busy[0]
    [bundle] = sorted(run_dir.glob("*/bundles/*"))
    [activity] = read_manifest(bundle).extra["activity"]
    assert activity["activity"] == "busy" and activity["runnable"] is True and activity["stack_changed"] is False


def test_a_rank_sleeping_outside_collectives_is_stopped_in_time(tmp_path) -> None:  # type: ignore[no-untyped-def]
    run_dir = tmp_path / "run"
    env = job_env(AGENT_BUSY_MODE="sleep", AGENT_BUSY_SECONDS="300")
    done = run_launch(launch_argv(run_dir, torchrun(program("agent_busy_checkpoint.py"), nproc=3),
                                  "--sample-interval", str(SAMPLE_INTERVAL)), env, run_dir)
    assert done.returncode == int(ExitCode.HANG_DETECTED), done.explain()
    line = done.line("triage: the hang is certain: ")
    assert line.startswith("triage: the hang is certain: rank 0 blocked in sleep_outside_collectives "
                           "(agent_busy_checkpoint.py:"), line
    assert "same stack" in line
    bundle = done.bundle()
    [activity] = read_manifest(bundle).extra["activity"]
    assert activity["activity"] == "blocked" and activity["stack_changed"] is False
    node = json.loads(next(run_dir.glob("*/node.json")).read_text())
    from tests.helpers.launch import TIMEOUT_S

    delay = node["stop_requested"] - _waiting_since(bundle, [1, 2])
    assert delay <= TIMEOUT_S + SAMPLE_INTERVAL + SLACK_S, f"stopped {delay:.1f} s after the hang began"


def test_a_rank_spinning_forever_is_stopped_at_stop_timeout(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from tests.helpers.launch import TIMEOUT_S
    from tests.helpers.paths import example

    run_dir = tmp_path / "run"
    done = run_launch(launch_argv(run_dir, torchrun(example("stuck_in_python.py")), "--stop-timeout", "10"),
                      job_env(), run_dir)
    assert done.returncode == int(ExitCode.HANG_DETECTED), done.explain()
    assert done.line("triage: rank 1 busy in busy_wait_for_data").count("CPU") == 1
    certain = done.line("triage: the hang is certain: ")
    assert "still busy after --stop-timeout 10 s" in certain
    node = json.loads(next(run_dir.glob("*/node.json")).read_text())
    first = min(run_dir.glob("*/bundles/*"))
    delay = node["stop_requested"] - _waiting_since(first, [0])
    # never before --stop-timeout; after it, within one check period and the samples (a loaded 2-core
    # machine running the whole suite adds seconds of scheduling delay: a generous margin)
    assert 10.0 <= delay <= 10.0 + TIMEOUT_S + SAMPLE_INTERVAL + SLACK_S + 15.0, delay
