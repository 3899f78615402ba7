"""Session 57 (round 80's enzo-project/enzo-e#92): Charm++'s signal handler's record, "------------- Processor 1
Exiting: Caught Signal ------------" / "Reason: Segmentation fault" (CmiAbortHelper, src/arch/*/machine.C), with its
stack and HPE MPT's "MPT ERROR: Rank 1(g:1) is aborting with error code 1" after it, read as rank 1's exception (MPT's
abort record); now processor N's death by the signal its reason names (triage.parsing.solver_errors), with the
program's own frame of its stack; MPT's abort is its teardown."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import report_log

STACK = ("[3] Stack Traceback:\n"
         "  [3:0] namd2 0x5c1d2a CmiAbortHelper(char const*, char const*, char const*, int, int)\n"
         "  [3:1] libc.so.6 0x7f3a1c03e520 \n"
         "  [3:2] namd2 0x8a31f0 ComputeNonbondedUtil::calc_pair(nonbonded*)\n"
         "  [3:3] namd2 0x6d2858 CsdScheduleForever\n")


@pytest.mark.parametrize(("head", "signal"), [
    ("------------- Processor 3 Exiting: Caught Signal ------------\nReason: Segmentation fault\n", "sigsegv"),
    # netlrts' and verbs' own words, and an older release's "Signal:" line
    (("------------- Processor 3 Exiting: Caught Signal ------------\nReason: floating point exception\n"
     "Suggestion: Check for integer or floating-point division by zero.\n"), "sigfpe"),
    ("------------- Processor 3 Exiting: Caught Signal ------------\nSignal: segmentation violation\n", "sigsegv"),
    ("------- Partition 0 Processor 3 Exiting: Caught Signal ------\nReason: Bus error\n", "sigbus"),
])
def test_charm_caught_signal_is_the_processors_crash(head: str, signal: str, tmp_path: Path) -> None:
    text = ("Charm++> Running in non-SMP mode: 8 processes (PEs)\n" + head + STACK
            + "MPT ERROR: Rank 3(g:3) is aborting with error code 1\n")
    _code, got = report_log(text, tmp_path)
    verdict = got["verdict"]
    assert verdict["kind"] == "crash" and signal.upper() in verdict["summary"], verdict
    assert verdict["culprit_ranks"] == [3], verdict
    assert "calc_pair" in verdict["summary"], verdict


def test_a_worker_thread_of_an_smp_build_is_no_rank(tmp_path: Path) -> None:
    text = ("Charm++> Running in SMP mode: 2 processes, 4 worker threads (PEs) + 1 comm threads per process, 8 PEs "
            "total\n------------- Processor 5 Exiting: Caught Signal ------------\nReason: Segmentation fault\n")
    _code, got = report_log(text, tmp_path)
    verdict = got["verdict"]
    assert verdict["kind"] == "crash", verdict
    assert 5 not in (verdict["culprit_ranks"] or []), verdict


def test_cmiabort_with_a_partition_is_read_too(tmp_path: Path) -> None:
    text = ("------- Partition 1 Processor 2 Exiting: Called CmiAbort ------\n"
            "Reason: Could not open the restart file\n")
    _code, got = report_log(text, tmp_path)
    verdict = got["verdict"]
    assert verdict["kind"] == "exception" and verdict["culprit_ranks"] == [2], verdict
