"""Session 47: runtimes' and schedulers' words across versions.

seff's summary of an ended job (Slurm's contribs/seff: "Job ID: N", "Cluster: c", "User/Group: u/g", then
"State: OUT_OF_MEMORY (exit code 0)"): a time limit, preemption, node failure or cancellation is a stop from outside,
OUT_OF_MEMORY the job's kill for memory, FAILED its exit code; a running job's "State: RUNNING" (no exit code) is no
end, and a rank's own failure before the summary stays the failure.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import failure_verdict
from triage.parsing.frameworks import parse_framework_records

PROGRESS = "".join(f"{prefix}epoch 2 step {n} loss 0.7\n" for n in (100, 200) for prefix in ("0: ", "1: "))
SEFF = ("Job ID: {job}\n{array}Cluster: delta\nUser/Group: alice/alice\nState: {state} (exit code {code})\n"
        "Nodes: 2\nCores per node: 64\nCPU Utilized: 10:02:11\nCPU Efficiency: 24.33% of 1-18:00:00 core-walltime\n"
        "Job Wall-clock time: 16:00:21\nMemory Utilized: 62.41 GB\nMemory Efficiency: 99.86% of 62.50 GB "
        "(31.25 GB/node)\n")


@pytest.mark.parametrize(("job", "array"), [("551205", ""), ("551206", "Array Job ID: 551200_6\n")])
@pytest.mark.parametrize("indent", ["", "  "])
@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_seff_out_of_memory_is_a_kill_for_memory(job: str, array: str, indent: str, eol: str,
                                                 tmp_path: Path) -> None:
    summary = "".join(indent + line + "\n" for line in SEFF.format(job=job, array=array, state="OUT_OF_MEMORY",
                                                                    code=0).splitlines())
    text = (PROGRESS + f"$ seff {job}\n" + summary).replace("\n", eol)
    [record] = parse_framework_records(text)
    assert record.signal == "SIGKILL" and not record.outside and job in record.text
    got = failure_verdict(text, tmp_path)
    assert got["kind"] == "crash" and "out of memory" in got["summary"]


@pytest.mark.parametrize(("state", "words"), [("TIMEOUT", "time limit was reached"), ("PREEMPTED", "preempted"),
                                              ("NODE_FAIL", "a node failed"), ("CANCELLED", "cancelled")])
def test_seff_time_limit_preemption_node_failure_cancel_are_stops(state: str, words: str, tmp_path: Path) -> None:
    text = PROGRESS + SEFF.format(job="73001", array="", state=state, code=0)
    [record] = parse_framework_records(text)
    assert record.outside and record.signal == "SIGTERM"
    got = failure_verdict(text, tmp_path)
    assert got["kind"] == "stopped" and words in got["summary"]


def test_seff_failed_is_its_exit_code(tmp_path: Path) -> None:
    [record] = parse_framework_records(PROGRESS + SEFF.format(job="73002", array="", state="FAILED", code=2))
    assert record.exitcode == 2 and record.signal is None and not record.outside


@pytest.mark.parametrize("text", [
    PROGRESS + SEFF.format(job="73003", array="", state="COMPLETED", code=0),
    PROGRESS + SEFF.format(job="73004", array="", state="FAILED", code=0),   # (a signal seff does not print)
    PROGRESS + "Job ID: 73005\nCluster: delta\nUser/Group: alice/alice\nState: RUNNING\nNodes: 2\n",
    PROGRESS + "Our wiki says a seff line like State: TIMEOUT (exit code 0) means the job hit its --time.\n",
])
def test_seff_that_tells_no_failure_is_no_record(text: str) -> None:
    assert parse_framework_records(text) == ()


def test_a_ranks_own_failure_before_seff_stays_the_failure(tmp_path: Path) -> None:
    text = (PROGRESS + "1: Traceback (most recent call last):\n1:   File \"train.py\", line 9, in <module>\n"
            "1: ValueError: bad shard index 7\n" + SEFF.format(job="73006", array="", state="FAILED", code=1))
    got = failure_verdict(text, tmp_path)
    assert got["kind"] == "exception" and got["culprit_ranks"] == [1] and "bad shard index" in got["summary"]
