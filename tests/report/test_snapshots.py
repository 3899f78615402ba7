"""Exact rendered text of the report of every golden run, at a fixed width (as rich tests its
own output). Regenerate after a deliberate change: python -m tests.report.test_snapshots --update"""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

import pytest

from triage.analysis.analyze import analyze
from triage.load.inputs import load_inputs
from triage.report.text import render_text

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
CASES = sorted(p.name for p in GOLDEN.iterdir() if (p / "expected.json").is_file())
WIDTH = 100


def rendered(case: str) -> str:
    cwd = os.getcwd()
    os.chdir(GOLDEN / case)
    try:
        report = analyze(load_inputs(["run"]))
    finally:
        os.chdir(cwd)
    out = io.StringIO()
    render_text(report, out, width=WIDTH, color=False)
    return out.getvalue()


@pytest.mark.parametrize("case", CASES)
def test_the_text_report_is_exactly_the_snapshot(case: str) -> None:
    expected = (GOLDEN / case / "expected.txt").read_text(encoding="utf-8")
    assert rendered(case) == expected


if __name__ == "__main__":
    if "--update" in sys.argv:
        for name in CASES:
            (GOLDEN / name / "expected.txt").write_text(rendered(name), encoding="utf-8")
            print(f"updated {name}")
