"""Round 52: HPE MPT's record of a rank's own abort, ``MPT ERROR: Rank N(g:N) is aborting with error code C.``

MPT prints it in the process that calls MPI_Abort (the program's own abort on an error it found), then the
process's id and host; the rank is MPI_COMM_WORLD's. It is that rank's exception (an exit with the code), not a
SIGABRT; ranks that print it together each aborted on their own. The same words quoted in a sentence are not read.
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers.report import failure_verdict
from triage.parsing.mpi_errors import parse_mpi_errors

# a variant: other ranks, code, hosts and version, without mpiexec's rank labels
RECORDS = ("step 1200: reading namelist ocn_in\n"
           "MPT ERROR: Rank 37(g:37) is aborting with error code 2.\n"
           "\tProcess ID: 9981, Host: n0412, Program: /scratch/run/model.exe\n"
           "\tMPT Version: HPE MPT 2.28  03/02/23 10:00:00\n"
           "\n"
           "MPT: --------stack traceback-------\n"
           "MPT ERROR: Rank 101(g:101) is aborting with error code 2.\n"
           "\tProcess ID: 4410, Host: n0419, Program: /scratch/run/model.exe\n")


def test_records_are_each_ranks_own_abort(tmp_path: Path) -> None:
    got = failure_verdict(RECORDS, tmp_path)
    assert got["kind"] == "exception" and got["culprit_ranks"] == [37, 101]
    assert "error code 2" in got["summary"]
    errors = parse_mpi_errors(RECORDS)
    assert [(e.rank, e.host, e.pid) for e in errors] == [(37, "n0412", 9981), (101, "n0419", 4410)]
    assert all(e.first for e in errors)


def test_one_record_without_its_process_line(tmp_path: Path) -> None:
    got = failure_verdict("  MPT ERROR: Rank 5 is aborting with error code 1\n", tmp_path)
    assert got["kind"] == "exception" and got["culprit_ranks"] == [5]


def test_words_quoted_in_a_sentence_are_not_a_record() -> None:
    text = ("Seeing 'MPT ERROR: Rank 3(g:3) is aborting with error code 1.' means the namelist was wrong.\n"
            "> note: \"MPT ERROR: Rank 3(g:3) is aborting with error code 1.\" is printed by MPI_Abort\n")
    assert parse_mpi_errors(text) == ()
