"""Verdict from NCCL RAS operation counts: the ranks that never launched the operation the others
wait in (pure)."""

from __future__ import annotations

from triage.analysis.ranks import format_ranks, rank_word
from triage.model import Finding, Verdict, VerdictKind
from triage.model.evidence import OpCountSplit


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
        summary = (f"MISSING RANK: {rank_word(split.behind)} never launched {split.op} #{target} (NCCL RAS: they "
                   f"are at operation {split.behind_launched}) while {waiting} launched up to #{split.ahead_launched}"
                   " and wait in it")
        verdict = Verdict(VerdictKind.MISSING_RANK, summary, culprit_ranks=split.behind)
    else:
        summary = (f"HANG: {split.behind_count} ranks never launched {split.op} #{target} (NCCL RAS: at operation "
                   f"{split.behind_launched}) while {waiting} wait in it; the report does not list the ranks behind")
        verdict = Verdict(VerdictKind.HANG, summary)
    ranks = split.behind or split.ahead
    detail = summary.split(": ", 1)[1]
    if split.behind and len(split.behind) > 8:
        detail += f" [behind: {format_ranks(split.behind)}]"
    return verdict, Finding(verdict.kind.value, ranks, detail, split.evidence, root_cause=True)
