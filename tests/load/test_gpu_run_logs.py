"""Logs from this project's own real-GPU run (scripts/gpu_run.sh on an NVIDIA H200, driver
580.159.04, torch 2.11.0+cu130, NCCL 2.28.9): each `merged.log` that `triage launch` wrote for a
scenario of tests/gpu, read back as a user would paste it (data/gpu_h200/)."""

from __future__ import annotations

from pathlib import Path

from triage.analysis.analyze import analyze
from triage.load.inputs import load_log_texts
from triage.model import Report

DATA = Path(__file__).parent / "data" / "gpu_h200"


def report(name: str) -> Report:
    path = DATA / f"{name}.merged.log"
    return analyze(load_log_texts([(str(path), path.read_text(errors="replace"))]))


def test_nccl_duplicate_gpu_under_its_exception_blames_both_ranks() -> None:
    """torch 2.11 prints the DistBackendError ("invalid usage (run with NCCL_DEBUG=WARN for
    details)"), then NCCL's "Last error:" and "Duplicate GPU detected : rank 0 and rank 1 ...":
    the detail is what the exception was."""
    verdict = report("duplicate_gpu").verdict
    assert verdict.culprit_ranks == (0, 1)
    assert "Duplicate GPU detected" in verdict.summary and "LOCAL_RANK" in verdict.summary


def test_device_side_assert_is_the_crash_of_rank_1() -> None:
    verdict = report("device_assert").verdict
    assert (verdict.kind.value, verdict.culprit_ranks) == ("crash", (1,))
    assert "device-side assert triggered" in verdict.summary


def test_cuda_oom_is_rank_1s() -> None:
    verdict = report("cuda_oom").verdict
    assert verdict.culprit_ranks == (1,) and "OutOfMemoryError" in verdict.summary


def test_real_nccl_info_init_and_coll_lines_are_a_healthy_rank() -> None:
    result = report("nccl_info")
    assert result.verdict.kind.value == "no_problem_found"
    assert "rank 0 of 1" in result.extra["coverage"]["summary"]


def test_a_watchdog_timeout_then_the_launcher_stopped_is_the_timeout() -> None:
    """rank 0's NCCL watchdog times out all_reduce SeqNum=2, then torchrun's agent gets SIGTERM (the
    supervisor that saw the stall): the stop is a reaction, the timeout is the story."""
    verdict = report("nccl_watchdog").verdict
    assert (verdict.kind.value, verdict.culprit_ranks) == ("hang", ())
    assert "timed out in ALL_REDUCE SeqNum=2" in verdict.summary and "SIGTERM" not in verdict.summary
