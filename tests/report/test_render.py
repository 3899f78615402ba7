"""Rendering: fixed-width terminal text, the JSON contract, self-contained HTML, folding at scale."""

from __future__ import annotations

import io
import json
import re

from tests.helpers.evidence import hang
from triage.analysis.analyze import analyze
from triage.model import Report
from triage.report import render


def _report(world: int = 8) -> Report:
    return analyze(hang(world, 3, 1542, {"op": "all_gather", "count": 8, "dtype": "bfloat16"}))


def _text(report: Report, width: int) -> str:
    out = io.StringIO()
    render(report, "text", out, width=width)
    return out.getvalue()


def test_text_has_verdict_panel_and_folded_table_at_fixed_width() -> None:
    text = _text(_report(), 100)
    lines = text.splitlines()
    assert lines[0].startswith("╭─ triage verdict")
    assert all(len(line) <= 100 for line in lines)
    assert "│ HANG: rank 3 (node00) called all_gather(count=8, bfloat16) at seq 1542 of pg 0" in lines[1]
    rows = [line for line in lines if line.startswith("│ ") and ("3 *" in line or "0-2,4-7" in line)]
    assert any(line.startswith("│ 3 *") for line in rows)
    assert any(line.startswith("│ 0-2,4-7") for line in rows)
    assert "What to do next" in text
    assert "\x1b[" not in text  # not a terminal: no colour codes


def test_text_4096_ranks_folds_into_few_rows() -> None:
    text = _text(_report(4096), 120)
    table_rows = [line for line in text.splitlines() if re.match(r"│ [0-9]", line)]
    assert len(table_rows) <= 4
    assert any("0-2,4-4095" in row for row in table_rows)
    assert len(text.splitlines()) < 60


def test_json_matches_the_contract() -> None:
    out = io.StringIO()
    render(_report(), "json", out)
    data = json.loads(out.getvalue())
    assert data["schema"] == "triage.report/1"
    assert set(data["verdict"]) == {"kind", "subkind", "culprit_ranks", "culprit_host", "process_group", "seq",
                                    "signal", "summary"}
    assert data["verdict"] == {
        "kind": "collective_mismatch", "subkind": "op", "culprit_ranks": [3], "culprit_host": "node00",
        "process_group": "0", "seq": 1542, "signal": None, "summary": data["verdict"]["summary"]}
    # (the culprit's host, as its row has it: culprit_host names it for a rank verdict too)
    assert data["ranks"][3]["host"] == data["verdict"]["culprit_host"]
    for finding in data["findings"]:
        assert {"kind", "ranks", "detail", "evidence"} <= set(finding)
    rank3 = data["ranks"][3]
    assert rank3["last_collective"] == {"op": "all_gather", "pg": "0", "seq": 1542, "count": 8,
                                        "dtype": "bfloat16"}
    assert {"rank", "host", "pid", "state", "last_collective", "stack_top"} <= set(rank3)


def test_html_is_one_offline_file_with_svg_and_culprit() -> None:
    out = io.StringIO()
    render(_report(64), "html", out)
    page = out.getvalue()
    assert page.startswith("<!DOCTYPE html>")
    assert "<svg" in page and "</svg>" in page
    assert not re.search(r"(src|href)\s*=", page)
    assert "http://" not in page and "https://" not in page
    assert "rank 3" in page and "ranks 0-2,4-63" in page
    assert "#c0392b" in page  # culprit lane highlighted


def test_unknown_format_is_refused() -> None:
    try:
        render(_report(), "pdf", io.StringIO())
    except ValueError as error:
        assert "pdf" in str(error)
    else:
        raise AssertionError("render accepted an unknown format")
