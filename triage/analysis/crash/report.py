"""The crash report of ``triage postmortem`` (verdict kind ``crash``): the first crash is the root
cause, the ranks that went down after it are collateral; and the crash findings ``triage report``
adds under its verdict."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from triage.analysis.crash.classify import CrashClassification, CrashKind
from triage.analysis.crash.records import CrashAnalysis, OtherRank
from triage.analysis.ranks import rank_word
from triage.model import Finding, RankState, RankSummary, Report, Verdict, VerdictKind
from triage.model.evidence import Evidence


def crash_analysis_report(found: CrashAnalysis, evidence: Evidence) -> Report:
    """The crash report of ``triage postmortem`` from its crashes, classified once by
    :func:`triage.analysis.crash.records.analyse_crashes`: the earliest crash is the root cause."""
    return crash_report(found.classifications, found.others, sources=evidence.sources, problems=evidence.skipped)


def crash_findings(classifications: list[CrashClassification] | tuple[CrashClassification, ...]) -> list[Finding]:
    """One Finding per crash, earliest first; the earliest is the root cause, the rest collateral."""
    ordered = sorted(classifications, key=lambda c: (c.time is None, c.time or 0.0))
    findings = []
    for index, item in enumerate(ordered):
        detail = item.summary if index == 0 else f"{item.summary} (collateral: after the first failure)"
        findings.append(Finding(kind=item.kind.value, ranks=() if item.rank is None else (item.rank,),
                                detail=detail, evidence=item.evidence, time=item.time, root_cause=index == 0))
    return findings


def classification_json(item: CrashClassification) -> dict[str, Any]:
    return {
        "kind": item.kind.value, "signal": item.signal, "rank": item.rank, "host": item.host, "pid": item.pid,
        "time": item.time, "time_source": item.time_source, "summary": item.summary, "next_step": item.next_step,
        "faulting_thread": item.faulting_thread,
        "faulting_role": item.faulting_role.value if item.faulting_role else None,
        "faulting_name": item.faulting_name, "crash_frame": item.crash_frame, "library": item.library,
        "top_frames": list(item.top_frames), "python_frames": list(item.python_frames),
        "python_method": item.python_method, "stack_top": item.stack_top,
        "threads": [{"lwp": t.lwp, "role": t.role.value, "name": t.name, "top": t.top} for t in item.threads],
        "kernel_events": list(item.kernel_events), "notes": list(item.notes), "evidence": list(item.evidence),
    }


def _state(item: CrashClassification) -> RankState:
    return RankState.EXITED_ERROR if item.kind is CrashKind.EXCEPTION_EXIT else RankState.CRASHED


def _verdict(ordered: list[CrashClassification], problems: tuple[str, ...]) -> Verdict:
    if not ordered:
        reason = problems[0] if problems else "no core could be read"
        return Verdict(VerdictKind.CRASH, f"no crash could be explained: {reason}")
    root = ordered[0]
    kind = VerdictKind.EXCEPTION if root.kind is CrashKind.EXCEPTION_EXIT else VerdictKind.CRASH
    summary = root.summary
    if len(ordered) > 1:
        summary = summary.replace(" crashed: ", " crashed first: ", 1) + f" [first of {len(ordered)} failures]"
    culprits = () if root.rank is None else (root.rank,)
    return Verdict(kind, summary, culprit_ranks=culprits)


def _collateral(others: tuple[OtherRank, ...], root: CrashClassification | None) -> list[Finding]:
    if not others or root is None:
        return []
    who = f"rank {root.rank}" if root.rank is not None else f"pid {root.pid}"
    findings = []
    for how in sorted({o.how for o in others}):
        ranks = tuple(sorted(o.rank for o in others if o.how == how))
        findings.append(Finding(kind="collateral", ranks=ranks,
                                detail=f"{rank_word(ranks)}: {how} after {who} crashed (collateral)"))
    return findings


def crash_report(classifications: Iterable[CrashClassification], others: tuple[OtherRank, ...] = (),
                 sources: tuple[str, ...] = (), problems: tuple[str, ...] = ()) -> Report:
    """The ``triage.report/1`` Report of a set of crashes: the earliest is the root cause."""
    classifications = list(classifications)
    findings = crash_findings(classifications)
    ordered = sorted(classifications, key=lambda c: (c.time is None, c.time or 0.0))
    root = ordered[0] if ordered else None
    ranks = [RankSummary(c.rank, c.host, c.pid, _state(c), stack_top=c.stack_top)
             for c in ordered if c.rank is not None]
    ranks += [RankSummary(o.rank, o.host, o.pid, o.state) for o in others]
    steps = [root.next_step] if root else []
    steps += [f"note: {n}" for n in (root.notes if root else ())]
    steps += [f"note: {p}" for p in problems]
    evidence = tuple(dict.fromkeys(e for c in ordered for e in c.evidence))
    extra: dict[str, Any] = {"postmortem": [classification_json(c) for c in ordered]}
    if len(ordered) > 1 and root is not None:
        extra["first_crash"] = {"rank": root.rank, "pid": root.pid, "time": root.time,
                                "core": root.evidence[0] if root.evidence else None}
    if problems:
        extra["problems"] = list(problems)
    return Report(
        verdict=_verdict(ordered, problems), findings=tuple(findings + _collateral(others, root)),
        ranks=tuple(sorted(ranks, key=lambda r: r.rank)), next_steps=tuple(dict.fromkeys(steps)),
        evidence=evidence, sources=sources, extra=extra,
    )
