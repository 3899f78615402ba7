"""Session 56 (fix56a item 4): condor_q -hold's list of held jobs, ``ID  OWNER  HELD_SINCE  HOLD_REASON`` rows
(``1050981.0   dbrown   11/7  23:48 Job in status 2 put on hold by SYSTEM_PERIODIC_HOLD due to memory usage
3000000.``). A job held over its memory request (the OSPool's periodic hold, the execution point's "memory usage
exceeded request_memory", HTCondor's own "Job has gone over memory limit of N megabytes") is HTCondor's kill of it
(crash SIGKILL, as the job event log's memory hold is read); another hold reason is the job's failure, told in its
words. No rank. The list was refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.paths import REPO
from tests.helpers.report import report_log


@pytest.mark.parametrize("reason", [
    "Job in status 2 put on hold by SYSTEM_PERIODIC_HOLD due to memory usage 8123456.",
    "Error from slot1_4@node17.cluster.example.edu: memory usage exceeded request_memory",
    "Error from slot1_2@cn042: Job has gone over memory limit of 4096 megabytes. Peak usage: 5120 megabytes.",
])
def test_a_memory_hold_row_is_htcondors_kill(reason: str, tmp_path: Path) -> None:
    text = (" ID         OWNER          HELD_SINCE  HOLD_REASON\n"
            f"88412.3     mkowalski       2/14 09:05 {reason}\n"
            f"88412.7     mkowalski       2/14 09:06 {reason}\n")
    code, got = report_log(text, tmp_path)
    assert code not in (0, 2, 70)
    verdict = got["verdict"]
    assert verdict["kind"] == "crash" and "SIGKILL" in verdict["summary"], verdict["summary"]
    assert verdict["culprit_ranks"] == [] and "88412.3" in verdict["summary"]


def test_another_hold_reason_is_the_jobs_failure(tmp_path: Path) -> None:
    text = ("88412.3     mkowalski       2/14 09:05 Error from slot1_4@node17: SHADOW at 10.1.2.3 failed to send "
            "file(s) to <10.1.2.17:41234>: error reading from /home/mk/input.dat: (errno 2) No such file or directory\n")
    code, got = report_log(text, tmp_path)
    assert code not in (0, 2, 70)
    verdict = got["verdict"]
    assert verdict["kind"] == "exception" and verdict["culprit_ranks"] == [], verdict["summary"]
    assert "HTCondor held job 88412.3" in verdict["summary"] and "No such file or directory" in verdict["summary"]


def test_a_hold_the_work_went_on_past_is_no_end(tmp_path: Path) -> None:
    text = ("88412.3  mkowalski  2/14 09:05 Job in status 2 put on hold by SYSTEM_PERIODIC_HOLD due to memory usage 1.\n"
            + "".join(f"step {i} loss 0.{i:03d}\n" for i in range(300)))
    _code, got = report_log(text, tmp_path)
    assert "held job 88412.3" not in str(got.get("verdict", {}))


def test_real_ogc_hold_list(tmp_path: Path) -> None:
    # gwastro/1-ogc#2: three jobs of the PyCBC search held by the OSG's periodic hold over their memory use
    log = (REPO / "tests/realworld/cases/gwastro__1-ogc__2/log.txt").read_text(encoding="utf-8")
    _code, got = report_log(log, tmp_path)
    verdict = got["verdict"]
    assert verdict["kind"] == "crash" and "SIGKILL" in verdict["summary"] and verdict["culprit_ranks"] == []
    assert "1050981.0" in verdict["summary"]
