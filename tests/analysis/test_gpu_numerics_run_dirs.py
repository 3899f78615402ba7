"""Run directories of the numerics watch on a real GPU (tests/gpu/test_numerics_gpu.py, run by
scripts/gpu_run.sh on an NVIDIA H100, torch 2.11.0+cu130, 2026-11-26): 2 ranks on one GPU, gloo
collectives, CUDA compute; rank 1's activation makes a NaN from finite inputs at step 3. Kept in
data/gpu_h100_numerics/ (small: every file of both runs) so the report on real GPU records is held
here, where no GPU runs."""

from __future__ import annotations

import shutil
from pathlib import Path

from triage.report import build_report

DATA = Path(__file__).parent / "data" / "gpu_h100_numerics"


def _summary(name: str, tmp_path: Path) -> str:
    run = tmp_path / name
    shutil.copytree(DATA / name, run)
    report = build_report([str(run)])
    assert report.verdict.kind == "nonfinite"
    return report.verdict.summary


def test_full_mode_on_a_gpu_names_the_rank_step_and_layer(tmp_path: Path) -> None:
    summary = _summary("full", tmp_path)
    assert summary.startswith("NONFINITE: rank 1 (testhost) made the first NaN at step 3, in the output of `act`")
    assert "from finite inputs: the layer made it" in summary
    assert "rank 0 (testhost) became non-finite after all_reduce seq 9" in summary


def test_cheap_mode_on_a_gpu_read_late_still_names_the_step_it_was_made(tmp_path: Path) -> None:
    # the GPU's reads came late (late_reads in numerics.json) and the record keeps the step of the value
    summary = _summary("cheap", tmp_path)
    assert summary.startswith("NONFINITE: rank 1 (testhost) made the first NaN at step 3, in the gradient of "
                              "parameter `fc2.bias`")
    assert "rank 0 (testhost) became non-finite after all_reduce seq 10" in summary
