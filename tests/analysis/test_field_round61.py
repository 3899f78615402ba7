"""Classes of real pasted logs found by round 61 of the real-world corpus, each tested on a variant written here
(other programs, signals, pids and surrounding lines than the cases' own)."""

from __future__ import annotations

import pytest

from tests.helpers.report import report_lines as report
from triage.parsing.crashlog import CrashLineKind, parse_crash_line
from triage.parsing.rank_words import named_rank


# A PSM-style fabric library's signal handler prints the program's name and its pid before its words
# ("MP-Gadget:33262 terminated with signal 11 at PC=... SP=..."): the number was read as a rank by the host:rank
# shape (MP-Gadget/MP-Gadget#171's shape; other programs, pids and signals here)
@pytest.mark.parametrize("line", [
    "lmp_mpi:48213 terminated with signal 11 at PC=4a1f2c SP=7ffd3a2b1c40.  Backtrace:",
    "gmx_mpi:7 terminated with signal 7 at PC=7f00aa31c2d0 SP=7ffe0c1d2e30.",
])
def test_a_fabric_handlers_program_and_pid_name_no_rank(line: str) -> None:
    assert named_rank(line) is None
    result = report("Step 1200: dt = 0.0041", line)
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert result.verdict.culprit_ranks == (), result.verdict.summary
    assert "terminated with signal" in result.verdict.summary


def test_a_host_and_rank_before_other_words_is_still_a_rank() -> None:
    # the shape's own reading stays: a host and a rank before a failure of that rank
    assert named_rank("node07:7 terminated with signal 11") == 7
    assert named_rank("gpu-a17:3 exit status 137") == 3


# IQ-TREE's handler names the signal in its own capitals ("*** IQ-TREE CRASHES WITH SIGNAL ABORTED"): it was no
# known words, a failure of unknown place (iqtree/iqtree3#32's shape; every name its handler prints, other lines)
@pytest.mark.parametrize(("name", "signal"), [
    ("ABORTED", "SIGABRT"), ("ERRONEOUS NUMERIC", "SIGFPE"), ("ILLEGAL INSTRUCTION", "SIGILL"),
    ("SEGMENTATION FAULT", "SIGSEGV"), ("BUS ERROR", "SIGBUS"),
])
def test_iqtrees_crash_report_is_a_crash_by_its_signal(name: str, signal: str) -> None:
    line = f"ERROR: *** IQ-TREE CRASHES WITH SIGNAL {name}"
    parsed = parse_crash_line(line)
    assert parsed is not None and parsed.kind is CrashLineKind.FATAL_SIGNAL, line
    assert parsed.signal == signal
    result = report("Estimate model parameters (epsilon = 0.100)",
                    "ERROR: STACK TRACE FOR DEBUGGING:",
                    "ERROR: 1   funcAbort()",
                    "ERROR: ",
                    line,
                    "ERROR: *** For bug report please send to developers:",
                    "ERROR: ***    Log file: loci.log")
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert result.verdict.culprit_ranks == ()
    assert f"CRASHES WITH SIGNAL {name}" in result.verdict.summary, result.verdict.summary


def test_the_words_in_a_sentence_are_not_the_handlers_report() -> None:
    # lower case, no stars: a reporter's sentence about it, not the handler's line
    parsed = parse_crash_line("my run crashes with signal segmentation fault after an hour")
    assert parsed is None or parsed.signal != "SIGSEGV" or parsed.kind is not CrashLineKind.FATAL_SIGNAL
