"""triage report on logs people pasted into public bug reports (tests/realworld/cases/)."""

from __future__ import annotations

import functools

import pytest

from tests.realworld.scoring import ASSERTED_CONFIDENCE, Score, load_cases
from tests.realworld.scoring import evaluate as _evaluate

evaluate = functools.cache(_evaluate)   # each case is reported once, asserted twice

CASES = load_cases()
ASSERTED = [c for c in CASES if c.confidence in ASSERTED_CONFIDENCE]


@pytest.mark.parametrize("case", ASSERTED, ids=[c.name for c in ASSERTED])
def test_case_is_right(case) -> None:  # type: ignore[no-untyped-def]
    outcome = evaluate(case)
    assert outcome.score is Score.RIGHT, (
        f"{case.name}: expected {case.kind} {case.culprits}, got {outcome.score.value}: "
        f"{outcome.kind} {outcome.culprits} {outcome.summary!r} {outcome.stderr[-300:]!r}")


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_never_an_all_clear_or_a_crash(case) -> None:  # type: ignore[no-untyped-def]
    outcome = evaluate(case)
    assert outcome.score not in (Score.FALSE_ALL_CLEAR, Score.CRASHED), outcome
