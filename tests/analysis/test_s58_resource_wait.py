"""Session 58 (fix58a item 3): a start-up that waits for cluster resources that never come, of no rank: vLLM's Ray
placement group still not created ("Waiting for creating a placement group of specs for N seconds. specs=[...]",
vllm/executor/ray_utils.py) or given up on ("ValueError: Cannot provide a placement group of
placement_group_specs=[...] within 1800 seconds"), Ray's autoscaler's request no node type can fulfil, a Ray cluster's
alive nodes below the count its start-up waits for ("Ray cluster status: 1/2 nodes alive.", the vLLM production
stack's wait_for_ray.py). Was refused ("no rank, collective, watchdog, NCCL or error line"), now init_hang of no rank
that names what it waits for (vllm-project/aibrix#927, vllm-project/production-stack#653). A wait after which the text
shows the resources came (the count complete, vLLM's Ray workers' own lines, the model loaded, training progress) is
no hang."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers.report import report_log
from triage.parsing.rendezvous import InitWaitKind, parse_init_line, resources_came

_ADVICE = ("Check `ray status` and `ray list nodes` to see if you have enough resources, and make sure the IP "
           "addresses used by ray cluster are the same as VLLM_HOST_IP environment variable specified in each node "
           "if you are running on a multi-node.")
_SPECS = "[{'GPU': 1.0, 'node:172.31.4.17': 0.001}, {'GPU': 1.0}, {'GPU': 1.0}, {'GPU': 1.0}]"


def _waits(*seconds: int, tag: str = "") -> str:
    return "".join(f"{tag}INFO 11-03 09:1{i}:05 [ray_utils.py:399] Waiting for creating a placement group of specs "
                   f"for {secs} seconds. specs={_SPECS}. {_ADVICE}\n" for i, secs in enumerate(seconds))


def _verdict(text: str, tmp_path: Path) -> dict[str, Any]:
    code, got = report_log(text, tmp_path)
    assert code != 2, got
    verdict: dict[str, Any] = got["verdict"]
    return verdict


@pytest.mark.parametrize("tag", ["", "(EngineCore_DP0 pid=212) "], ids=["plain", "engine-core-tag"])
def test_placement_group_never_created_is_an_init_hang(tag: str, tmp_path: Path) -> None:
    text = (f"{tag}WARNING 11-03 09:09:55 [ray_utils.py:330] The number of required GPUs exceeds the total number of "
            "available GPUs in the placement group.\n" + _waits(10, 30, 70, 150, tag=tag))
    verdict = _verdict(text, tmp_path)
    assert verdict["kind"] == "init_hang", verdict
    assert verdict["culprit_ranks"] == []
    assert "placement group" in verdict["summary"] and "'GPU': 1.0" in verdict["summary"]
    assert "not in this input" in verdict["summary"]


def test_placement_group_given_up_is_an_init_hang(tmp_path: Path) -> None:
    text = (_waits(10, 30, 70, 150, 310, 630, 1270)
            + "Traceback (most recent call last):\n"
            + '  File "/opt/venv/lib/python3.11/site-packages/vllm/executor/ray_utils.py", line 402, in '
              "_wait_until_pg_ready\n"
            + "    raise ValueError(\n"
            + f"ValueError: Cannot provide a placement group of placement_group_specs={_SPECS} within 1800 seconds. "
              "See `ray status` and `ray list nodes` to make sure the cluster has enough resources.\n")
    verdict = _verdict(text, tmp_path)
    assert verdict["kind"] == "init_hang", verdict
    assert "gave up after 30 min" in verdict["summary"]


@pytest.mark.parametrize("after", [
    "(RayWorkerWrapper pid=5121, ip=172.31.4.18) INFO 11-03 09:13:40 [parallel_state.py:1004] rank 1 in world size 4",
    "INFO 11-03 09:14:02 [gpu_model_runner.py:1595] Model loading took 9.32 GiB and 41.2 seconds",
    "INFO 11-03 09:14:30 [executor_base.py:112] # GPU blocks: 29834, # CPU blocks: 8192",
    "INFO:     Application startup complete.",
], ids=["ray-worker-line", "model-loaded", "gpu-blocks", "server-started"])
def test_placement_group_made_late_is_no_hang(after: str, tmp_path: Path) -> None:
    code, got = report_log(_waits(10, 30) + after + "\n", tmp_path)
    assert code == 2 or got["verdict"]["kind"] != "init_hang", got


def test_ray_nodes_below_the_count_waited_for(tmp_path: Path) -> None:
    text = ("$ kubectl logs llama-70b-raycluster-head-x7q2z -c vllm-ray-head\n"
            "Waiting for Ray to become available...\n"
            "[2025-08-14 10:02:11,902] Ray cluster status: 2/4 nodes alive.\n"
            "[2025-08-14 10:02:11,903] Cluster is NOT ready.\n"
            "Ray not ready yet. Retrying in 2 seconds...\n"
            "[2025-08-14 10:02:15,114] Ray cluster status: 2/4 nodes alive.\n"
            "[2025-08-14 10:02:15,115] Cluster is NOT ready.\n")
    verdict = _verdict(text, tmp_path)
    assert verdict["kind"] == "init_hang", verdict
    assert "2 of 4" in verdict["summary"] and "the 2 that never joined are not in this input" in verdict["summary"]


def test_ray_nodes_that_all_came_is_no_hang(tmp_path: Path) -> None:
    text = ("[2025-08-14 10:02:11,902] Ray cluster status: 1/3 nodes alive.\n"
            "[2025-08-14 10:02:11,903] Cluster is NOT ready.\n"
            "[2025-08-14 10:02:30,410] Ray cluster status: 3/3 nodes alive.\n"
            "[2025-08-14 10:02:30,411] Cluster is ready.\n"
            "Ray is ready. Starting vLLM...\n")
    code, got = report_log(text, tmp_path)
    assert code == 2 or got["verdict"]["kind"] != "init_hang", got


def test_autoscaler_infeasible_request(tmp_path: Path) -> None:
    text = ("(autoscaler +2m31s) Tip: use `ray status` to view detailed cluster status. To disable these messages, "
            "set RAY_SCHEDULER_EVENTS=0.\n"
            "(autoscaler +2m31s) Error: No available node types can fulfill resource request {'GPU': 8.0, 'CPU': 1.0}. "
            "Add suitable node types to this cluster to resolve this issue.\n")
    verdict = _verdict(text, tmp_path)
    assert verdict["kind"] == "init_hang", verdict
    assert "{'GPU': 8.0, 'CPU': 1.0}" in verdict["summary"]


def test_the_words_alone() -> None:
    wait = parse_init_line("Waiting for creating a placement group of specs for 30 seconds. specs=[{'GPU': 1.0}].")
    assert wait is not None and wait.kind is InitWaitKind.RESOURCE_WAIT and not wait.is_timeout
    # (a complete count, the autoscaler's status table's pending placement groups: no wait of a start-up)
    assert parse_init_line("Ray cluster status: 2/2 nodes alive.") is None
    assert parse_init_line("{'GPU': 1.0} * 2 (PACK): 1+ pending placement groups") is None
    assert resources_came("Ray cluster status: 2/2 nodes alive.")
    assert not resources_came("Ray cluster status: 1/2 nodes alive.")


def test_real_text_gpustack_5509(tmp_path: Path) -> None:
    # gpustack/gpustack#5509: vLLM's engine core waiting on a placement group of two GPUs, one per node, where Ray saw
    # one GPU (the other node's taken for a TPU), then the reporter's `ray status`
    text = ("Logs\n"
            "(EngineCore pid=84) INFO 06-07 18:13:55 [ray_utils.py:464] Waiting for creating a placement group of specs "
            "for 150 seconds. specs=[{'GPU': 1.0}, {'GPU': 1.0}]. Check `ray status` and `ray list nodes` to see if "
            "you have enough resources, and make sure the IP addresses used by ray cluster are the same as "
            "VLLM_HOST_IP environment variable specified in each node if you are running on a multi-node.\n"
            "exec into the ray container and run `ray status`:\n"
            "======== Autoscaler status: 2026-06-07 18:12:41.350749 ========\n"
            "Node status\n"
            "Active:\n"
            " 1 node_2e3ec40e7fbb6c864ff45c8a2e1e5c98c2003d31f952721b788c874b\n"
            " 1 node_cf0d03c37453f9bd671279bc840128c174c1684dbb7e4b1e7f3e3ff7\n"
            "Pending:\n"
            " (no pending nodes)\n"
            "Recent failures:\n"
            " (no failures)\n"
            "Resources\n"
            "Total Usage:\n"
            " 0.0/34.0 CPU\n"
            " 0.0/1.0 GPU\n"
            " 0.0/1.0 TPU\n"
            "Pending Demands:\n"
            " {'GPU': 1.0} * 2 (PACK): 1+ pending placement groups\n")
    verdict = _verdict(text, tmp_path)
    assert verdict["kind"] == "init_hang", verdict
    assert verdict["culprit_ranks"] == []
