"""Collectives that were not recorded are said to be so, never said to match (pure analysis)."""

from __future__ import annotations

from triage.analysis.analyze import analyze
from triage.model import VerdictKind
from triage.model.evidence import Evidence, ExitInfo, RankEvidence

NOTE = "torch 2.4.1 has no Flight Recorder for gloo (no _dump_fr_trace_json)"


def _finished(rank: int) -> RankEvidence:
    return RankEvidence(rank=rank, host="vm", world_size=2, exit=ExitInfo(exit_code=0, time=1.0))


def test_a_finished_run_without_records_says_they_were_not_recorded() -> None:
    evidence = Evidence(ranks=(_finished(0), _finished(1)), world_size=2, finished_cleanly=True,
                        recorder_notes=(NOTE,))
    verdict = analyze(evidence).verdict
    assert verdict.kind is VerdictKind.NO_PROBLEM_FOUND
    assert verdict.summary == ("NO PROBLEM FOUND: the run finished and no rank failed; collectives not recorded: "
                               f"{NOTE}; dtype and count mismatches cannot be ruled out")
    assert "all match" not in verdict.summary


def test_without_a_reason_the_missing_dump_is_the_reason() -> None:
    evidence = Evidence(ranks=(_finished(0), _finished(1)), world_size=2, finished_cleanly=True)
    summary = analyze(evidence).verdict.summary
    assert "collectives not recorded: no Flight Recorder dump; dtype and count mismatches" in summary
