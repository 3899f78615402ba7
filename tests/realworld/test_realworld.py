"""triage report on logs people pasted into public bug reports (tests/realworld/cases/)."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
import yaml

from tests.realworld.scoring import ASSERTED_CONFIDENCE, Score, load_cases
from tests.realworld.scoring import evaluate as _evaluate

evaluate = functools.cache(_evaluate)   # each case is reported once, asserted twice

CASES = load_cases()
ASSERTED = [c for c in CASES if c.confidence in ASSERTED_CONFIDENCE]
KNOWN_GAPS: dict[str, str] = yaml.safe_load((Path(__file__).parent / "known_gaps.yaml").read_text()) or {}


def _param(case):  # type: ignore[no-untyped-def]
    marks = [pytest.mark.xfail(strict=True, reason=KNOWN_GAPS[case.name])] if case.name in KNOWN_GAPS else []
    return pytest.param(case, id=case.name, marks=marks)


def test_the_corpus_is_large_and_varied() -> None:
    assert len(CASES) >= 40
    per_repo: dict[str, int] = {}
    for case in CASES:
        repo = case.source.split("#")[0]
        per_repo[repo] = per_repo.get(repo, 0) + 1
    assert max(per_repo.values()) <= 3, per_repo
    assert len({c.kind for c in CASES}) >= 6
    assert set(KNOWN_GAPS) <= {c.name for c in CASES}, set(KNOWN_GAPS) - {c.name for c in CASES}


@pytest.mark.parametrize("case", [_param(c) for c in ASSERTED])
def test_case_is_right(case) -> None:  # type: ignore[no-untyped-def]
    outcome = evaluate(case)
    assert outcome.score is Score.RIGHT, (
        f"{case.name}: expected {case.kind} {case.culprits}, got {outcome.score.value}: "
        f"{outcome.kind} {outcome.culprits} {outcome.summary!r} {outcome.stderr[-300:]!r}")


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_never_an_all_clear_or_a_crash(case) -> None:  # type: ignore[no-untyped-def]
    outcome = evaluate(case)
    assert outcome.score not in (Score.FALSE_ALL_CLEAR, Score.CRASHED), outcome
