"""Classes of real pasted logs found by round 36 of the real-world corpus, each tested on a variant written
here (other ranks, hosts, signals, codes and surrounding lines than the cases' own)."""

from __future__ import annotations

from tests.helpers.report import report_lines as report
from triage.parsing.launchers import parse_rank_deaths


# IBM's jsrun (Summit, Sierra) says which rank it saw end first: "ERROR:  One or more process (first noticed rank N)
# terminated with signal S (core dumped)"; it was not read, so an abort under it named no rank
# (ComputationalRadiationPhysics/picongpu#3861's shape; another rank, signal and failure before it here)
def test_jsrun_first_noticed_rank_is_that_ranks_death() -> None:
    result = report("step 4100 of 20000",
                    "CUDA error: an illegal memory access was encountered",
                    "ERROR:  One or more process (first noticed rank 37) terminated with signal 11 (core dumped)")
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert result.verdict.culprit_ranks == (37,), result.verdict.summary
    assert "SIGSEGV" in result.verdict.summary


def test_jsrun_exit_code_record_names_the_rank_and_its_code() -> None:
    deaths = parse_rank_deaths("Error: One or more process (first noticed rank 12) exited with code 3\n")
    assert [(d.rank, d.signal, d.exitcode, d.first) for d in deaths] == [(12, None, 3, True)]


# MVAPICH2's handler in a rank: "[host:mpi_rank_N][error_sighandler] Caught error: Segmentation fault (signal 11)";
# it was not read, so the ranks that faulted were lost behind a later abort of another rank (LBANN/lbann#487's shape:
# here two ranks die of SIGBUS on another host, then a third aborts in the teardown)
def test_mvapich_sighandler_lines_name_the_faulting_ranks() -> None:
    result = report("iteration 120: loss 0.4412",
                    "[gpu-a12:mpi_rank_3][error_sighandler] Caught error: Bus error (signal 7)",
                    "[gpu-a12:mpi_rank_9][error_sighandler] Caught error: Bus error (signal 7)",
                    "[cli_2]: aborting job:",
                    "Fatal error in MPI_Allreduce:",
                    "terminate called after throwing an instance of 'std::runtime_error'",
                    "  what():  driver shutting down",
                    "[gpu-a12:mpi_rank_2][error_sighandler] Caught error: Aborted (signal 6)")
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert result.verdict.culprit_ranks == (3, 9), result.verdict.summary
    assert "SIGBUS" in result.verdict.summary


def test_one_mvapich_abort_is_that_ranks_abort() -> None:
    deaths = parse_rank_deaths("[node07.cluster:mpi_rank_0][error_sighandler] Caught error: Aborted (signal 6)\n")
    assert [(d.rank, d.signal, d.host, d.first, d.mpi) for d in deaths] == [(0, "SIGABRT", "node07.cluster", True,
                                                                            True)]


# Open MPI's signal handler heads its report "[host:pid] *** Process received signal ***" just after the failure that
# raised the signal; a paste cut after that head lost the node (ComputationalRadiationPhysics/picongpu#3077's shape:
# another failure, host and pid here)
def test_open_mpi_signal_head_alone_gives_the_failure_its_node() -> None:
    result = report("time step 812",
                    "terminate called after throwing an instance of 'std::runtime_error'",
                    "  what():  CUDA error: unspecified launch failure",
                    "[cn-g047:3310] *** Process received signal ***")
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert result.verdict.culprit_host == "cn-g047", result.verdict.summary
    assert not result.verdict.culprit_ranks


def test_a_signal_head_far_from_the_failure_gives_it_no_node() -> None:
    result = report("terminate called after throwing an instance of 'std::runtime_error'",
                    "  what():  CUDA error: unspecified launch failure",
                    "saving the last checkpoint",
                    "closing the writers",
                    "flushing the logs",
                    "[cn-g047:3310] *** Process received signal ***")
    assert result.verdict.culprit_host != "cn-g047", result.verdict.summary
