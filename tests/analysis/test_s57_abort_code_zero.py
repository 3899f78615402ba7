"""Session 57 (fix57c item 2): an MPI_Abort with error code 0 after the run's own word that it ended well (MPICH's
"application called MPI_Abort(MPI_COMM_WORLD, 0) - process 0", Open MPI's "MPI_ABORT was invoked on rank 0 in
communicator MPI_COMM_WORLD with errorcode 0."): some programs end every process so at their end; it was "rank 0
raised", now a note of the all-clear, as slurmstepd's memory-touched word after a good end is
(triage.parsing.mpi_errors.ABORT_AFTER_END_NOTE). With no word of a good end, a non-zero code, or a failure line
between the end word and the abort, it stays the rank's abort."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import report_log

_MPICH = ("application called MPI_Abort(MPI_COMM_WORLD, {code}) - process 0\n[cli_0]: aborting job:\n"
          "application called MPI_Abort(MPI_COMM_WORLD, {code}) - process 0\n")
_OMPI = ("--------------------------------------------------------------------------\n"
         "MPI_ABORT was invoked on rank 0 in communicator MPI_COMM_WORLD\nwith errorcode {code}.\n\n"
         "NOTE: invoking MPI_ABORT causes Open MPI to kill all MPI processes.\n"
         "You may or may not see output from other processes, depending on\n"
         "exactly when Open MPI kills them.\n"
         "--------------------------------------------------------------------------\n")
_ENDS = ["Simulation finished successfully.", "All done.", "Job completed successfully"]


@pytest.mark.parametrize("record", [_MPICH, _OMPI], ids=["mpich", "openmpi"])
@pytest.mark.parametrize("ended", _ENDS)
def test_code_zero_after_a_good_end_is_a_note(record: str, ended: str, tmp_path: Path) -> None:
    text = ("mpiexec -n 8 ./wave3d input.nml\nstep 390 of 400, dt 1.0e-3, energy 0.99912\n"
            "step 400 of 400, dt 1.0e-3, energy 0.99910\n" + ended + "\n" + record.format(code=0))
    code, got = report_log(text, tmp_path)
    assert got["verdict"]["kind"] == "no_problem_found", got["verdict"]
    assert code == 0
    summary = got["verdict"]["summary"]
    assert "MPI_Abort with error code 0 after the run said it ended well" in summary
    assert "does not show the job's end" not in summary


@pytest.mark.parametrize("record", [_MPICH, _OMPI], ids=["mpich", "openmpi"])
def test_a_non_zero_code_after_a_good_end_stays_the_abort(record: str, tmp_path: Path) -> None:
    text = "step 400 of 400\nSimulation finished successfully.\n" + record.format(code=1)
    _code, got = report_log(text, tmp_path)
    assert got["verdict"]["kind"] != "no_problem_found" and got["verdict"]["culprit_ranks"] == [0]


@pytest.mark.parametrize("record", [_MPICH, _OMPI], ids=["mpich", "openmpi"])
def test_code_zero_with_no_good_end_stays_the_abort(record: str, tmp_path: Path) -> None:
    # (a reporter's paste of the abort alone, as microsoft/FedDrift#30's, or a run that stopped in its work)
    text = "step 120 of 400, dt 1.0e-3\n" + record.format(code=0)
    _code, got = report_log(text, tmp_path)
    assert got["verdict"]["kind"] != "no_problem_found" and got["verdict"]["culprit_ranks"] == [0]


@pytest.mark.parametrize("record", [_MPICH, _OMPI], ids=["mpich", "openmpi"])
def test_a_failure_line_between_the_end_and_the_abort_stays_the_abort(record: str, tmp_path: Path) -> None:
    # (an assert or error the program printed after its word, then its MPI_Abort(comm, 0): OpenSWPC's '[assert{0}]
    # failed at ...' before Open MPI's record with errorcode 0)
    text = "Simulation finished successfully.\nERROR: cannot write the checkpoint file out.0400.h5\n" + record.format(
        code=0)
    _code, got = report_log(text, tmp_path)
    assert got["verdict"]["kind"] != "no_problem_found" and got["verdict"]["culprit_ranks"] == [0]
