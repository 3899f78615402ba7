"""Real GPU scenarios under `triage launch` (marker gpu; skipped without a CUDA GPU).

One GPU: gloo carries the collectives between ranks and CUDA does the work (multi-rank GPU hangs);
NCCL runs one rank, or two ranks on one GPU where that is the fault. Each test checks that the
right rank is named, and that the node bundle holds the GPU facts (node/gpus.json from NVML or
nvidia-smi). Results go to docs/compatibility.md with the date, GPU, driver, torch and NCCL.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from tests.helpers.launch import Finished, job_env, launch_argv, run_launch, torchrun
from tests.helpers.paths import program
from triage.exitcodes import ExitCode

pytestmark = [pytest.mark.gpu, pytest.mark.timeout(300)]


def _launch(tmp_path: Path, scenario: str, nproc: int = 2, *options: str, args: tuple[str, ...] = ()) -> Finished:
    run_dir = tmp_path / "run"
    job = torchrun(program("gpu_job.py"), nproc, scenario, *args)
    return run_launch(launch_argv(run_dir, job, "--hang-timeout", "10", *options), job_env(), run_dir)


def _verdict(done: Finished) -> str:
    return done.line("triage: verdict: ").removeprefix("triage: verdict: ")


def _gpus(done: Finished) -> dict[str, object]:
    path = next(done.run_dir.glob("*/bundles/*/node/gpus.json"))
    data: dict[str, object] = json.loads(path.read_text())
    assert data["source"] in ("nvml", "nvidia-smi"), data
    return data


def test_kernel_hang_names_the_rank_on_the_spinning_gpu(tmp_path: Path) -> None:
    done = _launch(tmp_path, "kernel_hang", 2, "--stop-timeout", "30")
    assert done.returncode == int(ExitCode.HANG_DETECTED), done.explain()
    assert "rank 1" in _verdict(done), done.explain()
    gpus = _gpus(done)
    busy = [g for g in gpus["gpus"] if isinstance(g, dict) and (g.get("util_gpu") or 0) >= 99]  # type: ignore[union-attr]
    assert busy, gpus


def test_device_side_assert_is_the_crash_of_its_rank(tmp_path: Path) -> None:
    done = _launch(tmp_path, "device_assert")
    assert done.returncode != 0, done.explain()
    verdict = _verdict(done)
    assert "rank 1" in verdict and re.search(r"device-side assert|CUDA error", verdict), verdict


def test_cuda_oom_names_the_rank(tmp_path: Path) -> None:
    done = _launch(tmp_path, "oom")
    assert done.returncode != 0, done.explain()
    verdict = _verdict(done)
    assert "rank 1" in verdict and "OutOfMemoryError" in verdict, verdict


def test_two_ranks_on_one_gpu_is_duplicate_gpu(tmp_path: Path) -> None:
    done = _launch(tmp_path, "duplicate_gpu")
    assert done.returncode != 0, done.explain()
    assert "Duplicate GPU" in done.stdout + done.stderr + _verdict(done), done.explain()


def test_nccl_watchdog_abort_is_reported(tmp_path: Path) -> None:
    done = _launch(tmp_path, "watchdog", 1)
    assert done.returncode != 0, done.explain()
    verdict = _verdict(done)
    assert "rank 0" in verdict and re.search(r"watchdog|timed out|Timeout", verdict, re.IGNORECASE), verdict


def test_nccl_single_rank_loop_overhead(tmp_path: Path) -> None:
    """Prints the wall time of 2,000 one-rank NCCL all_reduces with and without triage (a figure, not asserted)."""
    import subprocess

    job = torchrun(program("gpu_job.py"), 1, "nccl_loop", "2000")
    started = time.perf_counter()
    plain = subprocess.run(job, env=job_env(), capture_output=True, text=True, timeout=240, check=False)
    plain_s = time.perf_counter() - started
    assert plain.returncode == 0, plain.stdout + plain.stderr
    started = time.perf_counter()
    done = run_launch(launch_argv(tmp_path / "run", job), job_env(), tmp_path / "run")
    triage_s = time.perf_counter() - started
    assert done.returncode == 0, done.explain()
    print(f"nccl_loop: plain {plain_s:.2f} s, under triage {triage_s:.2f} s, ratio {triage_s / plain_s:.3f}")
