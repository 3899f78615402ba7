"""Session 57 (round 80's Libensemble/libensemble#29 and Azrael3000/tmpi#11): MPICH's fatal error record in MPI_Init
without its Abort head ("Fatal error in MPI_Init: Other MPI error, error stack:" down to "MPID_Init(2144)......:
PMI_Init returned -1", after the PMI client's "[cli_1]: write_line error; fd=16 ...") read as an exception of unknown
rank, with the step to find the rank; its stack's failed PMI call made before the process learns its rank says the
process could not talk to the launcher that started it: now a failure of the job's set-up, what would settle it the
PMI variables the launcher gave the process. (The record with its head, "Abort(N) on node 0 (rank 0 in comm 0)",
keeps the rank it names: left open.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import report_log
from triage.parsing.mpi_errors import MPICH_PMI_TEXT, parse_mpi_errors

_RECORD = """\
step 0: setting up the ensemble
Fatal error in {call}: Other MPI error, error stack:
MPIR_Init_thread(474):
MPID_Init(190).......:
MPIR_pmi_init(124)...: {pmi} returned -1
"""


@pytest.mark.parametrize("call", ["MPI_Init", "PMPI_Init_thread", "internal_Init"])
@pytest.mark.parametrize("pmi", ["PMI_Get_appnum", "PMI_Init", "PMI2_Job_GetId", "PMI_Get_universe_size"])
def test_init_failed_at_the_pmi(call: str, pmi: str) -> None:
    errors = parse_mpi_errors(_RECORD.format(call=call, pmi=pmi))
    record = next(e for e in errors if "failed in" in e.text)
    assert record.rank is None and MPICH_PMI_TEXT in record.text, record


@pytest.mark.parametrize(("call", "pmi"), [
    ("MPI_Allreduce", "PMI_Get_appnum"),        # (not MPI_Init)
    ("MPI_Init", "PMI_KVS_Get"),                # (a key-value exchange: after the process knows its rank)
])
def test_other_records_say_no_pmi(call: str, pmi: str) -> None:
    errors = parse_mpi_errors(_RECORD.format(call=call, pmi=pmi))
    record = next(e for e in errors if "failed in" in e.text)
    assert MPICH_PMI_TEXT not in record.text, record


def test_the_report_says_what_would_settle_it(tmp_path: Path) -> None:
    _code, got = report_log(_RECORD.format(call="MPI_Init", pmi="PMI_Init"), tmp_path)
    verdict = got["verdict"]
    assert verdict["kind"] == "exception" and verdict["culprit_ranks"] == [], verdict
    assert "PMI_FD" in verdict["summary"] and "which rank" not in verdict["summary"]
