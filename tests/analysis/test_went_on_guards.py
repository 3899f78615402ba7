"""A line that one reader takes for the job's failure is not, where the job went on after it (session 42's review of
rounds 44-45's readers), and a gap between several of srun's Terminated lists names no task. Variants written here:
healthy logs that hold each reader's words, beside the same words as the job's last."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import report_log

_PROGRESS = "".join(f"[rank0]: epoch 3 step {s} loss {1 / s:.3f}\n" for s in (100, 200, 300))
_END = "[rank0]: Training finished.\n"


@pytest.mark.parametrize("line", [
    ("distributed.nanny.memory - WARNING - Worker tcp://10.1.2.3:40111 (pid=4242) exceeded 95% memory budget. "
    "Restarting..."),
    "2026-03-01 10:00:00,123 - distributed.nanny - WARNING - Worker exceeded 95% memory budget. Restarting",
    "helper: subprocess returned exit code 3221225477 on retry 1, retrying",
    "Process finished with exit code -1073741819 (0xC0000005)",
    "pod/other-job-7d9f   Evicted   The node was low on resource: memory. Container x was using 9Gi",
])
def test_a_line_the_job_went_on_after_is_no_failure(tmp_path: Path, line: str) -> None:
    code, out = report_log(f"{_PROGRESS}{line}\n{_PROGRESS}{_END}", tmp_path)
    assert code == 0, out
    assert out["verdict"]["kind"] == "no_problem_found", out["verdict"]


@pytest.mark.parametrize("line, kind", [
    (("distributed.nanny.memory - WARNING - Worker tcp://10.1.2.3:40111 (pid=4242) exceeded 95% memory budget. "
     "Restarting..."), "crash"),
    ("Process finished with exit code -1073741819 (0xC0000005)", "crash"),
    ("The node was low on resource: memory. Container trainer was using 30Gi, which exceeds its request of 0.",
     "stopped"),
])
def test_the_same_line_as_the_jobs_last_is_its_failure(tmp_path: Path, line: str, kind: str) -> None:
    code, out = report_log(f"{_PROGRESS}{line}\n", tmp_path)
    assert code == 1, out
    assert out["verdict"]["kind"] == kind, out["verdict"]


def test_lsf_words_quoted_in_a_sentence_are_no_record_of_this_job(tmp_path: Path) -> None:
    text = (f"{_PROGRESS}note: last week a run ended with TERM_RUNLIMIT: job killed after reaching LSF run time limit."
            f"\n{_PROGRESS}")
    _, out = report_log(text, tmp_path)
    assert out["verdict"]["kind"] != "stopped", out["verdict"]
    _, out = report_log(f"{_PROGRESS}TERM_RUNLIMIT: job killed after reaching LSF run time limit.\n", tmp_path)
    assert out["verdict"]["kind"] == "stopped", out["verdict"]


_CANCEL = "slurmstepd: error: *** STEP 4711.0 ON n1 CANCELLED AT 2026-03-01T10:00:00 DUE TO TASK FAILURE ***\n"


@pytest.mark.parametrize("lists", [
    "srun: error: n1: task 0: Terminated\nsrun: error: n3: task 2: Terminated\nsrun: error: n4: task 3: Terminated\n",
    "srun: error: n1: tasks 0-6: Terminated\nsrun: error: n2: tasks 8-15: Terminated\n",
])
def test_a_gap_between_srun_lists_names_no_task(tmp_path: Path, lists: str) -> None:
    """Nor is a task srun lists Terminated a culprit: srun ended it when the step was cancelled."""
    code, out = report_log(_PROGRESS + _CANCEL + lists, tmp_path)
    assert code == 1, out
    assert not out["verdict"].get("culprit_ranks"), out["verdict"]


def test_a_gap_inside_one_list_names_the_task_srun_spared(tmp_path: Path) -> None:
    _code, out = report_log(_PROGRESS + _CANCEL + "srun: error: n1: tasks 0-40,42-63: Terminated\n", tmp_path)
    assert out["verdict"].get("culprit_ranks") == [41], out["verdict"]
