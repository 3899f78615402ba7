"""A program's fatal line then a scheduler's neutral record of the job's end (fix55c item 3): ``FATAL ERROR: ...``
then ``Job 4242 completed`` was read (fix54a item 3) as a clean end after it, and the line fell to the unread pass: a
failure of unknown place quoting the words. A scheduler's ``Job <id> completed`` / ``finished`` says the job ended,
not how: neutral teardown, as a launcher's record; the fatal line is the program's own end (an exception, no rank).
A word of success or an exit code 0 on the record still says the run ended well (triage.parsing.fatal_ending)."""

from __future__ import annotations

import pytest

from tests.helpers.report import report_lines
from triage.parsing.fatal_ending import endings

_FATAL = "FATAL ERROR: negative density in cell 1182"


@pytest.mark.parametrize("record", ["Job 4242 completed", "Job 4242.pbs01 finished", "Job 4242 has completed.",
                                    "Job 4242_3 ended"])
def test_a_schedulers_neutral_record_after_it_is_teardown(record: str) -> None:
    assert len(endings(f"step 100 residual 1e-3\n{_FATAL}\n{record}\n")) == 1
    verdict = report_lines("step 100 residual 1e-3", _FATAL, record).verdict
    assert verdict.kind.value == "exception" and not verdict.culprit_ranks, verdict.summary
    assert "the program's own FATAL ERROR: negative density in cell 1182" in verdict.summary, verdict.summary


@pytest.mark.parametrize("record", ["Job 4242 completed successfully", "Job 4242 completed with exit code 0",
                                    "Training completed"])
def test_a_record_of_a_good_end_still_says_it_was_not_the_end(record: str) -> None:
    assert endings(f"step 100 residual 1e-3\n{_FATAL}\n{record}\n") == []
