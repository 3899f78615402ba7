"""A test harness's own summary that every test passed, after a code's error words that a test expected (Catch2's
``All tests passed (N assertions in M test cases)``, Chapel's start_test ``[Summary: #Successes = N | #Failures = 0
...]``, pytest's ``=== N passed in Xs ===``), is the run ending well: no failure. The same summary with a failure in it
is not."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import failure_verdict, report_log

MFEM = ("MFEM abort: Invalid face orientation for this element\n ... in function: void mfem::Mesh::Check()\n"
        " ... in file: fem/mesh.cpp:88\n")
CHAPEL = "arrays/bad.chpl:12: error: halt reached - array index out of bounds\n"


@pytest.mark.parametrize("words", [MFEM, CHAPEL])
@pytest.mark.parametrize("passed", [
    "=" * 79 + "\nAll tests passed (57 assertions in 4 test cases)\n",
    "[Summary: #Successes = 9 | #Failures = 0 | #Futures = 1 | #Warnings = 0 ]\n[Done with tests - Sat Nov 28]\n",
    "========================= 31 passed, 2 skipped in 12.40s =========================\n",
])
def test_an_expected_error_then_every_test_passed_is_no_failure(words: str, passed: str, tmp_path: Path) -> None:
    code, out = report_log("$ ./run_tests\nFilters: [mesh]\n" + words + "\n" + passed, tmp_path)
    assert code == 0, out.get("verdict", out)


@pytest.mark.parametrize("failed", [
    "test cases:  4 |  3 passed | 1 failed\nassertions: 57 | 56 passed | 1 failed\n",
    "[Summary: #Successes = 8 | #Failures = 1 | #Futures = 0 ]\n",
    "==================== 1 failed, 30 passed in 12.40s ====================\n",
    "",
])
def test_the_error_with_a_failed_summary_or_none_stays_a_failure(failed: str, tmp_path: Path) -> None:
    failure_verdict("$ ./run_tests\n" + MFEM + "\n" + failed, tmp_path)
