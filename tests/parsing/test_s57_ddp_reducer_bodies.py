"""Session 57 (round 79's wudongming97/TopoMLP#25): DDP's reducer errors pasted without their "RuntimeError:" head
("Expected to mark a variable ready only once. This error is caused by ...", "Expected to have finished reduction in
the prior iteration before starting a new one. This error indicates ...") were refused; torch's own long messages, no
other program prints them: now read as the RuntimeError they are (triage.parsing.crashlog `_DDP_CHECK`, where DDP's
construction check told without its type already was), of no rank unless a rank's prefix says one."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import report_log
from triage.parsing.crashlog import CrashLineKind, parse_crash_line

# torch's reducer.cpp messages, as it builds them (the parameter's index and name are the run's own)
_MARKED_TWICE = ("Expected to mark a variable ready only once. This error is caused by one of the following reasons: "
                 "1) Use of a module parameter outside the `forward` function. Please make sure model parameters are "
                 "not shared across multiple concurrent forward-backward passes. or try to use _set_static_graph() as "
                 "a workaround if this module graph does not change during training loop.2) Reused parameters in "
                 "multiple reentrant backward passes.")
_PARAM_LINE = ("Parameter at index 57 with name transformer.h.3.mlp.c_fc.weight has been marked as ready twice. This "
               "means that multiple autograd engine  hooks have fired for this particular parameter during this "
               "iteration.")
_UNFINISHED = ("Expected to have finished reduction in the prior iteration before starting a new one. This error "
               "indicates that your module has parameters that were not used in producing loss. You can enable unused "
               "parameter detection by passing the keyword argument `find_unused_parameters=True` to "
               "`torch.nn.parallel.DistributedDataParallel`, and by")


@pytest.mark.parametrize("body", [_MARKED_TWICE, _UNFINISHED])
def test_reducer_body_is_its_runtime_error(body: str) -> None:
    got = parse_crash_line(body)
    assert got is not None and got.kind is CrashLineKind.EXCEPTION, got
    assert got.exc_type == "RuntimeError" and got.text.startswith("RuntimeError: Expected to")


def test_with_its_head_unchanged() -> None:
    got = parse_crash_line("RuntimeError: " + _UNFINISHED)
    assert got is not None and got.kind is CrashLineKind.EXCEPTION and got.text.startswith("RuntimeError: Expected")


def test_prose_without_the_message_is_nothing() -> None:
    assert parse_crash_line("Expected to see the error go away after the fix, but it did not") is None


@pytest.mark.parametrize("text", [
    _MARKED_TWICE + "\n" + _PARAM_LINE + "\n",
    "epoch 3 iter 1200 loss 0.4121\n" + _UNFINISHED + "\nmaking sure all `forward` function outputs participate in "
    "calculating loss.\n",
])
def test_the_paste_is_an_exception_of_no_rank(text: str, tmp_path: Path) -> None:
    _code, got = report_log(text, tmp_path)
    verdict = got["verdict"]
    assert verdict["kind"] == "exception", verdict
    assert verdict["culprit_ranks"] == []
    assert "Expected to" in verdict["summary"]


def test_a_rank_prefix_names_the_rank(tmp_path: Path) -> None:
    text = "[rank3]: " + _UNFINISHED + "\n"
    _code, got = report_log(text, tmp_path)
    verdict = got["verdict"]
    assert verdict["kind"] == "exception" and verdict["culprit_ranks"] == [3], verdict
