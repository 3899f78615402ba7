"""Classes of real pasted logs found by round 43 of the real-world corpus, each tested on a variant written here
(other programs, messages, addresses and codes than the cases' own)."""

from __future__ import annotations

import pytest

from tests.helpers.report import report_lines as report
from triage.parsing.crashlog import parse_crash_line


# (1) a memory allocator's own fatal heap check aborts the process, whether or not the shell's "Aborted" line follows
# it in the paste; alone it was refused (motional/nuplan-devkit#59's `free(): invalid pointer`, sfzhang15/ATSS#73's
# old glibc record, TheLastBen/fast-stable-diffusion#2349's tcmalloc line): other messages and addresses here
@pytest.mark.parametrize("line", [
    "munmap_chunk(): invalid pointer",
    "free(): double free detected in tcache 2",
    "malloc(): corrupted top size",
    "corrupted size vs. prev_size",
    "double free or corruption (fasttop)",
    "*** Error in `/opt/conda/bin/python3': free(): invalid next size (fast): 0x00007f3c2c01a2b0 ***",
    "src/tcmalloc.cc:277] Attempt to free invalid pointer 0x7ffd819e4de8",
])
def test_an_allocators_heap_check_is_an_abort(line: str) -> None:
    crash = parse_crash_line(line)
    assert crash is not None and crash.signal == "SIGABRT", crash


def test_a_heap_check_alone_after_training_lines_is_a_crash_of_no_rank() -> None:
    result = report("epoch 12 | step 3400 | loss 0.4127 | lr 3.0e-4",
                    "epoch 12 | step 3450 | loss 0.4093 | lr 3.0e-4",
                    "munmap_chunk(): invalid pointer")
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert result.verdict.culprit_ranks == (), result.verdict


def test_words_about_the_heap_in_prose_are_no_abort() -> None:
    # the allocator prints its message at a line's start; a sentence that mentions one is not that message
    for line in ("we fixed a double free or corruption bug in the loader last week",
                 "note: free(): invalid pointer errors were seen with old drivers"):
        crash = parse_crash_line(line)
        assert crash is None or crash.signal is None, crash


# (2) a tool's record that its child ended with a negative code, the number of the signal that killed it (NVIDIA/
# DIGITS#1362's "ERROR: error code -9", read as an error the job went on from because the head of the log was pasted
# after it: a false all-clear); another signal and other lines after it here
def test_a_tools_negative_error_code_is_the_childs_signal() -> None:
    result = report("ERROR: error code -11",
                    "",
                    "Iteration 0, Testing net (#0)",
                    "Test net output #0: accuracy = 0.1",
                    "Iteration 100, loss = 2.301",
                    "Iteration 200, loss = 2.297")
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert "error code -11" in result.verdict.summary and result.verdict.culprit_ranks == (), result.verdict
    crash = parse_crash_line("ERROR: error code -11")
    assert crash is not None and crash.signal == "SIGSEGV", crash


@pytest.mark.parametrize("line", ["ERROR: error code -1", "error code -2", "exit code -9 was expected",
                                  "Request failed with error code -9 (EBADF)"])
def test_other_negative_codes_are_no_signal(line: str) -> None:
    # only a signal's number, alone at the line's end, is read as one (-1, -2 and errno-like codes are not)
    crash = parse_crash_line(line)
    assert crash is None or crash.signal is None, crash
