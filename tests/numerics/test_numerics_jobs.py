"""`triage launch --numerics` on real 4-rank DDP jobs on gloo (tests/programs/numerics_job.py): the
report names the rank, step and module of the first NaN/Inf; the live line and --on-nonfinite stop."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers.launch import HOST, Finished, job_env, launch_argv, rank_dir, read_json, run_launch, torchrun
from tests.helpers.paths import program
from tests.helpers.report import report_run_json

TIMEOUT_S = 240.0


def launch(tmp_path: Path, scenario: str, *options: str, variant: str = "", steps: int = 6) -> Finished:
    run_dir = tmp_path / "run"
    job = torchrun(program("numerics_job.py"), 4)
    argv = launch_argv(run_dir, job, "--numerics", *options, quick_hang=False, host=HOST)
    env = job_env(NUM_SCENARIO=scenario, NUM_BAD_RANK="1", NUM_BAD_STEP="3", NUM_STEPS=str(steps),
                  NUM_VARIANT=variant)
    return run_launch(argv, env, run_dir, timeout=TIMEOUT_S)


def first(run_dir: Path, rank: int) -> dict[str, Any]:
    record: dict[str, Any] = read_json(rank_dir(run_dir, rank) / "numerics.json")
    return record


def test_layer_nan_on_one_rank_full_mode(tmp_path: Path) -> None:
    done = launch(tmp_path, "log_nan", "--numerics-mode", "full")
    assert done.returncode == 0, done.explain()
    verdict = report_run_json(done.run_dir)["verdict"]
    assert verdict["kind"] == "nonfinite"
    assert verdict["culprit_ranks"] == [1]
    assert "step 3" in verdict["summary"] and "`act` (Act) from finite inputs: the layer made it" in verdict["summary"]
    assert "ranks 0,2,3 (testhost) became non-finite after all_reduce seq" in verdict["summary"]
    hit = first(done.run_dir, 1)["first"]
    assert (hit["where"], hit["module"], hit["step"], hit["input_nonfinite"]) == ("forward_output", "act", 3, False)
    assert hit["nan"] > 0 and hit["dtype"] == "float32" and hit["shape"] == [32, 16]
    assert [c["module"] for c in hit["history"][-2:]] == ["fc1", "act"]      # the call before it, then it
    assert "triage: first NaN: rank 1 (testhost) at step 3" in done.stderr


def test_layer_nan_cheap_mode(tmp_path: Path) -> None:
    done = launch(tmp_path, "log_nan")
    assert done.returncode == 0, done.explain()
    data = report_run_json(done.run_dir)
    verdict = data["verdict"]
    assert verdict["kind"] == "nonfinite" and verdict["culprit_ranks"] == [1]
    # cheap mode: the local gradients (before DDP's all_reduce) name the rank and the step, not the layer
    assert "made the first NaN at step 3, in the gradient of parameter `fc2." in verdict["summary"]
    assert "(cheap mode: the layer is not known)" in verdict["summary"]
    assert any("--numerics-mode full" in s for s in data["next_steps"])
    record = first(done.run_dir, 1)
    assert record["switched_to_full"] is True and record["watching"] == "every module"
    assert record["first"]["where"] == "local_gradient" and record["first"]["nan"] > 0
    for rank in (0, 2, 3):                   # the all_reduce of step 3 brought it: seen in step 4's gradients
        assert (first(done.run_dir, rank)["first"]["where"], first(done.run_dir, rank)["first"]["step"]) == \
            ("local_gradient", 4)
    assert "ranks 0,2,3 (testhost) became non-finite after all_reduce seq" in verdict["summary"]


def test_layer_nan_cheap_mode_with_gradients_as_bucket_views(tmp_path: Path) -> None:
    """DDP's gradient_as_bucket_view: a gradient is a view of the bucket DDP all_reduces during backward,
    so the check at the backward's end would see the reduced values on every rank: such gradients are
    checked in their hooks, before DDP's, and the origin is still rank 1's local gradient at step 3."""
    done = launch(tmp_path, "log_nan", variant="bucket_view")
    assert done.returncode == 0, done.explain()
    verdict = report_run_json(done.run_dir)["verdict"]
    assert verdict["kind"] == "nonfinite" and verdict["culprit_ranks"] == [1], verdict
    assert "made the first NaN at step 3, in the gradient of parameter `fc2." in verdict["summary"]
    for rank in (0, 2, 3):
        assert (first(done.run_dir, rank)["first"]["where"], first(done.run_dir, rank)["first"]["step"]) == \
            ("local_gradient", 4)


@pytest.mark.parametrize("variant", ["", "bucket_view"])
def test_nan_made_in_one_ranks_backward_names_that_rank(tmp_path: Path, variant: str) -> None:
    """A NaN made inside rank 1's backward (its forward and loss finite): only its local gradients hold
    it until DDP's all_reduce. Cheap mode names rank 1 at step 3 with either bucket-view setting: with
    gradient_as_bucket_view=False every local gradient is read in one callback at the backward's end
    (before DDP's, which copies the averaged values in), with True in a hook per parameter."""
    done = launch(tmp_path, "grad_nan", variant=variant)
    assert done.returncode == 0, done.explain()
    verdict = report_run_json(done.run_dir)["verdict"]
    assert verdict["kind"] == "nonfinite" and verdict["culprit_ranks"] == [1], verdict
    assert "made the first NaN at step 3, in the gradient of parameter `fc1." in verdict["summary"], verdict
    hit = first(done.run_dir, 1)["first"]
    assert (hit["where"], hit["step"]) == ("local_gradient", 3) and hit["nan"] == (1 if hit["module"] == "fc1.bias" else 8)
    for rank in (0, 2, 3):                   # the all_reduce of step 3 brought it: seen in step 4's gradients
        assert (first(done.run_dir, rank)["first"]["where"], first(done.run_dir, rank)["first"]["step"]) == \
            ("local_gradient", 4)
    for rank in range(4):
        check = first(done.run_dir, rank)["gradient_check"]
        if variant:
            assert check["path"] == "a hook per parameter" and "gradient_as_bucket_view=True" in check["reason"]
        else:
            assert check["path"] == "one call per backward" and check["reason"] is None
            assert check["one_call_backwards"] >= 2 + (rank == 1)


@pytest.mark.parametrize("mode", ["full", "cheap"])
def test_inf_from_the_data_on_one_rank(tmp_path: Path, mode: str) -> None:
    done = launch(tmp_path, "data_inf", "--numerics-mode", mode)
    assert done.returncode == 0, done.explain()
    verdict = report_run_json(done.run_dir)["verdict"]
    assert verdict["kind"] == "nonfinite" and verdict["culprit_ranks"] == [1]
    if mode == "full":
        assert "step 3" in verdict["summary"]
        assert "`fc1` (Linear), whose input was already non-finite" in verdict["summary"]
        assert first(done.run_dir, 1)["first"]["input_nonfinite"] is True
    else:          # the rank and the step from its local gradients; the layer from the next step's full watch
        assert "at step 3, in the gradient of parameter `" in verdict["summary"]
        assert "(every module watched from then on: at step 4 the first was `fc1` (Linear))" in verdict["summary"]
        assert [first(done.run_dir, r)["first"]["step"] for r in range(4)] == [4, 3, 4, 4]


@pytest.mark.parametrize("mode", ["full", "cheap"])
def test_bf16_overflow_in_one_layer(tmp_path: Path, mode: str) -> None:
    done = launch(tmp_path, "bf16_overflow", "--numerics-mode", mode)
    assert done.returncode == 0, done.explain()
    verdict = report_run_json(done.run_dir)["verdict"]
    assert verdict["kind"] == "nonfinite" and verdict["culprit_ranks"] == [1]
    if mode == "full":
        assert "first Inf at step 3" in verdict["summary"] and "`act` (Act)" in verdict["summary"]
    else:
        assert "at step 3, in the gradient of parameter `" in verdict["summary"]
        assert first(done.run_dir, 1)["first"]["where"] == "local_gradient"


@pytest.mark.parametrize("mode", ["full", "cheap"])
def test_same_bad_batch_everywhere_blames_no_rank(tmp_path: Path, mode: str) -> None:
    done = launch(tmp_path, "same_batch", "--numerics-mode", mode)
    assert done.returncode == 0, done.explain()
    verdict = report_run_json(done.run_dir)["verdict"]
    assert verdict["kind"] == "nonfinite" and verdict["culprit_ranks"] == []
    assert "saw Inf at once at step 3" in verdict["summary"] if mode == "full" else \
        "at once at step 3" in verdict["summary"]
    assert "every rank (ranks 0-3)" in verdict["summary"] and "no rank is blamed" in verdict["summary"]


def test_grad_scaler_skips_that_recover_are_not_the_origin(tmp_path: Path) -> None:
    done = launch(tmp_path, "amp_skip", "--on-nonfinite", "stop", steps=8)
    assert done.returncode == 0, done.explain()           # skipped steps do not stop the job
    data = report_run_json(done.run_dir)
    assert data["verdict"]["kind"] == "no_problem_found", data["verdict"]
    skips = [f for f in data["findings"] if f["kind"] == "grad_scaler_skips"]
    assert skips and skips[0]["ranks"] == [0, 1, 2, 3]
    record = first(done.run_dir, 0)
    assert record["skipped_step_count"] >= 1 and record["step"] >= 1
    assert "the grad scaler skipped step 0" in done.stderr


def test_on_nonfinite_stop_stops_the_job(tmp_path: Path) -> None:
    done = launch(tmp_path, "log_nan", "--on-nonfinite", "stop", steps=400)
    assert done.returncode != 0, done.explain()
    assert "--on-nonfinite stop: stopping the job" in done.stderr
    verdict = report_run_json(done.run_dir)["verdict"]
    assert verdict["kind"] == "nonfinite" and verdict["culprit_ranks"] == [1]


@pytest.mark.parametrize("variant", ["own_hooks", "shared,inplace", "compile"])
def test_models_with_hooks_shared_blocks_inplace_and_compile(tmp_path: Path, variant: str) -> None:
    done = launch(tmp_path, "log_nan", "--numerics-mode", "full", variant=variant)
    assert done.returncode == 0, done.explain()
    verdict = report_run_json(done.run_dir)["verdict"]
    assert verdict["kind"] == "nonfinite" and verdict["culprit_ranks"] == [1], verdict
    assert "`act` (Act)" in verdict["summary"]
    record = first(done.run_dir, 1)
    if variant == "own_hooks":
        assert "own hooks ran" in (rank_dir(done.run_dir, 1) / "output.log").read_text()
    if variant == "compile":
        assert any(u["module"] == "block" for u in record["unhooked"]), record["unhooked"]


@pytest.mark.parametrize("mode", ["full", "cheap"])
@pytest.mark.parametrize("variant", ["fsdp", "fsdp1"])
def test_fsdp2_and_fsdp1(tmp_path: Path, variant: str, mode: str) -> None:
    """FSDP2 (fully_shard on CPU/gloo: parameters are DTensor shards, gradients come by reduce_scatter, no
    gradient hook runs) and FSDP1 (FullyShardedDataParallel with use_orig_params and device_id=cpu: in
    torch 2.13 it refuses a CPU-only machine without an explicit CPU device): module names are the same
    as without the wrapper, and cheap mode watches the model's output."""
    done = launch(tmp_path, "log_nan", "--numerics-mode", mode, variant=variant)
    assert done.returncode == 0, done.explain()
    verdict = report_run_json(done.run_dir)["verdict"]
    assert verdict["kind"] == "nonfinite" and verdict["culprit_ranks"] == [1], verdict
    record = first(done.run_dir, 1)
    if mode == "full":
        assert "step 3, in the output of `act` (Act) from finite inputs: the layer made it" in verdict["summary"]
        assert [c["module"] for c in record["first"]["history"][-2:]] == ["fc1", "act"]
    else:
        assert "step 3, in the model's output (Net)" in verdict["summary"]
        assert record["first"]["where"] == "forward_output"
    assert "ranks 0,2,3 (testhost) became non-finite after" in verdict["summary"]

