"""Julia's Distributed (the master prints each worker's output as ``      From worker N:\t<line>``): a worker's own
fatal signal report behind that prefix is the crash, told as that worker's (its id is no rank), not the master's
``ProcessExitedException`` that follows it, nor a failure of no known words."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.report import failure_verdict


def test_a_workers_segfault_heads_not_the_masters_process_exited(tmp_path: Path) -> None:
    text = ("      From worker 2:\t[ Info: step 10 loss 0.31\n"
            "      From worker 3:\t[ Info: step 10 loss 0.29\n"
            "      From worker 2:\t\n"
            "      From worker 2:\tsignal (11): Segmentation fault\n"
            "      From worker 2:\tin expression starting at none:0\n"
            "Worker 2 terminated.\n"
            "ERROR: LoadError: ProcessExitedException(2)\n")
    verdict = failure_verdict(text, tmp_path)
    assert verdict["kind"] == "crash" and "Segmentation fault" in verdict["summary"], verdict
    assert verdict["culprit_ranks"] == [], verdict
    assert "Julia's worker 2" in verdict["summary"] and "not a rank" in verdict["summary"], verdict


def test_a_workers_abort_pasted_with_spaces_for_its_tab(tmp_path: Path) -> None:
    # RelationalAI-oss/XUnit.jl#4's shape, other words: the worker's assertion, its abort, the others finishing
    text = ("      From worker 4:    ~> Running io/reader test-case (on pid=4)...\n"
            "      From worker 4:    julia: /src/julia/src/gc.c:211: gc_mark: Assertion `x != NULL' failed.\n"
            "      From worker 4:\n"
            "      From worker 4:    signal (6): Aborted\n"
            "      From worker 2:    Process 2 is done with handling task after running 12 tasks (out of 40)\n")
    verdict = failure_verdict(text, tmp_path)
    assert verdict["kind"] == "crash" and "Aborted" in verdict["summary"], verdict
    assert "Julia's worker 4" in verdict["summary"], verdict
