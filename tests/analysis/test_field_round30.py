"""Classes of real pasted logs found by round 30 of the real-world corpus, each tested on a variant written
here (other ranks, codes, hosts, signals and surrounding lines than the cases' own)."""

from __future__ import annotations

from tests.helpers.report import report_lines as report
from triage.parsing.launchers import parse_rank_deaths
from triage.parsing.mpi_errors import parse_mpi_errors


# MPICH's own line for a process that called MPI_Abort, "application called MPI_Abort(MPI_COMM_WORLD, 1) - process
# 10" (Intel MPI repeats it after "[cli_10]: aborting job:"), was refused: it is that rank's own abort, as Open MPI's
# "MPI_ABORT was invoked on rank 10" is (ContinuumIO/anaconda-issues#1017's shape; other ranks, codes, comms here)
def test_mpichs_abort_line_is_the_ranks_own_abort() -> None:
    result = report("step 120 residual 3.2e-04",
                    "application called MPI_Abort(MPI_COMM_WORLD, 3) - process 5",
                    "[cli_5]: aborting job:",
                    "application called MPI_Abort(MPI_COMM_WORLD, 3) - process 5",
                    "rank 2 still writing checkpoint 7.")
    assert result.verdict.kind.value == "exception", result.verdict.summary
    assert result.verdict.culprit_ranks == (5,), result.verdict.summary
    assert "MPI_Abort" in result.verdict.summary


def test_mpichs_abort_line_says_its_communicator_and_code_once_per_rank() -> None:
    errors = parse_mpi_errors("application called MPI_Abort(comm=0x84000002, -1) - process 17\n"
                              "[cli_17]: aborting job:\n"
                              "application called MPI_Abort(comm=0x84000002, -1) - process 17\n")
    assert [(e.rank, e.first) for e in errors] == [(17, True)]
    assert "comm=0x84000002" in errors[0].text and "-1" in errors[0].text


def test_the_words_mpi_abort_alone_are_not_an_abort_record() -> None:
    assert parse_mpi_errors("we call MPI_Abort(MPI_COMM_WORLD, 1) when the mesh is bad\n") == ()


# srun's record of tasks a signal ended, without its host field ("srun: error: tasks 0-1: Floating point
# exception", a title or a retyped line), was refused; and the tasks srun reports killed by the same fault signal (a
# SIGSEGV, SIGBUS, SIGFPE or SIGILL, which srun's own teardown never sends), in one line or after "Terminating job
# step", were read as one first task and its collateral, where each is a root of a shared cause
# (ai-dynamo/nixl#319, facebookresearch/habitat-lab#298, flux-framework/flux-core#765; other tasks, nodes, signals here)
def test_an_srun_line_without_its_host_is_read() -> None:
    result = report("launching 4 tasks",
                    "srun: error: task 3: Bus error")
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert result.verdict.culprit_ranks == (3,), result.verdict.summary
    assert "SIGBUS" in result.verdict.summary


def test_tasks_one_srun_line_lists_with_a_fault_are_each_a_root() -> None:
    result = report("srun: error: gpu-a17: tasks 4-6,9: Illegal instruction (core dumped)")
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert result.verdict.culprit_ranks == (4, 5, 6, 9), result.verdict.summary


def test_a_second_tasks_fault_after_the_step_termination_is_its_own() -> None:
    result = report("srun: error: cn12: task 2: Floating point exception (core dumped)",
                    "srun: launch/slurm: _step_signal: Terminating StepId=88123.0",
                    "srun: error: cn11: task 0: Floating point exception (core dumped)")
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert result.verdict.culprit_ranks == (0, 2), result.verdict.summary


def test_tasks_the_teardown_killed_after_a_fault_stay_collateral() -> None:
    result = report("srun: error: cn12: task 2: Segmentation fault (core dumped)",
                    "srun: launch/slurm: _step_signal: Terminating StepId=88123.0",
                    "srun: error: cn11: tasks 0-1,3: Killed")
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert result.verdict.culprit_ranks == (2,), result.verdict.summary


# MPICH Hydra's BAD TERMINATION box gives, for a process a signal killed, the signal's number as its EXIT CODE (the
# exit string after the box says so when it is in the input); without the exit string, "EXIT CODE: 9" was named an
# exception (an exit code 9), not a process killed by SIGKILL (je-santos/MPLBM-UT#92's shape; other codes here)
def test_hydras_exit_code_that_is_a_killing_signal_is_that_signal() -> None:
    for code, name in (("9", "SIGKILL"), ("11", "SIGSEGV"), ("7", "SIGBUS")):
        deaths = parse_rank_deaths("=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n"
                                   "=   RANK 3 PID 40417 RUNNING AT cn042\n"
                                   f"=   EXIT CODE: {code}\n"
                                   "=   CLEANING UP REMAINING PROCESSES\n")
        assert [(d.rank, d.signal, d.exitcode) for d in deaths] == [(3, name, None)], code


def test_hydras_ordinary_exit_codes_stay_exit_codes() -> None:
    for code in ("1", "2", "255", "10"):
        deaths = parse_rank_deaths("=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n"
                                   "=   PID 40417 RUNNING AT cn042\n"
                                   f"=   EXIT CODE: {code}\n")
        assert [(d.signal, d.exitcode) for d in deaths] == [(None, int(code))], code


def test_hydras_exit_string_still_says_the_signal() -> None:
    deaths = parse_rank_deaths("=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n"
                               "=   PID 40417 RUNNING AT cn042\n"
                               "=   EXIT CODE: 9\n"
                               "YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Terminated (signal 15)\n")
    assert [d.signal for d in deaths] == ["SIGTERM"]
    result = report("=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES",
                    "=   PID 5120 RUNNING AT node7",
                    "=   EXIT CODE: 6",
                    "=   CLEANING UP REMAINING PROCESSES")
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert "SIGABRT" in result.verdict.summary


# The AWS OFI plugin's (libfabric, EFA) own failure under NCCL WARN, "NET/OFI Couldn't open AV. RC: -22, ERROR: Invalid
# argument", with Open MPI's --tag-output prefix naming the rank, was only a WARN line of no verdict: it is the network
# failure NCCL's NET/IB lines are (aws/aws-ofi-nccl#24's shape; another rank, host and OFI call here)
def test_a_net_ofi_failure_is_a_network_error() -> None:
    result = report(
        "[1,4]<stdout>:ip-10-0-3-7:154:697 [4] NCCL INFO Ring 02 : 13 -> 4 [receive] via NET/AWS Libfabric/2",
        "[1,4]<stdout>:",
        "[1,4]<stdout>:ip-10-0-3-7:154:697 [4] create_nccl_ofi_component:496 NCCL WARN NET/OFI Couldn't enable "
        "endpoint. RC: -12, ERROR: Cannot allocate memory")
    assert result.verdict.kind.value == "network_error", result.verdict.summary
    assert "rank 4" in result.verdict.summary and "NET/OFI" in result.verdict.summary


def test_net_ofi_lines_without_a_failure_are_not_one() -> None:
    result = report("[1,0]<stdout>:ip-10-0-3-7:150:690 [0] NCCL INFO NET/OFI Selected Provider is efa",
                    "[1,0]<stdout>:ip-10-0-3-7:150:690 [0] NCCL INFO NET/OFI Setting FI_EFA_FORK_SAFE environment "
                    "variable to 1")
    assert result.verdict.kind.value != "network_error", result.verdict.summary
