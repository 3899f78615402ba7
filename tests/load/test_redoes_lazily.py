"""A later run of the same command redoes the earlier run's work when both report progress of one kind
(triage.load.logs.text._redoes): read both runs a line at a time in turn, with the same answers as reading both whole."""

from __future__ import annotations

from triage.load.logs.text import _progress_kinds, _redoes


def _whole(earlier: list[str], later: list[str]) -> bool:
    return not set(_progress_kinds(earlier)).isdisjoint(set(_progress_kinds(later)))


def test_a_retry_that_steps_again_redoes_the_run() -> None:
    earlier = [f"[rank{r}]: epoch 2 step {s} loss 0.{s}" for s in range(40) for r in range(4)]
    later = ["resuming from ckpt/last.pt", *(f"[rank1]: epoch 3 step {s} loss 0.5" for s in range(9))]
    assert _redoes(earlier, later) and _whole(earlier, later)


def test_another_stage_that_only_evaluates_is_not_the_run_again() -> None:
    earlier = [f"step {s}/500 loss 1.{s}" for s in range(30)] + ["RuntimeError: NCCL error"]
    later = [f"eval step {s}/20 acc 0.9" for s in range(12)]
    assert not _redoes(earlier, later) and not _whole(earlier, later)


def test_the_shared_kind_found_late_on_either_side() -> None:
    earlier = [f"eval step {s} acc 0.8" for s in range(200)] + ["epoch 1 step 3 loss 2.0"]
    later = [f"step {s} loss 1.0" for s in range(3)] + [f"eval step {s} acc 0.8" for s in range(5)]
    assert _redoes(earlier, later) and _whole(earlier, later)
    assert _redoes(later, earlier) and _whole(later, earlier)


def test_no_progress_on_one_side_is_no_redo() -> None:
    assert not _redoes([], ["step 1 loss 2.0"]) and not _redoes(["step 1 loss 2.0"], ["Loading model"])
