"""Launchers', schedulers' and frameworks' own failure lines, read from their sources (session 43), each tested on
variants written here (other jobs, hosts, limits), with a negative beside each class."""

from __future__ import annotations

import pytest

from triage.analysis.analyze import analyze
from triage.load.inputs import load_log_texts
from triage.model import Report


def report(*lines: str) -> Report:
    return analyze(load_log_texts([("job.log", "\n".join(lines) + "\n")]))


_WORK = ("[rank0]: step 40 loss 3.10", "[rank1]: step 40 loss 3.12", "[rank0]: step 50 loss 3.02")


# (1) a batch system's time limit in its own words is a stop from outside, never an all-clear: PBS's MOM ("=>> PBS: job
# killed: walltime N exceeded limit M") and Grid Engine's execd ("job N.T exceeded hard wallclock time - initiate
# terminate method")
@pytest.mark.parametrize("line", [
    "=>> PBS: job killed: walltime 86430 exceeded limit 86400",
    "PBS: job killed: walltime 3605 exceeded limit 3600",
    "job 88123.4 exceeded hard wallclock time - initiate terminate method",
    "06/12/2025 10:11:12|  main|gpu-7|W|job 88123.1 exceeded hard wallclock time - initiate terminate method",
])
def test_a_batch_systems_time_limit_is_a_stop_from_outside(line: str) -> None:
    result = report(*_WORK, line)
    assert result.verdict.kind.value == "stopped", result.verdict.summary
    assert "its time limit was reached" in result.verdict.summary, result.verdict.summary


# (2) a limit on what the job used is its kill: PBS's cput/ncpus, Grid Engine's hard limit ("- sending SIGKILL"), out
# of memory where the limit is memory
@pytest.mark.parametrize(("line", "memory"), [
    ("=>> PBS: job killed: cput 7201 exceeded limit 7200", False),
    (('job 4417 exceeds job hard limit "h_vmem" of queue "long.q@cn-03" (17179869184.00000 > '
     'limit:17179869184.00000) - sending SIGKILL'), True),
    (('job 4417 exceeds job hard limit "h_cpu" of queue "all.q@cn-11" (3600.10000 > limit:3600.00000) - sending '
     'SIGKILL'), False),
])
def test_a_batch_systems_kill_for_what_the_job_used(line: str, memory: bool) -> None:
    result = report(*_WORK, line)
    summary = result.verdict.summary
    assert result.verdict.kind.value == "crash" and "SIGKILL" in summary, summary
    assert ("out of memory" in summary) == memory, summary


# (3) HTCondor's job event log: the job's end with a signal or a non-zero return value, a hold over its memory limit
@pytest.mark.parametrize(("lines", "words"), [
    (("005 (771.002.000) 01/02 03:04:05 Job terminated.", "\t(0) Abnormal termination (signal 11)",
      "\t(0) No core file"), "SIGSEGV"),
    (("005 (771.000.000) 2025-01-02 03:04:05 Job terminated.", "\t(1) Normal termination (return value 2)"),
     "exit code 2"),
    (("012 (771.000.000) 2025-01-02 03:04:05 Job was held.",
      "\tJob has gone over memory limit of 4096 megabytes. Peak usage: 4400 megabytes.", "\tCode 34 Subcode 0"),
     "out of memory"),
])
def test_htcondors_job_event_is_the_jobs_end(lines: tuple[str, ...], words: str) -> None:
    result = report("001 (771.000.000) 2025-01-02 03:00:00 Job executing on host: <10.1.2.3:9618>", *lines)
    assert result.verdict.kind.value in ("crash", "exception"), result.verdict.summary
    assert words in result.verdict.summary, result.verdict.summary


def test_htcondors_good_end_and_a_log_that_went_on_are_no_failure() -> None:
    # a job that returned 0; one job's end with a code in a log whose work went on (the next job's progress)
    ended_well = report(*_WORK, "005 (771.000.000) 2025-01-02 03:04:05 Job terminated.",
                        "\t(1) Normal termination (return value 0)")
    assert ended_well.verdict.kind.value == "no_problem_found", ended_well.verdict.summary
    went_on = report("005 (771.000.000) 2025-01-02 03:04:05 Job terminated.",
                     "\t(1) Normal termination (return value 1)", *_WORK, "[rank0]: step 60 loss 2.95",
                     "[rank0]: Training finished")
    assert "HTCondor" not in went_on.verdict.summary, went_on.verdict.summary


@pytest.mark.parametrize("line", [
    "Our cluster prints `PBS: job killed: walltime 100 exceeded limit 90` when a job overruns.",
    "see the docs: SGE logs 'exceeded hard wallclock time' for jobs that overrun",
    "TERM_RUNLIMIT: job killed after reaching LSF run time limit. is what LSF says",
])
def test_the_words_quoted_in_a_sentence_are_no_stop(line: str) -> None:
    result = report(*_WORK, "[rank0]: " + line, "[rank0]: step 60 loss 2.95", "[rank0]: Training finished")
    assert result.verdict.kind.value != "stopped", result.verdict.summary
