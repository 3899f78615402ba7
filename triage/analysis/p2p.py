"""Point-to-point matching (pure): rank A's k-th send to B pairs with B's k-th recv from A.

Flight Recorder numbers p2p ops with their own seq (p2p_seq_id) and names the peer
("nccl:send 0->1"). gloo in torch 2.13 does not record send/recv at all, so this only
fires on NCCL dumps and NCCL logs.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from triage.analysis.groups import Group
from triage.model import Collective, CollectiveState, MismatchKind


@dataclass(frozen=True)
class P2pProblem:
    """A send and receive between two ranks that do not match, or one without its peer."""
    group: Group
    sender: int
    receiver: int
    index: int                              # the k-th op between the pair (0-based)
    kind: MismatchKind | None               # SIZE/DTYPE for a mismatch, None when unmatched
    send: Collective | None
    recv: Collective | None
    waiting: bool                           # the unmatched side still waits in it


def _global(group: Group, peer: int | None) -> int | None:
    if peer is None:
        return None
    if group.pg == "0" or not group.members:
        return peer
    return group.members[peer] if 0 <= peer < len(group.members) else None


def check_p2p(group: Group, traces: dict[int, tuple[Collective, ...]]) -> list[P2pProblem]:
    sends: dict[tuple[int, int], list[Collective]] = defaultdict(list)
    recvs: dict[tuple[int, int], list[Collective]] = defaultdict(list)
    for rank in group.members:
        for coll in traces.get(rank, ()):
            if coll.pg != group.pg or not coll.is_p2p:
                continue
            peer = _global(group, coll.peer)
            if peer is None:
                continue
            if coll.op == "send":
                sends[(rank, peer)].append(coll)
            elif coll.op == "recv":
                recvs[(peer, rank)].append(coll)
    problems: list[P2pProblem] = []
    for pair in sorted(set(sends) | set(recvs)):
        if pair[0] not in traces or pair[1] not in traces:
            continue  # the other side left no trace: the straggler/missing-rank checks say so
        problem = _first_problem(group, pair, sorted(sends[pair], key=lambda c: c.seq),
                                 sorted(recvs[pair], key=lambda c: c.seq))
        if problem is not None:
            problems.append(problem)
    return problems


def _first_problem(group: Group, pair: tuple[int, int], sends: list[Collective],
                   recvs: list[Collective]) -> P2pProblem | None:
    for index in range(max(len(sends), len(recvs))):
        send = sends[index] if index < len(sends) else None
        recv = recvs[index] if index < len(recvs) else None
        if send is None or recv is None:
            alone = send or recv
            if not (alone is not None):
                raise RuntimeError("internal error: expected alone is not None")
            waiting = alone.state is not CollectiveState.COMPLETED
            if not waiting:
                return None  # ring buffer edge: the older half simply fell out of one side
            return P2pProblem(group, pair[0], pair[1], index, None, send, recv, waiting)
        if send.dtype != recv.dtype:
            return P2pProblem(group, pair[0], pair[1], index, MismatchKind.DTYPE, send, recv, False)
        if send.count != recv.count:
            return P2pProblem(group, pair[0], pair[1], index, MismatchKind.SIZE, send, recv, False)
    return None
