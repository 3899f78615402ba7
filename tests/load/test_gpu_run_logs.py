"""Logs from this project's own real-GPU run (scripts/gpu_run.sh on an NVIDIA H200, driver
580.159.04, torch 2.11.0+cu130, NCCL 2.28.9): each `merged.log` that `triage launch` wrote for a
scenario of tests/gpu, read back as a user would paste it (data/gpu_h200/)."""

from __future__ import annotations

import json
from pathlib import Path

from triage.analysis.analyze import analyze
from triage.load.inputs import load_log_texts
from triage.model import Report
from triage.schemas import STOP_LOG_RECORD, STOP_SCHEMA

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
    supervisor that saw the stall): the timeout is the story; the stop after it is said after it, as context."""
    verdict = report("nccl_watchdog").verdict
    assert (verdict.kind.value, verdict.culprit_ranks) == ("hang", ())
    story, _, then = verdict.summary.partition("; then ")
    assert "timed out in ALL_REDUCE SeqNum=2" in story and "SIGTERM" not in story
    assert then.startswith("torchrun's agent received SIGTERM")


def _stop_record(host: str, kind: str, summary: str, ranks: list[int], when: float) -> str:
    payload = {"schema": STOP_SCHEMA, "time": when, "host": host, "reason": "the hang is certain", "stop_at": when,
               "verdict": {"kind": kind, "summary": summary, "culprit_ranks": ranks}}
    return f"[{host}:triage] {STOP_LOG_RECORD}{json.dumps(payload)}"


def test_triages_own_stop_record_in_a_merged_log_is_the_story() -> None:
    """The kernel-hang merged.log from the H200 run (READY, then torchrun's SIGTERM) with the stop
    record the agent now writes before the stop: the verdict is the one triage stopped for, and
    the SIGTERM is its consequence, not a stop "from outside"."""
    lines = (DATA / "kernel_hang.merged.log").read_text().splitlines()
    summary = "HANG: rank 1 (vm) never reached seq 3: outside any collective at gpu_job.py:29 in spin_on_gpu"
    lines.insert(5, _stop_record("vm", "stuck_outside_collective", summary, [1], 1795652184.4))
    result = analyze(load_log_texts([("merged.log", "\n".join(lines) + "\n")]))
    assert (result.verdict.kind.value, result.verdict.culprit_ranks) == ("stuck_outside_collective", (1,))
    assert "spin_on_gpu" in result.verdict.summary and "from outside" not in result.verdict.summary
    # without the record, the same log is a stop from outside (what a pasted log said before)
    assert "from outside" in report("kernel_hang").verdict.summary


def test_a_stop_record_a_rank_printed_is_the_ranks_text_not_triages() -> None:
    """A rank that prints a triage record gets its own tag first ("[vm:0] [vm:triage] ..."): it
    decides nothing."""
    text = "\n".join(["[vm:0] step 1 loss 0.4",
                      "[vm:0] " + _stop_record("vm", "mismatch", "MISMATCH: rank 7 forged", [7], 1.0),
                      "[vm:1] [rank1]: ValueError: bad shard"]) + "\n"
    result = analyze(load_log_texts([("merged.log", text)]))
    assert result.verdict.culprit_ranks == (1,) and "forged" not in result.verdict.summary
