"""A hang the live agent detected that ended by itself (pure).

Under ``--on-hang report-and-wait`` (or ``wait``) the agent collects a bundle and leaves the job
running. When the rank it found behind was only slow (a long checkpoint, an evaluation on one rank, a
slow filesystem) the job then goes on, and every rank exits 0. The bundle still shows the moment of
the dump: a rank that had not reached a collective the others waited in. Said as it was in the bundle,
"rank 1 never reached seq 2" would be false: it reached it later, and the job finished. The story is a
stall (at least the hang timeout long) that ended by itself: the verdict keeps its culprit and what the
bundle showed, its head says STALL, and its words say the job went on and finished.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from triage.analysis.teardown_after_hang import HANG_TRIGGER
from triage.analysis.verdict import headline
from triage.analysis.verdict.headline import Head
from triage.lazy_regex import lazy_regex
from triage.model import Verdict, VerdictKind
from triage.model.evidence import AgentFacts

ENDED = "it ended by itself: the job went on and every rank exited 0"
STALL_KINDS = (VerdictKind.HANG, VerdictKind.STUCK_OUTSIDE_COLLECTIVE)
STALL_STEP = ("the job finished: this was a stall of at least the hang timeout, not a hang. If such a pause is "
              "expected (a checkpoint or an evaluation on one rank, a slow filesystem), raise --hang-timeout above "
              "it; if not, the bundle's stacks show what the rank was doing while the others waited")


def stall_ended(verdict: Verdict, agent: Sequence[AgentFacts], complete: bool, finished_cleanly: bool) -> bool:
    """The verdict is a hang the live agent dumped (a hang bundle), and the whole run then finished with
    every rank's exit record 0."""
    return (complete and finished_cleanly and verdict.kind in STALL_KINDS
            and any(fact.trigger == HANG_TRIGGER for fact in agent))


def ended_by_itself(verdict: Verdict, dumps: int = 1) -> Verdict:
    """The hang's verdict, said as the stall it was: what the bundle showed at the dump, then its end. With
    ``dumps`` of 2 or more the job stalled that many times: the verdict is the latest (its node's latest
    bundle), and the count is said."""
    said, named = _NEVER.subn(r" had not reached seq \1 when the agent dumped the job",
                              headline.body(verdict.summary), count=1)
    said = said.replace(" waits in ", " waited in ").replace(" wait in ", " waited in ")
    if not named:
        said = f"when the agent dumped the job, {said}"
    more = f" (the latest of {dumps} stalls the agent dumped: each ended by itself)" if dumps > 1 else ""
    return replace(verdict, summary=headline.line(Head.STALL, f"{said}; {ENDED}{more}"))


_NEVER = lazy_regex(r" never reached seq (\d+)")


__all__ = ["ENDED", "STALL_STEP", "ended_by_itself", "stall_ended"]
