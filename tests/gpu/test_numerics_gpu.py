"""`triage launch --numerics` on a real GPU (marker gpu; skipped without CUDA): a 2-rank DDP job on
ONE GPU (gloo carries the all_reduce, CUDA does the compute; tests/programs/numerics_job.py with
NUM_DEVICE=cuda) where rank 1's ``act`` layer takes the log of negative values at step 3. The
report names rank 1, step 3 and the layer (full mode) or the parameter whose local gradient held
it (cheap mode); in cheap mode the GPU is kept busy so that the CPU runs ahead of it, and the
watch's reads (copies into pinned host memory, read when their CUDA event has completed) must
arrive late: the CPU never waited for them."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.launch import HOST, Finished, job_env, launch_argv, rank_dir, read_json, run_launch, torchrun
from tests.helpers.paths import program
from tests.helpers.processes import triage_cmd

pytestmark = [pytest.mark.gpu, pytest.mark.timeout(240)]


def _launch(tmp_path: Path, mode: str, variant: str = "") -> Finished:
    run_dir = tmp_path / "run"
    job = torchrun(program("numerics_job.py"), 2)
    argv = launch_argv(run_dir, job, "--numerics", "--numerics-mode", mode, quick_hang=False, host=HOST)
    env = job_env(NUM_SCENARIO="log_nan", NUM_BAD_RANK="1", NUM_BAD_STEP="3", NUM_STEPS="6", NUM_DEVICE="cuda",
                  NUM_VARIANT=variant)
    return run_launch(argv, env, run_dir, timeout=180)


def _report(run_dir: Path) -> dict[str, Any]:
    proc = subprocess.run(triage_cmd("report", "--format", "json", str(run_dir)), capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.stdout, proc.stderr
    data: dict[str, Any] = json.loads(proc.stdout)
    print(data["verdict"]["summary"])
    return data


def _record(run_dir: Path, rank: int) -> dict[str, Any]:
    record: dict[str, Any] = read_json(rank_dir(run_dir, rank) / "numerics.json")
    print(f"rank {rank}:", json.dumps({k: v for k, v in record.items() if k != "first"}),
          json.dumps({k: v for k, v in (record["first"] or {}).items() if k != "history"}))
    return record


def test_full_mode_names_rank_step_and_layer_on_a_gpu(tmp_path: Path) -> None:
    done = _launch(tmp_path, "full")
    assert done.returncode == 0, done.explain()
    verdict = _report(done.run_dir)["verdict"]
    assert verdict["kind"] == "nonfinite" and verdict["culprit_ranks"] == [1], verdict
    assert "step 3" in verdict["summary"] and "`act` (Act) from finite inputs" in verdict["summary"], verdict
    hit = _record(done.run_dir, 1)["first"]
    assert (hit["where"], hit["module"], hit["step"], hit["input_nonfinite"]) == ("forward_output", "act", 3, False)


def test_cheap_mode_reads_without_waiting_and_names_rank_step_and_parameter(tmp_path: Path) -> None:
    done = _launch(tmp_path, "cheap", variant="gpu_busy")
    assert done.returncode == 0, done.explain()
    verdict = _report(done.run_dir)["verdict"]
    assert verdict["kind"] == "nonfinite" and verdict["culprit_ranks"] == [1], verdict
    assert re.search(r"made the first NaN( or Inf)? at step 3, in the gradient of parameter `fc2\.", verdict["summary"]), verdict
    records = [_record(done.run_dir, rank) for rank in (0, 1)]
    hit = records[1]["first"]
    assert (hit["where"], hit["step"], hit["iteration"]) == ("local_gradient", 3, 3), hit
    assert hit["module"].startswith("fc2."), hit
    assert records[0]["first"]["step"] == 4                  # the all_reduce of step 3 brought it to rank 0
    assert all(r["late_reads"] > 0 and r["dropped_reads"] == 0 for r in records), records
    assert records[1]["switched_to_full"] is True
