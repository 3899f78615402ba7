"""Round 56's classes, each on variants written for these tests (other ranks, hosts, messages and wordings), with
negatives (the words quoted in a sentence, a run that went on past them):

- MPICH's size check of a collective (``message sizes do not match across processes in the collective routine:
  Received X but expected Y``) under a head that names a rank (``Abort(C) on node N (rank N in comm 0)``, Cray's
  ``Rank N [date] [node]``): rank N is the one that found it, on a message another rank of the collective sent; the
  check names no sender, so no rank is known to be wrong (a mismatch of no culprit rank). A point-to-point
  truncation that names its sender still names the pair;
- legacy DOLFIN's error block (``*** Error:``, ``*** Reason:``, ``*** Where:   This error was encountered inside
  F.``, ``*** Process: N``) is rank N's error, also where a Markdown paste lost the asterisks;
- Open MPI's runtime that failed to start (``It looks like orte_init failed for some reason``, its failed step and
  ``--> Returned value ... instead of ORTE_SUCCESS``): no rank of the program ran, an error of the job's start-up of
  no rank, on the host its ``ORTE_ERROR_LOG`` lines name;
- Cray MPICH's fatal error in MPI_Init, ``[date] [node] Fatal error in MPI_Init: ...`` (no ``Rank N`` before it: the
  process has no rank yet), read as a record of no rank on that node.
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers.report import failure_verdict
from triage.parsing.mpi_errors import parse_mpi_errors
from triage.parsing.solver_errors import parse_solver_errors

COLLECTIVE = ("iteration 12 residual 3.1e-04\n"
              "Abort(738197519) on node 3 (rank 3 in comm 0): Fatal error in PMPI_Allreduce: Other MPI error, error "
              "stack:\n"
              "PMPI_Allreduce(472)...............: MPI_Allreduce(sbuf=0x7ffd, rbuf=0x7ffe, count=2, MPI_DOUBLE, "
              "MPI_SUM, MPI_COMM_WORLD) failed\n"
              "MPIR_Allreduce_intra_auto(316)....: \n"
              "MPIDI_POSIX_mpi_allreduce(402).....: message sizes do not match across processes in the collective "
              "routine: Received 16 but expected 8\n")


def test_a_collectives_size_check_under_a_ranked_head_names_no_culprit(tmp_path: Path) -> None:
    got = failure_verdict(COLLECTIVE, tmp_path)
    assert got["kind"] == "collective_mismatch" and got["subkind"] == "size"
    assert got["culprit_ranks"] == []
    assert "reported by rank 3" in got["summary"] and "rank 3 failed after it" not in got["summary"]


def test_a_truncation_that_names_its_sender_still_names_the_pair(tmp_path: Path) -> None:
    text = ("Abort(1007) on node 6 (rank 6 in comm 0): Fatal error in PMPI_Bcast: Message truncated, error stack:\n"
            "PMPI_Bcast(1600).....: MPI_Bcast(buf=0x1, count=4, MPI_INT, root=1, MPI_COMM_WORLD) failed\n"
            "MPIDI_CH3U_Receive_data_found(131)....: Message from rank 1 and tag 2 truncated; 32 bytes received but "
            "buffer size is 16\n")
    got = failure_verdict(text, tmp_path)
    assert got["kind"] == "collective_mismatch" and got["culprit_ranks"] == [1, 6]


DOLFIN = ("Solving linear variational problem.\n"
          "*** -------------------------------------------------------------------------\n"
          "*** DOLFIN encountered an error. If you are not able to resolve this issue\n"
          "*** using the information listed below, you can ask for help at\n"
          "*** -------------------------------------------------------------------------\n"
          "*** Error:   Unable to successfully call PETSc function 'KSPSolve'.\n"
          "*** Reason:  PETSc error code is: 76 (Error in external library).\n"
          "*** Where:   This error was encountered inside /src/dolfin/la/PETScKrylovSolver.cpp.\n"
          "*** Process: 5\n"
          "*** \n"
          "*** DOLFIN version: 2018.1.0\n"
          "*** -------------------------------------------------------------------------\n")


def test_dolfins_error_block_is_the_processs_error(tmp_path: Path) -> None:
    got = failure_verdict(DOLFIN, tmp_path)
    assert got["kind"] == "exception" and got["culprit_ranks"] == [5]
    assert "KSPSolve" in got["summary"]


def test_dolfins_block_without_its_asterisks(tmp_path: Path) -> None:
    text = ("Error:   Unable to find entity in map.\n"
            "Reason:  Entity index 17 not found.\n"
            "Where:   This error was encountered inside MeshFunction.h.\n"
            "Process: 1\n")
    got = failure_verdict(text, tmp_path)
    assert got["kind"] == "exception" and got["culprit_ranks"] == [1]


def test_dolfins_words_in_a_sentence_or_a_run_that_went_on_are_not_read() -> None:
    quoted = ('The forum says "Error: Unable to find entity" with "Where: This error was encountered inside '
              'MeshFunction.h." means the mesh is empty.\n')
    assert parse_solver_errors(quoted) == ()
    went_on = (DOLFIN.split("Solving linear variational problem.\n", 1)[1]
               + "".join(f"Time step {n}: Newton iteration 3: r (abs) = 1.2e-09, converged\n" for n in range(2, 12)))
    assert parse_solver_errors(went_on) == ()


RTE = ("$ mpiexec -n 16 python run_sampler.py\n"
       "[gpu-n12:20931] [[INVALID],INVALID] ORTE_ERROR_LOG: A system-required executable either could not be found or "
       "was not executable by this user in file ess_singleton_module.c at line 388\n"
       "--------------------------------------------------------------------------\n"
       "It looks like orte_init failed for some reason; your parallel process is\n"
       "likely to abort.  There are many reasons that a parallel process can\n"
       "fail during orte_init; some of which are due to configuration or\n"
       "environment problems.  This failure appears to be an internal failure;\n"
       "here's some additional information (which may only be relevant to an\n"
       "Open MPI developer):\n"
       "\n"
       "  orte_ess_init failed\n"
       "  --> Returned value A system-required executable either could not be found or was not executable by this "
       "user (-127) instead of ORTE_SUCCESS\n"
       "--------------------------------------------------------------------------\n")


def test_the_runtime_that_failed_to_start_is_the_jobs_error_of_no_rank(tmp_path: Path) -> None:
    [record] = parse_mpi_errors(RTE)
    assert record.rank is None and (record.host, record.pid) == ("gpu-n12", 20931)
    assert "orte_ess_init failed" in record.text
    got = failure_verdict(RTE, tmp_path)
    assert got["kind"] == "exception" and got["culprit_ranks"] == []
    assert "gpu-n12" in got["summary"]


def test_the_runtimes_words_quoted_or_before_a_run_that_went_on_are_not_read() -> None:
    quoted = ('The FAQ: "It looks like orte_init failed for some reason; your parallel process is likely to abort." '
              "means a broken install.\n")
    assert parse_mpi_errors(quoted) == ()
    went_on = RTE + "".join(f"iteration {n}: logZ = -{n}.31, ESS 412 converged\n" for n in range(1, 12))
    assert parse_mpi_errors(went_on) == ()


def test_cray_mpich_fatal_error_in_mpi_init_names_no_rank() -> None:
    text = ("[Tue Mar  9 04:12:33 2021] [c5-1c2s7n0] Fatal error in PMPI_Init_thread: Other MPI error, error stack:\n"
            "MPIR_Init_thread(586).........: \n"
            "MPID_Init(297)................: channel initialization failed\n"
            "MPIDI_CH3_Init(45)............: PMI2 init failed: 1\n")
    [record] = parse_mpi_errors(text)
    assert record.rank is None and record.host == "c5-1c2s7n0"
    assert "PMI2 init failed" in record.text
    quoted = 'The line "[Tue Mar  9 04:12:33 2021] [c5-1c2s7n0] Fatal error in MPI_Init: x" is Cray\'s.\n'
    assert all(r.host != "c5-1c2s7n0" for r in parse_mpi_errors(quoted))


START = ("[Tue Mar  9 04:12:33 2021] [c5-1c2s7n0] Fatal error in PMPI_Init_thread: Other MPI error, error stack:\n"
         "MPIR_Init_thread(586).........: \n"
         "MPID_Init(297)................: channel initialization failed\n"
         "MPIDI_CH3_Init(45)............: PMI2 init failed: 1\n"
         "srun: error: nid01022: tasks 0-6,8-15: Aborted\n"
         "srun: Terminating job step 4401871.0\n"
         "slurmstepd: error: *** STEP 4401871.0 ON nid01022 CANCELLED AT 2021-03-09T04:12:34 ***\n"
         "srun: error: nid01022: task 7: Killed\n")


def test_an_mpi_init_failure_before_the_tasks_aborts_is_the_jobs_start_up(tmp_path: Path) -> None:
    got = failure_verdict(START, tmp_path)
    assert got["kind"] == "exception" and got["culprit_ranks"] == []
    assert "MPI start-up failed on c5-1c2s7n0" in got["summary"] and "PMI2 init failed" in got["summary"]


def test_tasks_that_died_by_another_signal_stay_their_crash(tmp_path: Path) -> None:
    text = START.replace("tasks 0-6,8-15: Aborted", "tasks 0-6,8-15: Segmentation fault")
    got = failure_verdict(text, tmp_path)
    assert got["kind"] == "crash" and got["culprit_ranks"]


def test_srun_terminating_its_step_is_no_progress() -> None:
    from triage.parsing.progress import is_progress
    assert not is_progress("srun: Terminating job step 4401871.0")
    assert is_progress("step 120/500 loss 0.231")


def test_the_rankless_cray_record_only_at_a_lines_start() -> None:
    sentence = "On Cray the line [Tue Mar  9 04:12:33 2021] [c5-1c2s7n0] Fatal error in MPI_Init: x means PMI broke.\n"
    assert parse_mpi_errors(sentence) == ()
    tagged = "3: [Tue Mar  9 04:12:33 2021] [c5-1c2s7n0] Fatal error in MPI_Init: Other MPI error, error stack:\n"
    [record] = parse_mpi_errors(tagged)
    assert record.rank is None and record.host == "c5-1c2s7n0"
