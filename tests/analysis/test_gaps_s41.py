"""Issue 23: general readers for what first sight still misses (session 41). Variants written here, none taken from
a round's case.

2. A run's own line that it ended well (``Training finished``, ``Training complete``, ``Done.``, ``Saved
   checkpoint``, Lightning's ``Trainer.fit stopped: max_epochs reached``, a final evaluation's summary) after its
   only failure-looking line is "progress" (triage.parsing.progress): the all-clear that quotes the line, never a
   refusal; with progress's guards: a line no process went on after is still the failure.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import failure_verdict, report_log
from triage.parsing.progress import is_progress, mentions_progress

report = failure_verdict

_START = "loading dataset from /data/train\nbuilding the model\n"


# --- 2. a success line after the only failure-looking line ---------------------------------------------------------

_SUCCESS_LINES = [
    "Training finished",
    "Training complete.",
    "training completed in 3h 12m",
    "Training is done!",
    "Done.",
    "done",
    "All done!",
    "Saved checkpoint to /out/final.pt",
    "saving the final model checkpoint at /ckpt/last",
    "checkpoint saved: /out/step_final",
    "`Trainer.fit` stopped: `max_epochs=3` reached.",
    "***** eval metrics *****",
    "Final test accuracy: 0.913",
    "final_eval_loss = 1.204",
]


@pytest.mark.parametrize("line", _SUCCESS_LINES)
def test_success_lines_are_progress(line: str) -> None:
    assert is_progress(line)
    assert mentions_progress(line)       # the cheap pre-pass never hides one


@pytest.mark.parametrize("line", [
    "Training failed after 3 epochs",
    "Done. 3 errors",
    "Done with errors: the run was aborted",
    "checkpoint saved, then the rank was killed",
    "Final test loss: nan",
    "Done reading the config, now training",       # not alone on its line: no end of the run
    "Saving checkpoint skipped: the disk is full",
    "Training will be done on 8 GPUs",
])
def test_not_success_lines(line: str) -> None:
    assert not is_progress(line)


@pytest.mark.parametrize("failure", [
    "FOOLIB ERROR: registration failed",
    "FATAL: fabric init failed on mlx5_0",
    "[E] transport: qp entered error state",
    "fabric: could not open the device mlx5_2",
])
@pytest.mark.parametrize("success", _SUCCESS_LINES)
def test_unprefixed_success_after_the_only_failure_line_is_an_all_clear(failure: str, success: str,
                                                                         tmp_path: Path) -> None:
    code, out = report_log(f"{_START}{failure}\n{success}\n", tmp_path)
    assert code == 0, out
    assert failure in out["verdict"]["summary"]


@pytest.mark.parametrize("success", ["Training finished", "Saved checkpoint to /out/final.pt", "Done."])
def test_success_before_the_failure_line_leaves_it_the_failure(success: str, tmp_path: Path) -> None:
    verdict = report(f"{_START}{success}\nFATAL: fabric init failed on mlx5_0\n", tmp_path)
    assert "fabric init failed" in verdict["summary"]


def test_another_ranks_success_leaves_the_failing_rank_failed(tmp_path: Path) -> None:
    text = ("[rank0]: FATAL: fabric init failed on mlx5_0\n[rank1]: epoch 1 loss 0.5\n[rank1]: Training complete\n")
    verdict = report(text, tmp_path)
    assert "fabric init failed" in verdict["summary"]


def test_each_rank_went_on_to_its_end_is_an_all_clear(tmp_path: Path) -> None:
    text = ("[rank0]: FATAL: fabric init failed on mlx5_0\n[rank1]: Training complete\n[rank0]: Training complete\n")
    code, out = report_log(text, tmp_path)
    assert code == 0, out
    assert "fabric init failed" in out["verdict"]["summary"]


def test_progress_then_success_after_the_error_line_is_an_all_clear(tmp_path: Path) -> None:
    text = _START + "XPLIB ERROR: registration failed\nstep 30 loss 2.0\nTraining completed successfully\n"
    code, out = report_log(text, tmp_path)
    assert code == 0, out
    assert "XPLIB ERROR: registration failed" in out["verdict"]["summary"]
