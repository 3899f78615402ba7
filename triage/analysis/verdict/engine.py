"""The verdict engine (pure): the rules of :mod:`.rules`, in their one order, then the named final
steps. The first rule with a candidate wins; a rule earlier in the order always beats a later one.
Each outcome is recorded (``triage report --explain`` prints them)."""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from triage.analysis.diff import Disagreement, Straggle
from triage.analysis.failures import Failure
from triage.analysis.groups import Group
from triage.analysis.p2p import P2pProblem
from triage.model import Collective, Finding, Verdict
from triage.model.evidence import Evidence, RankEvidence
from triage.model.explain import Outcome, RuleOutcome


@dataclass(frozen=True)
class Inputs:
    """What the rules read: the evidence and what analysis found in it before any verdict."""

    evidence: Evidence
    ranks: tuple[RankEvidence, ...]
    hosts: Mapping[int, str | None]
    traces: Mapping[int, tuple[Collective, ...]]
    world: tuple[int, ...]
    paths: Mapping[int, tuple[str, ...]]
    disagreements: tuple[Disagreement, ...] = ()
    straggles: tuple[Straggle, ...] = ()
    waits: tuple[tuple[Group, int, Collective], ...] = ()
    failures: tuple[Failure, ...] = ()
    missing: tuple[int, ...] = ()
    p2p: tuple[P2pProblem, ...] = ()
    coverage: Mapping[str, object] | None = None

    @property
    def complete(self) -> bool:
        """A whole run (a run directory, bundles, dumps of every rank), not an excerpt."""
        return self.evidence.complete


@dataclass(frozen=True)
class Candidate:
    """What a rule would conclude: the verdict, its root-cause finding, and what the rule saw."""

    verdict: Verdict
    finding: Finding | None
    reasons: tuple[str, ...] = ()


class Scope(str, enum.Enum):
    ANY = "any input"
    COMPLETE = "a whole run only"
    EXCERPT = "an excerpt only"

    def holds(self, complete: bool) -> bool:
        return self is Scope.ANY or (self is Scope.COMPLETE) == complete


@dataclass(frozen=True)
class Rule:
    """One rule of the verdict: its name, scope and decision."""
    name: str
    scope: Scope
    decide: Callable[[Inputs], Candidate | None]


@dataclass(frozen=True)
class Decision:
    """The verdict, its root-cause finding, the findings final steps added, and how it was decided."""

    verdict: Verdict
    main: Finding | None
    agent_findings: tuple[Finding, ...] = ()     # what the live agent knew: right under the root cause
    moved: tuple[Finding, ...] = ()              # a verdict the non-finite step replaced (or its own finding)
    trace: tuple[RuleOutcome, ...] = ()


# a final step: the decision so far -> the decision after it, and the reasons it gives (empty: kept)
Step = Callable[[Decision], tuple[Decision, tuple[str, ...]]]


def run_rules(rules: tuple[Rule, ...], inputs: Inputs, explain: bool = False) -> Decision:
    """The first rule in order with a candidate. ``explain``: every rule is evaluated (the later
    candidates are recorded as lost), not only those up to the winner."""
    trace: list[RuleOutcome] = []
    won: tuple[Rule, Candidate] | None = None
    for rule in rules:
        if not rule.scope.holds(inputs.complete):
            trace.append(RuleOutcome(rule.name, "rule", Outcome.OUT_OF_SCOPE, f"reads {rule.scope.value}"))
            continue
        if won is not None and not explain:
            trace.append(RuleOutcome(rule.name, "rule", Outcome.NOT_EVALUATED, f"after the winner, {won[0].name}"))
            continue
        found = rule.decide(inputs)
        if found is None:
            trace.append(RuleOutcome(rule.name, "rule", Outcome.NO_CANDIDATE, "nothing to conclude"))
        elif won is None:
            won = (rule, found)
            trace.append(RuleOutcome(rule.name, "rule", Outcome.WON, "the first rule in the order with a candidate",
                                     found.verdict.summary, found.reasons))
        else:
            trace.append(RuleOutcome(rule.name, "rule", Outcome.LOST, f"{won[0].name} comes earlier in the order",
                                     found.verdict.summary, found.reasons))
    if won is None:
        raise RuntimeError("internal error: the verdict rules end with an all-clear that always concludes")
    return Decision(won[1].verdict, won[1].finding, trace=tuple(trace))


def run_steps(decision: Decision, steps: tuple[tuple[str, Step], ...]) -> Decision:
    """The named final steps, in order, each on the decision the one before left."""
    trace = list(decision.trace)
    for name, step in steps:
        after, reasons = step(decision)
        changed = after.verdict != decision.verdict
        trace.append(RuleOutcome(name, "final step", Outcome.CHANGED if changed else Outcome.KEPT,
                                 "it rewrote the verdict" if changed else "the verdict stands",
                                 after.verdict.summary if changed else None, reasons))
        decision = after
    return Decision(decision.verdict, decision.main, decision.agent_findings, decision.moved, tuple(trace))


__all__ = ["Candidate", "Decision", "Inputs", "Rule", "Scope", "Step", "run_rules", "run_steps"]
