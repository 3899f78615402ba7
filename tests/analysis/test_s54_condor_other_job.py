"""A shadow exception is got past only by a later event of the same job (rev54 of session 54): one HTCondor job event
log holds several jobs (a cluster's procs, a DAG's nodes), and another job's events after one job's shadow exception
do not say that job ran again (triage.parsing.frameworks.condor_event_passed reads the job's cluster and proc). Was: job
101's "Error from slot..." with job 102's image size update after it read NO PROBLEM FOUND ("an event the job got
past")."""

from __future__ import annotations

from tests.helpers.condor import MANUAL_EVICTED
from triage.analysis.analyze import analyze
from triage.load.inputs import load_log_texts
from triage.model import Report
from triage.parsing.frameworks import condor_event_passed


def report(*lines: str) -> Report:
    return analyze(load_log_texts([("job.log", "\n".join(lines) + "\n")]))


def _head(code: str, job: str, what: str) -> str:
    return f"{code} ({job}) 2026-02-11 08:00:00 {what}"


_SHADOW = (_head("007", "101.000.000", "Shadow exception!"),
           ("\tError from slot1_4@exec-31.cluster.local: Failed to open '/var/lib/condor/execute/dir_31/_condor_stdout' "
            "as standard output: No space left on device (errno 28)"),
           "\t0  -  Run Bytes Sent By Job", "\t0  -  Run Bytes Received By Job", "...")
_START = (_head("000", "101.000.000", "Job submitted from host: <192.168.4.2:9618?addrs=192.168.4.2-9618>"), "...",
          _head("000", "102.000.000", "Job submitted from host: <192.168.4.2:9618?addrs=192.168.4.2-9618>"), "...",
          _head("001", "101.000.000", "Job executing on host: <192.168.4.31:9618?sock=startd_77>"), "...",
          _head("001", "102.000.000", "Job executing on host: <192.168.4.32:9618?sock=startd_78>"), "...")


def test_another_jobs_later_events_do_not_pass_a_shadow_exception() -> None:
    for job in ("102.000.000", "101.001.000"):      # another cluster's job; another proc of the same cluster
        result = report(*_START, *_SHADOW, _head("006", job, "Image size of job updated: 81220"),
                        "\t80  -  MemoryUsage of job (MB)", "...")
        assert result.verdict.kind.value == "exception", result.verdict.summary
        assert "No space left on device" in result.verdict.summary


def test_the_same_jobs_later_event_among_others_still_passes_it() -> None:
    result = report(*_START, *_SHADOW, _head("006", "102.000.000", "Image size of job updated: 81220"), "...",
                    _head("001", "101.000.000", "Job executing on host: <192.168.4.40:9618?sock=startd_91>"), "...")
    assert result.verdict.kind.value == "no_problem_found", result.verdict.summary
    assert "got past" in result.verdict.summary


def test_the_rule_reads_the_jobs_id() -> None:
    text = "\n".join((*_SHADOW, _head("001", "102.000.000", "Job executing on host: <1.2.3.4:9618>"), "...")) + "\n"
    assert not condor_event_passed(text, text.index("\tError from"))
    text += _head("001", "101.000.000", "Job executing on host: <1.2.3.4:9618>") + "\n...\n"
    assert condor_event_passed(text, text.index("\tError from"))


def test_the_manuals_evicted_job_then_another_job_of_the_log() -> None:
    # (HTCondor's manual: the evicted job's last shadow exception, then another job of the same log starting)
    result = report(*MANUAL_EVICTED, "001 (782.000.000) 2022-01-30 15:15:40 Job executing on host: "
                    "<127.0.0.1:42089?addrs=127.0.0.1-42089>", "...")
    assert result.verdict.kind.value == "exception" and "executable file not found" in result.verdict.summary
