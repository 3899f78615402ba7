"""Round 50: a rank's own MPI_Abort is how it ended, not what failed.

A signal handler in the rank (PETSc's ``[N]PETSC ERROR: Caught signal number S ...``) catches the fault and then
calls ``MPI_Abort`` with its own code (PETSc's 59); MPICH prints ``Abort(59) on node 0 (rank 0 in comm 0):
application called MPI_Abort(MPI_COMM_WORLD, 59) - process 0`` or Open MPI ``MPI_ABORT was invoked on rank N``.
Where the abort follows the rank's own failure line within a few lines, the failure before it is what failed (the
signal), not an exception of the abort. An abort with no failure before it stays the rank's own failure, and a signal
printed after the abort (the abort's own end) does not take its place.
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers.report import failure_verdict

# a variant: rank 3, a floating point exception, Open MPI's abort box naming rank 3
OPEN_MPI = ("[3]PETSC ERROR: ------------------------------------------------------------------------\n"
            "[3]PETSC ERROR: Caught signal number 8 FPE: Floating Point Exception,probably divide by zero\n"
            "[3]PETSC ERROR: Try option -start_in_debugger or -on_error_attach_debugger\n"
            "--------------------------------------------------------------------------\n"
            "MPI_ABORT was invoked on rank 3 in communicator MPI_COMM_WORLD\n"
            "with errorcode 59.\n")

# a variant of MPICH's form: rank 1, a bus error, the abort line right after the signal line
MPICH = ("[1]PETSC ERROR: Caught signal number 7 BUS: Bus Error, possibly illegal memory access\n"
         "Abort(59) on node 1 (rank 1 in comm 0): application called MPI_Abort(MPI_COMM_WORLD, 59) - process 1\n")


def test_signal_before_open_mpi_abort_is_the_failure(tmp_path: Path) -> None:
    got = failure_verdict(OPEN_MPI, tmp_path)
    assert got["kind"] == "crash" and got["culprit_ranks"] == [3]
    assert "SIGFPE" in got["summary"]


def test_signal_before_mpich_abort_is_the_failure(tmp_path: Path) -> None:
    got = failure_verdict(MPICH, tmp_path)
    assert got["kind"] == "crash" and got["culprit_ranks"] == [1]
    assert "SIGBUS" in got["summary"]


def test_abort_alone_stays_the_ranks_exception(tmp_path: Path) -> None:
    got = failure_verdict("application called MPI_Abort(MPI_COMM_WORLD, 3) - process 5\n", tmp_path)
    assert got["kind"] == "exception" and got["culprit_ranks"] == [5]
    assert "MPI_Abort" in got["summary"]


def test_signal_after_the_abort_does_not_take_its_place(tmp_path: Path) -> None:
    text = ("Abort(2) on node 4 (rank 4 in comm 0): application called MPI_Abort(MPI_COMM_WORLD, 2) - process 4\n"
            "[4]PETSC ERROR: Caught signal number 15 Terminate: Some process (or the batch system) has told this "
            "process to end\n")
    got = failure_verdict(text, tmp_path)
    assert got["kind"] == "exception" and got["culprit_ranks"] == [4]
    assert "MPI_Abort" in got["summary"]
