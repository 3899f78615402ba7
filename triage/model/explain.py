"""How the verdict was decided (``triage report --explain``): one outcome per rule of the verdict
engine (triage.analysis.verdict) and per final step, in the engine's order. Not in the JSON report."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Outcome(str, enum.Enum):
    WON = "won"                        # the first rule in the order with a candidate
    LOST = "lost"                      # had a candidate, but a rule earlier in the order won
    NO_CANDIDATE = "no candidate"      # evaluated, found nothing to say
    OUT_OF_SCOPE = "out of scope"      # the rule reads only a whole run (or only an excerpt)
    NOT_EVALUATED = "not evaluated"    # after the winner, without --explain
    CHANGED = "changed"                # a final step that rewrote the verdict
    KEPT = "kept"                      # a final step that left it as it was


@dataclass(frozen=True)
class RuleOutcome:
    """What one rule or final step of the verdict made of the evidence, and why."""
    name: str
    stage: str                         # "rule" or "final step"
    outcome: Outcome
    why: str                           # one line: why this outcome
    summary: str | None = None         # the candidate's (or the changed verdict's) first line
    reasons: tuple[str, ...] = ()      # what the rule saw


__all__ = ["Outcome", "RuleOutcome"]
