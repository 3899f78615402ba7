"""analyze() is the one entry point of `triage postmortem` too: crash-only evidence (cores and rank logs)
becomes the crash report, the earliest crash first, the ranks that did not crash as collateral.
(Real cores through `triage postmortem` are in tests/postmortem.)"""

from __future__ import annotations

from triage.analysis.analyze import analyze, analyze_crashes
from triage.analysis.crash import analyse_crashes, crash_report
from triage.load.crash_records import logs_record, rank_logs
from triage.model import RankState, VerdictKind
from triage.model.evidence import CrashRecord, Evidence, KernelEvent

SEGV = """Fatal Python error: Segmentation fault

Current thread 0x00007f0a1b2c3740 (most recent call first):
  File "/job/train.py", line 42 in forward
  File "/job/train.py", line 90 in main
"""
TERM = """Fatal Python error: Terminated

Current thread 0x00007f0a1b2c3740 (most recent call first):
  File "/job/train.py", line 77 in wait
"""


def _logs(rank: int, text: str, pid: int, exit_info: dict[str, object] | None = None) -> CrashRecord:
    logs = rank_logs(rank, "node1", pid, text, text, faulthandler_mtime=1_700_000_000.0 + rank, exit_info=exit_info,
                     evidence=(f"/run/node1/rank{rank}/faulthandler.log",))
    return logs_record(logs)


def test_no_usable_core_is_still_a_crash_report_naming_the_problem() -> None:
    report = analyze(Evidence(crashes_only=True, sources=("/tmp/core.1",),
                              skipped=("/tmp/core.1: not an ELF core file",)))
    assert report.verdict.kind is VerdictKind.CRASH
    assert report.verdict.summary == "no crash could be explained: /tmp/core.1: not an ELF core file"
    assert report.extra["problems"] == ["/tmp/core.1: not an ELF core file"]


def test_crash_only_evidence_is_the_crash_report_with_the_collateral() -> None:
    evidence = Evidence(crashes=(_logs(1, SEGV, 101), _logs(0, TERM, 100), _logs(2, "", 102, {"how": "exit",
                                                                                              "exit_code": 0})),
                        crashes_only=True, sources=("/run",),
                        kernel_events=(KernelEvent("segfault", None, 101, "python[101]: segfault at 0"),))
    report = analyze(evidence)
    found = analyse_crashes(evidence)
    assert report == crash_report(found.classifications, found.others, sources=("/run",))
    assert report.verdict.culprit_ranks == (1,)
    assert any("forward" in frame for frame in found.classifications[0].python_frames)
    states = {r.rank: r.state for r in report.ranks}
    assert states == {0: RankState.CRASHED, 1: RankState.CRASHED, 2: RankState.EXITED_OK}
    assert [f.detail for f in report.findings if f.kind == "collateral"] == [
        "rank 2: exited 0 after rank 1 crashed (collateral)",
        "rank 0: torn down (Terminated) after rank 1 crashed (collateral)",
    ]


def test_the_same_records_without_the_flag_go_through_the_job_analysis() -> None:
    """`triage report` never takes the crash-report path by accident."""
    report = analyze(Evidence(crashes=(_logs(1, SEGV, 101),)))
    assert "postmortem" not in report.extra


def test_analyze_crashes_is_what_analyze_reports_with_the_classifications_it_used() -> None:
    """`triage postmortem` takes both from one pass: the report and the classifications it was built from."""
    evidence = Evidence(crashes=(_logs(1, SEGV, 101), _logs(0, TERM, 100)), crashes_only=True, sources=("/run",))
    report, found = analyze_crashes(evidence)
    assert report == analyze(evidence)
    assert found == analyse_crashes(evidence)
    assert [c.rank for c in found.classifications] == [1] and [o.rank for o in found.others] == [0]
