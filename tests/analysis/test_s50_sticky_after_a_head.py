"""A runtime's message after a single word is a handler's or a logger's head, not a sentence of prose (rev50 F10):
'Caught CUDA error: an illegal memory access was encountered' with unlabeled steps after it read NO PROBLEM FOUND (the
error is sticky: the process that hit it cannot go on; the steps are another process's)."""

from __future__ import annotations

import pytest

from tests.helpers.report import report_lines as report


@pytest.mark.parametrize("line", [
    "Caught CUDA error: an illegal memory access was encountered",
    "Exception CUDA error: unspecified launch failure",
    "Got CUDA error: device-side assert triggered",
    "Caught: CUDA error: an illegal memory access was encountered (cudaErrorIllegalAddress)",
])
def test_a_sticky_error_after_a_handlers_word_is_no_all_clear(line: str) -> None:
    result = report("step 118 loss 1.21", line, "step 119 loss 1.20", "step 120 loss 1.19")
    assert result.verdict.kind.value == "crash", result.verdict.summary


@pytest.mark.parametrize("line", [
    "Known issue: you may see CUDA error: an illegal memory access was encountered on old drivers",
    "If you see CUDA error: unspecified launch failure here, update the driver",
])
def test_the_same_words_in_a_sentence_before_a_run_that_went_on_are_prose(line: str) -> None:
    result = report(line, "step 1 loss 2.0", "step 2 loss 1.9", "training complete")
    assert result.verdict.kind.value == "no_problem_found", result.verdict.summary
