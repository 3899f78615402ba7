"""Run directories from this project's real-GPU run (scripts/gpu_run.sh on an NVIDIA H200, torch
2.11.0+cu130, NCCL 2.28.9; data/gpu_h200/, stop.json and bulky collector files left out so the
report is made from the evidence, as `triage report` does without a live decision)."""

from __future__ import annotations

import shutil
from pathlib import Path

from triage.analysis.gpu_facts import busy_note, busy_ranks
from triage.model.gpu import GpuFacts, GpuProcess, NodeGpus
from triage.report import build_report

DATA = Path(__file__).parent / "data" / "gpu_h200"


def _verdict(name: str, tmp_path: Path) -> str:
    run = tmp_path / name
    shutil.copytree(DATA / name, run)          # (the loader may note what the trimmed bundle lacks)
    return build_report([str(run)]).verdict.summary


def test_a_rank_spinning_on_its_gpu_is_named_with_its_busy_gpu(tmp_path: Path) -> None:
    summary = _verdict("kernel_hang", tmp_path)
    assert summary.startswith("HANG: rank 1 (vm) never reached seq 3: outside any collective")
    assert "spin_on_gpu" in summary and "its GPU is at 100%" in summary
    assert "while rank 0 waits in all_reduce" in summary


def test_a_one_rank_collective_stuck_behind_gpu_work_is_not_a_network_problem(tmp_path: Path) -> None:
    """One NCCL rank, its all_reduce queued behind a kernel that never ends: no peer to blame."""
    summary = _verdict("nccl_watchdog", tmp_path)
    assert summary.startswith("HANG: rank 0 (vm) waits in all_reduce(count=1024) at seq 2")
    assert "waits for no peer" in summary and "look outside the job" not in summary
    assert "its GPU is at 100%" in summary and "NCCL's watchdog timed it out after 5082 ms" in summary


def test_busy_ranks_are_those_on_a_gpu_at_full_utilization() -> None:
    node = NodeGpus("nvml", (GpuFacts(0, util_gpu=100, processes=(GpuProcess(11, rank=0), GpuProcess(12))),
                             GpuFacts(1, util_gpu=40, processes=(GpuProcess(13, rank=1),)),
                             GpuFacts(2, util_gpu=None, processes=(GpuProcess(14, rank=2),))))
    busy = busy_ranks([node])
    assert busy == {0: 100}
    assert busy_note((0,), busy).startswith("; its GPU is at 100%")
    assert busy_note((0, 1), busy).startswith("; the GPU of rank 0 is at 100%")
    assert busy_note((1, 2), busy) == ""
