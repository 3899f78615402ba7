"""torchelastic error files (@record / TORCHELASTIC_ERROR_FILE) as input to triage report: they carry
the real exception of a rank (the fixture was written by torchrun for a real failing rank)."""

from __future__ import annotations

import shutil
from pathlib import Path

from triage.analysis.analyze import analyze
from triage.load.inputs import load_inputs

FIXTURE = Path(__file__).resolve().parent.parent / "parsing" / "data" / "torchelastic_error.json"


def test_an_error_file_names_its_rank_and_its_exception(tmp_path: Path) -> None:
    target = tmp_path / "attempt_0" / "3" / "error.json"     # torchrun's layout: the local rank's directory
    target.parent.mkdir(parents=True)
    shutil.copy(FIXTURE, target)
    report = analyze(load_inputs([target]))
    assert (report.verdict.kind.value, report.verdict.culprit_ranks) == ("exception", (3,))
    assert "ValueError" in report.verdict.summary


def test_an_error_file_without_a_rank_is_reported_rank_unknown(tmp_path: Path) -> None:
    target = tmp_path / "error.json"
    shutil.copy(FIXTURE, target)
    report = analyze(load_inputs([target]))
    assert (report.verdict.kind.value, report.verdict.culprit_ranks) == ("exception", ())
    assert "rank unknown" in report.verdict.summary
