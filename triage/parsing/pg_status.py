"""ProcessGroupNCCL's per-rank counts of the collectives a process group enqueued and completed, as each rank
prints them when a collective times out (pure, never raises):

- PyTorch 2.2-2.6's watchdog: ``[PG 1 Rank 0] Timeout at NCCL work: 7753, last enqueued NCCL work: 7755, last
  completed NCCL work: 7752.`` (also ``Exception (either an error or timeout) detected by watchdog at work: N, ...``);
- PyTorch 2.7+'s: ``[PG ID 0 PG GUID 0(default_pg) Rank 7]  failure detected by watchdog at work sequence id: 460631
  PG status: last enqueued work: 460631, last completed work: 460630``;
- the heartbeat monitor's dump signal (2.3+): ``[PG ID 0 PG GUID 0(default_pg) Rank 1] Received a dump signal due to
  a collective timeout from this local rank ... Last enqueued NCCL work: 6, last completed NCCL work: 6.`` (older:
  ``Received a global timeout from another rank ...``);
- a person's summary of those lines: ``[Rank 1] Last enqueued NCCL work: 21936, last completed 21936``, ``[Rank
  0/2/3] Last enqueued NCCL work: 21937``.

The numbers are the group's sequence numbers of collectives: every rank of a group launches them in the same order,
so a rank whose count is below the others' never launched the collective they wait in. -1 is "none yet".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from triage.lazy_regex import lazy_regex

MARKER = "ast enqueued"

_COUNTS = lazy_regex(r"[Ll]ast enqueued (?:NCCL )?work:?\s*(-?\d+)(?:\s*,\s*last completed(?: NCCL)?(?: work)?:?"
                     r"\s*(-?\d+))?")
# the rank's tag on the same line, before the counts: "[PG ID 0 PG GUID 0(default_pg) Rank 1]", "[PG 1 Rank 0]",
# "[Rank 0/2/3]"
_TAG = lazy_regex(r"\[(?:PG (?:ID )?(?P<pg>\d+)(?: PG GUID (?P<guid>\w+))?\s*(?:\([^)]*\))?\s+)?"
                  r"Rank (?P<ranks>\d+(?:\s*[/,]\s*\d+)*)\]")


@dataclass(frozen=True)
class PgStatus:
    """A process group's status line: how many collectives were enqueued and completed."""
    ranks: tuple[int, ...]      # the ranks the line speaks for (one, or a summary's "0/2/3")
    group: str | None           # the process group ("0", "0/default GUID"), None when the line does not say
    enqueued: int
    completed: int | None       # None when the line is cut before it


def parse_pg_status(text: str) -> tuple[PgStatus, ...]:
    """Every per-rank count line of ``text`` that names its rank. Never raises."""
    if MARKER not in text:
        return ()
    found = []
    for line in text.splitlines():
        if MARKER not in line:
            continue
        counts = _COUNTS.search(line)
        tags = list(_TAG.finditer(line, 0, counts.start())) if counts else []
        if not counts or not tags:
            continue
        tag = tags[-1]
        enqueued = int(counts.group(1))
        completed = int(counts.group(2)) if counts.group(2) is not None else None
        if completed is not None and completed > enqueued:
            continue        # (a garbled count: nothing completes before it is enqueued)
        ranks = tuple(int(r) for r in re.split(r"\s*[/,]\s*", tag.group("ranks")))
        group = tag.group("pg") if tag.group("guid") is None else f"{tag.group('pg')}/{tag.group('guid')}"
        found.append(PgStatus(ranks, group, enqueued, completed))
    return tuple(found)


@dataclass(frozen=True)
class BehindRanks:
    """Ranks that launched fewer collectives of a group than the others."""
    group: str | None
    behind: tuple[int, ...]     # ranks that never launched the collective the others launched
    behind_enqueued: int
    ahead: tuple[int, ...]
    ahead_enqueued: int


def behind_ranks(statuses: tuple[PgStatus, ...]) -> tuple[BehindRanks, ...]:
    """Per process group, the ranks whose last enqueued collective is below the others' and that wait in none
    (all they launched completed): they never launched the collective the others launched next. A rank that
    printed several lines counts at its highest. Empty where no group shows it."""
    groups: dict[str | None, dict[int, tuple[int, int | None]]] = {}
    for status in statuses:
        per_rank = groups.setdefault(status.group, {})
        for rank in status.ranks:
            if rank not in per_rank or status.enqueued > per_rank[rank][0]:
                per_rank[rank] = (status.enqueued, status.completed)
    out = []
    for group, per_rank in groups.items():
        if len(per_rank) < 2:
            continue
        top = max(enq for enq, _ in per_rank.values())
        ahead = tuple(sorted(r for r, (enq, _) in per_rank.items() if enq == top))
        # (a rank still in a collective it launched is no missing rank: the others may have moved past it in a
        # mismatch, or be queued behind it on the GPU)
        behind = tuple(sorted(r for r, (enq, comp) in per_rank.items() if 0 <= enq < top and comp == enq))
        if behind and len(behind) + len(ahead) == len(per_rank) \
                and len({per_rank[r][0] for r in behind}) == 1:
            out.append(BehindRanks(group, behind, per_rank[behind[0]][0], ahead, top))
    return tuple(out)
