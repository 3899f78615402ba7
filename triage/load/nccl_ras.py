"""NCCL RAS reports, and ProcessGroupNCCL's per-rank last enqueued/completed counts, in a log as
:class:`OpCountSplit` evidence: which ranks are behind."""

from __future__ import annotations

from triage.model.evidence import OpCountSplit
from triage.parsing.nccl.ras import MARKER, RasOpMismatch, parse_ras_mismatches
from triage.parsing.pg_status import MARKER as STATUS_MARKER
from triage.parsing.pg_status import behind_ranks, parse_pg_status

# how the verdict names the counts' source
_PG_STATUS = "ProcessGroupNCCL's last enqueued work"


def op_count_splits(text: str, path: str) -> list[OpCountSplit]:
    splits = [split for item in parse_ras_mismatches(text) if (split := _split(item, path)) is not None] \
        if MARKER in text else []
    if STATUS_MARKER in text:
        splits.extend(OpCountSplit("NCCL work", lag.behind, len(lag.behind), lag.behind_enqueued, lag.ahead,
                                   len(lag.ahead), lag.ahead_enqueued, evidence=(path,), source=_PG_STATUS)
                      for lag in behind_ranks(parse_pg_status(text)))
    return splits


def _split(item: RasOpMismatch, path: str) -> OpCountSplit | None:
    groups = sorted(item.groups, key=lambda g: g.launched)
    behind, ahead = groups[0], groups[-1]
    listed = {r.rank for g in groups for r in g.listed}
    if len(behind.listed) == behind.count:
        behind_ranks = tuple(sorted(r.rank for r in behind.listed))
    elif item.comm_size and all(len(g.listed) == g.count for g in groups if g is not behind) \
            and item.comm_size - len(listed) == behind.count:
        behind_ranks = tuple(r for r in range(item.comm_size) if r not in listed)
    else:
        behind_ranks = ()
    ahead_ranks = tuple(sorted(r.rank for r in ahead.listed)) if len(ahead.listed) == ahead.count else ()
    hosts = tuple(sorted({(r.rank, r.host) for g in groups for r in g.listed}))
    return OpCountSplit(item.op, behind_ranks, behind.count, behind.launched, ahead_ranks, ahead.count,
                        ahead.launched, hosts, (path,))
