"""YARN's kill of a container over its memory limit (round 60, yahoo/TensorFlowOnSpark#134, refused at first sight):
Spark's driver tells it as ``Container killed by YARN for exceeding memory limits. X of Y virtual memory used`` (Spark
3: ``exceeding physical memory limits``), its ``Lost executor N on HOST:`` naming the node, and the NodeManager as
``Container [pid=P,containerID=C] is running beyond physical memory limits. Current usage: ...``: a SIGKILL for memory
of no rank, not a refusal; the same words in a job that went on past them (Spark re-runs the executor's tasks) are no
end of the job."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import failure_verdict, report_log
from triage.parsing.frameworks import parse_framework_records


@pytest.mark.parametrize(("line", "host", "usage"), [
    (("24/03/02 10:11:12 ERROR YarnScheduler: Lost executor 3 on node-17.example.org: Container killed by YARN for "
     "exceeding physical memory limits. 9.1 GB of 9 GB physical memory used. Consider boosting "
     "spark.executor.memoryOverhead."), "node-17.example.org", "9.1 GB of 9 GB physical memory used"),
    (("18/05/16 00:46:24 WARN YarnAllocator: Container killed by YARN for exceeding memory limits.  5.0 GB of 4.2 GB "
     "virtual memory used. Consider boosting spark.yarn.executor.memoryOverhead."), None,
     "5.0 GB of 4.2 GB virtual memory used"),
    (("Diagnostics: Container [pid=4242,containerID=container_1522720244417_0004_01_000002] is running beyond physical "
     "memory limits. Current usage: 2.1 GB of 2 GB physical memory used; 3.0 GB of 4.2 GB virtual memory used. Killing "
     "container."), None, "Current usage: 2.1 GB of 2 GB physical memory used"),
    (("Container [pid=77,containerID=container_e12_1_0001_01_000003] is running 1048576B beyond the 'PHYSICAL' memory "
     "limit. Current usage: 4.0 GB of 4 GB physical memory used; 5.1 GB of 8.4 GB virtual memory used. Killing "
     "container."), None, "Current usage: 4.0 GB of 4 GB physical memory used"),
])
def test_yarns_memory_kill_is_a_sigkill_for_memory_of_no_rank(line: str, host: str | None, usage: str) -> None:
    deaths = [d for d in parse_framework_records(line + "\n") if "YARN" in d.text]
    assert len(deaths) == 1, deaths
    death = deaths[0]
    assert (death.rank, death.signal, death.host) == (None, "SIGKILL", host), death
    assert usage in death.text, death.text


def test_the_drivers_several_lines_of_one_kill_are_one_failure(tmp_path: Path) -> None:
    text = ("18/04/03 10:24:43 INFO yarn.YarnAllocator: Completed container container_1_0004_01_000002 on host: orange "
            "(state: COMPLETE, exit status: -103)\n"
            "18/04/03 10:24:43 WARN yarn.YarnAllocator: Container killed by YARN for exceeding memory limits. 5.0 GB "
            "of 4.2 GB virtual memory used. Consider boosting spark.yarn.executor.memoryOverhead.\n"
            "18/04/03 10:24:43 ERROR cluster.YarnClusterScheduler: Lost executor 1 on orange: Container killed by YARN "
            "for exceeding memory limits. 5.0 GB of 4.2 GB virtual memory used. Consider boosting "
            "spark.yarn.executor.memoryOverhead.\n")
    verdict = failure_verdict(text, tmp_path)
    assert verdict["kind"] == "crash" and verdict["culprit_ranks"] == [], verdict
    assert "YARN killed a container" in verdict["summary"] and "memory" in verdict["summary"], verdict


def test_a_kill_the_job_went_on_past_is_no_end(tmp_path: Path) -> None:
    text = ("23/01/02 10:00:00 ERROR YarnScheduler: Lost executor 2 on n3: Container killed by YARN for exceeding memory "
            "limits. 4.5 GB of 4.4 GB physical memory used.\n"
            "23/01/02 10:00:01 INFO TaskSetManager: Starting task 5.1 in stage 2.0 (TID 41, n4, executor 3)\n"
            "23/01/02 10:05:00 INFO DAGScheduler: Job 0 finished: count at job.py:12, took 320.1 s\n"
            "23/01/02 10:05:01 INFO SparkContext: Successfully stopped SparkContext\n")
    # (rev50 F17: this passed on a refusal, then on "FAILURE, CULPRIT NOT IN THIS INPUT" of the ERROR line read in
    # words; Spark's 'Job 0 finished:' is the job's progress past the kill)
    code, out = report_log(text, tmp_path)
    assert (code, out["verdict"]["kind"]) == (0, "no_problem_found"), out
    assert "went on after an error line" in out["verdict"]["summary"], out


_KILL = ("24/06/11 09:14:07 ERROR YarnClusterScheduler: Lost executor 4 on worker-3.lan: Container killed by YARN for "
         "exceeding physical memory limits. 6.2 GB of 6 GB physical memory used. Consider boosting "
         "spark.executor.memoryOverhead.\n")


@pytest.mark.parametrize("after", [
    # TaskSetManager's progress: the lost executor's tasks done elsewhere
    ("24/06/11 09:15:20 INFO TaskSetManager: Finished task 12.1 in stage 7.0 (TID 912) in 3110 ms on worker-5.lan "
     "(executor 6) (13/64)\n"),
    # the ApplicationMaster's end of a yarn-cluster app
    "24/06/11 09:40:02 INFO ApplicationMaster: Final app status: SUCCEEDED, exitCode: 0\n",
])
def test_spark_going_on_past_a_kill_is_no_end_of_the_job(after: str) -> None:
    # (rev50 F3) Spark runs a lost executor's tasks again: its progress, or the app's success, after the kill
    assert not [d for d in parse_framework_records(_KILL + after) if "YARN" in d.text]


def test_an_app_that_failed_after_the_kill_keeps_it() -> None:
    after = ("24/06/11 09:20:02 INFO ApplicationMaster: Final app status: FAILED, exitCode: 15, (reason: User class "
             "threw exception: org.apache.spark.SparkException: Job aborted due to stage failure)\n")
    assert [d for d in parse_framework_records(_KILL + after) if "YARN" in d.text]


def test_the_reviewers_app_that_succeeded_after_an_executor_lost_to_yarn(tmp_path: Path) -> None:
    # rev50's yarn_wenton.txt: 30 finished tasks, executor 9 killed by YARN, 50 more finished, the app's success
    def done(i: int, when: str) -> str:
        return (f"24/05/01 {when} INFO TaskSetManager: Finished task {i}.0 in stage 3.0 (TID {i + 100}) in 120 ms on "
                f"n{i % 8}.cluster (executor {i % 8}) ({i}/400)\n")
    text = ("".join(done(i, f"10:00:{i:02d}") for i in range(30))
            + "24/05/01 11:00:00 ERROR YarnScheduler: Lost executor 9 on n9.cluster: Container killed by YARN for "
            "exceeding memory limits.  10.4 GB of 10.4 GB physical memory used. Consider boosting "
            "spark.yarn.executor.memoryOverhead.\n"
            "24/05/01 11:00:01 WARN TaskSetManager: Lost task 31.0 in stage 3.0 (TID 31, n9.cluster, executor 9): "
            "ExecutorLostFailure (executor 9 exited caused by one of the running tasks) Reason: Container killed by "
            "YARN for exceeding memory limits.  10.4 GB of 10.4 GB physical memory used.\n"
            + "".join(done(i, f"11:01:{i - 30:02d}") for i in range(31, 81))
            + "24/05/01 11:05:00 INFO SparkContext: Invoking stop() from shutdown hook\n"
            "24/05/01 11:05:01 INFO ApplicationMaster: Final app status: SUCCEEDED, exitCode: 0\n")
    code, out = report_log(text, tmp_path)
    assert (code, out["verdict"]["kind"]) == (0, "no_problem_found"), out


_MAPREDUCE = ("24/05/01 10:00:01 INFO mapreduce.Job:  map 40% reduce 0%\n"
              "24/05/01 10:00:09 INFO mapreduce.Job: Task Id : attempt_1714550000000_0001_m_000003_0, Status : FAILED\n"
              "Container [pid=4242,containerID=container_1714550000000_0001_01_000005] is running beyond physical "
              "memory limits. Current usage: 1.1 GB of 1 GB physical memory used; 2.9 GB of 2.1 GB virtual memory used. "
              "Killing container.\n")


@pytest.mark.parametrize(("after", "code", "kind"), [
    # Hadoop MapReduce's client (Job.monitorAndPrintJob): the failed attempt's diagnostics, then the job's progress
    # and its success: YARN ran the attempt again (rev50 F3's mr1)
    (("24/05/01 10:00:15 INFO mapreduce.Job:  map 60% reduce 0%\n24/05/01 10:00:35 INFO mapreduce.Job:  map 100% "
      "reduce 100%\n24/05/01 10:00:36 INFO mapreduce.Job: Job job_1714550000000_0001 completed successfully\n"),
     0, "no_problem_found"),
    # the job failed after it: the kill is its end
    (("24/05/01 10:00:36 INFO mapreduce.Job: Job job_1714550000000_0001 failed with state FAILED due to: Task "
      "failed task_1714550000000_0001_m_000003\n"), 1, "crash"),
])
def test_a_mapreduce_job_that_went_on_past_a_kill(after: str, code: int, kind: str, tmp_path: Path) -> None:
    got, out = report_log(_MAPREDUCE + after, tmp_path)
    assert (got, out["verdict"]["kind"]) == (code, kind), out
