"""A rank that crashes in its teardown, after its exit record said exit 0 (a C++ destructor, a thread
left behind: ``terminate called without an active exception``): the launcher saw it die, the job's
exit code is a failure, so the report never says the run finished. Real torchrun/gloo jobs under
`triage launch` (tests/programs/teardown_abort.py), and the loader's reconciliation on its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.launch import HOST, job_env, launch_argv, rank_dir, read_json, run_launch, torchrun
from tests.helpers.paths import program
from tests.helpers.report import report_run_json
from triage.agent.launch.ranks import describe_ends
from triage.agent.state import LocalRankStatus
from triage.load.teardown import ended_after_exit_record
from triage.model.evidence import AFTER_EXIT_RECORD, ExitInfo

TIMEOUT_S = 180.0


@pytest.mark.parametrize(("bad", "say"), [(0, ""), (1, "1")])
def test_a_rank_that_aborts_after_its_exit_record_is_no_all_clear(tmp_path: Path, bad: int, say: str) -> None:
    run = tmp_path / "run"
    env = job_env(TEARDOWN_RANK=str(bad), TEARDOWN_SAY=say)
    done = run_launch(launch_argv(run, torchrun(program("teardown_abort.py"), 2), quick_hang=False, host=HOST),
                      env, run, timeout=TIMEOUT_S)
    assert done.returncode != 0, done.explain()
    own = read_json(rank_dir(run, bad) / "exit.json")
    assert own["how"] == "exit" and own["exit_code"] == 0, own         # its own record: a clean exit
    ends = done.line("triage: ranks on ")
    assert f"rank {bad} finished its work (exit record 0), then was killed by SIGABRT at exit" in ends, ends
    verdict = done.line("triage: verdict: ")
    assert "NO PROBLEM FOUND" not in verdict and f"rank {bad} ({HOST}) was killed by SIGABRT" in verdict, verdict
    assert AFTER_EXIT_RECORD in verdict, verdict
    data = report_run_json(run)
    summary = data["verdict"]["summary"]   # type: ignore[index]
    assert data["verdict"]["kind"] == "crash" and data["verdict"]["culprit_ranks"] == [bad], summary  # type: ignore[index]
    assert ("terminate called without an active exception" in summary) == bool(say), summary
    steps = " ".join(data["next_steps"])   # type: ignore[arg-type]
    assert "destroy_process_group" in steps and "CUDA_LAUNCH_BLOCKING" not in steps, steps


def _status(rank: int, code: int | None) -> LocalRankStatus:
    return LocalRankStatus(rank=rank, local_rank=rank, host="h", pid=100 + rank, alive=False, returncode=code,
                           heartbeat_age_s=None, progress_age_s=None, in_flight=None, progress=(), step=None)


def test_reconciliation_units() -> None:
    clean = ExitInfo(exit_code=0, time=10.0, evidence=("exit.json",))
    abort = ExitInfo(signal=6, signal_name="SIGABRT", time=12.0, evidence=("launcher.log",))
    ended = ended_after_exit_record(clean, abort, ["rank 0 step 2", "terminate called without an active exception"])
    assert not ended.ok and ended.signal == 6 and ended.time == 12.0 and not ended.collateral
    assert ended.message and ended.message.startswith(AFTER_EXIT_RECORD)
    assert ended.message.endswith(": terminate called without an active exception")
    assert ended.evidence == ("exit.json", "launcher.log")
    assert "its output says nothing more" in (ended_after_exit_record(clean, abort, ["step 2"]).message or "")
    exit3 = ended_after_exit_record(clean, ExitInfo(exit_code=3, time=None), [])
    assert exit3.exit_code == 3 and (exit3.message or "").startswith("exit code 3 " + AFTER_EXIT_RECORD)
    assert exit3.time == 10.0                                         # the one time known
    untimed = ended_after_exit_record(ExitInfo(exit_code=0), ExitInfo(exit_code=3), [])
    assert untimed.time is None                                       # no time known: none made up (never 0.0)
    # the launcher agrees, saw nothing, or took the rank down as the collateral of another: the record stands
    assert ended_after_exit_record(clean, None, []) is clean
    assert ended_after_exit_record(clean, ExitInfo(exit_code=0), []) is clean
    assert ended_after_exit_record(clean, ExitInfo(signal=15, signal_name="SIGTERM", collateral=True), []) is clean
    failed = ExitInfo(exit_code=1, message="RuntimeError: x")
    assert ended_after_exit_record(failed, abort, []) is failed      # its own record already says it failed
    line = describe_ends([_status(0, 0), _status(1, 0), _status(2, 0)],
                         {0: abort, 1: ExitInfo(signal=15, signal_name="SIGTERM", collateral=True)})
    assert line == ("rank 0 finished its work (exit record 0), then was killed by SIGABRT at exit (the launcher's "
                    "record); 2 ranks exited 0")
    assert describe_ends([_status(0, 0), _status(1, 0)]) == "2 ranks exited 0"
