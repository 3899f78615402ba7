"""triage.parsing.progress: a training loop's progress line, never one that says something failed."""

from __future__ import annotations

import pytest

from triage.parsing.progress import is_progress, mentions_progress, went_on


@pytest.mark.parametrize("line", [
    "step 200 loss 0.31", "Epoch 3: 100%|##########| 50/50", "iter: 1500, lr 1e-4", "loss=0.42", "[Step 7] tokens/s 900",
    "Iteration #12 done", "epoch=4 acc=0.9", "global_step: 300", "train loss: 1.25"])
def test_a_numbered_step_or_a_loss_value_is_progress(line: str) -> None:
    assert is_progress(line)


@pytest.mark.parametrize("line", [
    "NaN loss at step 5", "error at iteration 3", "step 10 failed", "Traceback at epoch 2", "Epoch 3 killed",
    "loss is nan at step 4", "Gradient overflow.  Skipping step, loss scale 0", "batch_size: 32", "stepping down",
    "train_step()", "  File \"train.py\", line 10, in train_step", "Timed out at step 9", "lost 3 steps"])
def test_a_failure_or_a_setting_is_not_progress(line: str) -> None:
    assert not is_progress(line)


def test_went_on_is_any_progress_line() -> None:
    assert went_on(["a", "step 3 loss 1.0"]) and not went_on(["a", "b"]) and not went_on([])


def test_the_word_gate_passes_every_progress_line() -> None:
    from tests.helpers.logs import real_log_lines

    lines = real_log_lines()
    assert all(mentions_progress(line) for line in lines if is_progress(line))
    assert not mentions_progress("no such words here\nnor here")
