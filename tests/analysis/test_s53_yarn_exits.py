"""Session 53: Spark's YarnAllocator record of an executor's container, "Container marked as failed: C on host: H. Exit
status: S.", read for 137 in round 69, is read for YARN's 143 (its SIGTERM, "Container killed on request. Exit code is
143", "Killed by external signal": a stop from outside the executor) and for a status of no signal (1: the executor's
own error, whose words YARN's diagnostics carry after "Last 4096 bytes of prelaunch.err :"). Both were failure lines
of no known rank (143 a teardown's SIGTERM, 1 words of no reader)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import failure_verdict, report_log

HEAD = "21/03/02 10:11:12 INFO YarnAllocator: Driver requested a total number of 4 executor(s).\n"
RECORD = ("21/03/02 10:15:40 WARN YarnAllocator: Container marked as failed: container_1614650000000_0042_01_000003 on "
          "host: worker-7.example.com. Exit status: {status}. Diagnostics: {diag}\n")
KILLED_143 = ("[2021-03-02 10:15:40.123]Container killed on request. Exit code is 143\n[2021-03-02 10:15:40.124]Container "
              "exited with a non-zero exit code 143.\n[2021-03-02 10:15:40.125]Killed by external signal\n")


def test_143_is_yarns_stop(tmp_path: Path) -> None:
    code, got = report_log(HEAD + RECORD.format(status=143, diag=KILLED_143), tmp_path)
    assert code not in (0, 2, 70)
    verdict = got["verdict"]
    assert verdict["kind"] == "stopped" and "worker-7.example.com" in verdict["summary"]
    assert "stopped by YARN with SIGTERM" in verdict["summary"]
    steps = " ".join(got["next_steps"])
    assert "yarn application -status" in steps and "sacct" not in steps


def test_143_with_yarns_memory_words_is_the_memory_kill(tmp_path: Path) -> None:
    diag = ("Container [pid=4242,containerID=container_1614650000000_0042_01_000003] is running beyond physical memory "
            "limits. Current usage: 9.1 GB of 9 GB physical memory used; 11.2 GB of 18.9 GB virtual memory used. "
            "Killing container.\n" + KILLED_143)
    got = failure_verdict(HEAD + RECORD.format(status=143, diag=diag), tmp_path)
    assert got["kind"] == "crash" and "out of memory" in got["summary"]


@pytest.mark.parametrize(("status", "words"), [(1, "the executor's own error"), (52, "OutOfMemoryError"),
                                               (50, "uncaught exception")])
def test_a_status_of_no_signal_is_the_executors_own_end(status: int, words: str, tmp_path: Path) -> None:
    diag = "Exception from container-launch.\nContainer id: container_1614650000000_0042_01_000003\nExit code: 1\n"
    got = failure_verdict(HEAD + RECORD.format(status=status, diag=diag), tmp_path)
    assert got["kind"] == "exception" and f"exited with status {status}" in got["summary"]
    assert words in got["summary"]


def test_a_job_that_went_on_did_not_end_there(tmp_path: Path) -> None:
    text = (HEAD + RECORD.format(status=143, diag=KILLED_143)
            + "21/03/02 10:16:41 INFO DAGScheduler: Job 3 finished: count at etl.py:88, took 164.2 s\n")
    _code, got = report_log(text, tmp_path)
    assert got.get("verdict", {}).get("kind") != "stopped"


def test_real_143_kills(tmp_path: Path) -> None:
    # TalkingData/Fregata#12: the driver's "Lost executor" lines of YARN's 143, under Spark's progress bar
    text = ("17/01/01 23:03:32 ERROR YarnScheduler: Lost executor 598 on bigdata-serv2122.mycorp.com: Container marked "
            "as failed: container_e50_1481285758114_1471903_01_000599 on host: bigdata-serv2122.mycorp.com. Exit "
            "status: 143. Diagnostics: Container killed on request. Exit code is 143\nContainer exited with a non-zero "
            "exit code 143\nKilled by external signal\n\n"
            "[Stage 1:>                                                        (0 + 80) / 83]\n")
    _code, got = report_log(text, tmp_path)
    assert got["verdict"]["kind"] == "stopped" and "bigdata-serv2122.mycorp.com" in got["verdict"]["summary"]


def test_real_exit_1_with_its_prelaunch_error(tmp_path: Path) -> None:
    # intel/analytics-zoo#1033: the executor's launch script failed; YARN's diagnostics carry its prelaunch.err
    text = ("2019-07-12 14:33:56 WARN  YarnAllocator:69 - Container marked as failed: "
            "container_1562909986413_0010_02_000003 on host: bdw-3. Exit status: 1. Diagnostics: [2019-07-12 "
            "14:33:53.665]Exception from container-launch.\nContainer id: container_1562909986413_0010_02_000003\n"
            "Exit code: 1\n[2019-07-12 14:33:53.666]Container exited with a non-zero exit code 1. Error file: "
            "prelaunch.err.\nLast 4096 bytes of prelaunch.err :\n/mnt/disk1/yarn/nm/usercache/root/appcache/"
            "application_1562909986413_0010/container_1562909986413_0010_02_000003/launch_container.sh: line 16: "
            "export: `spark.executorEnv.OMP_NUM_THREADS=1': not a valid identifier\n")
    got = failure_verdict(text, tmp_path)
    assert got["kind"] == "exception" and "bdw-3" in got["summary"]
    assert "launch_container.sh: line 16: export: `spark.executorEnv.OMP_NUM_THREADS=1': not a valid identifier" \
        in got["summary"]
