"""HTCondor's job event log (triage.parsing.frameworks): events 005, 007, 009 and 012 as the job's end, on variants
written here (other jobs, dates, codes), with the negatives: a job that ran again and ended well, a normal end."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import report_lines as report
from triage.analysis.analyze import analyze
from triage.load.inputs import load_log_texts
from triage.parsing.frameworks import parse_framework_records

_CASES = Path(__file__).resolve().parents[1] / "realworld" / "cases"
_SUBMIT = ("000 (4242.000.000) 03/01 10:00:00 Job submitted from host: <10.0.0.1:9618?addrs=10.0.0.1-9618>", "...",
           "001 (4242.000.000) 03/01 10:00:05 Job executing on host: <10.0.0.7:9618?addrs=10.0.0.7-9618>", "...")


def test_a_hold_for_memory_is_the_starters_kill() -> None:
    result = report(*_SUBMIT, "012 (4242.000.000) 03/01 10:20:00 Job was held.",
                    "\tError from slot1_3@worker-17.example.org: Job has gone over memory limit of 8192 megabytes. "
                    "Peak usage: 9001 megabytes.", "\tCode 34 Subcode 102", "...")
    assert result.verdict.kind.value == "crash" and "SIGKILL" in result.verdict.summary, result.verdict.summary
    assert "memory limit" in result.verdict.summary


def test_an_abnormal_termination_is_the_jobs_death_by_its_signal() -> None:
    result = report(*_SUBMIT, "005 (4242.000.000) 2024-03-01 10:30:00 Job terminated.",
                    "\t(0) Abnormal termination (signal 11)", "\t(0) No core file", "...")
    assert result.verdict.kind.value == "crash" and "SIGSEGV" in result.verdict.summary, result.verdict.summary


def test_a_removal_is_a_stop_from_outside() -> None:
    result = report(*_SUBMIT, "009 (4242.000.000) 03/01 11:00:00 Job was aborted.",
                    "\tvia condor_rm (by user alice)", "...")
    assert result.verdict.kind.value == "stopped", result.verdict.summary


@pytest.mark.parametrize("events", [
    # held, released, ran again and ended well
    ("012 (4242.000.000) 03/01 10:20:00 Job was held.", "\tJob has gone over memory limit of 2048 megabytes.",
     "\tCode 34 Subcode 0", "...", "013 (4242.000.000) 03/01 10:25:00 Job was released.", "...",
     "005 (4242.000.000) 03/01 10:40:00 Job terminated.", "\t(1) Normal termination (return value 0)", "..."),
    ("005 (4242.000.000) 03/01 10:40:00 Job terminated.", "\t(1) Normal termination (return value 0)", "..."),
])
def test_a_job_that_ended_well_has_no_end_to_tell(events: tuple[str, ...]) -> None:
    assert parse_framework_records("\n".join((*_SUBMIT, *events)) + "\n") == ()


def test_a_normal_termination_with_a_code_is_the_jobs_exit() -> None:
    deaths = parse_framework_records("\n".join((*_SUBMIT, "005 (4242.000.000) 03/01 10:40:00 Job terminated.",
                                              "\t(1) Normal termination (return value 2)", "...")))
    assert [(d.rank, d.signal, d.exitcode) for d in deaths] == [(None, None, 2)]


@pytest.mark.parametrize(("events", "kind", "words"), [
    # a hold of another code: the job's failure in HTCondor's words
    (("012 (4242.000.000) 03/01 10:20:00 Job was held.", ("\tError from slot1_1@w: Failed to execute '/bin/run.sh': "
      "(errno=13: 'Permission denied')"), "\tCode 6 Subcode 13", "..."), "exception", "hold code 6"),
    # held by the user: a stop from outside
    (("012 (4242.000.000) 03/01 10:20:00 Job was held.", "\tvia condor_hold (by user alice)", "\tCode 1 Subcode 0",
      "..."), "stopped", "condor_hold"),
    # a shadow exception as the log's last event
    (("007 (4242.000.000) 03/01 10:20:00 Shadow exception!", ("\tError from slot1_1@w: Couldn't find/remove the "
      "user's job directory"), "\t0  -  Run Bytes Sent By Job", "..."), "exception", "shadow exception"),
])
def test_htcondors_other_ends(events: tuple[str, ...], kind: str, words: str) -> None:
    result = report(*_SUBMIT, *events)
    assert result.verdict.kind.value == kind and words in result.verdict.summary, result.verdict.summary


def test_a_shadow_exception_a_later_event_follows_is_no_end() -> None:
    assert parse_framework_records("\n".join((*_SUBMIT, "007 (4242.000.000) 03/01 10:20:00 Shadow exception!",
                                               "\tError from slot1_1@w: connection lost", "...",
                                               "001 (4242.000.000) 03/01 10:21:00 Job executing on host: <10.0.0.8:9618>",
                                               "..."))) == ()


def test_the_galaxy_paste() -> None:
    text = (_CASES / "usegalaxy-eu__infrastructure-playbook__533" / "log.txt").read_text()
    result = analyze(load_log_texts([("log.txt", text)]))
    assert (result.verdict.kind.value, result.verdict.culprit_ranks) == ("crash", ()), result.verdict.summary
    assert "SIGKILL" in result.verdict.summary
