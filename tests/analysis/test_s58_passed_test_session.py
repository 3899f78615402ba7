"""Session 58 (fix58b, rev57's F6): the failure lines a pytest session printed as its tests' own output (a passing
test's captured stderr, shown by -rP or -rA: an argparse refusal or an exception the test expects), in a session whose
summary says no test failed nor errored ("==== 3 passed in 0.41s ===="), were the job's failure ("EXCEPTION: train.py
refused its command line ..."); now notes of the all-clear (triage.parsing.progress.passed_test_spans,
triage.load.logs.text._passed_tests). A session with a failed or error count, one whose summary the paste does not
hold, and a failure after the summary stay failures."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import report_log
from triage.parsing.progress import passed_test_spans

_HEAD = ("============================= test session starts ==============================\n"
         "platform linux -- Python 3.11.6, pytest-8.0.2, pluggy-1.4.0\n"
         "rootdir: /home/ci/work/seg3d\ncollected 4 items\n\n"
         "tests/test_launch.py ....                                                [100%]\n\n"
         "==================================== PASSES ====================================\n"
         "_____________________________ test_rejects_bad_lr ______________________________\n"
         "----------------------------- Captured stderr call -----------------------------\n")
_REFUSAL = "usage: fit.py [-h] [--lr LR] [--epochs N]\nfit.py: error: argument --lr: invalid float value: 'fast'\n"
_RAISED = ("[rank1]: Traceback (most recent call last):\n[rank1]:   File \"/home/ci/work/seg3d/fit.py\", line 77, in "
           "<module>\n[rank1]:     dist.all_reduce(t)\n"
           "[rank1]: torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system "
           "error (run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3\n")


def _summary(said: str) -> str:
    return f"{'=' * 30} {said} {'=' * 30}\n"


@pytest.mark.parametrize("output", [_REFUSAL, _RAISED], ids=["argparse", "rank-traceback"])
@pytest.mark.parametrize("said", ["4 passed in 0.41s", "3 passed, 1 skipped, 2 warnings in 12.07s",
                                  "4 passed in 75.10s (0:01:15)"])
def test_a_passing_tests_output_is_no_failure(output: str, said: str, tmp_path: Path) -> None:
    code, got = report_log(_HEAD + output + _summary(said), tmp_path)
    assert code == 0 and got["verdict"]["kind"] == "no_problem_found", got["verdict"]
    assert said in got["verdict"]["summary"]


@pytest.mark.parametrize("output", [_REFUSAL, _RAISED], ids=["argparse", "rank-traceback"])
@pytest.mark.parametrize("said", ["1 failed, 3 passed in 0.52s", "3 passed, 1 error in 0.52s", "no tests ran in 0.01s"])
def test_a_session_that_did_not_pass_keeps_the_failure(output: str, said: str, tmp_path: Path) -> None:
    code, got = report_log(_HEAD + output + _summary(said), tmp_path)
    assert code != 0 and got["verdict"]["kind"] != "no_problem_found", got["verdict"]


@pytest.mark.parametrize("output", [_REFUSAL, _RAISED], ids=["argparse", "rank-traceback"])
def test_no_summary_in_the_paste_keeps_the_failure(output: str, tmp_path: Path) -> None:
    code, got = report_log(_HEAD + output, tmp_path)
    assert code != 0 and got["verdict"]["kind"] != "no_problem_found", got["verdict"]


def test_a_failure_after_the_summary_stays(tmp_path: Path) -> None:
    text = _HEAD + _REFUSAL + _summary("4 passed in 0.41s") + "$ torchrun --nproc-per-node 2 fit.py\n" + _RAISED
    code, got = report_log(text, tmp_path)
    assert code != 0 and got["verdict"]["kind"] != "no_problem_found", got["verdict"]
    assert "DistBackendError" in got["verdict"]["summary"]


def test_a_later_session_that_failed_is_its_own() -> None:
    lines = (_HEAD + _REFUSAL + _summary("4 passed in 0.41s") + _HEAD + _REFUSAL
             + _summary("1 failed, 3 passed in 0.52s")).splitlines()
    spans = passed_test_spans(lines)
    assert len(spans) == 1 and spans[0][1] < len(lines) // 2
