"""Session 56 (round 80's GlobalArrays/ga#241, after its first sight): Intel Fortran's runtime handler's word for
SIGABRT, "forrtl: error (76): Abort trap signal" (after a failed glibc assert in a C library the Fortran program
calls), was no signal: the assert line before it read as a failure of unknown place ("no reader for these words"); now
it is the process's SIGABRT, as forrtl's SIGSEGV/SIGTERM/SIGFPE words are (triage.parsing.crashlog), and fatal_ending
takes forrtl's line as the teardown after a program's last words."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import report_log


@pytest.mark.parametrize("before", [
    "",
    "solver: ../../lib/comm/src/queue.c:88: q_poll: Assertion `rc == 0' failed.\n",
])
def test_forrtl_abort_trap_is_sigabrt(before: str, tmp_path: Path) -> None:
    text = " step   12  energy  -1.2345E+02\n" + before + "forrtl: error (76): Abort trap signal\n"
    _code, got = report_log(text, tmp_path)
    verdict = got["verdict"]
    assert verdict["kind"] == "crash", verdict
    assert "Abort trap signal" in verdict["summary"] or "Assertion" in verdict["summary"]


def test_the_other_forrtl_words_unchanged(tmp_path: Path) -> None:
    _code, got = report_log("forrtl: severe (174): SIGSEGV, segmentation fault occurred\n", tmp_path)
    assert got["verdict"]["kind"] == "crash" and "SIGSEGV" in got["verdict"]["summary"]


def test_padded_lines_before_a_fortran_runtime_record_are_no_wrap(tmp_path: Path) -> None:
    # (a paste whose lines carry trailing spaces: the assert line padded to a width is not a terminal's cut of the
    # forrtl line after it; textclean's _OWN_LINE)
    text = ("solver: ../../lib/comm/src/queue.c:88: q_poll: Assertion `rc == 0' failed.   \n"
            "forrtl: error (76): Abort trap signal   \n")
    _code, got = report_log(text, tmp_path)
    assert got["verdict"]["kind"] == "crash", got["verdict"]
