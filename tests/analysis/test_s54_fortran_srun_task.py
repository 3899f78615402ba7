"""The Fortran runtimes' errors before srun's one task record (fix54a item 5): gfortran's ``Fortran runtime error:``
and Intel's ``forrtl: severe (24)`` before ``srun: error: host: task 2: Exited with exit code 2`` got no rank (the
record of the single task srun names was fatal_ending's rule only): one function (fatal_ending.srun_task_after) for
"the one task srun names right after it", read by both."""

from __future__ import annotations

import pytest

from triage.analysis.analyze import analyze
from triage.load.inputs import load_log_texts
from triage.model import Report
from triage.parsing.fatal_ending import srun_task_after

_GFORTRAN = ("At line 112 of file solver.f90",
             "Fortran runtime error: Index '41' of dimension 1 of array 'u' above upper bound of 40", "",
             "Error termination. Backtrace:", "#0  0x7f3c21a2 in ???", "#1  0x401b2e in MAIN__", "#2  0x401c40 in main")
_IFORT = ("forrtl: severe (24): end-of-file during read, unit 10, file /scratch/run/input.dat",
          "Image              PC                Routine            Line        Source",
          "solver             000000000040A1B2  Unknown               Unknown  Unknown")


def report(*lines: str) -> Report:
    return analyze(load_log_texts([("job.log", "\n".join(lines) + "\n")]))


@pytest.mark.parametrize(("lines", "words"), [(_GFORTRAN, "above upper bound"), (_IFORT, "end-of-file during read")])
def test_the_one_task_srun_names_is_the_errors_rank(lines: tuple[str, ...], words: str) -> None:
    result = report(" step 40", *lines, "srun: error: nid00042: task 2: Exited with exit code 2")
    assert result.verdict.kind.value == "exception" and result.verdict.culprit_ranks == (2,), result.verdict.summary
    assert words in result.verdict.summary and "nid00042" in result.verdict.summary


def test_the_rule() -> None:
    text = "FATAL ERROR: x\nsrun: error: n25: task 0: Exited with exit code 1\n"
    assert srun_task_after(text, text.index("\n")) == (0, "n25")
    assert srun_task_after(text, text.index("\n"), stop=text.index("\n") + 3) is None
    two = text + "srun: error: n26: task 1: Exited with exit code 1\n"
    assert srun_task_after(two, two.index("\n")) is None
