"""HTCondor's repeated shadow exceptions (fix55c item 4): a log cut while the job runs again after two or more shadow
exceptions of the same job (007 "Shadow exception!", then 001 "Job executing" again, each time) was all-clear with a
note (each event one the job got past); HTCondor's manual ("How To Debug an Always Idle Job") calls these repeated
entries the problem: the job is evicted as soon as it starts, again and again. Now a failure of the job (no rank),
the first exception's message its cause; one shadow exception the job ran on after stays a note
(triage.parsing.frameworks._condor_other_ends)."""

from __future__ import annotations

from tests.helpers.condor import MANUAL, MANUAL_EVICTED
from tests.helpers.report import report_lines

_AGAIN = ("001 (781.000.000) 2022-01-30 15:15:39 Job executing on host: <127.0.0.1:42089?addrs=127.0.0.1-42089>",
          "...")


def test_the_manuals_entries_repeated_are_a_failure_of_the_job() -> None:
    verdict = report_lines(*MANUAL, *MANUAL_EVICTED[2:], *_AGAIN).verdict
    assert verdict.kind.value == "exception" and not verdict.culprit_ranks, verdict.summary
    assert "lost job 781.000.000 2 times" in verdict.summary and "executable file not found" in verdict.summary


def test_three_evictions_name_the_count_and_the_first_message() -> None:
    second = tuple(line.replace("executable file not found in $PATH", "permission denied") for line in
                   MANUAL_EVICTED[2:])
    verdict = report_lines(*MANUAL, *second, *_AGAIN, *MANUAL_EVICTED[2:], *_AGAIN).verdict
    assert "3 times" in verdict.summary and "executable file not found" in verdict.summary, verdict.summary


def test_the_manuals_single_entry_stays_a_note() -> None:
    verdict = report_lines(*MANUAL).verdict
    assert verdict.kind.value == "no_problem_found" and "got past" in verdict.summary, verdict.summary


def test_a_normal_termination_after_the_repetition_is_the_jobs_end() -> None:
    verdict = report_lines(*MANUAL, *MANUAL_EVICTED[2:], *_AGAIN,
                           "005 (781.000.000) 2022-01-30 16:00:00 Job terminated.",
                           "\t(1) Normal termination (return value 0)", "...").verdict
    assert verdict.kind.value == "no_problem_found", verdict.summary


def test_two_jobs_each_evicted_once_are_no_repetition() -> None:
    other = tuple(line.replace("781.000.000", "782.000.000") for line in MANUAL)
    verdict = report_lines(*MANUAL, *other).verdict
    assert verdict.kind.value == "no_problem_found", verdict.summary
