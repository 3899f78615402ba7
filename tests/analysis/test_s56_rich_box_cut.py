"""Session 56 (fix56a item 1): the end of a rich traceback panel (rich.traceback's box.ROUNDED: source rows
"│   878 │ ... │", the "❱ 881" arrow, the frame header "/path/file.py:881 in func", the bottom border "╰───╯"), cut
anywhere above, then the exception line rich prints under it. The box's rows, each padded to the console's width and
ended at its right border, were taken for a terminal's cuts and joined into one line with the exception, read as a
failure of unknown place; a box's row is whole, so the exception under the box is the failure (of no rank)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.paths import REPO
from tests.helpers.report import report_log

_WIDTH = 120


def _row(text: str, width: int = _WIDTH) -> str:
    return "│ " + text.ljust(width - 4) + " │"


def _box_end(width: int = _WIDTH, cut_left: bool = False) -> list[str]:
    rows = [_row("/opt/venv/lib/python3.11/site-packages/megatron/core/parallel_state.py:540 in initialize_model_parallel",
                 width),
            _row("", width),
            _row("  537 │   if world_size % (tensor_model_parallel_size * pipeline_model_parallel_size) != 0:", width),
            _row("  538 │   │   raise RuntimeError(", width),
            _row("  539 │   │   │   f\"world_size ({world_size}) is not divisible by tensor_model_parallel_size \"", width),
            _row("❱ 540 │   │   │   f\"({tensor_model_parallel_size}) x pipeline_model_parallel_size \"", width),
            _row("  541 │   │   )", width),
            "╰" + "─" * (width - 2) + "╯"]
    if cut_left:                  # (the paste begun inside the first row: its left border and margin lost)
        rows[0] = rows[0][3:]
    return rows


@pytest.mark.parametrize("width", [100, 120])
@pytest.mark.parametrize("cut_left", [False, True])
def test_the_exception_under_a_cut_rich_box_is_the_failure(width: int, cut_left: bool, tmp_path: Path) -> None:
    error = ("RuntimeError: world_size (12) is not divisible by tensor_model_parallel_size (8) x "
             "pipeline_model_parallel_size (1)")
    text = "\n".join([*_box_end(width, cut_left), error]) + "\n"
    code, got = report_log(text, tmp_path)
    assert code not in (0, 2, 70)
    verdict = got["verdict"]
    assert verdict["kind"] == "exception" and verdict["culprit_ranks"] == [], verdict["summary"]
    assert "RuntimeError: world_size (12) is not divisible" in verdict["summary"]
    assert "│" not in verdict["summary"] and "╯" not in verdict["summary"]


def test_a_box_cut_in_its_middle_with_a_narrow_console(tmp_path: Path) -> None:
    # huggingface/blog#1270 (and bigcode-project/starcoder#77): a 71-column rich box of DeepSpeed's batch assertion,
    # the paste beginning inside it, the AssertionError rich wrapped under it
    text = (REPO / "tests/analysis/data/s56_rich_box_blog_1270.txt").read_text(encoding="utf-8")
    _code, got = report_log(text, tmp_path)
    verdict = got["verdict"]
    assert verdict["kind"] == "exception" and verdict["culprit_ranks"] == [], verdict["summary"]
    assert "AssertionError: Check batch related parameters" in verdict["summary"]


def test_real_instructerc_box_end(tmp_path: Path) -> None:
    # LIN-SHANG/InstructERC#16: the box's last rows, its bottom border, DeepSpeed's micro batch assertion
    log = (REPO / "tests/realworld/cases/LIN-SHANG__InstructERC__16/log.txt").read_text(encoding="utf-8")
    _code, got = report_log(log, tmp_path)
    assert got["verdict"]["kind"] == "exception" and got["verdict"]["culprit_ranks"] == []
    assert "Micro batch size per gpu: 0 has to be greater than 0" in got["verdict"]["summary"]
