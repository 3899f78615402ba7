"""A line that says the program goes on past what it reports (fix54a item 2): one list (triage.parsing.unread_failure
.GOES_ON), read by the pass of failure words of no reader and by a program's own fatal ending
(triage.parsing.fatal_ending). ``Fatal error: record 4711 is corrupt, skipping`` was still a failure of unknown place
through the unread pass (whose list lacked "skipping" and "continuing"): it is a note an all-clear quotes where the text
goes on after it; a retry is no sign that the job went on (a hung job retries), so a retry line is dropped, no note."""

from __future__ import annotations

import pytest

from triage.analysis.analyze import analyze
from triage.errors import InputError
from triage.load.inputs import load_log_texts
from triage.model import Report
from triage.parsing.fatal_ending import endings
from triage.parsing.unread_failure import GOES_ON, gone_on_failure, unread_failure


def report(*lines: str) -> Report:
    return analyze(load_log_texts([("job.log", "\n".join(lines) + "\n")]))


@pytest.mark.parametrize("line", [
    "Fatal error: record 4711 is corrupt, skipping",
    "ERROR: checksum mismatch in shard 12, skipping it",
    "[E] mount of /lustre/scratch failed, continuing without it",
    "FATAL: plugin libfoo.so could not be loaded; continuing",
    "ERROR: cannot open cache file /tmp/c.bin: ignoring",
])
def test_a_line_that_goes_on_is_a_note_not_a_failure(line: str) -> None:
    assert unread_failure(line) is None and gone_on_failure(line) == line
    assert endings(f"{line}\n") == []                   # (fatal_ending reads the same list)
    result = report("reading input deck", line, "step 100 of 400 done")
    assert result.verdict.kind.value == "no_problem_found", result.verdict.summary
    assert line in result.verdict.summary and "goes on past it" in result.verdict.summary


@pytest.mark.parametrize("line", [
    "FATAL ERROR: retry limit exceeded for /data/shard_12",
    "FATAL ERROR: cannot continue: record 4711 is corrupt",
    "Fatal error: not continuing after 3 corrupt records",
])
def test_the_words_that_end_it_are_no_going_on(line: str) -> None:
    assert GOES_ON.search(line) is None and unread_failure(line) is not None
    assert len(endings(f"{line}\n")) == 1


def test_a_line_that_goes_on_the_text_ends_with_shows_nothing_went_on() -> None:
    with pytest.raises(InputError):
        report("reading input deck", "ERROR: record 4711 is corrupt, skipping")


def test_a_retry_is_no_note() -> None:
    line = "ERROR: connect to 10.0.0.2:29500 failed, retrying in 5s"
    assert unread_failure(line) is None and gone_on_failure(line) is None
    with pytest.raises(InputError):
        report("starting", line, line, line)


def test_slurms_own_retry_before_the_job_it_submitted() -> None:
    # Slurm's sbatch (src/sbatch/sbatch.c): "Slurm temporarily unable to accept job, sleeping and retrying", then the
    # job it submitted once the queue took it
    with pytest.raises(InputError):
        report("sbatch: error: Slurm temporarily unable to accept job, sleeping and retrying.",
               "Submitted batch job 8812345")


def test_a_failure_after_a_line_that_went_on_is_the_failure() -> None:
    result = report("ERROR: mount of /scratch failed, continuing", "Traceback (most recent call last):",
                    '  File "train.py", line 3, in <module>', "RuntimeError: boom")
    assert result.verdict.kind.value == "exception" and "boom" in result.verdict.summary
