"""A job stopped from outside (a scheduler's time limit, preemption, node failure, scancel; a pod
evicted; a pod OOMKilled is its container's crash by SIGKILL, not a stop) is a verdict of its own,
``stopped``, headed with who stopped it, why, on which host, when and what to do, asking for no rank.
When a rank failed, timed out or hung before the stop, that first failure stays the verdict and the
stop is said after it. srun's records name the task that ended first over the collateral. Real Slurm
output (data/slurm, captured on this machine's cluster) and hand-written variants of the class (other
hosts, reasons, ids, ranks)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers.report import report_log
from triage.model import VerdictKind

_SLURM = Path(__file__).parent / "data" / "slurm"
_DOCS = Path(__file__).resolve().parents[2] / "docs" / "report.md"
HOSTS = ["vm", "gpu-node-07", "a100x8-12.cluster.local"]
_WATCHDOG = ("[rank{r}]:[E1126 06:52:00.000000 1 ProcessGroupNCCL.cpp:632] [Rank {r}] Watchdog caught collective "
             "operation timeout: WorkNCCL(SeqNum=201, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) "
             "ran for 600011 milliseconds before timing out.")


def _report(text: str, tmp_path: Path) -> tuple[int, dict[str, Any]]:
    code, data = report_log(text, tmp_path)
    assert "verdict" in data, data
    return code, data


def _real(name: str) -> str:
    return (_SLURM / name).read_text(encoding="utf-8")


def test_the_real_time_limit_is_a_stop_that_says_what_to_do(tmp_path: Path) -> None:
    code, doc = _report(_real("timelimit.log"), tmp_path)
    verdict = doc["verdict"]
    assert code == 1 and verdict["kind"] == "stopped", verdict
    assert verdict["summary"].startswith("STOPPED") and verdict["culprit_ranks"] == []
    assert verdict["culprit_host"] == "vm" and "time limit was reached" in verdict["summary"]
    assert "2026-11-26T06:52:14" in verdict["summary"] and "--time" in verdict["summary"]
    assert "which rank" not in verdict["summary"] and "rank unknown" not in verdict["summary"]
    assert any("--time" in step for step in doc["next_steps"]), doc["next_steps"]


def test_the_real_scancel_is_a_stop_that_asks_who_cancelled(tmp_path: Path) -> None:
    _, doc = _report(_real("scancel.log"), tmp_path)
    verdict = doc["verdict"]
    assert verdict["kind"] == "stopped" and verdict["culprit_host"] == "vm", verdict
    assert "sacct" in verdict["summary"] and "which rank" not in verdict["summary"]


def test_the_real_exit_names_the_task_srun_saw_end_first_over_the_peer_error(tmp_path: Path) -> None:
    # rank 1 exits with code 3; rank 0's "Connection closed by peer" (printed before srun's record of
    # rank 1's exit reached the log) is its consequence, and the step's cancellation after it too
    _, doc = _report(_real("exit.log"), tmp_path)
    verdict = doc["verdict"]
    assert verdict["culprit_ranks"] == [1] and "exited with code 3" in verdict["summary"], verdict
    assert verdict["kind"] != "stopped" and "Slurm" not in verdict["summary"]


def test_the_real_kill_names_the_killed_task(tmp_path: Path) -> None:
    _, doc = _report(_real("kill.log"), tmp_path)
    assert doc["verdict"]["culprit_ranks"] == [1] and "SIGKILL" in doc["verdict"]["summary"], doc["verdict"]


def test_a_hang_that_ran_into_the_real_time_limit_stays_the_verdict(tmp_path: Path) -> None:
    lines = _real("timelimit.log").splitlines()
    at = next(i for i, line in enumerate(lines) if "CANCELLED AT" in line)
    text = "\n".join([*lines[:at], "0: " + _WATCHDOG.format(r=0), *lines[at:]]) + "\n"
    _, doc = _report(text, tmp_path)
    verdict = doc["verdict"]
    assert verdict["kind"] != "stopped" and not verdict["summary"].startswith("STOPPED"), verdict
    assert "then Slurm stopped" in verdict["summary"] and "time limit" in verdict["summary"], verdict


@pytest.mark.parametrize("host", HOSTS)
@pytest.mark.parametrize(("why", "words", "advice"), [
    ("TIME LIMIT", "time limit", "--time"), ("PREEMPTION", "preempted", "--requeue"),
    ("NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS", "node failed", "scontrol show node {host}")])
def test_a_stop_with_nothing_wrong_before_it_is_the_verdict(host: str, why: str, words: str, advice: str,
                                                             tmp_path: Path) -> None:
    text = (f"2: step 900 loss 1.1\nslurmstepd: error: *** JOB 4242 ON {host} CANCELLED AT 2026-02-03T04:05:06 "
            f"DUE TO {why} ***\n2: torch.distributed.elastic.multiprocessing.api.SignalException: Process 41 got "
            f"signal: 15\nsrun: error: {host}: task 3: Killed\nsrun: error: {host}: tasks 0-2: Terminated\n")
    code, doc = _report(text, tmp_path)
    verdict = doc["verdict"]
    assert code == 1 and verdict["kind"] == "stopped" and verdict["culprit_ranks"] == [], verdict
    assert verdict["culprit_host"] == host and words in verdict["summary"]
    assert advice.format(host=host) in verdict["summary"], verdict["summary"]


@pytest.mark.parametrize("host", HOSTS)
@pytest.mark.parametrize("why", ["TIME LIMIT", "PREEMPTION"])
@pytest.mark.parametrize(("before", "culprit"), [
    (("[rank5]: Traceback (most recent call last):\n[rank5]:   File \"train.py\", line 9, in <module>\n"
     "[rank5]: ValueError: shapes (4, 7) and (8,) not aligned\n"), [5]),
    (_WATCHDOG.format(r=1) + "\n", None)])
def test_what_went_wrong_before_the_stop_stays_the_verdict(host: str, why: str, before: str,
                                                           culprit: list[int] | None, tmp_path: Path) -> None:
    text = (f"{before}slurmstepd: error: *** JOB 4242 ON {host} CANCELLED AT 2026-02-03T04:05:06 DUE TO {why} ***\n"
            f"srun: error: {host}: tasks 0-7: Terminated\n")
    _, doc = _report(text, tmp_path)
    verdict = doc["verdict"]
    assert verdict["kind"] != "stopped", verdict
    if culprit is not None:
        assert verdict["culprit_ranks"] == culprit, verdict
    assert f"then Slurm stopped JOB 4242 on {host}" in verdict["summary"], verdict


@pytest.mark.parametrize("pod", ["train-worker-2", "llama-ft-worker-11"])
def test_an_oomkilled_pod_is_its_containers_crash_that_says_to_raise_its_limit(pod: str, tmp_path: Path) -> None:
    # (the container's own memory over its limit: a crash by SIGKILL, as Kubernetes' own fields read; not a stop)
    text = (f"Name:             {pod}\nNamespace:        default\nContainers:\n  pytorch:\n    Last State:     "
            "Terminated\n      Reason:       OOMKilled\n      Exit Code:    137\n")
    _, doc = _report(text, tmp_path)
    verdict = doc["verdict"]
    assert verdict["kind"] == "crash" and verdict["culprit_host"] == pod, verdict
    assert "SIGKILL" in verdict["summary"]
    assert "resources.limits.memory" in str(doc["next_steps"]), doc["next_steps"]


@pytest.mark.parametrize("pod", ["train-worker-2", "llama-ft-worker-11"])
@pytest.mark.parametrize("resource", ["memory", "ephemeral-storage"])
def test_an_evicted_pod_is_a_stop(pod: str, resource: str, tmp_path: Path) -> None:
    text = (f"Name:             {pod}\nNamespace:        default\nStatus:           Failed\nReason:           Evicted\n"
            f"Message:          The node was low on resource: {resource}. Container pytorch was using 61Gi, request "
            "is 8Gi, has larger consumption of memory.\n")
    _, doc = _report(text, tmp_path)
    verdict = doc["verdict"]
    assert verdict["kind"] == "stopped" and verdict["culprit_host"] == pod, verdict
    assert f"low on resource: {resource}" in verdict["summary"] and "resources.requests" in verdict["summary"]


def test_every_verdict_kind_is_in_the_schema_docs() -> None:
    table = _DOCS.read_text(encoding="utf-8").split("### Verdict kinds", 1)[1].split("###", 1)[0]
    documented = {line.split("`")[1] for line in table.splitlines() if line.startswith("| `")}
    assert documented == {kind.value for kind in VerdictKind}


@pytest.mark.parametrize("port", [29500, 41234])
@pytest.mark.parametrize("form", [
    ("torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. "
    "port: {port}, useIpv6: 0, code: -98, name: EADDRINUSE, message: address already in use"),
    ("RuntimeError: The server socket has failed to listen on any local network address. The server socket has failed "
    "to bind to [::]:{port} (errno: 98 - Address already in use).")])
def test_a_store_port_already_taken_asks_for_the_port_not_a_rank(port: int, form: str, tmp_path: Path) -> None:
    _, doc = _report(form.format(port=port) + "\n", tmp_path)
    verdict = doc["verdict"]
    assert verdict["culprit_ranks"] == [] and "which rank" not in verdict["summary"], verdict
    assert f"sport = :{port}" in verdict["summary"] and "rank unknown" not in verdict["summary"]
    assert f"sport = :{port}" in doc["next_steps"][0] and "NCCL_DEBUG" not in doc["next_steps"][0]


@pytest.mark.parametrize("node", ["node-17", "gpu-a3.cluster"])
@pytest.mark.parametrize("form", ["pdsh@launcher: {node}: ssh exited with exit code 255",
                                  ("Exception: host={node} was not reachable via ssh. If you are sure hosts are "
                                  "reachable, try --no_ssh_check")])
def test_a_node_the_launcher_cannot_ssh_to_asks_for_the_ssh_command(node: str, form: str, tmp_path: Path) -> None:
    _, doc = _report(form.format(node=node) + "\n", tmp_path)
    verdict = doc["verdict"]
    assert verdict["culprit_ranks"] == [] and "which rank" not in verdict["summary"], verdict
    assert f"ssh -o BatchMode=yes {node} true" in verdict["summary"], verdict
    assert f"ssh -o BatchMode=yes {node} true" in doc["next_steps"][0]
