"""Constructed Flight Recorder arrivals for the straggler unit tests: every rank's collectives with
the creation time (and optionally the completion time) that a rule chooses."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping

from triage.analysis.groups import Group
from triage.model import Collective
from triage.model.evidence import Evidence, PgMembers, RankEvidence

T0 = 1_795_000_000_000_000_000
MS = 1_000_000

# (rank, seq) -> arrival offset in ms within the step
Arrival = Callable[[int, int], float]


def traces(ranks: int, seqs: int, arrival: Arrival, period_ms: float = 100.0,
           completion: Callable[[int, int, float], float] | None = None,
           first_seq: int = 1) -> dict[int, tuple[Collective, ...]]:
    """Each rank's collectives in pg 0: seq s starts its step at s * period_ms; a rank arrives
    ``arrival(rank, s)`` ms later. ``completion(rank, s, last_arrival_ms)``: its completion time
    (ms in the step, the rank's clock), when the backend records one."""
    out: dict[int, list[Collective]] = {r: [] for r in range(ranks)}
    for seq in range(first_seq, first_seq + seqs):
        offsets = {r: arrival(r, seq) for r in range(ranks)}
        last = max(offsets.values())
        for rank in range(ranks):
            start = T0 + int(seq * period_ms * MS)
            done = None if completion is None else start + int(completion(rank, seq, last) * MS)
            out[rank].append(Collective(rank=rank, pg="0", seq=seq, op="all_reduce", count=1024, dtype="float32",
                                        pg_name="default_pg", time_ns=start + int(offsets[rank] * MS),
                                        time_completed_ns=done))
    return {r: tuple(c) for r, c in out.items()}


def group(ranks: int) -> Group:
    return Group("0", "default_pg", tuple(range(ranks)))


def jitter(seed: int, ms: float) -> Arrival:
    rng = random.Random(seed)
    table: dict[tuple[int, int], float] = {}

    def arrive(rank: int, seq: int) -> float:
        return table.setdefault((rank, seq), rng.uniform(0.0, ms))
    return arrive


def late(slow: Mapping[int, float], base: Arrival | None = None) -> Arrival:
    """``slow[rank]`` ms later than ``base`` (default: everyone at 0)."""
    def arrive(rank: int, seq: int) -> float:
        return (base(rank, seq) if base else 0.0) + slow.get(rank, 0.0)
    return arrive


def evidence(colls: Mapping[int, tuple[Collective, ...]], hosts: Mapping[int, str] | None = None) -> Evidence:
    items = tuple(RankEvidence(rank=r, host=(hosts or {}).get(r, "node0"), collectives=c, has_trace=True,
                               groups=(PgMembers("0", "default_pg", tuple(sorted(colls))),),
                               evidence=(f"rank-{r}/fr.json",))
                  for r, c in sorted(colls.items()))
    return Evidence(ranks=items, world_size=len(colls))
