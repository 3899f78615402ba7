"""Classes of real pasted logs found by round 14 of the real-world corpus (PyTorch 1.x's watchdog timeout
told only inside ``terminate``'s ``what()``, a DataLoader worker a signal ended), each tested on a variant
written here (other ranks, ops, pids, signals and wording than the cases' own lines)."""

from __future__ import annotations

from tests.helpers.report import report_lines as report
from triage.parsing.crashlog import CrashLineKind, parse_crash_line

_TAKE_DOWN = (
    ("[E ProcessGroupNCCL.cpp:341] Some NCCL operations have failed or timed out. Due to the asynchronous nature "
     "of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data."),
    "[E ProcessGroupNCCL.cpp:346] To avoid data inconsistency, we are taking the entire process down.")


def test_watchdog_timeout_only_in_terminates_what_is_a_hang_of_that_rank() -> None:
    result = report(
        *_TAKE_DOWN,
        "terminate called after throwing an instance of 'std::runtime_error'",
        "  what():  [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=4411, OpType=ALLGATHER, "
        "Timeout(ms)=600000) ran for 600233 milliseconds before timing out.")
    assert result.verdict.kind.value == "hang"
    assert "rank 2" in result.verdict.summary and "not in this input" in result.verdict.summary
    assert result.verdict.culprit_ranks == ()


def test_communicator_abort_line_before_the_terminate_does_not_make_it_a_crash() -> None:
    result = report(
        "node-3:2211:2290 [5] NCCL INFO comm 0x55d0c01 rank 5 nranks 16 cudaDev 5 busId 6b000 - Abort COMPLETE",
        *_TAKE_DOWN,
        "terminate called after throwing an instance of 'std::runtime_error'",
        "  what():  [Rank 5] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=77, OpType=BROADCAST, "
        "Timeout(ms)=1800000) ran for 1800512 milliseconds before timing out.")
    assert result.verdict.kind.value == "hang"
    assert "rank 5" in result.verdict.summary


def test_terminate_whose_what_is_a_cuda_error_stays_a_crash() -> None:
    result = report(
        "[rank1]:terminate called after throwing an instance of 'c10::Error'",
        "[rank1]:  what():  CUDA error: an illegal memory access was encountered")
    assert result.verdict.kind.value == "crash" and result.verdict.culprit_ranks == (1,)


def test_dataloader_worker_killed_by_a_signal_is_that_signal_not_an_exception() -> None:
    line = parse_crash_line("RuntimeError: DataLoader worker (pid(s) 5120) is killed by signal: Segmentation fault.")
    assert line is not None and line.kind is CrashLineKind.FATAL_SIGNAL and line.signal == "SIGSEGV"
    result = report("[rank3]: RuntimeError: DataLoader worker (pid 77013) is killed by signal: Bus error.")
    assert (result.verdict.kind.value, result.verdict.culprit_ranks) == ("crash", (3,))
    assert "SIGBUS" in result.verdict.summary


def test_dataloader_worker_killed_with_slurms_oom_kill_record_is_a_sigkill_of_no_known_rank() -> None:
    result = report(
        "RuntimeError: DataLoader worker (pid 40021) is killed by signal: Killed.",
        "slurmstepd: error: *** STEP 88120.0 ON gpu-17 CANCELLED AT 2026-03-02T11:20:44 ***",
        "slurmstepd: error: Detected 2 oom_kill events in StepId=88120.0. Some of the step tasks have been "
        "OOM Killed.")
    assert result.verdict.kind.value == "crash" and result.verdict.culprit_ranks == ()
    assert "SIGKILL" in result.verdict.summary


def test_dataloader_worker_ended_by_the_teardown_is_collateral_and_an_unknown_name_is_left_alone() -> None:
    teardown = parse_crash_line("RuntimeError: DataLoader worker (pid 913) is killed by signal: Terminated.")
    assert teardown is not None and teardown.signal == "SIGTERM" and teardown.collateral
    unknown = parse_crash_line("RuntimeError: DataLoader worker (pid 913) is killed by signal: Unknown signal 42.")
    assert unknown is not None and unknown.kind is CrashLineKind.EXCEPTION
