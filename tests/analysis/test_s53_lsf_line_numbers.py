"""LSF's job report under a viewer's line numbers in a short paste (round 74's jsh58/Genrich#53 under test_decorated's
line_numbers): textclean takes '[N] ' off only in a paste of five lines or more, so the report's own readers take it."""

from __future__ import annotations

from tests.helpers.report import report_lines


def test_lsf_memlimit_under_a_viewers_line_numbers() -> None:
    result = report_lines("[120] TERM_MEMLIMIT: job killed after reaching LSF memory usage limit.",
                          "[121] Exited with exit code 137.")
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert "TERM_MEMLIMIT" in result.verdict.summary


def test_lsf_owner_kill_under_a_viewers_line_numbers() -> None:
    result = report_lines("[7] TERM_OWNER: job killed by owner.", "[8] Exited with exit code 130.")
    assert result.verdict.kind.value == "stopped", result.verdict.summary
