"""What the report says when collectives were not recorded (pure).

A rank without a Flight Recorder (torch 2.4 has none for gloo; TORCH_FR_BUFFER_SIZE=0 turns it
off) leaves no record of its collectives: nothing says their dtypes and counts matched. The report
then says they were not recorded and why, never that they match.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from triage.analysis.ranks import rank_word
from triage.analysis.verdict import headline
from triage.model import Finding, VerdictKind
from triage.model.evidence import Evidence

FINDING_KIND = "collectives_not_recorded"
CANNOT_RULE_OUT = "dtype and count mismatches cannot be ruled out"


def _reason(evidence: Evidence) -> str:
    if evidence.recorder_notes:
        return "; ".join(evidence.recorder_notes[:3])
    return "no Flight Recorder dump in this input" if not evidence.complete else "no Flight Recorder dump"


def unrecorded_ranks(world: Sequence[int], traced: Collection[int]) -> tuple[int, ...]:
    return tuple(r for r in world if r not in traced)


def unrecorded_clause(evidence: Evidence, world: Sequence[int], traced: Collection[int]) -> str | None:
    """``collectives not recorded: <why>; dtype and count mismatches cannot be ruled out`` (None:
    every rank's collectives were recorded)."""
    missing = unrecorded_ranks(world, traced)
    if not missing:
        return None
    if not traced:
        return f"collectives not recorded: {_reason(evidence)}; {CANNOT_RULE_OUT}"
    return (f"the collectives of {rank_word(missing)} not recorded ({_reason(evidence)}); "
            f"{CANNOT_RULE_OUT} there")


# an excerpt's all-clear when its last lines say neither that the run ended nor how a rank ended (verdict.rules)
END_NOT_SHOWN = "this input does not show the job's end"


def no_problem_text(evidence: Evidence, world: Sequence[int], traced: Collection[int], end: str = "") -> str | None:
    """The all-clear line when some collectives were not recorded (None: they all were); ``end``: what the
    input says of the job's end, right after "no rank failed"."""
    clause = unrecorded_clause(evidence, world, traced)
    if clause is None:
        return None
    head = ("the run finished and no rank failed" if evidence.finished_cleanly else "no rank failed") + end
    if len(traced) == 1:
        head += "; 1 rank traced: no collective to compare"
    elif traced:
        head += f"; the collectives of {len(traced)} ranks match"
    return headline.line(VerdictKind.NO_PROBLEM_FOUND, f"{head}; {clause}")


def unrecorded_finding(evidence: Evidence, world: Sequence[int], traced: Collection[int]) -> Finding | None:
    """A finding for ranks whose heartbeats said they have no Flight Recorder (any verdict)."""
    if not evidence.recorder_notes:
        return None
    clause = unrecorded_clause(evidence, world, traced)
    if clause is None:
        return None
    return Finding(FINDING_KIND, unrecorded_ranks(world, traced), clause)
