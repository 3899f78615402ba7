"""Session 57 (round 80's ESMCI/cime#3303): MPICH's PMI client's abort head, "[cli_83]: aborting job:" (src/pmi/simple
PMI_Abort; PMIU_printf's "[cli_N]", N the process's PMI rank, its rank in MPI_COMM_WORLD; MPICH, MVAPICH2, Intel MPI)
over "Fatal error in MPI_Init: ..., error stack:" and MPICH's stack, read as MPICH's fatal error record of no rank;
now each is rank N's MPI failure (triage.parsing.mpi_errors), in the reporter's "> " quotes too."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import report_log

RECORD = ("[cli_{n}]: aborting job:\n"
          "Fatal error in PMPI_Comm_split: Other MPI error, error stack:\n"
          "PMPI_Comm_split(532)....: MPI_Comm_split(MPI_COMM_WORLD, color=1, key={n}, new_comm=0x7ffd) failed\n"
          "MPIR_Get_contextid(819).: Too many communicators (0/2048 free on this process; ignore_id=0)\n")


@pytest.mark.parametrize("quote", ["", "> "])
def test_pmi_clients_abort_names_its_rank(quote: str, tmp_path: Path) -> None:
    text = "".join(quote + line + "\n" for n in (5, 12) for line in RECORD.format(n=n).splitlines())
    _code, got = report_log(text, tmp_path)
    verdict = got["verdict"]
    assert verdict["kind"] == "exception", verdict
    assert verdict["culprit_ranks"] == [5, 12], verdict
    assert "Too many communicators" in verdict["summary"], verdict


def test_mpi_abort_under_the_head_keeps_its_reading(tmp_path: Path) -> None:
    text = ("ERROR: mesh file not found\n[cli_3]: aborting job:\n"
            "application called MPI_Abort(MPI_COMM_WORLD, 1) - process 3\n")
    _code, got = report_log(text, tmp_path)
    assert got["verdict"]["culprit_ranks"] == [3], got["verdict"]


def test_a_record_without_the_head_stays_of_no_rank(tmp_path: Path) -> None:
    text = RECORD.format(n=5).split("\n", 1)[1]
    _code, got = report_log(text, tmp_path)
    assert got["verdict"]["culprit_ranks"] == [], got["verdict"]
