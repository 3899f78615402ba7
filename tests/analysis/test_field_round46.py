"""Round 46's classes (first sight 8/12): each on variants written here (other numbers, names, wording the class
covers), with a negative (the same words in a job that went on after them, or quoted in prose)."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.report import report_log


def _verdict(tmp_path: Path, lines: list[str]) -> tuple[str, list[int], str]:
    _, report = report_log("\n".join(lines) + "\n", tmp_path)
    verdict = report["verdict"]
    return verdict["kind"], list(verdict.get("culprit_ranks") or ()), verdict["summary"]


# JAX's warning while its accelerator backend waits for every host of a pod slice (google-research/t5x#997)

def test_a_backend_still_being_set_up_on_a_pod_slice_is_an_init_hang(tmp_path: Path) -> None:
    kind, ranks, summary = _verdict(tmp_path, [
        "I1203 10:02:11.000000 140 train.py:88] Process 0 starting",
        ("/usr/lib/python3/dist-packages/jax/_src/xla_bridge.py:146: UserWarning: TPU backend initialization is taking "
         "more than 120.0 seconds. Did you run your code on all TPU hosts? See https://jax.readthedocs.io/en/latest/"
         "multi_process.html for more information."),
        "  warnings.warn(",
    ])
    assert kind == "init_hang" and ranks == [], summary
    assert "backend" in summary and "after 2 min" in summary


def test_the_same_warning_then_training_steps_is_no_hang(tmp_path: Path) -> None:
    kind, _, summary = _verdict(tmp_path, [
        ("UserWarning: TPU backend initialization is taking more than 60.0 seconds. Did you run your code on all TPU "
         "hosts? See https://jax.readthedocs.io/en/latest/multi_process.html for more information."),
        "global device count: 32",
        "step 1 loss 9.812",
        "step 100 loss 4.127",
    ])
    assert kind != "init_hang", summary


# Open MPI's TCP transport that could not connect to a peer process (jbornschein/mpi4py-examples#11)

_TCP_BOX = [
    "--------------------------------------------------------------------------",
    "WARNING: Open MPI failed to TCP connect to a peer MPI process.  This",
    "should not happen.",
    "",
    "Your Open MPI job may now fail.",
    "",
    "  Local host: gpu-node-17",
    "  PID:        88120",
    "  Message:    connect() to 10.44.3.9:1024 failed",
    "  Error:      No route to host (113)",
    "--------------------------------------------------------------------------",
]


def test_open_mpis_failed_tcp_connect_to_a_peer_is_a_network_error(tmp_path: Path) -> None:
    kind, ranks, summary = _verdict(tmp_path, ["Rank 3 of 8 on gpu-node-17 ready", *_TCP_BOX])
    assert kind == "network_error" and ranks == [], summary
    assert "gpu-node-17" in summary and "10.44.3.9:1024" in summary


def test_the_same_box_then_the_job_going_on_is_no_network_error(tmp_path: Path) -> None:
    kind, _, summary = _verdict(tmp_path, [*_TCP_BOX, "epoch 1 step 10 loss 0.912", "epoch 1 step 20 loss 0.871"])
    assert kind != "network_error", summary


# a CHECK macro on an NCCL call's result, the way Caffe checks it (NVIDIA/caffe#492)

def test_a_check_on_an_nccl_result_is_an_nccl_error(tmp_path: Path) -> None:
    kind, ranks, summary = _verdict(tmp_path, [
        "I0611 08:00:01.000000 5012 parallel.cpp:392] GPUs pairs 0:1, 2:3, 0:2",
        "Check failed: result == ncclSuccess (5 vs. 0)  invalid usage",
    ])
    assert kind == "exception" and ranks == [], summary
    assert "ncclSuccess (5 vs. 0)" in summary


def test_the_check_quoted_in_a_sentence_is_not_read(tmp_path: Path) -> None:
    kind, _, summary = _verdict(tmp_path, [
        "step 10 loss 0.5",
        "From the FAQ: a line like Check failed: result == ncclSuccess (1 vs. 0) means the NCCL build is wrong.",
        "step 20 loss 0.4",
    ])
    assert kind != "exception", summary
