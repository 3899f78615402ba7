"""Diagnosis from stacks alone: a real 4-rank torchrun gloo job that triage did not launch hangs;
`triage dump --match` takes py-spy stacks of its ranks; `triage report` names the culprit."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from tests.helpers.launch import torchrun
from tests.helpers.paths import PROGRAMS
from tests.helpers.processes import running_program, triage_cmd, wait_for

pytestmark = pytest.mark.timeout(240)


def _rank_pids(launcher: int, ranks: set[int]) -> list[str]:
    pids = []
    for child in psutil.Process(launcher).children(recursive=True):
        try:
            if child.environ().get("RANK") in {str(r) for r in ranks}:
                pids.append(str(child.pid))
        except psutil.Error:
            continue
    return pids


def _rank_processes(launcher: int) -> list[psutil.Process]:
    ranks = []
    for child in psutil.Process(launcher).children(recursive=True):
        try:
            if child.environ().get("RANK") is not None:
                ranks.append(child)
        except psutil.Error:
            continue
    return ranks


def _main_thread_cpu(rank: psutil.Process) -> float:
    [main] = [t for t in rank.threads() if t.id == rank.pid]
    return main.user_time + main.system_time


def _all_ranks_blocked(launcher: int, world: int) -> bool:
    """Every rank sleeps and its main thread used no CPU over half a second: each is blocked in its last call,
    not still running to it. The caller polls this until it holds."""
    ranks = _rank_processes(launcher)
    if len(ranks) != world:
        return False
    try:
        before = [_main_thread_cpu(r) for r in ranks]
        time.sleep(0.5)
        after = [_main_thread_cpu(r) for r in ranks]
        states = [r.status() for r in ranks]
    except (psutil.Error, ValueError):
        return False
    return before == after and all(state == psutil.STATUS_SLEEPING for state in states)


def _report_on_dump(tmp_path: Path, mode: str, only: set[int] | None = None) -> tuple[int, dict[str, Any]]:
    env = dict(os.environ, STACKS_MODE=mode, PYTHONUNBUFFERED="1")
    # the job's file under a name of this test run's own: `--match` finds this job's ranks, never those of the same
    # test running at the same time in another checkout (two CI runs on one machine)
    name = f"stacks_only_job_{os.getpid()}_{mode}"
    program = tmp_path / f"{name}.py"
    shutil.copyfile(PROGRAMS / "stacks_only_job.py", program)
    with running_program(torchrun(program, nproc=4), env=env, timeout=120) as job:
        wait_for(lambda: _all_ranks_blocked(job.pid, 4), timeout=120, what="every rank blocked in its last call")
        out = tmp_path / "dump"
        which = ["--match", name] if only is None else ["--pid", *_rank_pids(job.pid, only)]
        dump = subprocess.run(triage_cmd("dump", *which, "--out", str(out), "--strace-seconds", "0",
                                         "--gdb", "never", "--collector-timeout", "60"),
                              capture_output=True, text=True, timeout=150, check=False)
        assert dump.returncode in (0, 1), dump.stderr
    result = subprocess.run(triage_cmd("report", str(out), "--format", "json"), capture_output=True, text=True,
                            timeout=60, check=False)
    assert result.stdout, result.stderr
    return result.returncode, json.loads(result.stdout)


def test_a_rank_in_another_collective_is_a_mismatch_inferred_from_the_stacks(tmp_path: Path) -> None:
    code, report = _report_on_dump(tmp_path, "mismatch")
    verdict = report["verdict"]
    assert code == 1
    assert (verdict["kind"], verdict["subkind"], verdict["culprit_ranks"]) == ("collective_mismatch", "op", [3])
    assert "broadcast" in verdict["summary"] and "all_reduce" in verdict["summary"]
    assert "inferred from the stacks" in verdict["summary"]
    assert any("triage launch" in step for step in report["next_steps"])


def test_a_rank_outside_any_collective_is_stuck_outside(tmp_path: Path) -> None:
    code, report = _report_on_dump(tmp_path, "outside")
    verdict = report["verdict"]
    assert code == 1
    assert (verdict["kind"], verdict["culprit_ranks"]) == ("stuck_outside_collective", [2])
    assert "save_checkpoint" in verdict["summary"]


def test_every_rank_in_the_same_collective_is_a_hang_never_an_all_clear(tmp_path: Path) -> None:
    code, report = _report_on_dump(tmp_path, "group")     # a group mismatch: the stacks cannot show it
    verdict = report["verdict"]
    assert code == 1
    assert (verdict["kind"], verdict["culprit_ranks"]) == ("hang", [])
    assert "all_reduce" in verdict["summary"] and "stacks_only_job_" in verdict["summary"]
    assert any("triage launch" in step for step in report["next_steps"])


def test_a_rank_left_out_of_the_dump_is_named_missing(tmp_path: Path) -> None:
    code, report = _report_on_dump(tmp_path, "outside", only={0, 1, 3})   # rank 2 (the culprit) not sampled
    verdict = report["verdict"]
    assert code == 1
    assert (verdict["kind"], verdict["culprit_ranks"]) == ("missing_rank", [2])


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
