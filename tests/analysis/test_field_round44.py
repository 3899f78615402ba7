"""Classes of real pasted logs found by round 44 of the real-world corpus, each tested on a variant written here
(other programs, hosts, ranks, limits and reasons than the cases' own)."""

from __future__ import annotations

import pytest

from tests.helpers.report import report_lines as report


# (1) Open MPI's launcher under a distribution's or a wrapper's name (kubeflow/mpi-operator#90's "mpirun.real noticed
# that process rank 1 ..."): its record was not read, and the "1 process returned a non-zero exit code" box named an
# exception of no rank
@pytest.mark.parametrize("launcher", ["mpirun.real", "mpiexec.hydra", "mpirun.openmpi"])
def test_a_renamed_mpirun_names_the_rank_and_its_signal(launcher: str) -> None:
    result = report("Primary job  terminated normally, but 1 process returned",
                    "a non-zero exit code. Per user-direction, the job has been aborted.",
                    f"{launcher} noticed that process rank 5 with PID 812 on node horovod-worker-3 exited on "
                    "signal 11 (Segmentation fault).")
    assert result.verdict.kind.value == "crash" and result.verdict.culprit_ranks == (5,), result.verdict.summary
    assert "SIGSEGV" in result.verdict.summary


# (2) srun's own word that a node refused the step's launch (c3nl-neuraldynamics/c3nl_cluster#61, huggingface/
# datatrove#248): the tasks never started on that node, which the verdict names; a line of exactly a terminal's width
# before srun's next message is no line cut by the terminal
@pytest.mark.parametrize("why", ["Invalid job credential", "Job credential revoked",
                                 "Requested nodes are busy"])
def test_a_refused_task_launch_names_its_node(why: str) -> None:
    result = report("srun: error: " + "x" * 107,
                    f"srun: error: Task launch for StepId=5521.3 failed on node a100-n14: {why}",
                    f"srun: error: Application launch failed: {why}",
                    "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.")
    summary = result.verdict.summary
    assert result.verdict.culprit_ranks == () and "a100-n14" in summary, summary
    assert "never started" in summary and "xsrun" not in summary, summary


# (3) a batch system's own kill of the job at a limit: LSF's TERM_* reason (ashkamath/mdetr#101's thread limit), Dask's
# nanny over a worker's memory budget (dask/distributed#1829): both were refused
@pytest.mark.parametrize("line", [
    "TERM_MEMLIMIT: job killed after reaching LSF memory usage limit.",
    "TERM_PROCESSLIMIT: job killed after reaching LSF process limit.",
    ("distributed.nanny.memory - WARNING - Worker tcp://10.3.4.5:40211 (pid=8812) exceeded 90% memory budget. "
     "Restarting..."),
])
def test_a_batch_systems_kill_at_a_limit_is_a_crash_of_no_rank(line: str) -> None:
    result = report("Sender: LSF System <lsfadmin@host07>", line, "Exited with exit code 1.")
    assert result.verdict.kind.value == "crash" and result.verdict.culprit_ranks == (), result.verdict.summary
    if "LSF" in line:      # (LSF's report says the job exited with code 1: no SIGKILL is made up; session 50)
        assert "SIGKILL" not in result.verdict.summary and "Exited with exit code 1" in result.verdict.summary
    else:
        assert "SIGKILL" in result.verdict.summary


def test_lsfs_run_time_limit_is_a_stop_from_outside() -> None:
    result = report("TERM_RUNLIMIT: job killed after reaching LSF run time limit.", "Exited with exit code 140.")
    assert result.verdict.kind.value == "stopped", result.verdict.summary


# (4) the kubelet's eviction message alone, as an event's text (kubeflow/kubeflow#1261): refused; with "Reason:
# Evicted" before it the project already read it as a stop from outside the job
@pytest.mark.parametrize("resource", ["memory", "ephemeral-storage"])
def test_the_kubelets_eviction_message_alone_is_a_stop(resource: str) -> None:
    result = report(f"Warning  Evicted  3m  kubelet  The node was low on resource: {resource}. Threshold quantity: 100Mi.",
                    "Normal   Killing  3m  kubelet  Stopping container trainer")
    assert result.verdict.kind.value == "stopped", result.verdict.summary
    assert f"low on {resource}" in result.verdict.summary


# (5) an MPI call that failed in a rank, told by an MPI library's own fatal handler (idaholab/moose#23626's MVAPICH2
# "[host:mpi_rank_N][MPIDI_CH3_Abort] Fatal error in MPI_Recv", read as a SIGABRT) or by a program's MPI error handler
# that prints a traceback (COSIMA/access-om2#100's "MPI traceback error handler called by rank: N", not read): that
# rank's MPI error, its consequences (the job's teardown) after it
def test_mvapichs_fatal_error_is_the_ranks_mpi_error() -> None:
    result = report("[cn-0042:mpi_rank_17][MPIDI_CH3_Abort] Fatal error in MPI_Allreduce:",
                    "Other MPI error, error stack:",
                    "MPI_Allreduce(912)......: MPI_Allreduce(sbuf=0x1, rbuf=0x2, count=8, MPI_DOUBLE, MPI_SUM) failed",
                    "MPIDI_CH3I_Progress(285): handle_read_individual failed")
    assert result.verdict.kind.value == "exception" and result.verdict.culprit_ranks == (17,), result.verdict.summary
    assert "MPI_Allreduce" in result.verdict.summary


def test_a_programs_mpi_traceback_handler_names_the_rank_and_its_call() -> None:
    result = report("MPI traceback error handler called by rank:           611",
                    "Image              PC                Routine            Line        Source",
                    "libmpi.so.40       00002B125098A78D  ompi_errhandler_i     Unknown  Unknown",
                    "libmpi.so.40       00002B12509BE41B  MPI_Allgatherv        Unknown  Unknown",
                    "ocean_model        000000000040FBF1  MAIN__                    311  ocean.F90",
                    "forrtl: error (78): process killed (SIGTERM)")
    assert result.verdict.kind.value == "exception" and result.verdict.culprit_ranks == (611,), result.verdict.summary
    assert "MPI_Allgatherv" in result.verdict.summary


# (6) NCCL's WARN of a CUDA call that failed while it set a communicator up, with no exception line after it
# (dmlc/xgboost#11359's "init.cc:426 NCCL WARN Cuda failure 'operation not supported'" in a Dask worker): the
# communicator's creation failed and its caller raises it, an exception of the set-up, not a crash of a kernel
def test_nccls_init_time_cuda_failure_is_the_communicators_set_up_failing() -> None:
    result = report("gpu-worker-7:118:140 [2] NCCL INFO Using network IB",
                    "gpu-worker-7:118:140 [2] init.cc:1392 NCCL WARN Cuda failure 'invalid device context'",
                    "gpu-worker-7:118:140 [2] NCCL INFO init.cc:1620 -> 1",
                    "gpu-worker-7:118:140 [2] NCCL INFO group.cc:64 -> 1 [Async thread]")
    assert result.verdict.kind.value == "exception", result.verdict.summary
    assert "set-up failed on a CUDA call" in result.verdict.summary


def test_a_cuda_failure_nccl_warns_of_at_run_time_is_still_a_cuda_error() -> None:
    result = report("gpu-worker-7:118:141 [2] enqueue.cc:1102 NCCL WARN Cuda failure 'an illegal memory access was "
                    "encountered'")
    assert result.verdict.kind.value == "crash", result.verdict.summary


# (7) a library's own worker thread, numbered in its process (intel/torch-ccl#54's oneCCL "failed to start worker #
# 0"): read as rank 0
def test_a_library_starting_its_worker_thread_names_no_rank() -> None:
    result = report("2024:01:05-10:11:12:(4242) |CCL_ERROR| exec.cpp:134 start_workers: condition failed",
                    "RuntimeError: oneCCL: exec.cpp:134 start_workers: EXCEPTION: failed to start worker # 3")
    assert result.verdict.kind.value == "exception" and result.verdict.culprit_ranks == (), result.verdict.summary


# (8) Slurm cancelled the step for a task's failure and srun lists every other task Terminated (desihub/desispec#2744's
# "tasks 0-57,59-63: Terminated"): the one task left out between them is the one that failed
def test_the_task_srun_did_not_terminate_is_the_one_that_failed() -> None:
    result = report("slurmstepd: error: *** STEP 8812.0 ON gpu-n03 CANCELLED AT 2026-03-01T10:00:00 DUE TO TASK FAILURE ***",
                    "srun: error: gpu-n03: tasks 0-4,6-7: Terminated",
                    "srun: Force Terminated StepId=8812.0")
    assert result.verdict.culprit_ranks == (5,), result.verdict.summary


def test_no_task_left_out_names_none() -> None:
    result = report("slurmstepd: error: *** STEP 8812.0 ON gpu-n03 CANCELLED AT 2026-03-01T10:00:00 DUE TO TASK FAILURE ***",
                    "srun: error: gpu-n03: tasks 0-3,6-7: Terminated")
    assert result.verdict.culprit_ranks == (), result.verdict.summary
