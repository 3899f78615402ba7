"""Build Evidence by hand for the pure-analysis tests (the goldens cover real dumps)."""

from __future__ import annotations

from triage.model import Collective, CollectiveState
from triage.model.evidence import Evidence, ExitInfo, PgMembers, RankEvidence

DONE = CollectiveState.COMPLETED
WAIT = CollectiveState.IN_FLIGHT


def coll(rank: int, seq: int, op: str = "all_reduce", count: int | None = 8, dtype: str | None = "float32",
         pg: str = "0", state: CollectiveState = DONE, t: int | None = None) -> Collective:
    return Collective(rank=rank, pg=pg, seq=seq, op=op, count=count, dtype=dtype, state=state,
                      pg_name="default_pg" if pg == "0" else None, time_ns=t)


def rank(r: int, colls: list[Collective], host: str | None = None, **kw: object) -> RankEvidence:
    return RankEvidence(rank=r, host=host or f"node{r // 8:02d}", collectives=tuple(colls), has_trace=True,
                        groups=(PgMembers("0", "default_pg", None),), evidence=(f"dumps/fr_{r}",),
                        **kw)  # type: ignore[arg-type]


def hang(world: int, culprit: int | None, seq: int, culprit_call: dict[str, object], warm: int = 3,
         ) -> Evidence:
    """Every rank does ``warm`` all_reduces, then waits at ``seq``; the culprit calls something else."""
    ranks = []
    for r in range(world):
        colls = [coll(r, s) for s in range(1, warm + 1)]
        kwargs: dict[str, object] = {"count": 262144}
        if r == culprit:
            kwargs = dict(culprit_call)
        colls.append(coll(r, seq, state=WAIT, **kwargs))  # type: ignore[arg-type]
        ranks.append(rank(r, colls))
    return Evidence(ranks=tuple(ranks), world_size=world)


def exited(r: int, code: int | None, sig: int | None = None, t: float | None = None,
           message: str | None = None) -> RankEvidence:
    return RankEvidence(rank=r, host="node00", exit=ExitInfo(exit_code=code, signal=sig, time=t, message=message,
                                                              evidence=(f"run/node00/ranks/{r}/exit.json",)))
