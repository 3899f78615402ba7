"""An HTCondor event the job got past (fix54a item 1): a shadow exception (event 007) after which the log goes on (the
job executing again, its image size updated, its normal end) is no end of the job; its "Error from slot...: ..." line
was read by the unread-failure pass as a failure of unknown place. Only the log's last event says how the job ended
(triage.parsing.frameworks.condor_event_passed, the one rule of the shadow exception's reader and of that pass)."""

from __future__ import annotations

import pytest

from tests.helpers.condor import MANUAL
from triage.analysis.analyze import analyze
from triage.load.inputs import load_log_texts
from triage.model import Report
from triage.parsing.frameworks import condor_event_passed

_SUBMIT = ("000 (981.003.000) 2026-02-11 08:00:00 Job submitted from host: <192.168.4.2:9618?addrs=192.168.4.2-9618>",
           "...", "001 (981.003.000) 2026-02-11 08:00:09 Job executing on host: <192.168.4.31:9618?sock=startd_77>",
           "...")
_SHADOW = ("007 (981.003.000) 2026-02-11 08:40:12 Shadow exception!",
           ("\tError from slot1_4@exec-31.cluster.local: Failed to open '/var/lib/condor/execute/dir_31/_condor_stdout' "
           "as standard output: No space left on device (errno 28)"),
           "\t0  -  Run Bytes Sent By Job", "\t0  -  Run Bytes Received By Job", "...")
_AGAIN = ("001 (981.003.000) 2026-02-11 08:42:00 Job executing on host: <192.168.4.40:9618?sock=startd_91>", "...")


def report(*lines: str) -> Report:
    return analyze(load_log_texts([("job.log", "\n".join(lines) + "\n")]))


@pytest.mark.parametrize("after", [
    _AGAIN,
    (*_AGAIN, "006 (981.003.000) 2026-02-11 08:47:00 Image size of job updated: 81220",
     "\t80  -  MemoryUsage of job (MB)", "\t81220  -  ResidentSetSize of job (KB)", "..."),
    (*_AGAIN, "005 (981.003.000) 2026-02-11 09:30:00 Job terminated.",
     "\t(1) Normal termination (return value 0)", "\t\tUsr 0 00:40:11, Sys 0 00:00:03  -  Run Remote Usage", "..."),
])
def test_a_shadow_exception_the_job_ran_on_after_is_no_failure(after: tuple[str, ...]) -> None:
    result = report(*_SUBMIT, *_SHADOW, *after)
    assert result.verdict.kind.value == "no_problem_found", result.verdict.summary
    assert "got past" in result.verdict.summary and "Error from slot1_4" in result.verdict.summary


def test_the_last_shadow_exception_is_still_the_end() -> None:
    result = report(*_SUBMIT, *_SHADOW)
    assert result.verdict.kind.value == "exception" and "shadow exception" in result.verdict.summary


def test_the_rule_reads_the_event_that_holds_the_line() -> None:
    text = "\n".join((*_SUBMIT, *_SHADOW, *_AGAIN)) + "\n"
    error = text.index("\tError from slot1_4")
    assert condor_event_passed(text, error)
    assert not condor_event_passed(text, text.index("001 (981.003.000) 2026-02-11 08:42"))   # the last event
    assert not condor_event_passed("Error from slot1_4@x: lost\n001 (1.0.0) 01/01 00:00:00 Job executing\n", 0)


def test_the_manuals_log_cut_while_the_job_runs_again() -> None:
    result = report(*MANUAL)
    assert result.verdict.kind.value == "no_problem_found", result.verdict.summary
    assert "got past" in result.verdict.summary and "does not say" in result.verdict.summary


def test_the_manuals_log_with_its_next_shadow_exception() -> None:
    result = report(*MANUAL, "007 (781.000.000) 2022-01-30 15:15:38 Shadow exception!",
                    "     Error from slot1_2@bat: FATAL:    executable file not found in $PATH", "...")
    assert result.verdict.kind.value == "exception" and "executable file not found" in result.verdict.summary
