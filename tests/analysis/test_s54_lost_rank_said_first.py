"""A rank's own error line before another rank's fatal line that names it as the one lost (fix54a item 6): rank 2's
``ERROR: NaN detected ...`` (its own words, read by no reader: a rank's line of no reader's words is no failure) was
passed over for rank 0's ``FATAL ERROR: worker 2 stopped responding``; the first failure, by order and by whom rank
0's line names, is rank 2's (triage.load.logs.own_words.lost_rank_said_first), rank 0's what it saw of it."""

from __future__ import annotations

import pytest

from triage.analysis.analyze import analyze
from triage.load.inputs import load_log_texts
from triage.model import Report


def report(lines: list[str]) -> Report:
    return analyze(load_log_texts([("job.log", "\n".join(lines) + "\n")]))


def prefixed(style: str, lines: list[tuple[int, str]]) -> list[str]:
    return [style.format(r=r) + text for r, text in lines]


@pytest.mark.parametrize("style", ["{r}: ", "[rank{r}]: "])
@pytest.mark.parametrize(("own", "namer"), [
    ("ERROR: NaN detected in field 'pressure' at step 401", "FATAL ERROR: worker 2 stopped responding"),
    ("Error: cannot open restart file chk/step400.h5", "FATAL ERROR: lost connection to rank 2"),
])
def test_the_named_ranks_own_line_is_the_first_failure(style: str, own: str, namer: str) -> None:
    lines = prefixed(style, [(r, "step 400 loss 0.3") for r in range(4)] + [(2, own), (0, namer)])
    result = report(lines)
    assert result.verdict.kind.value == "exception" and result.verdict.culprit_ranks == (2,), result.verdict.summary
    assert own in result.verdict.summary


def test_a_named_rank_that_went_on_after_its_error_line_is_not_taken() -> None:
    lines = prefixed("{r}: ", [(r, "step 400 loss 0.3") for r in range(4)] + [
        (2, "ERROR: NaN detected in field 'pressure' at step 401"), (2, "step 402 loss 0.29"),
        (0, "FATAL ERROR: worker 2 stopped responding")])
    result = report(lines)
    assert result.verdict.culprit_ranks != (2,) or "NaN" not in result.verdict.summary


def test_a_named_rank_without_its_own_error_line_stays_the_namers() -> None:
    lines = prefixed("{r}: ", [(r, "step 400 loss 0.3") for r in range(4)] + [
        (0, "FATAL ERROR: worker 2 stopped responding")])
    result = report(lines)
    assert "worker 2 stopped responding" in result.verdict.summary
