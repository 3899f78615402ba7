"""Issue 23, point 4, held across the corpus: every verdict that names no culprit says which ranks the
text covers and the one thing that would settle it (what failed is its own first words)."""

from __future__ import annotations

import re

import pytest

from tests.realworld.scoring import Case, load_cases, run_report

_SETTLES = re.compile(r"would (?:settle|tell|name|show)")
_COVERS = re.compile(r"this input holds|not in this input|rank unknown|no line of this input")
CASES = load_cases()


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_a_verdict_without_a_culprit_says_what_would_settle_it(case: Case) -> None:
    _code, report, _ = run_report(case)
    if report is None or report["verdict"]["culprit_ranks"] or report["verdict"]["kind"] == "no_problem_found":
        pytest.skip("a culprit is named (or no verdict)")
    summary = report["verdict"]["summary"]
    assert _COVERS.search(summary), summary
    assert _SETTLES.search(summary), summary
