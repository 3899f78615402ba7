"""A program's own fatal ending in the spellings its tools print (fix54a item 7): ``Fatal Error: ...`` (capital E),
musl's ``Assertion failed: expr (file: func: line)`` and the MS C runtime's ``Assertion failed: expr, file F, line
N`` (both then abort: SIGABRT), gfortran's ``ERROR STOP n`` and ``STOP n`` (libgfortran's stop.c prints them and exits
with code n; ``ERROR STOP`` with a string or none: code 1). ``STOP 0`` is a clean end; a line the program went on after
is no ending."""

from __future__ import annotations

import pytest

from triage.analysis.analyze import analyze
from triage.load.inputs import load_log_texts
from triage.model import Report
from triage.parsing.fatal_ending import endings


def report(*lines: str) -> Report:
    return analyze(load_log_texts([("job.log", "\n".join(lines) + "\n")]))


@pytest.mark.parametrize(("line", "signal", "words"), [
    ("Fatal Error: cannot read mesh file grid/level2.msh", None, "cannot read mesh file"),
    ("Assertion failed: n_cells > 0 (src/grid.c: build_grid: 88)", "SIGABRT", "musl's assert"),
    ("Assertion failed: n_cells > 0, file C:\\work\\src\\grid.c, line 88", "SIGABRT", "C runtime's assert"),
    ("ERROR STOP 3", None, "exit code 3"),
    ("STOP 2", None, "exit code 2"),
    ("ERROR STOP bad input deck", None, "exit code 1"),
])
def test_the_spellings(line: str, signal: str | None, words: str) -> None:
    (found,) = endings(f" iter 11 residual 4.1e-03\n{line}\n")
    assert found[1] == signal and words in found[3]


@pytest.mark.parametrize("text", [
    " iter 11\nSTOP 0\n",
    " iter 11\nSTOP\n",
    "ERROR STOP 1\n iter 12\n iter 13\n iter 14\n iter 15\n iter 16\n",
    "the code prints 'Assertion failed: n > 0, file a.c, line 3' when the grid is empty\n",
])
def test_no_ending(text: str) -> None:
    assert endings(text) == []


def test_error_stop_before_sruns_task_record() -> None:
    result = report(" iter 10 residual 1.2e-3", " iter 11 residual NaN", "ERROR STOP 3",
                    "srun: error: nid00007: task 1: Exited with exit code 3")
    assert result.verdict.kind.value == "exception" and result.verdict.culprit_ranks == (1,), result.verdict.summary
    assert "ERROR STOP 3" in result.verdict.summary


def test_gfortrans_error_stop_as_a_report_shows_it() -> None:
    # lfortran/lfortran#3119: gfortran's run of `error stop 123` (its exit status 123), its backtrace after it
    text = ("% ./a.out \nERROR STOP 123\n\nError termination. Backtrace:\n#0  0x100d65b07\n#1  0x100d666a7\n"
            "#2  0x100d6790f\n#3  0x100b4bf13\n#4  0x100b4bf43\n")
    (found,) = endings(text)
    assert "ERROR STOP 123" in found[3] and "exit code 123" in found[3]
