"""Session 56 (fix56a item 5): Rmpi's spawn failure, R's ``Error in mpi.comm.spawn(...) :`` with the MPI library's
error stack as its message (MS-MPI's and MPICH's ``Other MPI error, error stack:``, a line for each call, ``MPI_Comm_
spawn(...) failed``, the innermost error's words last, its lines after the first unindented as R prints them), where
the input ends at it: the R master's error, no rank. And a paste the reporter put in double quotes as a whole: the
two quotes no longer hide a reader's words (triage.parsing.textclean). It was a failure of unknown place."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.paths import REPO
from tests.helpers.report import report_log
from triage.parsing.textclean import clean_text

_MSMPI = ('Error in mpi.comm.spawn(slave = system.file("Rslaves.cmd", package = "Rmpi"),  : \n'
          "  Other MPI error, error stack:\n"
          'MPI_Comm_spawn(cmd="D:/R/R-4.1.2/library/Rmpi/Rslaves.cmd", argv=0x00000000158E2A10, maxprocs=4, '
          "MPI_INFO_NULL, root=0, MPI_COMM_SELF, intercomm=0x00000000112AC0B0, errors=0x0000000015A11E40) failed\n"
          "Function not implemented\n")
_MPICH = ("Error in mpi.comm.spawn(slave = mpi.comm.spawn.slave, slavearg = args, nslaves = nslaves,  : \n"
          "  Other MPI error, error stack:\n"
          'MPI_Comm_spawn(144)...........: MPI_Comm_spawn(cmd="/usr/lib/R/site-library/Rmpi/Rslaves.sh", '
          "argv=0x55d3c0a1e2f0, maxprocs=4, MPI_INFO_NULL, root=0, MPI_COMM_SELF, intercomm=0x7ffd2c1e, "
          "errors=0x55d3c0b2) failed\n"
          "MPIDI_Comm_spawn_multiple(93).: spawn is not supported by this process manager\n")


@pytest.mark.parametrize(("tail", "words"), [
    (_MSMPI, "MPI_Comm_spawn() failed: Function not implemented"),
    ('"' + _MSMPI.rstrip("\n") + '"\n', "MPI_Comm_spawn() failed: Function not implemented"),
    (_MPICH, "MPI_Comm_spawn() -> MPIDI_Comm_spawn_multiple() failed: spawn is not supported by this process manager"),
])
def test_rmpi_spawn_with_mpis_error_stack_is_the_masters_error(tail: str, words: str, tmp_path: Path) -> None:
    text = tail if tail.startswith('"') else "> library(Rmpi)\n> mpi.spawn.Rslaves(nslaves = 4)\n" + tail
    code, got = report_log(text, tmp_path)
    assert code not in (0, 2, 70)
    verdict = got["verdict"]
    assert verdict["kind"] == "exception" and verdict["culprit_ranks"] == [], verdict["summary"]
    assert "R's error in mpi.comm.spawn" in verdict["summary"] and words in verdict["summary"]


def test_a_stack_the_session_went_on_past_is_not_taken(tmp_path: Path) -> None:
    text = _MSMPI + "".join(f"iteration {i}: rss 0.{i:03d}\n" for i in range(40))
    _code, got = report_log(text, tmp_path)
    assert "R's error in mpi.comm.spawn" not in str(got.get("verdict", {}))


def test_quotes_around_a_whole_paste_are_read_off() -> None:
    text = '"Traceback (most recent call last):\n  File "train.py", line 3, in <module>\nValueError: bad shape"\n'
    assert clean_text(text).lines == ("Traceback (most recent call last):", '  File "train.py", line 3, in <module>',
                                      "ValueError: bad shape")


def test_quoted_lines_each_are_kept() -> None:
    text = '"step","loss"\n"1","0.5"\n"2","0.4"\n'
    assert clean_text(text).lines == ('"step","loss"', '"1","0.5"', '"2","0.4"')


def test_real_rmpi_on_msmpi(tmp_path: Path) -> None:
    # PacktPublishing/Mastering-Parallel-Programming-with-R#1: mpi.spawn.Rslaves() on Windows with MS-MPI, in quotes
    log = (REPO / "tests/realworld/cases/PacktPublishing__Mastering-Parallel-Programming-with-R__1/log.txt").read_text(
        encoding="utf-8")
    _code, got = report_log(log, tmp_path)
    verdict = got["verdict"]
    assert verdict["kind"] == "exception" and verdict["culprit_ranks"] == [], verdict["summary"]
    assert "Function not implemented" in verdict["summary"]
