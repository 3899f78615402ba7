"""Session 56 (fix56c item 3): a shell's report of a command that died of a signal is a line of its own, never the
rest of a line cut at a terminal's width (triage.parsing.textclean._OWN_LINE, which the wrap joiner now asks of every
next line): bash's and dash's `Aborted (core dumped)`, `Aborted`, `Segmentation fault`, `Killed` (jobs.c prints the
signal's description, then " (core dumped)"), a script's `./run.sh: line 3: 4242 Aborted (core dumped) ./prog`,
zsh's `zsh: abort (core dumped)  ./prog`. Was: an assert line exactly 80 columns long glued to the `Aborted` after it
(`... failed.Aborted (core dumped)`), a failure of no reader's words."""

from __future__ import annotations

import pytest

from tests.helpers.paths import REPO
from tests.helpers.report import report_lines
from triage.parsing.textclean import clean_text

# (glibc's assert line, exactly 80 columns: a terminal's width)
_ASSERT = "prog: src/solver/matxxxxxxrix.cc:123: void solve(int): Assertion `n > 0' failed."


def test_the_assert_line_is_80_columns() -> None:
    assert len(_ASSERT) == 80


@pytest.mark.parametrize("shell", [
    "Aborted (core dumped)", "Aborted", "Segmentation fault (core dumped)", "Killed", "Bus error",
    "./run.sh: line 3: 4242 Aborted (core dumped) ./prog -x", "run.sh: line 7: 31337 Killed                  prog",
    "zsh: abort (core dumped)  ./prog", "zsh: segmentation fault  ./a.out",
])
def test_a_shells_report_is_never_a_wrapped_rest(shell: str) -> None:
    lines = clean_text(f"step 1\n{_ASSERT}\n{shell}\n").lines
    assert lines == ("step 1", _ASSERT, shell), lines


def test_a_sentence_that_starts_with_the_word_may_still_be_a_rest() -> None:
    # (only the shell's own line: the word with more words after it can be the rest of a cut line)
    cut = "x" * 79 + "y"
    text = f"{cut}\nAborted the run because of it\n{cut}\nKilled by the scheduler\n{cut}\nmore words here\n"
    lines = clean_text(text).lines
    assert lines[0].endswith("yAborted the run because of it"), lines


def test_the_assert_then_the_shells_abort_is_the_assert() -> None:
    report = report_lines("step 1", _ASSERT, "Aborted (core dumped)")
    summary = report.verdict.summary
    assert report.verdict.kind.value == "crash" and "assertion `n > 0' failed" in summary, summary
    assert "SIGABRT" in summary and "failed.Aborted" not in summary


def test_vectornet_37_keeps_the_shells_killed_apart() -> None:
    # (xk-huang/yet-another-vectornet#37: an 80-column tqdm line, then the shell's "Killed")
    text = (REPO / "tests/realworld/cases/xk-huang__yet-another-vectornet__37/log.txt").read_text(encoding="utf-8")
    lines = clean_text(text).lines
    assert "Killed" in lines and not any(line.endswith("it/s]Killed") for line in lines), lines[-3:]
    report = report_lines(*text.splitlines())
    assert "rank): Killed [" in report.verdict.summary and "it/s]" not in report.verdict.summary, report.verdict.summary
