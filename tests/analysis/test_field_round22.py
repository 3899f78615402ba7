"""Round 22 of first-sight accuracy (issue 23): the classes its misses and its decoration test showed, each on a
variant written for it, and on the real case."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.report import report_log


def test_a_quoted_exception_behind_a_viewers_line_number_is_read(tmp_path: Path) -> None:
    # a Markdown quote of one exception line, shown in a viewer that numbers its lines
    code, report = report_log("[412] > ValueError: the sampler got 3 replicas but the job has 4 processes\n", tmp_path)
    assert code == 1
    assert report["verdict"]["kind"] == "exception"
    assert "ValueError" in report["verdict"]["summary"]
