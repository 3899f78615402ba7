"""Session 56 (fix56c item 2): Cray MPICH's records of a rank's own MPI_Abort, the older "Rank 0 [Thu Nov 14 16:18:20
2019] [c0-0c0s2n0] application called MPI_Abort(MPI_COMM_WORLD, 10) - process 0" and the newer "MPICH ERROR [Rank 2]
[job id 2853270.0] [Fri Dec 13 13:41:36 2024] [frontier05084] - Abort(7) (rank 2 in comm 0): application called
MPI_Abort(MPI_COMM_WORLD, 7) - process 2", are read with the rank, its node and the code, in the words every MPI_Abort
record is told in (triage.parsing.mpi_errors.ABORT_TEXT: a failure the rank printed before it is the cause). Was: the
older record's node not read (MPICH's bare line), the newer one's message said twice; MPICH 4's "internal_X" names
are read in Cray's records as PMPI_X."""

from __future__ import annotations

import pytest

from tests.helpers.paths import REPO
from tests.helpers.report import report_lines
from triage.parsing.mpi_errors import ABORT_TEXT, parse_mpi_errors

_OLD = "Rank 3 [Sat Nov 28 07:00:04 2026] [c0-0c1s2n3] application called MPI_Abort(MPI_COMM_WORLD, 4) - process 3"
_NEW = ("MPICH ERROR [Rank 3] [job id 2853270.0] [Fri Dec 13 13:41:36 2024] [nid001512] - Abort(4) (rank 3 in comm 0): "
        "application called MPI_Abort(MPI_COMM_WORLD, 4) - process 3")


@pytest.mark.parametrize(("line", "host"), [(_OLD, "c0-0c1s2n3"), (_NEW, "nid001512"),
                                             (f"3: {_OLD}", "c0-0c1s2n3")])
def test_crays_mpi_abort_record_has_rank_node_and_code(line: str, host: str) -> None:
    errors = [e for e in parse_mpi_errors(line + "\n") if e.rank == 3]
    assert errors and errors[0].host == host, errors
    text = errors[0].text
    assert text.startswith(f"{ABORT_TEXT}MPI_COMM_WORLD with errorcode 4 (Cray MPICH then ends the job): "), text
    assert text.count("application called MPI_Abort(") == 1, text


def test_a_failure_before_it_is_the_cause() -> None:
    report = report_lines("3: ERROR: cannot open input file mesh.h5 (No such file or directory)", f"3: {_OLD}")
    verdict = report.verdict
    assert verdict.culprit_ranks == (3,) and "mesh.h5" in verdict.summary, verdict.summary


def test_an_internal_name_in_crays_fatal_record() -> None:
    errors = parse_mpi_errors("Rank 5 [Sat Nov 28 07:00:04 2026] [nid000042] Fatal error in internal_Allreduce: "
                              "Other MPI error, error stack:\n")
    assert errors and errors[0].rank == 5 and errors[0].host == "nid000042", errors
    assert "failed in internal_Allreduce" in errors[0].text


def test_chapel_14464_names_the_node() -> None:
    # (chapel-lang/chapel#14464: ranks 0 and 1's records on a Cray XC, then ATP's walkback)
    text = (REPO / "tests/realworld/cases/chapel-lang__chapel__14464/log.txt").read_text(encoding="utf-8")
    report = report_lines(*text.splitlines())
    assert report.verdict.summary.startswith("EXCEPTION: rank 0 (c0-0c0s2n0) raised: called MPI_Abort on "
                                             "MPI_COMM_WORLD with errorcode 10"), report.verdict.summary
