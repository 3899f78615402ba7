"""The verdict engine (triage/analysis/verdict): one ordered list of named rules, the first
candidate wins, every outcome recorded; the headline wording lives in one module."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.helpers.evidence import exited, hang
from tests.helpers.paths import REPO
from triage.analysis.analyze import analyze
from triage.analysis.verdict import headline
from triage.analysis.verdict.engine import Candidate, Decision, Inputs, Rule, Scope, run_rules, run_steps
from triage.analysis.verdict.headline import HEAD_OF, Head
from triage.analysis.verdict.rules import RULES
from triage.model import Verdict, VerdictKind
from triage.model.evidence import Evidence
from triage.model.explain import Outcome
from triage.report.explain import explanation_lines


def _inputs(complete: bool = True) -> Inputs:
    return Inputs(Evidence(complete=complete), (), {}, {}, (), {})


def _says(text: str, reason: str = "r") -> Rule:
    return Rule(text, Scope.ANY, lambda _i: Candidate(Verdict(VerdictKind.HANG, text), None, (reason,)))


_SILENT = Rule("silent", Scope.ANY, lambda _i: None)


def test_the_first_rule_in_the_order_with_a_candidate_wins() -> None:
    decision = run_rules((_SILENT, _says("a"), _says("b")), _inputs())
    assert decision.verdict.summary == "a"
    assert [t.outcome for t in decision.trace] == [Outcome.NO_CANDIDATE, Outcome.WON, Outcome.NOT_EVALUATED]


def test_explain_evaluates_every_rule_and_says_why_the_later_ones_lost() -> None:
    decision = run_rules((_says("a"), _SILENT, _says("b", "seen")), _inputs(), explain=True)
    assert decision.verdict.summary == "a"
    lost = decision.trace[2]
    assert (lost.outcome, lost.summary, lost.reasons) == (Outcome.LOST, "b", ("seen",))
    assert lost.why == "a comes earlier in the order"


def test_a_rule_out_of_its_scope_is_not_evaluated() -> None:
    def boom(_i: Inputs) -> Candidate | None:
        raise AssertionError("evaluated out of scope")
    rules = (Rule("excerpt", Scope.EXCERPT, boom), _says("a"))
    decision = run_rules(rules, _inputs(complete=True), explain=True)
    assert decision.trace[0].outcome is Outcome.OUT_OF_SCOPE and decision.verdict.summary == "a"


def test_final_steps_run_in_order_and_record_what_they_changed() -> None:
    start = Decision(Verdict(VerdictKind.NO_PROBLEM_FOUND, "x"), None)
    def louder(d: Decision) -> tuple[Decision, tuple[str, ...]]:
        return Decision(Verdict(d.verdict.kind, d.verdict.summary + "!"), d.main), ("because",)
    done = run_steps(start, (("one", louder), ("two", lambda d: (d, ()))))
    assert done.verdict.summary == "x!"
    assert [(t.name, t.outcome) for t in done.trace] == [("one", Outcome.CHANGED), ("two", Outcome.KEPT)]


def test_the_rule_list_ends_with_the_all_clear_and_names_each_rule_once() -> None:
    names = [r.name for r in RULES]
    assert len(names) == len(set(names)) and names[-1] == "all clear"
    assert names.index("first crash") < names.index("mismatch") < names.index("first failure")


def test_analyze_records_one_winner_whose_candidate_is_the_verdict() -> None:
    report = analyze(hang(4, 2, 4, {"op": "broadcast"}), explain=True)
    won = [t for t in report.explanation if t.outcome is Outcome.WON]
    assert len(won) == 1 and won[0].name == "mismatch"
    assert won[0].summary == report.verdict.summary
    assert any(t.name == "all clear" and t.outcome is Outcome.LOST for t in report.explanation)
    assert [t.name for t in report.explanation if t.stage == "final step"] == [
        "what an excerpt cannot tell", "the reporter's node", "stopped from outside after it", "agent view", "teardown crash after the hang",
        "stall that ended by itself", "first non-finite value", "stop decision", "straggler headline",
        "job-wide configuration error", "MPI start-up failed", "out of memory",
        "the culprits' host", "the failure's facts"]


def test_without_explain_the_rules_after_the_winner_are_not_evaluated() -> None:
    report = analyze(Evidence(ranks=(exited(0, 1, t=10.0, message="ValueError: x"), exited(1, None, sig=15)),
                              world_size=2))
    outcomes = {t.name: t.outcome for t in report.explanation}
    assert outcomes["first failure"] is Outcome.WON
    assert outcomes["all clear"] is Outcome.NOT_EVALUATED


def test_explanation_lines_name_the_winner_and_its_place_in_the_order() -> None:
    report = analyze(hang(4, 2, 4, {"op": "broadcast"}), explain=True)
    lines = explanation_lines(report.explanation)
    place = [r.name for r in RULES].index("mismatch") + 1      # the rule's place as it is now
    assert lines[1].startswith("rules that fired: ") and f"winner: mismatch (rule {place})" in lines[1]
    assert any(line.startswith(f"* {place:2d}. mismatch: won") for line in lines)
    assert any("candidate: " + report.verdict.summary in line for line in lines)


@pytest.mark.parametrize("kind", list(VerdictKind))
def test_every_kind_has_its_head(kind: VerdictKind) -> None:
    made = headline.verdict(kind, "body")
    assert made.summary == f"{HEAD_OF[kind].value}: body" and headline.body(made.summary) == "body"


def test_a_qualifier_and_a_bodiless_head() -> None:
    assert headline.line(Head.MISMATCH, "b", " (op)") == "MISMATCH (op): b"
    assert headline.line(VerdictKind.NETWORK_ERROR, "", " (reported by rank 1)") == "NETWORK ERROR (reported by rank 1)"


_PREFIX = re.compile(r"""["'](?:HANG|INIT HANG|CRASH|EXCEPTION|(?:SILENT )?MISMATCH|MISSING(?: RANK)?|NETWORK ERROR|"""
                     r"""NONFINITE|STRAGGLER|NO PROBLEM FOUND|FAILURE, CULPRIT NOT IN THIS INPUT)[:( ]""")


def test_no_module_but_the_headline_types_a_head() -> None:
    """The wording of the first line is derived from the verdict kind in one place."""
    home = REPO / "triage" / "analysis" / "verdict" / "headline.py"
    typed = [f"{path.relative_to(REPO)}:{n}" for path in sorted((REPO / "triage").rglob("*.py")) if path != home
             for n, line in enumerate(Path(path).read_text().splitlines(), 1) if _PREFIX.search(line)]
    assert not typed, typed


def test_the_headline_wording_imports_only_the_model() -> None:
    """Every module that words a verdict imports it: it stays at the bottom of analysis."""
    tree = ast.parse((REPO / "triage" / "analysis" / "verdict" / "headline.py").read_text())
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)} | {
        alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert {m for m in imported if m and m.startswith("triage")} == {"triage.model"}, imported


def test_no_module_reads_a_verdict_by_its_text() -> None:
    """Code keeps the Verdict object: nothing tests what its summary starts with."""
    pattern = re.compile(r"summary\.startswith|summary\[:\d+\] ?==|startswith\([\"'](?:NO PROBLEM|INIT HANG|HANG)")
    found = [f"{path.relative_to(REPO)}:{n}" for path in sorted((REPO / "triage").rglob("*.py"))
             for n, line in enumerate(path.read_text().splitlines(), 1) if pattern.search(line)]
    assert not found, found
