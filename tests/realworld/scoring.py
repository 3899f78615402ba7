"""The real-world corpus: logs pasted into public bug reports, each with the cause that was later
established (``cases/<owner>__<repo>__<number>/case.yaml``), and how a report is scored against it.

Used by test_realworld.py (asserts every high- and medium-confidence case) and by
bench/bench_realworld.py (prints the scorecard).
"""

from __future__ import annotations

import contextlib
import enum
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from triage.cli import main

CASES = Path(__file__).resolve().parent / "cases"
ASSERTED_CONFIDENCE = ("high", "medium")
# The verdict kinds that answer an expected kind. "unknown" means the log shows a failure but not
# what it is: any verdict that admits it names no culprit answers it.
EQUIVALENT: dict[str, tuple[str, ...]] = {
    "unknown": ("failure_unlocated", "hang", "network_error", "crash", "exception"),
}


class Score(str, enum.Enum):
    RIGHT = "right"
    PARTIAL = "partial"
    WRONG = "wrong"
    REFUSED = "refused"          # exit 2: "nothing recognisable"
    FALSE_ALL_CLEAR = "false_all_clear"
    CRASHED = "crashed"          # exit 70 or a traceback


@dataclass(frozen=True)
class Case:
    name: str
    directory: Path
    source: str
    kind: str
    subkind: str | None
    culprits: tuple[int, ...] | None    # None: unknown from the text
    confidence: str
    shows: str
    host: str | None = None              # expected culprit_host
    batch: int | None = None             # the collection round the case came in (first-sight scoring)

    @property
    def log(self) -> Path:
        return self.directory / "log.txt"


@dataclass(frozen=True)
class Outcome:
    case: Case
    score: Score
    exit_code: int
    kind: str | None
    culprits: tuple[int, ...]
    summary: str
    stderr: str


def load_cases(root: Path = CASES) -> list[Case]:
    cases = []
    for case_yaml in sorted(root.glob("*/case.yaml")):
        data = yaml.safe_load(case_yaml.read_text(encoding="utf-8"))
        expected = data.get("expected") or {}
        raw = expected.get("culprit_ranks")
        culprits = None if raw in (None, "unknown") else tuple(sorted(int(r) for r in raw))
        cases.append(Case(case_yaml.parent.name, case_yaml.parent, str(data.get("source")),
                          str(expected.get("kind")), expected.get("subkind"), culprits,
                          str(data.get("confidence")), str(data.get("shows") or "").strip(),
                          expected.get("culprit_host"), data.get("batch")))
    return cases


def run_report(case: Case) -> tuple[int, dict[str, Any] | None, str]:
    """``triage report LOG --format json``, in this process (the CLI's own main)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["report", str(case.log), "--format", "json"])
    try:
        report = json.loads(out.getvalue(), parse_constant=_reject_constant) if out.getvalue().strip() else None
    except ValueError:
        report = None
    return code, report, err.getvalue()


def _reject_constant(name: str) -> Any:
    raise ValueError(f"not strict JSON: {name}")


def score(case: Case, code: int, report: dict[str, Any] | None, stderr: str) -> Outcome:
    if code == 70 or "Traceback (most recent call last)" in stderr or (code in (0, 1) and report is None):
        return Outcome(case, Score.CRASHED, code, None, (), "", stderr)
    if code == 2 or report is None:
        return Outcome(case, Score.REFUSED, code, None, (), "", stderr)
    verdict = report["verdict"]
    kind = str(verdict["kind"])
    culprits = tuple(sorted(int(r) for r in verdict.get("culprit_ranks") or ()))
    summary = str(verdict.get("summary") or "")
    if kind == "no_problem_found" or code == 0:
        return Outcome(case, Score.FALSE_ALL_CLEAR, code, kind, culprits, summary, stderr)
    kind_ok = kind == case.kind or kind in EQUIVALENT.get(case.kind, ())
    if kind_ok and case.kind == "collective_mismatch" and case.subkind in ("op", "size", "dtype", "seq"):
        kind_ok = verdict.get("subkind") == case.subkind
    culprit_ok = not culprits if case.culprits is None else culprits == case.culprits
    if culprit_ok and case.host and not culprits:
        culprit_ok = verdict.get("culprit_host") == case.host or case.host in summary
    if kind_ok and culprit_ok:
        result = Score.RIGHT
    elif kind_ok or (culprit_ok and case.culprits):
        result = Score.PARTIAL
    else:
        result = Score.WRONG
    return Outcome(case, result, code, kind, culprits, summary, stderr)


def evaluate(case: Case) -> Outcome:
    code, report, stderr = run_report(case)
    return score(case, code, report, stderr)
