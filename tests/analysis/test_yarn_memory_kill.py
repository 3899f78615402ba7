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
     "container."), None, "physical memory: 2.1 GB of 2 GB physical memory used"),
    (("Container [pid=77,containerID=container_e12_1_0001_01_000003] is running 1048576B beyond the 'PHYSICAL' memory "
     "limit. Current usage: 4.0 GB of 4 GB physical memory used; 5.1 GB of 8.4 GB virtual memory used. Killing "
     "container."), None, "physical memory: 4.0 GB of 4 GB physical memory used"),
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
    _code, out = report_log(text, tmp_path)
    assert "YARN killed" not in out.get("verdict", {}).get("summary", ""), out
