"""A debugger's exception view (fix54d item 3): VS Code's ``Exception has occurred: T`` over debugpy's (pydevd's) type
name and note, the message on the next line, the frames innermost first and no ``Traceback`` head was refused
(NVIDIA/NeMo-Aligner#153); it is an exception of that type with that message."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.paths import REPO
from tests.helpers.report import failure_verdict, report_lines
from triage.parsing.debugger_view import exception_line, exception_type

_NOTE = "       (note: full exception trace is shown but execution is paused at: {})"


@pytest.mark.parametrize(("head", "kind"), [
    ("Exception has occurred: ValueError" + _NOTE.format("_run_module_as_main"), "ValueError"),
    ("例外が発生しました: ModuleNotFoundError" + _NOTE.format("<module>"), "ModuleNotFoundError"),
    ("发生异常: KeyError" + _NOTE.format("main"), "KeyError"),
    ("TypeError" + _NOTE.format("<module>"), "TypeError"),       # (the widget's head left out of the copy)
    ("Exception has occurred: torch.OutOfMemoryError", "torch.OutOfMemoryError"),
    ("  Exception has occurred: pyarrow.lib.ArrowInvalid  ", "pyarrow.lib.ArrowInvalid"),
])
def test_the_heads_type(head: str, kind: str) -> None:
    assert exception_type(head) == kind


@pytest.mark.parametrize("line", ["Exception has occurred: RuntimeError in step 3", "RuntimeError",
                                  "Exception has occurred", "an exception has occurred: see below",
                                  "(note: full exception trace is shown but execution is paused at: f)"])
def test_no_head(line: str) -> None:
    assert exception_type(line) is None


def test_the_message_is_the_next_line_unless_a_frame() -> None:
    head = "Exception has occurred: ValueError" + _NOTE.format("<module>")
    assert exception_line(head, "badly formed hexadecimal UUID string") == \
        "ValueError: badly formed hexadecimal UUID string"
    assert exception_line(head, '  File "a.py", line 3, in <module>').startswith("ValueError: (its message is not")


def test_a_debugger_view_is_that_exception() -> None:
    result = report_lines("Exception has occurred: torch.OutOfMemoryError" + _NOTE.format("_run_module_as_main"),
                          "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.10 GiB of "
                          "which 1.21 GiB is free.",
                          '  File "/work/train.py", line 88, in forward',
                          "    h = self.mlp(x)",
                          '  File "/work/train.py", line 140, in <module>',
                          "    loss = model(batch)")
    assert result.verdict.kind.value == "exception", result.verdict.summary
    assert result.verdict.subkind == "oom", result.verdict.summary
    assert not result.verdict.culprit_ranks


def test_real_vs_code_view(tmp_path: Path) -> None:
    log = (REPO / "tests/realworld/cases/NVIDIA__NeMo-Aligner__153/log.txt").read_text(encoding="utf-8")
    verdict = failure_verdict(log, tmp_path)
    assert verdict["kind"] == "exception" and not verdict.get("culprit_ranks")
    assert "RuntimeError: shape '[1]' is invalid for input of size 2" in verdict["summary"]
