"""The scientific codes' and their frameworks' own fatal-error words, and the Fortran runtimes' (session 44), read from
the products' sources, each tested on variants written here (other ranks, messages, prefixes), with negatives: the
words quoted in a sentence, a warning of the same product, and a run that went on after them."""

from __future__ import annotations

import pytest

from tests.helpers.report import report_lines as report
from triage.errors import InputError

_OMPI_ABORT = ("-" * 74, "MPI_ABORT was invoked on rank {r} in communicator MPI_COMM_WORLD", "with errorcode 1.", "",
               "NOTE: invoking MPI_ABORT causes Open MPI to kill all MPI processes.", "-" * 74)


def _abort(rank: int) -> tuple[str, ...]:
    return tuple(line.format(r=rank) for line in _OMPI_ABORT)


_CASES = [
    # LAMMPS: error->one names the proc; error->all names none (every rank stops)
    (("Step Temp E_pair", "   100   0.75   -5.75",
      "ERROR on proc 6: Out of range atoms - cannot compute PPPM (src/KSPACE/pppm.cpp:1965)", "Last command: run 5000",
      *_abort(6)), 6, "Out of range atoms - cannot compute PPPM"),
    (("0: Step Temp", "1: ERROR on proc 1: Bond atoms 10 11 missing at step 300 (src/ntopo_bond_all.cpp:59)",
      "1: Last command: run 100"), 1, "Bond atoms 10 11 missing"),
    (("Step Temp", "ERROR: Lost atoms: original 4000 current 3990 (src/thermo.cpp:481)", "Last command: run 100"),
     None, "Lost atoms: original 4000 current 3990"),
    # GROMACS's block, its rank in its own words
    (("starting mdrun 'Protein'", "", "-" * 55, "Program:     gmx mdrun, version 2024.1",
      "Source file: src/gromacs/mdlib/sim_util.cpp (line 700)", "MPI rank:    5 (out of 16)", "", "Fatal error:",
      "Step 2200: The total potential energy is nan, which is not finite.", "", "For more information ...", "-" * 55,
      *_abort(5)), 5, "The total potential energy is nan"),
    # PETSc's error message block; its rank from its [N] tag
    (("  0 KSP Residual norm 1e+00",
      "[3]PETSC ERROR: --------------------- Error Message ----------------------------------------------",
      "[3]PETSC ERROR: Object is in wrong state", "[3]PETSC ERROR: Not for unassembled matrix",
      "[3]PETSC ERROR: See https://petsc.org/release/faq/ for trouble shooting.",
      "application called MPI_Abort(MPI_COMM_WORLD, 73) - process 3"), 3, "Not for unassembled matrix"),
    # deal.II's exception, whose rank the MPI abort after it says
    (("Cycle 0:", "", "-" * 56, "An error occurred in line <95> of file </dealii/source/lac/sparsity.cc> in function",
      "    void f()", "The violated condition was: ", "    i < n_rows", "Additional information: ",
      "    Index 70 is not in the half-open range [0,64).", "", "Stacktrace:", "-----------",
      "#0  ./step-6: Step6::solve()", "-" * 56, "", "Calling MPI_Abort now.", *_abort(2)), 2,
     "Index 70 is not in the half-open range"),
    # MOOSE, CP2K, Quantum ESPRESSO: the abort after them names the rank
    (("Time Step 1", "", "*** ERROR ***", "Unable to find a variable named 'temp'.", "",
      "application called MPI_Abort(MPI_COMM_WORLD, 1) - process 4"), 4, "Unable to find a variable named"),
    (("     1 OT DIIS  0.15E+00  2.1  0.0123  -1123.45", " " + "*" * 79, " *   ___" + " " * 70 + "*", " *  /   \\" + " " * 69 + "*",
      " * [ABORT]" + " " * 69 + "*", " *  \\___/     SCF run NOT converged. To continue the calculation regardless, please set the keyword IGNORE_CONVERGENCE_FAILURE. *",
      " " + "*" * 79, "", " CP2K| Abnormal program termination, stopped by process number 9"), 9, "SCF run NOT converged"),
    (("     iteration #  3", " " + "%" * 80, "     Error in routine c_bands (1):", "     too many bands are not converged",
      " " + "%" * 80, "", "     stopping ...", *_abort(11)), 11, "too many bands are not converged"),
    # Charm++ (NAMD), MPAS, Trilinos, FMS, SU2, SPECFEM
    (("ENERGY: 100 1.0", "------------- Processor 7 Exiting: Called CmiAbort ------------",
      "Reason: FATAL ERROR: Atoms moving too fast"), 7, "Atoms moving too fast"),
    (("Beginning MPAS-init_atmosphere Error Log File for task       4 of      32", "",
      "ERROR: file x.nc not found", "CRITICAL ERROR: Could not open input file"), 4, "Could not open input file"),
    (("p=8: *** Caught standard std::exception of type 'std::runtime_error' :", "", " /src/x.cpp:9:", "",
      " Throw number = 1", "", " Throw test that evaluated to true: true", "", " Solver failed to converge",
      ""), 8, "Solver failed to converge"),
    ((" NOTE from PE     0: starting", "WARNING from PE     2: ignore me",
      "FATAL from PE    21: horiz_interp: bad grid", *_abort(21)), 21, "horiz_interp: bad grid"),
    (("Iter 10", 'Error in "void CDriver::Init()": ', "-" * 73, "Mesh file not found.",
      "------------------------------ Error Exit -------------------------------", *_abort(0)), 0,
     "Mesh file not found"),
    ((" time step 100", " Error: negative Jacobian found in element 3011", " Error detected, aborting MPI... proc       12"),
     12, "negative Jacobian"),
    # the Fortran runtimes' own errors, the rank from the launcher's tag
    (("[1,0]<stdout>: step 1", "[1,5]<stderr>:At line 12 of file io.f90 (unit = 10)",
      "[1,5]<stderr>:Fortran runtime error: Cannot open file 'in.dat': No such file or directory"), 5,
     "Cannot open file 'in.dat'"),
    (("2: step 1", "9: forrtl: severe (29): file not found, unit 11, file /run/namelist.in"), 9, "file not found"),
    # OpenFOAM's banner under its rank's "[N] " prefix, its version where the message was
    (("Time = 1", "[7] ", "[7] --> FOAM FATAL ERROR: (openfoam-2312)", "[7] Cannot find patchField entry for wall",
      "[7] ", "FOAM parallel run exiting", *_abort(7)), 7, "Cannot find patchField entry for wall"),
]


@pytest.mark.parametrize(("lines", "rank", "words"), _CASES)
def test_a_codes_own_fatal_words_are_that_ranks_error(lines: tuple[str, ...], rank: int | None, words: str) -> None:
    result = report(*lines)
    verdict = result.verdict
    assert verdict.kind.value == "exception", verdict.summary
    assert words in verdict.summary, verdict.summary
    assert list(verdict.culprit_ranks) == ([] if rank is None else [rank]), verdict.summary


_PRODUCTS = ("LAMMPS's", "FMS's", "Charm++'s", "Quantum ESPRESSO's", "GROMACS's")


@pytest.mark.parametrize("lines", [
    # quoted in a sentence, not at a line's start
    ("step 1", "the log said FATAL from PE 3: bad grid, so I rebuilt it", "step 2"),
    ("If LAMMPS prints ERROR on proc 2: Lost atoms (src/thermo.cpp:4), shrink the timestep.",),
    # the product's own warnings
    ("NOTE from PE 0: x", "WARNING from PE     3: diag_manager: something", "step 5"),
    ("WARNING: Lost atoms ignored (src/thermo.cpp:400)", "Step 100"),
    # Quantum ESPRESSO's words without its box; GROMACS's "Fatal error:" of no GROMACS block
    ("     Error in routine (1):", "     something"),
])
def test_the_same_words_quoted_or_as_a_warning_are_no_failure(lines: tuple[str, ...]) -> None:
    # (no failure read, or the input refused as holding none: never the product's error)
    try:
        summary = report(*lines).verdict.summary
    except InputError:
        return
    assert not any(name in summary for name in _PRODUCTS), summary


@pytest.mark.parametrize("banner", [
    ("ERROR on proc 0: Invalid fix style (src/modify.cpp:900)", "Last command: fix 1 all nve2"),
    ("FATAL from PE     4: diag_manager: missing field",),
    ("------------- Processor 1 Exiting: Called CmiAbort ------------", "Reason: out of memory"),
])
def test_a_banner_the_run_went_on_after_is_no_failure(banner: tuple[str, ...]) -> None:
    # a wrapper that printed the failed attempt, then retried: the run went on and finished
    try:
        result = report(*banner, "retrying with smaller timestep", "Step 100 Temp 1.0 loss 3.1", "Step 200 Temp 1.0",
                        "epoch 1 step 300 loss 2.9", "Total wall time: 0:01:00", "Training finished")
    except InputError:
        return
    assert not any(name in result.verdict.summary for name in _PRODUCTS), result.verdict.summary
