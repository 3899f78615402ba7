"""More scientific codes' and HPC runtimes' own fatal-error words (session 47: triage/parsing/hpc_codes.py), in the
formats their sources print, each tested on variants written here (other ranks, messages, MPI runtimes, rank prefixes,
a box's rows joined on one line), with negatives: the words quoted in a sentence, a script's grep for them, and a run
that went on after them."""

from __future__ import annotations

import pytest

from tests.helpers.report import report_lines as report
from triage.errors import InputError
from triage.parsing.hpc_codes import banners


def _ompi(rank: int) -> tuple[str, ...]:
    return ("-" * 74, f"MPI_ABORT was invoked on rank {rank} in communicator MPI_COMM_WORLD", "with errorcode 1.", "",
            "NOTE: invoking MPI_ABORT causes Open MPI to kill all MPI processes.", "-" * 74)


def _mpich(rank: int) -> str:
    return f"application called MPI_Abort(MPI_COMM_WORLD, 1) - process {rank}"


_RULE = " " + "-" * 72
_ART = ("|     EEEEEEE  RRRRRR   RRRRRR   OOOOOOO  RRRRRR      ###     ###     ###     |",
        "|     E        R     R  R     R  O     O  R     R     ###     ###     ###     |",
        "|     EEEEE    RRRRRR   RRRRRR   O     O  RRRRRR       #       #       #      |",
        "|     EEEEEEE  R     R  R     R  OOOOOOO  R     R     ###     ###     ###     |")


def _vasp(*message: str) -> tuple[str, ...]:
    return (" " + "-" * 77, "|" + " " * 77 + "|", *_ART, "|" + " " * 77 + "|",
            *(f"|     {line:<72}|" for line in message), "|" + " " * 77 + "|",
            "|       ---->  I REFUSE TO CONTINUE WITH THIS SICK JOB ... BYE!!! <----       |", " " + "-" * 77)


_CASES = [
    # GADGET-2/3's terminate(): its task is its rank
    (("Begin Step 1200, Time: 0.2", ("code termination on task=37, function 'domain_decomposition()', file "
                                     "'domain.c', line 207: 'no domain decomposition that stays within memory bounds "
                                     "is possible'"), *_ompi(37)),
     37, "no domain decomposition that stays within memory bounds"),
    # GADGET-4's Terminate(), under MPICH
    (("Sync-Point 1200, Time: 0.2", ("TERMINATE: ******!!!!!******  Code termination on task=5, function "
                                     "ngenic_displace_particles(), file src/ngenic/ngenic.cc, line 210: Particle not "
                                     "found"), _mpich(5)), 5,
     "Particle not found"),
    # MFEM's abort: no rank of its own, the MPI abort after it names it
    (("Iteration : 10", "", "MFEM abort: Unable to open mesh file: ../data/star.mesh",
      " ... in function: mfem::Mesh::Mesh(const char*, int, int, bool)", " ... in file: mesh/mesh.cpp:3120", "",
      *_ompi(2)), 2, "Unable to open mesh file: ../data/star.mesh"),
    # MFEM's verification, the rank from the line's own prefix
    (("0: cycle 1", "3: Verification failed: (ess_tdofs.Size() > 0) is false:", "3:  --> no essential dofs",
      "3:  ... in function: void Solve()", "3:  ... in file: ex1p.cpp:120", "0: cycle 2"), 3, "no essential dofs"),
    # SIESTA's die(): the message above its node line
    (("   scf:    1   -3140.2   -3140.2   -3140.2  1.2  -3.2  2.1",
      "SCF_NOT_CONV: SCF did not converge in maximum number of steps (required).", "Stopping Program from Node:    3",
      *_ompi(3)), 3, "SCF did not converge in maximum number of steps"),
    # NWChem's errquit box, the rank from MPICH's abort of it
    (("  iter       energy          gnorm", _RULE, " rhf_fock_2e: ga_create failed                 0", _RULE, _RULE,
      "  current input line : ", "    41: task scf energy", _RULE, _RULE,
      " There is an error related to the memory allocation", _RULE, "", _mpich(2)), 2, "rhf_fock_2e: ga_create failed"),
    # ABINIT's YAML error document: its own mpi_rank; its advice left out
    ((" ETOT  3  -70.712345678901    -1.234E-04 2.1E-06", "", "--- !ERROR", "src_file: m_scfcv_core.F90",
      "src_line: 1021", "mpi_rank: 3", "message: |",
      "    The SCF cycle diverged: residual increased by a factor 1.0E+05",
      "    Action: decrease the value of diemix.", "...", "", " leave_new: decision taken to exit ...", _mpich(3)), 3,
     "The SCF cycle diverged"),
    # ABINIT's BUG document without mpi_rank: Open MPI's abort names the rank
    (("--- !BUG", "src_file: m_xgTransposer.F90", "src_line: 402", "message: |",
      "    Bad distribution of bands over processors", "...", *_ompi(6)), 6, "Bad distribution of bands"),
    # VASP's box (its rows joined by the reader of boxes), srun's record after MPICH's
    ((" running on   64 total cores", "DAV:   1    -0.123456789012E+03   -0.12346E+03  1920   0.124E+03",
      *_vasp("Error EDDDAV: Call to ZHEGV failed. Returncode = 9 1 8"), "", _mpich(12),
      "srun: error: nid001234: task 12: Exited with exit code 1"), 12, "Call to ZHEGV failed"),
    (("LOOP:  cpu time  1.2: real time  1.3", *_vasp("M_divide: can not subdivide 16 nodes by 3"), *_ompi(0)), 0,
     "can not subdivide 16 nodes by 3"),
    # GASNet's fatal error names its proc; UPC++'s box after it holds the message
    (("step 10 done", ("*** FATAL ERROR (proc 3): in gasnetc_ofi_init() at /gasnet-src/ofi-conduit/gasnet_ofi.c:1336: "
                       "fi_endpoint for rdma failed: -22(Invalid argument)"), "*** Caught a fatal signal (proc 3): SIGABRT(6)"), 3,
     "fi_endpoint for rdma failed"),
    (("iteration 4", "*** FATAL ERROR (proc 2):", "/" * 70, "UPC++ fatal error:", " on process 2 (nid00042)",
      " at /src/app/solver.cpp:88", " in function: void solve()", "", "upcxx::new_array: out of shared heap memory", "",
      "/" * 70, "*** Caught a fatal signal (proc 2): SIGABRT(6)"), 2, "out of shared heap memory"),
    # NEMO's ctl_stop box (its STOP word passed over), Open MPI's abort after it
    ((" kt= 87159 max abs(U):  6.0407E+07, i j k:  2914 3389    8", "", "  ===>>> : E R R O R", "         ===========",
      "", " MPPSTOP", " NEMO abort from dia_wri_state", "", " huge E-R-R-O-R : immediate stop", *_ompi(17)), 17,
     "NEMO abort from dia_wri_state"),
    ((" ===>>> : E R R O R", "", "         ===========", "", " iom_varid, file: ./runoff.nc, var: sofwficb not found",
      "", _mpich(0)), 0, "var: sofwficb not found"),
    # Legion's error-level logger line names its node
    (("step 3 complete", ("[2 - 7f0c7c0d1740]    1.234567 {5}{runtime}: [error 87] LEGION ERROR: Future size "
                          "mismatch! (UID 0)"), "Signal 6 received by node 2, process 12345 (thread 7f0c7c0d1740) - obtaining backtrace"), 2,
     "Future size mismatch"),
    # ORCA's driver and Chapel's runtime name no rank
    (("    0   -1520.1234567890   0.000000000000 0.1", "[file orca_main.cpp]: SCF NOT CONVERGED AFTER 125 CYCLES", "",
      "ORCA finished by error termination in SCF", "Calling Command: mpirun -np 8  /opt/orca/orca_scf_mpi job.gbw b job",
      "[file orca_tools/qcmsg.cpp, line 394]:", "  .... aborting the run"), None, "SCF NOT CONVERGED AFTER 125 CYCLES"),
    (("iteration 3", "solver.chpl:212: error: halt reached - matrix is singular at row 17"), None,
     "halt reached - matrix is singular at row 17"),
]


@pytest.mark.parametrize(("lines", "rank", "words"), _CASES)
def test_a_codes_own_fatal_words_are_that_ranks_error(lines: tuple[str, ...], rank: int | None, words: str) -> None:
    verdict = report(*lines).verdict
    assert verdict.kind.value == "exception", verdict.summary
    assert words in verdict.summary, verdict.summary
    assert list(verdict.culprit_ranks) == ([] if rank is None else [rank]), verdict.summary
    assert "MPI_Abort" not in verdict.summary.split(words)[0], verdict.summary      # (the code's words, not the abort's)


_PRODUCTS = ("GADGET's", "MFEM", "SIESTA's", "NWChem's", "ABINIT's", "VASP's", "GASNet's", "UPC++", "NEMO's",
             "ORCA finished", "Legion's", "Chapel's")


@pytest.mark.parametrize("lines", [
    # quoted in a sentence, not at a line's start
    ("step 1", "the run printed code termination on task=3, function 'f()', file 'a.c', line 2: 'x' and I fixed it",),
    ("If you see MFEM abort: Unable to open mesh file, check the path.", "step 2"),
    ("I got *** FATAL ERROR (proc 0): fi_endpoint failed on the first try", "step 3"),
    # a script's grep for VASP's words, without its box
    ("if grep -q 'I REFUSE TO CONTINUE WITH THIS SICK JOB' OUTCAR; then echo failed; fi", "step 4"),
    # ABINIT's warnings are documents of another kind
    ("--- !WARNING", "src_file: m_mpinfo.F90", "src_line: 83", "message: |",
     "    nkpt*nsppol (18) is not a multiple of nproc_spkpt (16)", "...", " ETOT  3  -70.7"),
    # NEMO's warning box, Legion's warning level, Chapel's words in a sentence
    (" ===>>> : W A R N I N G", "         ===============", "", " nn_fsbc changed", "", " kt=  10 ssh max 1.2"),
    ("[0 - 7f00] 0.1 {4}{runtime}: [warning 1071] LEGION WARNING: region requirement is unused", "step 2"),
    ("the run stopped with solver.chpl:212: error: halt reached, so I changed the input", "step 5"),
])
def test_the_same_words_quoted_or_grepped_are_no_failure(lines: tuple[str, ...]) -> None:
    try:
        summary = report(*lines).verdict.summary
    except InputError:
        return
    assert not any(name in summary for name in _PRODUCTS), summary


@pytest.mark.parametrize("banner", [
    ("code termination on task=0, function 'read_ic()', file 'read_ic.c', line 88: 'file not found'",),
    ("MFEM abort: Unable to open mesh file: a.mesh", " ... in file: mesh/mesh.cpp:3120"),
    ("SCF_NOT_CONV: SCF did not converge", "Stopping Program from Node:    0"),
    (*_vasp("Error EDDDAV: Call to ZHEGV failed."),),
    ("ORCA finished by error termination in SCF", "  .... aborting the run", "****ORCA TERMINATED NORMALLY****"),
])
def test_a_banner_the_run_went_on_after_is_no_failure(banner: tuple[str, ...]) -> None:
    # a wrapper that printed the failed attempt, then retried: the run went on and finished
    try:
        result = report(*banner, "retrying with a smaller step", "Step 100 loss 3.1", "Step 200 loss 3.0",
                        "epoch 1 step 300 loss 2.9", "Training finished")
    except InputError:
        return
    # (no failure: the summary may quote the line the job went on past)
    assert result.verdict.kind.value != "exception" and not result.verdict.culprit_ranks, result.verdict.summary


def test_the_readers_words_and_places() -> None:
    text = ("x\ncode termination on task=12, function 'f()', file 'a.c', line 9: 'bad'\ny\n"
            "Stopping Program from Node:   7\n*** FATAL ERROR (proc 4): boom\n")
    found = banners(text)
    assert [(rank, text[start:end].split(" ")[0]) for rank, _, start, end in found] == [
        (12, "code"), (7, "Stopping"), (4, "***")]
    assert found[0][1] == "GADGET's code termination on task 12 (in f(), a.c line 9): bad"
    assert found[1][1] == "SIESTA's error (die) on node 7: y"
    assert banners("nothing here\n") == []
    # an SCF iteration's line of numbers above the node line is no message (die()'s message is not in the input)
    [(rank, said, _, _)] = banners("scf:    4   -2718.28   -2718.28   -2718.28  0.0031  -3.9  0.9\n"
                                   "Stopping Program from Node:    5\n")
    assert (rank, said) == (5, "SIESTA's error (die) on node 5")
