"""Fold ranks that look the same into one row, so 4,096 ranks stay readable."""

from __future__ import annotations

from dataclasses import dataclass

from triage.analysis.describe import call
from triage.analysis.ranks import format_ranks
from triage.model import RankSummary, Report


@dataclass(frozen=True)
class RankRow:
    """One row of the ranks' table: the ranks that look the same, folded."""

    ranks: tuple[int, ...]
    hosts: tuple[str, ...]
    state: str
    collective: str                        # "all_reduce(count=4, float32) pg 0 seq 7" or ""
    stack_top: str
    culprit: bool

    @property
    def ranks_text(self) -> str:
        return format_ranks(self.ranks)

    @property
    def hosts_text(self) -> str:
        if not self.hosts:
            return "-"
        if len(self.hosts) <= 3:
            return ",".join(self.hosts)
        return f"{','.join(self.hosts[:2])},... ({len(self.hosts)} hosts)"


def collective_text(summary: RankSummary) -> str:
    last = summary.last_collective
    if last is None:
        return ""
    return f"{call(last)} pg {last.pg} seq {last.seq}"


def fold_ranks(report: Report) -> list[RankRow]:
    culprits = set(report.verdict.culprit_ranks)
    groups: dict[tuple[str, str, str, bool], list[RankSummary]] = {}
    for summary in report.ranks:
        key = (summary.state.value, collective_text(summary), summary.stack_top or "",
               summary.rank in culprits)
        groups.setdefault(key, []).append(summary)
    rows = [
        RankRow(
            ranks=tuple(s.rank for s in members),
            hosts=tuple(sorted({s.host for s in members if s.host})),
            state=key[0], collective=key[1], stack_top=key[2], culprit=key[3],
        )
        for key, members in groups.items()
    ]
    rows.sort(key=lambda row: (not row.culprit, row.ranks[0]))
    return rows
