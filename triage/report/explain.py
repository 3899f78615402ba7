"""``triage report --explain``: which verdict rules fired, with their candidates and reasons, and
why the winner won (the rules' order), then what each final step did. Plain text, after the report;
every string redacted and made safe for a terminal, as the report itself."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from triage.console import terminal_safe
from triage.model import Report
from triage.model.explain import Outcome, RuleOutcome
from triage.redact import redact_strings

_MARK = {Outcome.WON: "*", Outcome.LOST: "+", Outcome.CHANGED: "~"}


def explanation_lines(trace: Sequence[RuleOutcome]) -> list[str]:
    """The lines --explain prints (pure)."""
    rules = [t for t in trace if t.stage == "rule"]
    steps = [t for t in trace if t.stage != "rule"]
    winner = next((t for t in rules if t.outcome is Outcome.WON), None)
    lines = [("how the verdict was decided (triage/analysis/verdict: the rules in their order, the first "
              "with a candidate wins; then the final steps)")]
    fired = [t for t in rules if t.outcome in (Outcome.WON, Outcome.LOST)]
    lines.append(f"rules that fired: {len(fired)} of {len(rules)}"
                 + (f"; winner: {winner.name} (rule {rules.index(winner) + 1})" if winner else ""))
    for number, item in enumerate(rules, 1):
        lines.append(f"{_MARK.get(item.outcome, ' ')} {number:2d}. {item.name}: {item.outcome.value} ({item.why})")
        lines.extend(_details(item))
    for item in steps:
        lines.append(f"{_MARK.get(item.outcome, ' ')} final step {item.name}: {item.outcome.value} ({item.why})")
        lines.extend(_details(item))
    return lines


def _details(item: RuleOutcome) -> list[str]:
    out = [f"       candidate: {item.summary}"] if item.summary else []
    out.extend(f"       reason: {reason}" for reason in item.reasons)
    return out


def write_explanation(report: Report, file: TextIO) -> None:
    """The explanation of ``report``'s verdict, redacted and terminal-safe."""
    trace = terminal_safe(redact_strings(report.explanation))
    file.write("\n".join(explanation_lines(trace)) + "\n")


__all__ = ["explanation_lines", "write_explanation"]
