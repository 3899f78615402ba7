"""The reporter's sentences state a hang, a stop or a node only when they tell what happened: what might
happen, what to avoid, or a stop the job came back from is no account (triage.parsing.prose), and a healthy
log that says so is never a hang or a stop."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from triage.cli import main
from triage.parsing.prose import read_prose


@pytest.mark.parametrize("sentence", [
    "Note: training may hang at the end of an epoch if the number of batches differs between ranks.",
    "The loader might hang during shutdown when workers are still prefetching.",
    "Set drop_last=True to avoid a hang at the last batch of an epoch.",
    "This setting prevents the job from getting stuck in the final barrier of each epoch.",
    "There is a potential deadlock in the checkpoint code when two ranks save at once.",
])
def test_what_might_happen_is_no_hang(sentence: str) -> None:
    assert read_prose([sentence]).hang is None


@pytest.mark.parametrize("sentence", [
    "If I use 8 GPUs the training hangs at the first all_reduce of the epoch.",
    "It sometimes hangs at step 500 with all GPUs at full utilization.",
    "Training with two nodes hangs right at the initialization of the process group.",
])
def test_a_reporters_own_condition_is_still_an_account(sentence: str) -> None:
    assert read_prose([sentence]).hang == sentence


@pytest.mark.parametrize(("sentence", "stop"), [
    ("The job was preempted and resumed from checkpoint step 5000 by the cluster.", False),
    ("Our job was preempted, then requeued and continued without any problem.", False),
    ("The job was preempted two hours into the run and never came back.", True),
    ("Our jobs might be killed by the scheduler if they run over the limit.", False),
])
def test_a_stop_the_job_came_back_from_is_not_its_end(sentence: str, stop: bool) -> None:
    assert (read_prose([sentence]).stop is not None) is stop


def _verdict(text: str, tmp_path: Path) -> tuple[int, dict[str, object]]:
    path = tmp_path / "job.log"
    path.write_text(text, encoding="utf-8")
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(["report", str(path), "--format", "json"])
    return code, (json.loads(out.getvalue())["verdict"] if out.getvalue().strip() else {})


def test_a_healthy_log_with_advice_is_no_hang(tmp_path: Path) -> None:
    code, verdict = _verdict("[rank0]: step 100 loss 2.1\n[rank1]: step 100 loss 2.1\n"
                             "Note: training may hang at the end of an epoch if batches differ; use drop_last.\n"
                             "[rank0]: training done\n[rank1]: training done\n", tmp_path)
    assert code == 0 and verdict["kind"] == "no_problem_found", verdict


def test_a_finished_log_that_was_preempted_and_resumed_is_no_stop(tmp_path: Path) -> None:
    code, verdict = _verdict("[rank0]: epoch 1 done\nThe job was preempted and resumed from checkpoint step 5000 "
                             "on the cluster.\n[rank0]: epoch 2 done\n[rank0]: training complete\n", tmp_path)
    assert verdict.get("kind") != "stopped", verdict
    assert code == 0, verdict
