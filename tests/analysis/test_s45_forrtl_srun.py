"""Session 45: Intel Fortran's runtime ends the process with its message's number.

``forrtl: severe (174): SIGSEGV, segmentation fault occurred`` and srun's ``srun: error: n1: task 7: Exited with
exit code 174``: task 7 (the rank srun started) was the one that segfaulted, a crash of that rank, not an exit code
of no known cause beside a crash of no known rank.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import failure_verdict
from triage.parsing.torchelastic import parse_launcher_failures

HEAD = " iteration   40  residual 3.1e-4\n iteration   41  residual 2.9e-4\n"
TRACE = ("Image              PC                Routine            Line        Source\n"
         "wrf.exe            00000000004C7F2A  Unknown               Unknown  Unknown\n")


@pytest.mark.parametrize(("num", "sig", "words"), [(174, "SIGSEGV", "SIGSEGV, segmentation fault occurred"),
                                                   (78, "SIGTERM", "process killed (SIGTERM)")])
@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_srun_exit_code_of_forrtl_is_that_tasks_signal(num: int, sig: str, words: str, eol: str,
                                                       tmp_path: Path) -> None:
    text = (HEAD + f"forrtl: severe ({num}): {words}\n" + TRACE +
            f"srun: error: cn0412: task 7: Exited with exit code {num}\n"
            "srun: launch/slurm: _step_signal: Terminating StepId=8812.0\n").replace("\n", eol)
    [failure] = parse_launcher_failures(text)
    assert (failure.rank, failure.signal, failure.exitcode, failure.host) == (7, sig, None, "cn0412")
    if sig == "SIGSEGV":
        got = failure_verdict(text, tmp_path)
        assert got["kind"] == "crash" and got["culprit_ranks"] == [7] and "SIGSEGV" in got["summary"]


def test_other_codes_stay_exit_codes() -> None:
    # srun's code differs from the runtime's number: the line says another task's end, not the segfault
    text = (HEAD + "forrtl: severe (174): SIGSEGV, segmentation fault occurred\n" + TRACE +
            "srun: error: cn0412: task 2: Exited with exit code 1\n")
    [failure] = parse_launcher_failures(text)
    assert (failure.rank, failure.signal, failure.exitcode) == (2, None, 1)
    # no runtime message: 174 is only an exit code
    [failure] = parse_launcher_failures(HEAD + "srun: error: cn0412: task 7: Exited with exit code 174\n")
    assert (failure.signal, failure.exitcode) == (None, 174)


def test_forrtl_quoted_in_a_sentence_ties_nothing() -> None:
    text = (HEAD + 'Intel documents "forrtl: severe (174): SIGSEGV" as a segfault.\n'
            "srun: error: cn0412: task 7: Exited with exit code 174\n")
    [failure] = parse_launcher_failures(text)
    assert (failure.signal, failure.exitcode) == (None, 174)
