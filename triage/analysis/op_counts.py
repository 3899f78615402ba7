"""Verdicts from reports that count operations per rank: NCCL RAS operation counts, and PyTorch's
desync report (TORCH_NCCL_DESYNC_DEBUG); both name the ranks that never reached the operation the
others wait in (pure)."""

from __future__ import annotations

from triage.analysis.ranks import count_ranks, format_ranks, rank_word
from triage.analysis.verdict import headline
from triage.analysis.verdict.headline import Head
from triage.model import Finding, Verdict, VerdictKind
from triage.model.evidence import OpCountSplit, ReportedLag
from triage.parsing.desync import HCCL_WAIT_TEXT, HOROVOD_STALL_TEXT, MONITORED_BARRIER


def op_count_verdict(splits: tuple[OpCountSplit, ...]) -> tuple[Verdict, Finding] | None:
    if not splits:
        return None
    split = splits[0]
    hosts = dict(split.hosts)
    waiting = (rank_word(split.ahead) if split.ahead else f"{split.ahead_count} ranks")
    ahead_hosts = sorted({hosts[r] for r in split.ahead if r in hosts})
    if ahead_hosts:
        waiting += f" ({', '.join(ahead_hosts)})"
    target = split.behind_launched + 1
    if split.behind:
        at = f"{'they are' if len(split.behind) > 1 else 'it is'} at operation {split.behind_launched}"
        summary = (f"{rank_word(split.behind)} never launched {split.op} #{target} ({split.source}: {at}) while "
                   f"{waiting} launched up to #{split.ahead_launched} and wait in it")
        verdict = headline.verdict(VerdictKind.MISSING_RANK, summary, head=Head.MISSING_RANK,
                                   culprit_ranks=split.behind)
    else:
        summary = (f"{count_ranks(split.behind_count)} never launched {split.op} #{target} ({split.source}: at "
                   f"operation {split.behind_launched}) while {waiting} wait in it; the report does not list the ranks "
                   "behind")
        verdict = headline.verdict(VerdictKind.HANG, summary)
    ranks = split.behind or split.ahead
    detail = summary
    if split.behind and len(split.behind) > 8:
        detail += f" [behind: {format_ranks(split.behind)}]"
    return verdict, Finding(verdict.kind.value, ranks, detail, split.evidence, root_cause=True)


def lagging_verdict(lags: tuple[ReportedLag, ...]) -> tuple[Verdict, Finding] | None:
    """PyTorch's own desync analysis: "[7] finished collective #182, but didn't join collective #183"."""
    if not lags:
        return None
    lag = next((item for item in lags if item.never_joined), lags[0])
    ranks = tuple(sorted(set(lag.ranks)))
    if lag.text.startswith(HCCL_WAIT_TEXT):
        summary = (f"{rank_word(ranks)} never reached the collective the others wait in ({lag.text}): stuck before "
                   f"it, or dead; {'its' if len(ranks) == 1 else 'their'} own log would say which")
        kind = VerdictKind.MISSING_RANK
    elif lag.text.startswith(HOROVOD_STALL_TEXT):
        summary = (f"{rank_word(ranks)} never submitted the collective the other ranks wait in ({lag.text}): stuck "
                   f"before it, or dead; {'its' if len(ranks) == 1 else 'their'} own log would say which")
        kind = VerdictKind.MISSING_RANK
    elif MONITORED_BARRIER in lag.text:
        summary = (f"{rank_word(ranks)} did not reach the monitored barrier in time "
                   f"(torch.distributed.monitored_barrier names {'it' if len(ranks) == 1 else 'them'}: "
                   f"{lag.text[:160]!r}): stuck before it, or dead; the rank that reports it is not the culprit")
        kind = VerdictKind.MISSING_RANK
    elif lag.never_joined:
        summary = (f"{rank_word(ranks)} finished collective #{lag.collective - 1} but never joined "
                   f"#{lag.collective} (PyTorch's desync report, counted from 1); the other ranks wait for "
                   f"{'it' if len(ranks) == 1 else 'them'}")
        kind = VerdictKind.MISSING_RANK
    else:
        summary = (f"{rank_word(ranks)} joined collective #{lag.collective} but never finished it "
                   "(PyTorch's desync report): a dead or stuck peer, or a broken link")
        kind = VerdictKind.HANG
    verdict = headline.verdict(kind, summary, head=Head.MISSING_RANK if kind is VerdictKind.MISSING_RANK else None,
                               culprit_ranks=ranks)
    return verdict, Finding(kind.value, ranks, summary, lag.evidence, root_cause=True)
