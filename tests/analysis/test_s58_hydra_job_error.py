"""Session 58 (fixhy, after round 83's first sight): Hydra's ``Error executing job with overrides: [...]``
(facebookresearch/hydra, hydra/core/utils.py JobReturn.return_value: written to stderr only where the task function
raised, which Hydra then raises again) was not read as a failure: a paste cut after it (a rich traceback box's head, a
plain traceback's first frames) was NO PROBLEM FOUND, and the line alone refused. Now it is a traceback's head: cut, an
exception of no rank whose exception line is not in this input; where the exception line follows, the verdict quotes
that exception as before (triage.load.logs.line_events.unfinished_tracebacks, triage.parsing.frameworks)."""

from __future__ import annotations

import pytest

from tests.helpers.report import report_lines
from triage.errors import InputError
from triage.model import VerdictKind

_HEAD = ["(the reporter) the run dies with error: `bad fd list for the worker pool`.",
         "[2025-06-02 08:14:10,221][lightning][INFO] - restored weights from ckpt/base-7b.safetensors",
         "[2025-06-02 08:14:19,004][lightning][INFO] - spawning 4 processes for DDP training",
         "Error executing job with overrides: ['experiment=pretrain_small', 'trainer.gpus=4', 'seed=3']"]
_NO_RANK = "EXCEPTION (rank unknown: no line of this input ties it to a rank): "


def _cut(verdict_summary: str) -> None:
    assert verdict_summary.startswith(_NO_RANK), verdict_summary
    assert "its exception line is not in this input" in verdict_summary
    assert "Error executing job with overrides" in verdict_summary


def test_a_rich_traceback_box_cut_after_its_head_is_an_exception_of_no_rank() -> None:
    verdict = report_lines(*_HEAD, "╭────────────────── Traceback (most recent call last) ──────────────────╮",
                           "│ /srv/jobs/run_pretrain.py:87 in <module>                               │").verdict
    assert verdict.kind is VerdictKind.EXCEPTION, verdict.summary
    assert verdict.culprit_ranks == ()
    _cut(verdict.summary)


def test_the_line_alone_after_progress_is_an_exception_of_no_rank() -> None:
    verdict = report_lines("epoch 0 iter 5", "Error executing job with overrides: ['lr=0.1']").verdict
    assert verdict.kind is VerdictKind.EXCEPTION, verdict.summary
    _cut(verdict.summary)


def test_a_plain_traceback_cut_after_it_names_its_last_frame() -> None:
    verdict = report_lines(*_HEAD, "Traceback (most recent call last):",
                           '  File "/srv/jobs/run_pretrain.py", line 87, in <module>', "    launch(cfg)").verdict
    assert verdict.kind is VerdictKind.EXCEPTION, verdict.summary
    assert verdict.summary.startswith(_NO_RANK), verdict.summary
    assert "run_pretrain.py line 87" in verdict.summary


def test_the_exception_after_a_whole_traceback_is_the_verdict() -> None:
    verdict = report_lines(*_HEAD, "Traceback (most recent call last):",
                           '  File "/srv/jobs/run_pretrain.py", line 87, in launch',
                           "    pool.start(fds)",
                           "KeyError: 'tokenizer_path'", "",
                           "Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace.").verdict
    assert verdict.kind is VerdictKind.EXCEPTION, verdict.summary
    assert "KeyError: 'tokenizer_path'" in verdict.summary
    assert "Error executing job" not in verdict.summary
    assert "not in this input (" not in verdict.summary


def test_a_whole_rich_box_then_its_exception_is_that_exception() -> None:
    verdict = report_lines(*_HEAD, "╭────────────────── Traceback (most recent call last) ──────────────────╮",
                           "│ /srv/jobs/run_pretrain.py:87 in <module>                               │",
                           "╰────────────────────────────────────────────────────────────────────────╯",
                           "ValueError: num_workers must be positive, got -1").verdict
    assert verdict.kind is VerdictKind.EXCEPTION, verdict.summary
    assert "ValueError: num_workers must be positive, got -1" in verdict.summary
    assert "Error executing job" not in verdict.summary


def test_the_full_error_hint_then_the_exception_is_that_exception() -> None:
    verdict = report_lines(*_HEAD, "Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace.",
                           "FileNotFoundError: [Errno 2] No such file or directory: 'data/shards/000.bin'").verdict
    assert verdict.kind is VerdictKind.EXCEPTION, verdict.summary
    assert "FileNotFoundError" in verdict.summary
    assert "Error executing job" not in verdict.summary


def test_a_healthy_hydra_runs_log_is_refused_as_before() -> None:
    # (no failure line at all: the one-line refusal it was before, never a failure)
    with pytest.raises(InputError):
        report_lines("[2025-06-02 08:14:10,221][__main__][INFO] - config: experiment=pretrain_small",
                     "[2025-06-02 08:14:19,004][__main__][INFO] - epoch 0 step 100 loss 2.31",
                     "[2025-06-02 08:20:19,004][__main__][INFO] - epoch 0 step 200 loss 1.84",
                     "[2025-06-02 08:30:00,000][__main__][INFO] - training finished")
