"""One RankSummary per expected rank (pure)."""

from __future__ import annotations

from triage.analysis.failures import TEARDOWN_SIGNALS
from triage.model import Collective, CollectiveState, RankState, RankSummary
from triage.model.evidence import RankEvidence


def last_collective(colls: tuple[Collective, ...]) -> Collective | None:
    """The collective a rank is waiting in, else the last one it entered."""
    if not colls:
        return None
    waiting = [c for c in colls if c.state is not CollectiveState.COMPLETED]
    pool = waiting or list(colls)
    return max(pool, key=lambda c: (c.time_ns or 0, c.pg == "0", c.seq))


def rank_state(item: RankEvidence | None, last: Collective | None) -> RankState:
    if item is None:
        return RankState.NO_DATA
    if item.exit is not None:
        if item.exit.ok:
            return RankState.EXITED_OK
        if item.exit.signal is not None:
            return RankState.CRASHED if item.exit.signal not in TEARDOWN_SIGNALS else RankState.EXITED_ERROR
        if item.exit.exit_code is not None:
            return RankState.EXITED_ERROR
    if item.trace_at_exit:
        return RankState.EXITED_OK
    if item.in_collective is True:
        return RankState.IN_COLLECTIVE
    if last is not None and last.state is not CollectiveState.COMPLETED:
        return RankState.IN_COLLECTIVE
    if item.in_collective is False or (item.stack and last is not None):
        return RankState.OUTSIDE_COLLECTIVE
    if last is not None:
        return RankState.OUTSIDE_COLLECTIVE if item.alive is not False else RankState.UNKNOWN
    if not item.has_trace and not item.stack and item.exit is None:
        return RankState.NO_DATA        # e.g. only worker.json: it started, then nothing was collected
    return RankState.UNKNOWN


def rank_summaries(
    ranks: tuple[RankEvidence, ...], world: tuple[int, ...], traces: dict[int, tuple[Collective, ...]],
) -> tuple[RankSummary, ...]:
    by_rank = {r.rank: r for r in ranks}
    out: list[RankSummary] = []
    for rank in sorted(set(world) | set(by_rank)):
        item = by_rank.get(rank)
        last = last_collective(traces.get(rank, ()))
        out.append(RankSummary(
            rank=rank,
            host=item.host if item else None,
            pid=item.pid if item else None,
            state=rank_state(item, last),
            last_collective=last,
            stack_top=item.stack_top if item else None,
        ))
    return tuple(out)
