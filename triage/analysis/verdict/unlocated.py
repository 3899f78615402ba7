"""The last guard before the all-clear (pure): failure evidence in the input means no "no problem
found", even without a culprit."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from triage.analysis.failures import Failure
from triage.analysis.partial import RANK_UNKNOWN, coverage_line
from triage.analysis.ranks import rank_word
from triage.analysis.settle import SETTLE_FIRST
from triage.analysis.verdict import headline
from triage.load.logs.line_events import UNFINISHED_TRACEBACK
from triage.model import Finding, Verdict, VerdictKind
from triage.model.evidence import Event, EventKind, Evidence, ExitInfo
from triage.parsing.rendezvous import STORE_WAIT_DETAIL

# (the failure kinds of a line of no rank that name no other kind than an exception: a Python traceback, cut or
# whole, whose process raised; never a network error, a CUDA error, a signal or words of no reader)
_RAISED_KINDS = (None, "exception")

_FAILURE_EVENTS = (EventKind.WATCHDOG_TIMEOUT, EventKind.NCCL_WARN, EventKind.XID, EventKind.SEGFAULT,
                   EventKind.OOM, EventKind.LAUNCHER_FAILURE, EventKind.EXCEPTION, EventKind.CRASH_ANALYSIS)


def _clipped(detail: str, width: int = 160) -> str:
    """A failure's words cut to ``width``, at the end of a clause ("; ") where one ends past two thirds of it, so that a
    sentence is not cut in a word ("... (its traceback is cut after train.py line 61 in main)"), past half of it."""
    if len(detail) <= width:
        return detail
    clause = detail.rfind("; ", width // 2, width)
    return detail[:clause] if clause > 0 else detail[:width]    # (no clause ends there: cut as it was)


def _is_cut(failure: Failure) -> bool:
    """A traceback cut by the paste (triage.load.logs.line_events.cut_traceback_words): "rank 1 raised an exception; its
    exception line is not in this input ..."."""
    return f" raised {UNFINISHED_TRACEBACK}" in failure.detail


def _without_settle(detail: str) -> str:
    """A cut traceback's words without their own "...; the lines after that frame would settle which exception it was"
    (the verdict says once, at its end, what would settle it)."""
    at = detail.find(" would settle which exception it was")
    clause = detail.rfind("; ", 0, at) if at > 0 else -1
    return detail[:clause] if clause > 0 else detail


def unlocated_verdict(evidence: Evidence, failures: list[Failure],
                      cov: Mapping[str, object]) -> tuple[Verdict, Finding] | None:
    """What the input shows failing, with no culprit: ``failure_unlocated`` (a timeout of no known
    rank is a hang: the rule before this one, triage.analysis.rankless)."""
    what: list[str] = []
    # (a traceback cut by the paste says it is cut and what would settle it, in its own words: nothing says it came
    # after another failure; the others failed after something else did, which this input does not hold)
    cut = [f for f in failures if _is_cut(f)]
    after = [f for f in failures if not _is_cut(f)]
    if after:
        what.append(f"{rank_word(sorted({f.rank for f in after}))} failed after something else did "
                    f"({_clipped(after[0].detail)})")
    if cut:
        more = sorted({f.rank for f in cut[1:]} - {cut[0].rank})
        what.append(_clipped(_without_settle(cut[0].detail), 240)
                    + (f"; the traceback{'s' if len(more) > 1 else ''} of {rank_word(more)} cut too" if more else ""))
    store_waits = [e for e in evidence.events if e.kind is EventKind.WATCHDOG_TIMEOUT
                   and e.detail.startswith(STORE_WAIT_DETAIL)]
    if store_waits:
        what.append(f"{len(store_waits)} c10d store wait timeout{'s' if len(store_waits) > 1 else ''} (a rank waited "
                    f"on the store for a peer that never came; not a network failure): {store_waits[0].detail[:160]}")
    kinds = Counter(e.kind for e in evidence.events if e.kind in _FAILURE_EVENTS and e not in store_waits)
    for kind, count in kinds.most_common():
        first = next(e for e in evidence.events if e.kind is kind and e not in store_waits)
        said = f": {first.detail[:120]}" if kind in (EventKind.XID, EventKind.SEGFAULT, EventKind.OOM) else ""
        what.append(f"{count} {kind.value.replace('_', ' ')} line{'s' if count > 1 else ''}{said}")
    unattributed = [u for u in evidence.unattributed if u.failure_kind != "stopped"]    # (a stop: said after)
    if unattributed:
        # (a cut traceback's own "... would settle which exception it was" left out: the verdict says once, at its end,
        # what would settle it)
        said = _without_settle(unattributed[0].message or "?")
        what.append(f"failure lines of no known rank ({_clipped(said, 168)})")
    if evidence.mismatches:
        what.append("collective mismatch errors")
    if not what:
        return None
    settle = SETTLE_FIRST
    raised = _only_raised(evidence, failures, unattributed, store_waits, kinds)
    if cut and len(what) == 1:      # (the cut tracebacks alone: the rest of them settles it)
        ranks_cut = sorted({f.rank for f in cut})
        whose = f"rank {ranks_cut[0]}'s" if len(ranks_cut) == 1 else "every rank's"
        settle = f"{whose} own output past its traceback's last frame would settle which exception it was"
    body = f"{'; '.join(what)}; {coverage_line(cov)}: {settle}"
    ranks = tuple(sorted({f.rank for f in failures}))
    if raised:
        # (what the input shows failing is only exceptions of no rank, their traceback cut or their line one that
        # points at a cause not shown: a process raised, which one and why is what the input cannot tell)
        return (headline.verdict(VerdictKind.EXCEPTION, body, qualifier=f" ({RANK_UNKNOWN})"),
                Finding(VerdictKind.EXCEPTION.value, (), body, root_cause=True))
    return (headline.verdict(VerdictKind.FAILURE_UNLOCATED, body),
            Finding(VerdictKind.FAILURE_UNLOCATED.value, ranks, body, root_cause=True))


def _only_raised(evidence: Evidence, failures: list[Failure], unattributed: list[ExitInfo],
                 store_waits: list[Event], kinds: Counter[EventKind]) -> bool:
    """The input's failures are exceptions of no rank alone: no rank's failure, no event (a timeout, an NCCL
    warning, a fault), no mismatch; every line of no rank an exception's, cut by the paste or one that is another
    failure's consequence in its own words."""
    if failures or store_waits or kinds or evidence.mismatches or not unattributed:
        return False
    return all(u.failure_kind in _RAISED_KINDS and u.signal is None for u in unattributed)
