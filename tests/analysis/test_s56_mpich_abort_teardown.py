"""Session 56 (fix56c item 1): MPICH's code-less abort head, "Abort on node N (rank N in comm C)" (a build whose
MPID_Abort prints no code), is the process's teardown after a program's fatal line as "Abort(N) on node N" is: one
home for the head's spellings (triage.parsing.mpi_errors.MPICH_ABORT_HEAD), which fatal_ending's teardown list, the
rank-death and banner readers build on. Before, six code-less abort lines after "FATAL ERROR" were more than a
program's own tail after its last words, and the abort records were read as the failure of their own."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.paths import REPO
from tests.helpers.report import report_log
from triage.parsing import fatal_ending


def _aborts(ranks: list[int], coded: bool) -> str:
    head = "Abort(1)" if coded else "Abort"
    return "".join(f"{head} on node {r} (rank {r} in comm 0)\n" for r in ranks)


@pytest.mark.parametrize("coded", [True, False])
def test_the_abort_records_are_teardown_after_a_fatal_line(coded: bool, tmp_path: Path) -> None:
    text = "solver: FATAL ERROR: mesh file not found\n" + _aborts([2, 0, 1, 3, 4, 5, 6], coded)
    assert [e[3] for e in fatal_ending.endings(text)] == ["solver's FATAL ERROR: mesh file not found"]
    _code, got = report_log(text, tmp_path)
    verdict = got["verdict"]
    assert verdict["culprit_ranks"] == [2], verdict["summary"]
    assert "mesh file not found" in verdict["summary"]


def test_a_sentence_that_says_abort_is_no_teardown() -> None:
    # (the word in the program's own prose is output of its own, as before)
    text = "prog: FATAL ERROR: bad input\n" + "".join(f"will Abort on node {i} soon\n" for i in range(6))
    assert fatal_ending.endings(text) == []


def test_real_codeless_record_is_still_that_ranks(tmp_path: Path) -> None:
    # r-ccs-cms/sbd#38: "Abort on node 0 (rank 0 in comm 0): Fatal error in internal_Comm_split: ..." with its stack
    log = (REPO / "tests/realworld/cases/r-ccs-cms__sbd__38/log.txt").read_text(encoding="utf-8")
    _code, got = report_log(log, tmp_path)
    assert got["verdict"]["kind"] == "exception" and got["verdict"]["culprit_ranks"] == [0]
    assert "Too many communicators" in got["verdict"]["summary"]
