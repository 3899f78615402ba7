"""A line that says something failed, read in words alone (no reader of its own), after which the same process
printed its training progress: the process went on past it. It is a note of the all-clear, never the failure.
Variants written here, not taken from the corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import report_log

_PROGRESS = ["[rank0]: step 1 loss 2.31", "[rank1]: step 1 loss 2.30", "[rank0]: step 200 loss 0.31",
             "[rank1]: step 200 loss 0.30"]


def _verdict(tmp_path: Path, lines: list[str]) -> tuple[str, str]:
    _, report = report_log("\n".join(lines) + "\n", tmp_path)
    return report["verdict"]["kind"], report["verdict"]["summary"]


@pytest.mark.parametrize("benign", [
    "wandb: ERROR Failed to sample metric: Not Supported",
    "fatal: not a git repository (or any of the parent directories): .git",
    "ERROR: Could not find a version that satisfies the requirement apex (from versions: none)",
    ("/opt/venv/lib/python3.10/site-packages/torchvision/io/image.py:13: UserWarning: Failed to load image Python "
    "extension: libc10_cuda.so: cannot open shared object file"),
    "[rank0]: Failed to load image Python extension: libc10_cuda.so: cannot open shared object file",
    ("[1732700000.123456] [node01:12345:0]   ib_iface.c:1035 UCX  ERROR ibv_create_cq(cqe=4096) failed: Cannot allocate "
    "memory"),
    ("[W socket.cpp:663] [c10d] The client socket has failed to connect to [localhost]:29500 (errno: 99 - Cannot "
    "assign requested address)."),
    "Error in cpuinfo: prctl(PR_SVE_GET_VL) failed",
])
def test_an_error_line_every_rank_went_on_after_is_a_note_not_the_failure(tmp_path: Path, benign: str) -> None:
    kind, summary = _verdict(tmp_path, [benign, *_PROGRESS])
    assert kind == "no_problem_found", summary
    assert "the job went on after an error line it logged, its progress lines follow: '" in summary


def test_a_rank_that_went_on_is_not_failed_but_one_that_stopped_is(tmp_path: Path) -> None:
    kind, summary = _verdict(tmp_path, ["[rank1]: step 1 loss 2.30", "[rank1]: Failed to open the dataset shard 7",
                                        "[rank0]: step 200 loss 0.31"])
    assert kind != "no_problem_found" and "rank 1" in summary, summary    # rank 1 printed no progress after it


def test_a_rank_less_line_only_some_ranks_went_on_after_stays_a_failure(tmp_path: Path) -> None:
    kind, summary = _verdict(tmp_path, ["[rank0]: step 1 loss 2.3", "[rank1]: step 1 loss 2.3",
                                        "FOOLIB ERROR: registration failed", "[rank0]: step 2 loss 2.2"])
    assert kind != "no_problem_found", summary       # rank 1 may have printed it and stopped there


def test_progress_before_the_line_is_not_going_on(tmp_path: Path) -> None:
    kind, summary = _verdict(tmp_path, ["step 1 loss 2.3", "step 2 loss 2.2", "wandb: ERROR Run crashed: CUDA failure"])
    assert kind != "no_problem_found", summary


def test_a_failure_message_that_names_a_step_is_not_progress(tmp_path: Path) -> None:
    kind, summary = _verdict(tmp_path, ["FOOLIB ERROR: registration failed", "error at step 5: loss is nan"])
    assert kind != "no_problem_found", summary


def test_a_refused_store_connection_then_no_progress_is_still_the_init_failure(tmp_path: Path) -> None:
    kind, summary = _verdict(tmp_path, [
        ("[W socket.cpp:663] [c10d] The client socket has failed to connect to [node1]:29500 (errno: 111 - Connection "
        "refused).")] * 3)
    assert kind in ("network_error", "init_hang"), summary
    assert "29500" in summary


def test_the_exit_code_of_such_a_report_is_0(tmp_path: Path) -> None:
    code, report = report_log("\n".join(["wandb: ERROR Failed to sample metric: Not Supported", *_PROGRESS]) + "\n",
                              tmp_path)
    assert code == 0 and "Failed to sample metric" in report["verdict"]["summary"]
