"""Session 56 (rev56 G5): slurmstepd's word at a step's end that its memory cgroup touched the limit at some point
("slurmstepd: error: Exceeded step memory limit at some point.", older Slurm's task/cgroup: the cgroup's count of
the times it hit its limit, page cache included) after the run said it ended well was a failure of unknown place; no
kill is told by it. Now, after the run's own word that it ended well, it is a note of the all-clear
(triage.parsing.launchers.slurm_memory_touched_after_its_end); where a task was killed, the kill's own record is the
failure as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import report_log


@pytest.mark.parametrize("entity", ["step", "job"])
@pytest.mark.parametrize("ended", ["training finished, model saved", "Done. 12 epochs in 3h02m, exited with code 0"])
def test_touched_after_the_run_ended_is_a_note(entity: str, ended: str, tmp_path: Path) -> None:
    text = ("epoch 11 step 5000 loss 0.12\n" + ended + "\n"
            f"slurmstepd: error: Exceeded {entity} memory limit at some point.\n")
    code, got = report_log(text, tmp_path)
    assert got["verdict"]["kind"] == "no_problem_found", got["verdict"]
    assert code == 0


def test_touched_then_a_task_killed_is_the_kill(tmp_path: Path) -> None:
    text = ("epoch 1 step 100 loss 2.3\nepoch 1 step 200 loss 2.1\n"
            "slurmstepd: error: Exceeded step memory limit at some point.\nsrun: error: gpu07: task 0: Killed\n")
    _code, got = report_log(text, tmp_path)
    assert got["verdict"]["kind"] == "crash" and got["verdict"]["culprit_ranks"] == [0]


def test_touched_with_no_end_word_stays_a_failure_line(tmp_path: Path) -> None:
    # (no word that the run ended well: the line is not taken as the step's accounting at a good end)
    text = "epoch 1 step 100 loss 2.3\nslurmstepd: error: Exceeded step memory limit at some point.\n"
    _code, got = report_log(text, tmp_path)
    assert got["verdict"]["kind"] != "no_problem_found"
