"""One answer to "are a program's words on this line quoted in a sentence of the writer's own" (triage.parsing.quoted),
asked by crashlog (a runtime's error words) and named_failure (a rank's words) alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from triage.parsing import crashlog, named_failure, quoted
from triage.parsing.crashlog import parse_crash_line
from triage.parsing.named_failure import named_failure as read_named
from triage.parsing.quoted import in_quoted_prose

CASES = Path(__file__).resolve().parents[1] / "realworld" / "cases"


def _at(text: str, words: str) -> bool:
    return in_quoted_prose(text, text.index(words))


@pytest.mark.parametrize("text", [
    'the message "PLE 0608 plexec One of MPI processes was aborted.(rank=0)" means your program called MPI_Abort',
    "see FAQ: 'The error from device(chipId:0, dieId:0) ...' means the AI Core hit an exception",
    '"CUDA error: an illegal memory access was encountered" is what we get on gfx90a',
    "you may see \u201cCUDA error: out of memory\u201d, reduce the batch",
    'the most common failure is "RuntimeError: CUDA error: device-side assert triggered"',
    "- the job prints `Segmentation fault (core dumped)` and stops",
    "(see `rank 3 died with signal 11`) for the cause",
    "[`worker 2 exited with code 1`] was the last line",
])
def test_words_in_a_quote_of_the_writers_sentence_are_quoted(text: str) -> None:
    words = next(w for w in ("PLE 0608", "The error from", "CUDA error", "RuntimeError", "Segmentation", "rank 3",
                             "worker 2") if w in text)
    assert _at(text, words), text


@pytest.mark.parametrize(("text", "words"), [
    ('worker 3 failed: "CUDA error: an illegal memory access was encountered"', "CUDA error"),  # a logger's quote
    ("[rank1]: RuntimeError: CUDA error: out of memory", "CUDA error"),                       # no quote at all
    ("the run said 'done' and then: CUDA error: out of memory", "CUDA error"),                # closed before it
    ('it printed "CUDA error: out of memory', "CUDA error"),                                  # never closed
    ("rank 5's GPU hit CUDA error: out of memory, it's gone", "CUDA error"),                  # apostrophes, no quote
    ("- `RuntimeError: CUDA error: an illegal memory access was encountered`", "RuntimeError"),  # a code span alone
    ("Error: `Killed`", "Killed"),                                                            # a head, then the span
])
def test_words_a_program_printed_are_not_quoted(text: str, words: str) -> None:
    assert not _at(text, words), text


def test_a_line_without_a_quote_mark_is_answered_at_once() -> None:
    assert not in_quoted_prose("rank 3 died with signal 11 " * 50, 0)
    assert not in_quoted_prose("", 0)


def test_every_reader_asks_the_one_home() -> None:
    """crashlog and named_failure hold no quote rule of their own: both ask triage.parsing.quoted."""
    assert crashlog.in_quoted_prose is quoted.in_quoted_prose
    assert named_failure.in_quoted_prose is quoted.in_quoted_prose
    for module in (crashlog, named_failure):
        assert not any(hasattr(module, name) for name in ("_IN_QUOTES", "_QUOTE", "_in_quotes", "_GOES_ON", "_DEFINES"))


def test_both_readers_give_the_same_answer_on_the_same_quote() -> None:
    """The same sentence quoting a runtime's words and a rank's: quoted for both readers; the logger's quote at the
    line's end: for neither."""
    prose = 'our FAQ says "rank 2 hit CUDA error: out of memory" means the batch is too large'
    crash = parse_crash_line(prose)
    named = read_named(prose)
    assert crash is not None and crash.quoted
    assert named is not None and named[0] == 2 and named[1].quoted
    logger = 'job 7: rank 2 failed: "CUDA error: out of memory"'
    crash = parse_crash_line(logger)
    named = read_named(logger)
    assert crash is not None and not crash.quoted
    assert named is not None and not named[1].quoted


def test_real_reports_sentences_quoting_a_failure() -> None:
    """Lines of the corpus (bug reports): a reporter's sentence around a code span quoting the error is quoted at the
    error's words; an Open MPI FAQ-style quote of a rank's words too."""
    dit = (CASES / "facebookresearch__DiT__101" / "log.txt").read_text(encoding="utf-8")
    line = next(text for text in dit.splitlines() if "with an error like: `RuntimeError" in text)
    assert _at(line, "RuntimeError: NCCL communicator was aborted")
    bev = (CASES / "aharley__simple_bev__39" / "log.txt").read_text(encoding="utf-8")
    line = next(text for text in bev.splitlines() if "reported an error of" in text)
    assert _at(line, "ERROR: torch. distributed")     # (its sentence goes on: ". This error does not occur ...")
    assert not _at(line, "reported")                   # the writer's own words, outside the span
