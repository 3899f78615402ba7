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


@pytest.mark.parametrize("line", [
    # Spark's TaskSetManager and DAGScheduler, Hadoop MapReduce's client, YARN's ApplicationMaster at a Spark app's end
    ("24/06/11 09:15:20 INFO TaskSetManager: Finished task 12.1 in stage 7.0 (TID 912) in 3110 ms on worker-5.lan "
     "(executor 6) (13/64)"),
    "23/01/02 10:05:00 INFO scheduler.DAGScheduler: Job 3 finished: saveAsTextFile at App.scala:40, took 61.2 s",
    "24/05/01 10:00:15 INFO mapreduce.Job:  map 60% reduce 0%",
    "24/05/01 11:05:01 INFO ApplicationMaster: Final app status: SUCCEEDED, exitCode: 0"])
def test_a_data_jobs_own_progress_is_progress(line: str) -> None:
    assert is_progress(line) and mentions_progress(line)


@pytest.mark.parametrize("line", [
    "WARN TaskSetManager: Lost task 31.0 in stage 3.0 (TID 31, n9, executor 9): ExecutorLostFailure (executor 9 exited)",
    "INFO DAGScheduler: Job 0 failed: count at job.py:12, took 3.1 s",
    "INFO TaskSetManager: Starting task 5.1 in stage 2.0 (TID 41, n4, executor 3)",
    "INFO ApplicationMaster: Final app status: FAILED, exitCode: 15",
    "INFO mapreduce.Job: Job job_1_0001 failed with state FAILED due to: Task failed"])
def test_a_data_jobs_failure_or_start_is_not_progress(line: str) -> None:
    assert not is_progress(line)
