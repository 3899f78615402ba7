"""What would settle a verdict that names no culprit (pure): when the input cannot tell, the
summary says so and names the one thing that would."""

from __future__ import annotations

from collections.abc import Mapping

from triage.analysis.ranks import rank_word
from triage.model.evidence import RankEvidence

# What would name the rank of a failure no line ties to one.
SETTLE_RANK = ("which rank: the ranks' own output with their rank prefixes (torchrun --tee 3, or the job run under "
               "`triage launch`) would tell")
# What would name the rank that failed first, when the input shows only later failures.
SETTLE_FIRST = ("the log of the rank that failed first (every rank's output: torchrun --tee 3, or the job run under "
                "`triage launch`) would settle it")
MAX_NAMED_ABSENT = 4


def settle_hang(ranks: tuple[RankEvidence, ...], timed_out: list[int], cov: Mapping[str, object]) -> str:
    """The one thing that would name the rank the waiting ranks waited for: the log of the few
    ranks the input lacks, else every rank's log or stack."""
    world = cov.get("world_size")
    shown = {r.rank for r in ranks} | set(timed_out)
    if isinstance(world, int) and 0 < world - len(shown) <= MAX_NAMED_ABSENT:
        absent = [r for r in range(world) if r not in shown]
        return f"the log of {rank_word(absent)} would settle it"
    return ("every rank's log (torchrun --tee 3), or the job run under `triage launch` (each rank's stack when it "
            "hangs), would settle it")
