"""What an excerpt cannot tell, said in every verdict that names no culprit (pure).

A verdict of a pasted log that blames no rank must say which ranks the text covers, what failed
(its summary already does), and the one thing that would settle it. Most verdicts say so where they
are made; this is the guard for the rest: a network error reported by one rank, an init hang of
ranks that never joined, a mismatch with only one side shown.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from triage.analysis.partial import coverage_line
from triage.analysis.settle import PER_RANK_OUTPUT, fit_launcher, settle_network
from triage.lazy_regex import lazy_regex
from triage.model import Finding, Verdict, VerdictKind

# a summary that already says what would settle it, and one that already says what the input holds
_SETTLED = lazy_regex(r"would (?:settle|tell|name|show)")
_COVERED = lazy_regex(r"this input holds|not in this input|rank unknown|no line of this input|no rank at fault")

_REGISTERED = ("each node's launch command (nnodes, nproc_per_node, MASTER_ADDR:MASTER_PORT) and any other job on that "
               "port would settle it")
_NEVER_JOINED = (f"the log of the ranks that never joined (every rank's output: {PER_RANK_OUTPUT}, or the job run "
                 "under `triage launch`) would settle it")
_ONE_SIDE = ("every rank's TORCH_DISTRIBUTED_DEBUG=DETAIL lines, or each rank's stack under `triage launch`, would "
             "settle it")
_ANY = (f"every rank's output ({PER_RANK_OUTPUT}), or the job run under `triage launch`, would settle it")


def say_what_is_untold(verdict: Verdict, finding: Finding | None, cov: Mapping[str, object],
                       launcher: str | None = None) -> tuple[Verdict, Finding | None]:
    """The verdict, its summary completed with the coverage and what would settle it when it names
    no culprit and does not say them yet; the per-rank output it asks for is that of ``launcher``, the one
    the input shows started the ranks (triage.parsing.launcher_kind)."""
    if verdict.culprit_ranks or verdict.kind in (VerdictKind.NO_PROBLEM_FOUND, VerdictKind.STOPPED):
        # (a stop from outside blames no rank and asks for none: it says what to do)
        return verdict, finding
    summary = verdict.summary
    if not _COVERED.search(summary):
        summary += f" ({coverage_line(cov)})"
    if not _SETTLED.search(summary):
        summary += f": {_settle(verdict, summary)}"
    added = summary[len(verdict.summary):]
    summary = fit_launcher(summary, launcher)
    if summary == verdict.summary:
        return verdict, finding
    if finding is not None and verdict.summary.endswith(finding.detail):
        finding = replace(finding, detail=fit_launcher(finding.detail + added, launcher))
    return replace(verdict, summary=summary), finding


def _settle(verdict: Verdict, summary: str) -> str:
    kind = verdict.kind
    if kind is VerdictKind.NETWORK_ERROR:
        return settle_network(summary, verdict.culprit_host)
    if kind is VerdictKind.INIT_HANG:
        return _REGISTERED if "processes registered for a group of" in summary else _NEVER_JOINED
    if kind is VerdictKind.COLLECTIVE_MISMATCH:
        return _ONE_SIDE
    return _ANY
