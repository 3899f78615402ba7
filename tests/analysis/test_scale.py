"""4,096 ranks of synthetic FR dumps through the real loader (parallel path), analysis and
rendering: the verdict is exact and the terminal report stays short. No timing asserts."""

from __future__ import annotations

import io
import re
from pathlib import Path

from tests.helpers.synthetic import write_dumps
from triage.analysis.analyze import analyze
from triage.load.fr_files import PARALLEL_MIN_FILES
from triage.load.inputs import load_inputs
from triage.report import render


def test_4096_ranks_with_tp_subgroups(tmp_path: Path) -> None:
    world = 4096
    assert world > PARALLEL_MIN_FILES
    write_dumps(tmp_path, world, 24, culprit=1234, mismatch_at=10, tp=8, fmt="pickle")
    report = analyze(load_inputs([tmp_path]))
    assert report.verdict.culprit_ranks == (1234,)
    assert report.verdict.summary == (
        "HANG: rank 1234 called all_gather(count=8, float32) at seq 10 of pg 0 (default_pg) while ranks "
        "0-1233,1235-4095 called all_reduce(count=1024, float32)")
    assert len(report.ranks) == world
    groups = report.extra["groups"]
    assert groups[0] == {"pg": "0", "name": "default_pg", "ranks": "0-4095", "rebuilt": False}
    out = io.StringIO()
    render(report, "text", out, width=120)
    text = out.getvalue()
    rows = [line for line in text.splitlines() if re.match(r"│ [0-9]", line)]
    assert 1 < len(rows) <= 4
    assert len(text.splitlines()) < 60
    html = io.StringIO()
    render(report, "html", html)
    assert html.getvalue().count("<rect") < 200  # lanes fold: not one per rank
