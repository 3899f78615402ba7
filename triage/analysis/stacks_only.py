"""A verdict from stacks alone (pure): a job that triage did not launch leaves no Flight Recorder
and no collective diff, only the py-spy/gdb stacks that `triage collect` or `triage dump` took.

Each rank's innermost torch.distributed call (and the user frame that called it) groups the ranks:
- a minority group in a different collective is a ``collective_mismatch`` (op), inferred from the
  stacks: counts and dtypes are unknown;
- a rank outside any collective while the others wait is ``stuck_outside_collective``;
- every rank in the same collective from the same call site is a ``hang`` with no culprit.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping

from triage.analysis.describe import who
from triage.analysis.ranks import rank_word
from triage.analysis.verdict import headline
from triage.model import Finding, MismatchKind, Verdict, VerdictKind
from triage.model.evidence import RankEvidence

Hosts = Mapping[int, str | None]
FROM_STACKS = "inferred from the stacks (no Flight Recorder): counts and dtypes are unknown"


def _at(site: str | None) -> str:
    return f" at {site}" if site else ""


def stacks_verdict(ranks: tuple[RankEvidence, ...], hosts: Hosts) -> tuple[Verdict, Finding] | None:
    """None unless at least two ranks have a stack and none of them has a trace."""
    stacked = [r for r in ranks if r.stack and r.in_collective is not None and r.alive is not False]
    if len(stacked) < 2 or any(r.has_trace for r in ranks):
        return None
    waiting = [r for r in stacked if r.in_collective]
    outside = [r for r in stacked if not r.in_collective]
    if waiting and outside:
        culprits = tuple(r.rank for r in outside)
        calls = sorted({r.stack_collective or "a collective" for r in waiting})
        summary = (f"{who(culprits, hosts)} {'is' if len(culprits) == 1 else 'are'} outside any collective"
                   f"{_at(outside[0].stack_top)} while {rank_word([r.rank for r in waiting])} "
                   f"{'waits' if len(waiting) == 1 else 'wait'} in "
                   f"{' / '.join(calls)} (from the stacks)")
        verdict = headline.verdict(VerdictKind.STUCK_OUTSIDE_COLLECTIVE, summary, culprit_ranks=culprits)
        return verdict, Finding(verdict.kind.value, culprits, summary, root_cause=True)
    if not waiting:
        return None
    by_call: dict[str, list[RankEvidence]] = defaultdict(list)
    for item in waiting:
        by_call[item.stack_collective or "?"].append(item)
    if len(by_call) == 1:
        (name, members), = by_call.items()
        sites = sorted({r.stack_top or "?" for r in members})
        where = f" called from {sites[0]}" if len(sites) == 1 else f" called from {len(sites)} places"
        summary = (f"every rank with a stack ({rank_word([r.rank for r in members])}) waits in {name}{where}; "
                   "no rank differs in the stacks (look outside the job: network, a dead peer, a rank not sampled)")
        verdict = headline.verdict(VerdictKind.HANG, summary)
        return verdict, Finding(VerdictKind.HANG.value, tuple(r.rank for r in members), summary,
                                root_cause=True)
    groups = sorted(by_call.items(), key=lambda kv: (len(kv[1]), min(r.rank for r in kv[1])))
    minority_name, minority = groups[0]
    majority_name, majority = groups[-1]
    if len(minority) == len(majority):
        blamed: tuple[int, ...] = ()
        summary = ("the ranks wait in different collectives: "
                   + "; ".join(f"{rank_word([r.rank for r in g])} in {n}" for n, g in groups)
                   + f" ({FROM_STACKS}); which side left the common path is not clear")
    else:
        blamed = tuple(sorted(r.rank for r in minority))
        summary = (f"{who(blamed, hosts)} called {minority_name}{_at(minority[0].stack_top)} while "
                   f"{rank_word([r.rank for r in majority])} called {majority_name}{_at(majority[0].stack_top)} "
                   f"({FROM_STACKS})")
    verdict = headline.verdict(VerdictKind.COLLECTIVE_MISMATCH, summary, qualifier=" (op)", subkind=MismatchKind.OP,
                               culprit_ranks=blamed)
    return verdict, Finding(verdict.kind.value, blamed, summary, root_cause=True)
