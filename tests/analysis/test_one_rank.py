"""A run of one rank: it matches nothing, so no all-clear says its collectives "match", and no line
says "1 ranks"."""

from __future__ import annotations

import pytest

from tests.helpers.evidence import coll, rank
from triage.analysis.analyze import analyze
from triage.analysis.ranks import count_ranks
from triage.model import VerdictKind
from triage.model.evidence import Evidence, ExitInfo


@pytest.mark.parametrize("finished", [True, False])
@pytest.mark.parametrize("host", ["gpu-h100-1", "node00"])
@pytest.mark.parametrize("calls", [1, 40])
def test_one_rank_that_did_not_fail_is_said_plainly(finished: bool, host: str, calls: int) -> None:
    ok = ExitInfo(exit_code=0, evidence=("x",)) if finished else None
    item = rank(0, [coll(0, s) for s in range(1, calls + 1)], host=host, exit=ok)
    report = analyze(Evidence(ranks=(item,), world_size=1, finished_cleanly=finished, complete=True))
    summary = report.verdict.summary
    assert report.verdict.kind is VerdictKind.NO_PROBLEM_FOUND, summary
    assert "1 rank;" in summary and "no collective to compare" in summary, summary
    assert "1 ranks" not in summary and "match" not in summary
    assert ("it finished" in summary) is finished


@pytest.mark.parametrize(("count", "words"), [(0, "0 ranks"), (1, "1 rank"), (2, "2 ranks"), (512, "512 ranks")])
def test_count_ranks(count: int, words: str) -> None:
    assert count_ranks(count) == words
