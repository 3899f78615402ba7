"""Text from inputs cannot drive the terminal: control characters become visible escapes."""

from __future__ import annotations

from triage.model import Finding, RankState, RankSummary, Report, Verdict, VerdictKind
from triage.report.sanitize import terminal_safe, visible


def test_visible_escapes_controls_but_keeps_newlines_tabs_and_unicode() -> None:
    assert visible("a\x1b]0;x\x07b") == "a\\x1b]0;x\\x07b"
    assert visible("line\nnext\tcol é 日本") == "line\nnext\tcol é 日本"
    assert visible("\x9b31m") == "\\x9b31m"
    assert visible("\r\x00\x7f") == "\\x0d\\x00\\x7f"


def test_terminal_safe_walks_every_string_of_a_report_and_keeps_enums() -> None:
    evil = "\x1b[2Jpg"
    report = Report(
        verdict=Verdict(kind=VerdictKind.HANG, summary=f"hang in {evil}", culprit_ranks=(1,)),
        findings=(Finding(kind="x", detail=evil, ranks=(1,)),),
        ranks=(RankSummary(rank=1, host=evil, pid=None, state=RankState.IN_COLLECTIVE),),
        extra={"groups": {evil: [evil]}},
    )
    clean = terminal_safe(report)
    assert "\x1b" not in repr(clean)
    assert clean.verdict.kind is VerdictKind.HANG and clean.ranks[0].state is RankState.IN_COLLECTIVE
    assert clean.verdict.culprit_ranks == (1,)
    assert clean.findings[0].detail == "\\x1b[2Jpg"
    assert report.findings[0].detail == evil          # the input report is not changed
