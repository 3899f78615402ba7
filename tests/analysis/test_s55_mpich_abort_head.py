"""Session 55 (fix55a item 2): MPICH's abort record in every spelling its MPID_Abort prints ("Abort(%d)%s%s: %s": the
code, " on node N" where MPI_COMM_WORLD exists, " (rank N in comm C)" where a communicator is known) and a build's
that prints no code ("Abort on node 0 (rank 0 in comm 0): Fatal error in internal_Comm_split: ..."): the record of
that rank's MPI error through its fatal error handler, or of its MPI_Abort; the code-less head was read as the rank's
SIGABRT. MPICH 4's "internal_" call names are read as PMPI_ ones are."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.paths import REPO
from tests.helpers.report import report_log

STACK = ("internal_Comm_split(27533)..........: MPI_Comm_split(comm=0xc400fff2, color=0, key=0, "
         "newcomm=0x7ffde56f55dc) failed\n"
         "MPIR_Comm_split_impl(211)...........:\n"
         "MPIR_Get_contextid_sparse_group(609): Too many communicators (0/32768 free on this process; ignore_id=0)\n")


@pytest.mark.parametrize(("head", "rank"), [
    ("Abort on node 3 (rank 3 in comm 0): Fatal error in internal_Comm_split: Other MPI error, error stack:", 3),
    ("Abort on node 12 (rank 12 in comm 0): Fatal error in PMPI_Comm_split: Other MPI error, error stack:", 12),
    (("Abort(403275535) on node 12 (rank 12 in comm 0): Fatal error in internal_Comm_split: Other MPI error, "
     "error stack:"), 12),
    ("7: Abort on node 7 (rank 7 in comm 0): Fatal error in internal_Comm_split: Other MPI error, error stack:", 7),
])
def test_the_fatal_error_record_is_that_ranks_exception(head: str, rank: int, tmp_path: Path) -> None:
    code, got = report_log(f"{head}\n{STACK}", tmp_path)
    assert code not in (0, 2, 70)
    verdict = got["verdict"]
    assert verdict["kind"] == "exception" and verdict["culprit_ranks"] == [rank], verdict["summary"]
    assert "Too many communicators" in verdict["summary"] and "SIGABRT" not in verdict["summary"]


def test_another_communicators_rank_is_no_world_rank(tmp_path: Path) -> None:
    # ("node N" is the world rank; without it, "(rank 2 in comm 3)" is a rank of communicator 3 only)
    _code, got = report_log("Abort(1): Fatal error in internal_Init: Other MPI error, error stack:\n"
                            "internal_Init(70)....: MPI_Init(argc=0x7ffc, argv=0x7ffd) failed\n"
                            "MPII_Init_thread(212):\nMPII_init_gpu(52)....:  gpu_init failed\n", tmp_path)
    assert got["verdict"]["kind"] == "exception" and got["verdict"]["culprit_ranks"] == []
    assert "internal_Init" in got["verdict"]["summary"]


@pytest.mark.parametrize("line", [
    "Abort on node 4 (rank 4 in comm 0): application called MPI_Abort(MPI_COMM_WORLD, 2) - process 4",
    "Abort on node 4 (rank 4 in comm 496): application called MPI_Abort(comm=0x84000002, 2) - process 4",
    "Abort(2) on node 4 (rank 4 in comm 0): application called MPI_Abort(MPI_COMM_WORLD, 2) - process 4",
])
def test_mpi_abort_under_either_head_is_that_ranks(line: str, tmp_path: Path) -> None:
    _code, got = report_log(line + "\n", tmp_path)
    assert got["verdict"]["kind"] == "exception" and got["verdict"]["culprit_ranks"] == [4], got["verdict"]["summary"]


def test_a_bare_codeless_head_needs_its_communicator(tmp_path: Path) -> None:
    # the head alone, its words cut: with "(rank N in comm C)" it is MPICH's; "Abort on node 2" alone is no record
    _code, got = report_log("Abort on node 6 (rank 6 in comm 0)\n", tmp_path)
    assert got["verdict"]["culprit_ranks"] == [6] and "SIGABRT" not in got["verdict"]["summary"]
    (tmp_path / "b").mkdir()
    code, _got = report_log("the job printed Abort on node 2 and stopped\n", tmp_path / "b")
    assert code == 2


def test_real_too_many_communicators(tmp_path: Path) -> None:
    # r-ccs-cms/sbd#38: the code-less head over MPI_Comm_split's exhausted context ids
    log = (REPO / "tests/realworld/cases/r-ccs-cms__sbd__38/log.txt").read_text(encoding="utf-8")
    _code, got = report_log(log, tmp_path)
    assert got["verdict"]["kind"] == "exception" and got["verdict"]["culprit_ranks"] == [0]
    assert "Too many communicators" in got["verdict"]["summary"]


def test_real_gpu_init_before_mpi_init(tmp_path: Path) -> None:
    # pmodels/mpich#7469: MPID_Abort before MPI_COMM_WORLD exists, no " on node N"
    text = ("Abort(940719887): Fatal error in internal_Init: Other MPI error, error stack:\n"
            "internal_Init(70)....: MPI_Init(argc=0x7fff6d6545c8, argv=0x7fff6d6545c0) failed\n"
            "MPII_Init_thread(212):\n"
            "MPII_init_gpu(52)....:  gpu_init failed\n")
    _code, got = report_log(text, tmp_path)
    assert got["verdict"]["kind"] == "exception" and got["verdict"]["culprit_ranks"] == []
    assert "gpu_init failed" in got["verdict"]["summary"]
