"""The stop decision fixes the verdict (pure analysis): what happens after it is collateral."""

from __future__ import annotations

import json
import signal
from dataclasses import replace

from tests.helpers.evidence import hang
from triage.analysis.analyze import analyze
from triage.load.stop_record import load_stop, read_stop, verdict_from_json
from triage.model import Verdict, VerdictKind
from triage.model.evidence import ExitInfo, StopDecision
from triage.schemas import STOP_SCHEMA

STOP_T = 1_000.0


def _mismatch_then_segv(stop: StopDecision | None, exit_time: float | None):  # type: ignore[no-untyped-def]
    evidence = hang(4, 3, 4, {"op": "broadcast"})
    segv = ExitInfo(signal=int(signal.SIGSEGV), signal_name="SIGSEGV", time=exit_time,
                    message="Fatal Python error: Segmentation fault", evidence=("run/node00/ranks/0/faulthandler.log",))
    ranks = tuple(replace(r, exit=segv, alive=True) if r.rank == 0 else r for r in evidence.ranks)
    return replace(evidence, ranks=ranks, stop=stop)


def _stop(verdict: Verdict | None) -> StopDecision:
    return StopDecision(time=STOP_T, host="node1", reason="the hang is certain: rank 3 blocked", verdict=verdict)


def test_without_a_stop_record_the_segfault_is_the_verdict() -> None:
    report = analyze(_mismatch_then_segv(None, STOP_T + 1))
    assert report.verdict.kind is VerdictKind.CRASH


def test_a_segfault_after_the_stop_is_collateral_and_the_mismatch_stays() -> None:
    decided = analyze(hang(4, 3, 4, {"op": "broadcast"})).verdict
    assert decided.kind is VerdictKind.COLLECTIVE_MISMATCH
    for exit_time in (STOP_T + 0.4, None):       # None: faulthandler gives no time; the rank was alive at the stop
        report = analyze(_mismatch_then_segv(_stop(decided), exit_time))
        assert report.verdict == decided
        after = [f for f in report.findings if f.kind == "after_stop"]
        assert [f.ranks for f in after] == [(0,)]
        assert "SIGSEGV" in after[0].detail and "after triage stopped the job" in after[0].detail
        assert not any(f.root_cause and "SIGSEGV" in f.detail for f in report.findings)
        assert any(f.kind == "stop" for f in report.findings)


def test_a_failure_before_the_stop_still_counts() -> None:
    decided = analyze(hang(4, 3, 4, {"op": "broadcast"})).verdict
    report = analyze(_mismatch_then_segv(_stop(decided), STOP_T - 5))
    assert not [f for f in report.findings if f.kind == "after_stop"]
    assert any("SIGSEGV" in f.detail for f in report.findings)


def test_a_hang_stop_never_ends_with_no_problem_found() -> None:
    evidence = hang(2, None, 4, {})          # every rank waits in the same collective
    healthy = replace(evidence, ranks=tuple(replace(r, collectives=r.collectives[:-1]) for r in evidence.ranks))
    assert analyze(healthy).verdict.kind is VerdictKind.NO_PROBLEM_FOUND
    no_problem = Verdict(VerdictKind.NO_PROBLEM_FOUND, "NO PROBLEM FOUND: ...")
    report = analyze(replace(healthy, stop=_stop(no_problem)))
    assert report.verdict.kind is VerdictKind.HANG
    assert "rank 3 blocked" in report.verdict.summary
    assert analyze(replace(healthy, stop=_stop(None))).verdict.kind is VerdictKind.HANG


def test_stop_json_round_trip(tmp_path) -> None:  # type: ignore[no-untyped-def]
    verdict = analyze(hang(4, 3, 4, {"op": "broadcast"})).verdict
    assert verdict_from_json(verdict.to_json()) == verdict
    for host, when in (("node2", 7.0), ("node1", 5.0)):
        (tmp_path / host).mkdir()
        (tmp_path / host / "stop.json").write_text(json.dumps(
            {"schema": STOP_SCHEMA, "time": when, "host": host, "reason": "r", "verdict": verdict.to_json()}))
    skipped: list[str] = []
    stop = load_stop(tmp_path, skipped)
    assert stop is not None and stop.host == "node1" and stop.time == 5.0 and stop.verdict == verdict
    (tmp_path / "node1" / "stop.json").write_text('{"schema": "other"}')
    assert read_stop(tmp_path / "node1" / "stop.json", skipped) is None and skipped
