"""A tracker's kept NCCL ops as Collectives, the way the NCCL parsing tests look at them."""

from __future__ import annotations

from triage.model import Collective, CollectiveState
from triage.parsing.nccl.tracker import NcclTracker


def tracker_collectives(tracker: NcclTracker) -> tuple[Collective, ...]:
    """Every kept op as a Collective: ``seq = opCount + 1`` and ``pg`` the commId, else
    ``comm:<pointer>``, as triage.load.logs.records builds them (here all SCHEDULED: NCCL logs an op
    when it is enqueued, never its completion). Ops of processes whose rank is unknown get rank -1."""
    out: list[Collective] = []
    for state in tracker.last_ops():
        pg = state.comm_id or f"comm:{state.comm}"
        rank = state.global_rank if state.global_rank is not None else -1
        for op in state.history:
            p2p = op.op in ("send", "recv")
            out.append(Collective(
                rank=rank, pg=pg, seq=op.op_count + 1, op=op.op, count=op.count, dtype=op.dtype,
                state=CollectiveState.SCHEDULED, is_p2p=p2p, peer=op.root if p2p else None,
                source="nccl",
            ))
    return tuple(out)
