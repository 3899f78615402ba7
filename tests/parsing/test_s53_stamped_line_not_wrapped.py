"""Session 53: a line its logger stamped is a line of its own, never the wrapped rest of the line before it (a
terminal's wrap leaves the rest without the stamp every line of the log carries). With a stamp before every line,
text-generation-inference#1627's longest line came to 160 columns, a terminal's width, and the next line ("Error:
ShardCannotStart") was glued to it: "... with signal 4 rank=0Error: ShardCannotStart"."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.paths import REPO
from tests.helpers.report import failure_verdict
from triage.parsing.textclean import clean_text

STAMP = "[2026-11-26 10:00:01,123] "


def _at_width(body: str, width: int) -> str:
    return body + "x" * (width - len(STAMP) - len(body))


@pytest.mark.parametrize("width", [120, 132, 160])
def test_a_stamped_line_after_one_at_a_terminal_width_stands_alone(width: int) -> None:
    long = _at_width("ERROR worker: shard process was signaled to shutdown with signal 4 ", width)
    text = f"{STAMP}INFO starting\n{STAMP}{long}\n{STAMP}Error: ShardCannotStart\n{STAMP}INFO shutting down\n"
    lines = clean_text(text).lines
    assert "Error: ShardCannotStart" in lines and lines[1].endswith("x")


def test_an_unstamped_rest_after_a_stamped_line_at_the_width_is_still_joined() -> None:
    # (a terminal's wrap of a stamped line: its rest carries no stamp)
    rows = [_at_width(f"INFO step {n} loss 0.{n} lr 3e-4 ", 120) for n in range(3)]
    text = "".join(f"{STAMP}{row}\nrest of line {n}\n" for n, row in enumerate(rows))
    lines = clean_text(text).lines
    assert len(lines) == 3 and all(line.endswith(f"rest of line {n}") for n, line in enumerate(lines))


@pytest.mark.parametrize("stamp", [STAMP, "2026-11-26T10:00:01+00:00 "])
def test_tgi_shard_signal_under_a_stamp_on_every_line(stamp: str, tmp_path: Path) -> None:
    # huggingface/text-generation-inference#1627: the shard manager's header, its span's " rank=0", the shard's
    # "signaled to shutdown with signal 4 rank=0", then the launcher's "Error: ShardCannotStart"
    log = (REPO / "tests/realworld/cases/huggingface__text-generation-inference__1627/log.txt").read_text(
        encoding="utf-8")
    text = "".join(stamp + line + "\n" for line in log.splitlines())
    got = failure_verdict(text, tmp_path)
    assert got["kind"] == "crash" and got["culprit_ranks"] == [0] and "SIGILL" in got["summary"]
