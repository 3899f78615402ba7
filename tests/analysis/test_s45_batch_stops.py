"""Session 45: slurmstepd's STEPD TERMINATED line and PBS's job record's Exit_status are stops from outside.

``*** STEP 42.0 STEPD TERMINATED ON n7 AT <time> DUE TO JOB NOT ENDING WITH SIGNALS ***``: the step was being ended and
its processes did not die; alone, a stop from outside on that node (what ended the step is not in the input); after a
cancellation it is that cancellation's consequence. PBS's ``Exit_status = 271`` in its job record (``qstat -f``) is
256 + 15: PBS ended the job with SIGTERM (a walltime, a qdel, a limit); its walltimes say when it was the walltime.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import failure_verdict
from triage.parsing.frameworks import parse_framework_records

STEPD = "slurmstepd: error: *** {} STEPD TERMINATED ON gpu-b07 AT 2025-09-14T03:12:55 DUE TO JOB NOT ENDING WITH " \
        "SIGNALS ***"
PROGRESS = "".join(f"{prefix}epoch 2 step {n} loss 0.7\n" for n in (100, 200) for prefix in ("0: ", "1: "))


@pytest.mark.parametrize("entity", ["STEP 88123.0", "JOB 88123", "EXTERN STEP FOR 88123"])
@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_stepd_terminated_alone_is_a_stop_on_its_node(entity: str, eol: str, tmp_path: Path) -> None:
    text = (PROGRESS + STEPD.format(entity) + "\n").replace("\n", eol)
    [record] = parse_framework_records(text)
    assert record.outside and record.host == "gpu-b07" and record.rank is None
    got = failure_verdict(text, tmp_path)
    assert got["kind"] == "stopped" and "gpu-b07" in got["summary"] and "did not end with the signals" in \
        got["summary"]


def test_stepd_terminated_after_a_time_limit_is_its_consequence(tmp_path: Path) -> None:
    text = (PROGRESS + "slurmstepd: error: *** STEP 88123.0 ON gpu-b07 CANCELLED AT 2025-09-14T03:10:01 DUE TO TIME "
            "LIMIT ***\n" + STEPD.format("STEP 88123.0") + "\n")
    records = parse_framework_records(text)
    assert [r.consequence for r in records] == [False, True]
    got = failure_verdict(text, tmp_path)
    assert got["kind"] == "stopped" and "time limit was reached" in got["summary"]


@pytest.mark.parametrize("before", ["1: torch.OutOfMemoryError: CUDA out of memory.\n",
                                    "0: [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=50)\n"])
def test_stepd_terminated_after_a_ranks_failure_or_a_timeout_is_its_consequence(before: str) -> None:
    [record] = parse_framework_records(PROGRESS + before + STEPD.format("STEP 88123.0") + "\n")
    assert record.consequence and not record.outside


def test_stepd_words_in_a_sentence_are_no_record() -> None:
    text = PROGRESS + 'The admins said "STEPD TERMINATED ON" lines mean a node gets drained.\n'
    assert parse_framework_records(text) == ()


RECORD = ("Job Id: 4417.pbs-srv\n    Job_Name = train_gpt\n    job_state = F\n    exec_host = gn12/0*32\n"
          "    Resource_List.walltime = 04:00:00\n    resources_used.walltime = {used}\n    Exit_status = {code}\n")


def test_pbs_exit_271_at_its_walltime(tmp_path: Path) -> None:
    text = PROGRESS + RECORD.format(used="04:00:07", code=271)
    [record] = parse_framework_records(text)
    assert record.signal == "SIGTERM" and record.outside and "walltime limit was reached" in record.text
    got = failure_verdict(text, tmp_path)
    assert got["kind"] == "stopped" and "Exit_status 271" in got["summary"]


def test_pbs_exit_271_before_its_walltime_says_what_would_tell(tmp_path: Path) -> None:
    text = PROGRESS + RECORD.format(used="01:13:40", code=271).replace("    Exit_status", "    exit_status")
    [record] = parse_framework_records(text)
    assert record.outside and "qdel" in record.text and "walltime limit was reached" not in record.text
    assert "qstat -xf" in failure_verdict(text, tmp_path)["summary"]


def test_pbs_exit_codes_that_are_no_stop() -> None:
    [record] = parse_framework_records(PROGRESS + RECORD.format(used="00:10:00", code=265))
    assert record.signal == "SIGKILL" and not record.outside
    # the job script's own exit code: its failing line above says more (a record of it would hide that line)
    assert parse_framework_records(PROGRESS + RECORD.format(used="00:10:00", code=3)) == ()
    assert parse_framework_records(PROGRESS + RECORD.format(used="00:10:00", code=0)) == ()


def test_pbs_exit_status_quoted_or_followed_by_work_is_no_record() -> None:
    prose = PROGRESS + "If qstat shows `Exit_status = 271`, the job hit its walltime.\n"
    assert parse_framework_records(prose) == ()
    bare = PROGRESS + "    Exit_status = 271\n"             # no other attribute of PBS's record near it
    assert parse_framework_records(bare) == ()
    later = RECORD.format(used="04:00:07", code=271) + "resubmitted\n" + PROGRESS + "epoch 3 step 300 loss 0.6\n"
    assert parse_framework_records(later) == ()      # another run's record above this job's progress
