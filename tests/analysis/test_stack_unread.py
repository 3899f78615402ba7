"""A rank that was sampled but whose stack no collector could read (py-spy and pystack failed, as the bundle's
manifest records): triage's own failure to read it is never the verdict. It is not missing, a finding says its
stack is not recorded and why, and an all-clear says what that rank was doing is not recorded."""

from __future__ import annotations

from dataclasses import replace

from triage.analysis.analyze import analyze
from triage.model import RankState, VerdictKind
from triage.model.evidence import Evidence, ExitInfo, RankEvidence

UNREAD = "pyspy failed (Error: Failed to find python version from target process); pystack timeout"


def _ranks(unread: str | None) -> tuple[RankEvidence, ...]:
    sleeping = RankEvidence(rank=0, host="n0", pid=10, stack=("train.py:9 in main",), stack_top="train.py:9 in main",
                            in_collective=False, alive=True)
    other = RankEvidence(rank=1, host="n1", pid=11, alive=True, stack_unread=unread)
    return sleeping, other


def test_an_unread_rank_is_not_missing_and_said_not_recorded() -> None:
    report = analyze(Evidence(ranks=_ranks(UNREAD), world_size=2, complete=True))
    verdict = report.verdict
    assert verdict.kind is VerdictKind.NO_PROBLEM_FOUND, verdict
    assert verdict.summary.endswith("what rank 1 (n1) was doing is not recorded: triage could not read its stack "
                                    "(pyspy failed, pystack timeout)"), verdict.summary
    assert not any(f.kind == VerdictKind.MISSING_RANK.value for f in report.findings)
    [finding] = [f for f in report.findings if f.kind == "stack_not_recorded"]
    assert finding.ranks == (1,) and UNREAD in finding.detail and not finding.root_cause


def test_a_rank_never_sampled_is_still_missing() -> None:
    report = analyze(Evidence(ranks=_ranks(None)[:1], world_size=2, complete=True))
    assert report.verdict.kind is VerdictKind.MISSING_RANK and report.verdict.culprit_ranks == (1,)
    assert not any(f.kind == "stack_not_recorded" for f in report.findings)


def test_an_unread_rank_with_other_evidence_adds_nothing() -> None:
    """Its Flight Recorder or exit record tells what it did: the unread stack is no news."""
    sleeping, other = _ranks(UNREAD)
    ended = replace(other, alive=False, exit=ExitInfo(exit_code=0, evidence=("exit.json",)))
    report = analyze(Evidence(ranks=(sleeping, ended), world_size=2, complete=True))
    assert not any(f.kind == "stack_not_recorded" for f in report.findings)
    assert "not recorded: triage could not read" not in report.verdict.summary
    assert {r.rank: r.state for r in report.ranks}.get(1) is not RankState.NO_DATA
