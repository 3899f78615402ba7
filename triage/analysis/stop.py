"""The live agent's stop decision (``<host>/stop.json``) fixes the verdict (pure).

What happens after the decision (ranks that exit, are signalled, crash or print a traceback while
the job goes down) is the stop's doing: it is shown as collateral "after triage stopped the job",
never as a root cause or a separate failure. A job stopped for a hang never reads NO PROBLEM FOUND.
"""

from __future__ import annotations

import time as _time
from dataclasses import replace

from triage.analysis.ranks import rank_word
from triage.analysis.verdict import headline
from triage.model import Finding, Verdict, VerdictKind
from triage.model.evidence import Event, Evidence, ExitInfo, RankEvidence, StopDecision

AFTER_STOP = "after triage stopped the job"


def _after(info: ExitInfo, alive_at_stop: bool | None, stop: StopDecision) -> bool:
    """An exit after the stop: its time says so, or (no time: faulthandler prints none) the rank was
    alive in the evidence the agent took for its decision."""
    if info.time is not None:
        return info.time >= stop.time
    return alive_at_stop is True


def split_at_stop(evidence: Evidence) -> tuple[Evidence, list[Finding]]:
    """Evidence as it stood at the stop decision, and the collateral of the stop as findings (one
    per kind of end). Without a stop decision, the evidence as it is."""
    stop = evidence.stop
    if stop is None:
        return evidence, []
    ranks: list[RankEvidence] = []
    ends: dict[str, list[RankEvidence]] = {}
    for item in evidence.ranks:
        if item.exit is not None and not item.exit.ok and _after(item.exit, item.alive, stop):
            ends.setdefault(_end(item.exit), []).append(item)
            item = replace(item, exit=None)
        ranks.append(item)
    events = [e for e in evidence.events if e.time is None or e.time < stop.time]
    later = [e for e in evidence.events if e.time is not None and e.time >= stop.time]
    findings = [_end_finding(how, group, stop) for how, group in sorted(ends.items())]
    findings.extend(_event_finding(e, stop) for e in later)
    return replace(evidence, ranks=tuple(ranks), events=tuple(events)), findings


def _end(info: ExitInfo) -> str:
    if info.signal is not None:
        return f"killed by {info.signal_name or f'signal {info.signal}'}"
    if info.message:
        return f"exited ({info.message.splitlines()[0][:160]})"
    return f"exited with code {info.exit_code}"


def _end_finding(how: str, group: list[RankEvidence], stop: StopDecision) -> Finding:
    ranks = tuple(sorted(r.rank for r in group))
    evidence = tuple(p for r in group for p in (r.exit.evidence if r.exit else ()))[:6]
    times = [r.exit.time for r in group if r.exit is not None and r.exit.time is not None]
    return Finding("after_stop", ranks, f"{rank_word(list(ranks))} {how} {AFTER_STOP} ({_when(stop)}; collateral)",
                   evidence, min(times) if times else None, False)


def _event_finding(event: Event, stop: StopDecision) -> Finding:
    ranks = (event.rank,) if event.rank is not None else ()
    return Finding("after_stop", ranks, f"{event.kind.value}: {event.detail[:200]} ({AFTER_STOP}; collateral)",
                   event.evidence, event.time, False)


def _when(stop: StopDecision) -> str:
    return f"{stop.host} decided at {_time.strftime('%H:%M:%S', _time.localtime(stop.time))}"


def stop_finding(stop: StopDecision) -> Finding:
    culprits = stop.verdict.culprit_ranks if stop.verdict is not None else ()
    return Finding("stop", culprits, f"triage stopped the job: {_when(stop)}: {stop.reason[:300]}",
                   (stop.path,) if stop.path else (), stop.time, False)


def fixed_verdict(stop: StopDecision | None, verdict: Verdict) -> Verdict:
    """The verdict the agent printed when it stopped the job; a job stopped for a hang never ends
    with NO PROBLEM FOUND."""
    if stop is None:
        return verdict
    if stop.verdict is not None and stop.verdict.kind is not VerdictKind.NO_PROBLEM_FOUND:
        return stop.verdict
    if verdict.kind is VerdictKind.NO_PROBLEM_FOUND:
        reason = stop.reason.removeprefix("the hang is certain: ")
        return headline.verdict(VerdictKind.HANG, f"triage stopped the job: {reason}", limit=600)
    return verdict


__all__ = ["AFTER_STOP", "fixed_verdict", "split_at_stop", "stop_finding"]
