"""Session 58 (fix58b, rev57's F11): a line that is a whole banner (its words between its rules: pytest's "-----
Captured stderr call -----", which pytest draws as wide as the terminal) at the width the text's lines are cut at was
taken as cut, and the next line glued to it ("----- Captured stderr call -----RuntimeError: NCCL error ..."); it is
whole now (triage.parsing.textclean._continues), as a box's row is. A line cut at that width still runs on."""

from __future__ import annotations

from triage.parsing.textclean import clean_text


def _rule(words: str, width: int = 80, mark: str = "-") -> str:
    left = (width - len(words) - 2) // 2
    return f"{mark * left} {words} {mark * (width - len(words) - 2 - left)}"


def test_a_banner_at_the_wrap_width_is_whole() -> None:
    cut = "sampler.py:88: UserWarning: shard 0007 of the validation set holds fewer rows than the batch size as"[:80]
    lines = [_rule("Captured stderr call"), "RuntimeError: CUDA error: an illegal memory access was encountered",
             cut, "ks for, so its last batch is dropped", _rule("3 passed in 0.52s", mark="="), "free(): invalid pointer"]
    got = clean_text("\n".join(lines) + "\n").lines
    assert lines[0] in got and lines[1] in got and "free(): invalid pointer" in got
    assert cut + "ks for, so its last batch is dropped" in got           # (a line cut at the width still runs on)


def test_a_box_heading_of_rules_and_words_stays_apart_from_the_next_line() -> None:
    lines = ["=" * 72, "||" + "Solver start-up".center(68) + "||", "=" * 72, "double free or corruption (out)",
             "Aborted (core dumped)"]
    got = clean_text("\n".join(lines) + "\n").lines
    assert "double free or corruption (out)" in got
