"""The redaction walk over a report: every string redacted, each distinct string once, objects with
nothing to redact kept as they are; json and text drop the per-rank traces they never draw."""

from __future__ import annotations

import io
from dataclasses import replace

from tests.helpers.evidence import hang
from triage.analysis.analyze import analyze
from triage.model import Collective, Report
from triage.redact import redact_strings, set_redaction
from triage.report import render

TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0"


def _report_with_secrets() -> Report:
    report = analyze(hang(8, 3, 1542, {"op": "all_gather", "count": 8, "dtype": "bfloat16"}))
    secret = Collective(rank=3, pg=f"pg GH_TOKEN={TOKEN}", seq=1, op="all_reduce", pg_name=TOKEN)
    plain = Collective(rank=3, pg="0", seq=2, op="all_reduce")
    verdict = replace(report.verdict, summary=f"{report.verdict.summary} {TOKEN}")
    return replace(report, verdict=verdict, traces=((3, (secret, plain)),), recent=((3, (secret,)),),
                   extra={**report.extra, "note": [TOKEN, ("x", TOKEN)]})


def test_every_string_is_redacted_and_untouched_objects_are_kept() -> None:
    report = _report_with_secrets()
    out = redact_strings(report)
    assert TOKEN not in repr(out)
    assert TOKEN in repr(report)                       # a copy: the input is unchanged
    (_rank, (secret, plain)), = out.traces
    assert secret.pg == "pg GH_TOKEN=<redacted>" and secret.pg_name == "<redacted>"
    assert plain is report.traces[0][1][1]             # nothing to redact: the same object
    assert out.extra["note"] == ["<redacted>", ("x", "<redacted>")]
    assert out.ranks == report.ranks


def test_no_redact_returns_the_report_itself() -> None:
    report = _report_with_secrets()
    set_redaction(False)
    try:
        assert redact_strings(report) is report
    finally:
        set_redaction(True)


def test_every_format_writes_no_secret() -> None:
    report = _report_with_secrets()
    for fmt in ("json", "text", "html", "chrome-trace"):
        buf = io.StringIO()
        render(report, fmt, buf, width=120)
        assert TOKEN not in buf.getvalue(), fmt
