"""A fatal word that ends nothing (session 53's review of triage.parsing.fatal_ending): a run's summary field that
says there was none ('Fatal error:   none', 'FATAL ERROR: 0'), and a fatal line whose own words say the program goes
on past it ('..., continuing without it', '..., retrying', 'skipping', 'falling back'), were the job's EXCEPTION when
only a summary's rules, a blank or a launcher's record came after them; they are no failure (and unread_failure reads
neither: a field of none, 'continuing without'). 'cannot continue' is still the program's fatal ending."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import report_lines as report
from triage.analysis.analyze import analyze
from triage.errors import InputError
from triage.load.inputs import load_inputs
from triage.parsing.fatal_ending import endings
from triage.parsing.unread_failure import unread_failure

_CASES = Path(__file__).resolve().parents[1] / "realworld" / "cases"


@pytest.mark.parametrize("lines", [
    (" step 1000 time 1.0e-3", "=" * 42, " Run summary", "=" * 42, " Warnings:      3", " Fatal error:   none", "=" * 42),
    ("Epoch 10/10 loss=0.41", "Saving model", "Fatal error: none"),
    ("Checks done.", "FATAL ERROR: 0", ""),
    ("Checks done.", "FATAL ERROR: n/a."),
    ("Loading plugins", "Fatal error: could not load optional plugin libfoo.so, continuing without it", "-" * 60,
     "Job 4711 finished"),
    ("+ ./stage_data.sh", "FATAL ERROR: could not reach object store (attempt 1 of 3), retrying", "+ ./stage_data.sh",
     "staged 1200 files"),
    ("Init", "FATAL ERROR: no InfiniBand device found, falling back to TCP", ""),
])
def test_a_fatal_word_that_ends_nothing_is_no_failure(lines: tuple[str, ...]) -> None:
    assert endings("\n".join(lines) + "\n") == []
    try:
        result = report(*lines)
    except InputError:
        return                          # (no line of a failure at all: triage says so)
    assert result.verdict.kind.value == "no_problem_found", result.verdict.summary


def test_a_fatal_line_that_skips_a_record_is_no_fatal_ending() -> None:
    """(unread_failure reads the same list since session 54: no failure; the text ends with it, so no note either,
    and nothing else is in it: refused)"""
    lines = ("Reading records", "Fatal error: record 4711 is corrupt, skipping", "")
    assert endings("\n".join(lines)) == []
    assert unread_failure(lines[1]) is None
    with pytest.raises(InputError):
        report(*lines)


@pytest.mark.parametrize("line", [
    "FATAL ERROR: cannot continue without a restart file",
    "FATAL ERROR: None of the expected input paths exist",
    "Fatal error: exception Not_found",
    "FATAL ERROR: lost 2 of 4 workers, not continuing",
])
def test_a_fatal_ending_of_such_words_is_still_read(line: str) -> None:
    assert len(endings("step 10\n" + line + "\n")) == 1
    assert report("step 10", line).verdict.kind.value == "exception"


def test_unread_failure_reads_no_field_of_none() -> None:
    assert unread_failure("Fatal error:   none") is None and unread_failure("Errors: None.") is None
    assert unread_failure("Error: none of the GPUs is free") is not None
    assert unread_failure("ERROR: could not open plugin, continuing without it") is None


def test_real_fatal_endings_still_read_with_a_field_of_none_above() -> None:
    """Colvars/colvars#544 (NAMD's FATAL ERROR after Colvars' error): still the program's fatal ending, with a
    summary's 'Fatal error: none' of an earlier stage above it."""
    path = _CASES / "Colvars__colvars__544"
    logs = [p for p in sorted(path.iterdir()) if p.suffix in (".txt", ".log")]
    result = analyze(load_inputs(logs))
    assert result.verdict.kind.value == "exception" and "FATAL ERROR" in result.verdict.summary, \
        result.verdict.summary
    text = logs[0].read_text()
    assert len(endings("Fatal error: none\n" + "=" * 42 + "\nstage 2\n" + text)) == len(endings(text)) >= 1
