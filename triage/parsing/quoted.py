"""Whether a program's words on a line sit inside a quote in a sentence of the writer's own (a FAQ, a how-to, a bug
report's prose: 'the message "CUDA error: ..." means ...', 'see FAQ: 'The error from device(...)' means ...', 'it
prints "rank 3 died with signal 11"') rather than being the line a program printed. One answer for every reader that
asks (triage.parsing.crashlog's runtime errors, triage.parsing.named_failure's rank words): such a line is a failure
only where the job did not go on past it (CrashLine.quoted).

A quote is the writer's where it opens at the line's start or after a space, a colon or a bracket (never a word's
apostrophe: "rank 5's GPU"), is not closed before the words, closes after them on the same line, and either the
sentence goes on after its closing quote ('... "X" reduce the batch', "'X' means ...") or a verb of report or
definition stands before it ('the most common failure is "..."', 'the FAQ says a stalled run prints "..."'). A quote
that closes the line after a logger's head or a failure's colon (`worker 3 failed: "CUDA error: ..."`) is the
program's own message, quoted by its logger: no prose.

A line of advice (a README's troubleshooting bullet, an issue's how-to) opens with a condition that names a failure and
goes on past its comma (or a colon that ends it: the list below) with what to do: "- if you see `NCCL error` on rank 3,
set NCCL_DEBUG=INFO", "in case of `CUDA out of memory`, lower the batch size", "If you see `RuntimeError: CUDA out of
memory`:". The failure is one the writer supposes, never one that happened: no failure line, quoted or not
(``is_advice``). "When rank 3 crashed, the others hung" tells of an event: "when" opens a condition only before "you".

A shell's message quoted in a sentence ("failed with following error: **Aborted (core dumped)**") is the writer's own
failure only where the words before its colon tell of one (``says_it_failed``), not in a list of messages to look for.

``in_quoted_prose(text, at)``, ``is_advice(text)``, ``says_it_failed(text, at)`` -> bool. Never raises.
"""

from __future__ import annotations

import re

from triage.lazy_regex import lazy_regex

# a quote opened at the line's start or after a space, a colon or a bracket, not closed before the end of the text
# it is searched in (the words' start)
_OPEN = lazy_regex(r"(?:^|[\s:(\[])([\"\u201c'`])[^\"\u201d'`]*$")
_GOES_ON = lazy_regex(r"[\s,;.!?)\]]*[^\W\d_]")
_CLOSES = {"\u201c": "\u201d"}
# a verb of report or definition just before the quote
_DEFINES = lazy_regex(r"\b(?:is|are|was|were|says?|said|prints?|printed|means?|reads?|like|called|named|see|shows?)"
                      r"[ \t]*[:,]?[ \t]*$")


def in_quoted_prose(text: str, at: int) -> bool:
    """The words that start at ``at`` in ``text`` (one line) sit inside a quote of the writer's own sentence."""
    if '"' not in text and "'" not in text and "`" not in text and "\u201c" not in text:
        return False
    opened = _OPEN.search(text, 0, at)
    if opened is None:
        return False
    quote = opened.group(1)
    close = text.find(_CLOSES.get(quote, quote), at)
    return close >= 0 and (_GOES_ON.match(text, close + 1) is not None
                           or _DEFINES.search(text, 0, opened.start(1)) is not None)


# a condition at the line's start, after a list's marker or a Markdown quote's '>'
_CONDITION = lazy_regex(r"^[ \t>]*(?:[-*+\u2022][ \t]+|\d{1,2}[.)][ \t]+)?(?:if|in case(?: of)?|whenever|should|"
                        r"when(?=[ \t]+(?:you|your|one)\b))[ \t]+(?=\S)", re.IGNORECASE)
# a span in quotes or a code span (its commas and colons are the program's, not the sentence's)
_QUOTE_SPAN = lazy_regex(r"`[^`\n]*`|\"[^\"\n]*\"|\u201c[^\u201d\n]*\u201d|(?<!\w)'[^'\n]*'(?!\w)")
# the condition's end and the advice after it: a comma (or "then") and a word, or a colon that ends the line (the
# advice as a list below: "If you see `RuntimeError: CUDA out of memory`:"); no code's punctuation before it
_ADVISES = lazy_regex(r"^[^,:;=()\[\]{}]*?(?:(?:,|[ \t]then\b)[ \t]*[^\W\d_]|:[ \t]*$)", re.IGNORECASE)


def is_advice(text: str) -> bool:
    """``text`` (one line) is a line of advice: a condition naming a failure, then what to do."""
    opened = _CONDITION.match(text)
    if opened is None:
        return False
    rest = _QUOTE_SPAN.sub(lambda span: "q" * len(span.group(0)), text[opened.end():])
    return _ADVISES.match(rest) is not None


# the words before the colon of a quoted shell message that make it the writer's own failure ("failed with following
# error: **Killed**", "the output was: `Segmentation fault (core dumped)`"), not a list of messages to look for
_SAYS_IT_FAILED = lazy_regex(r"\b(?:fail\w*|err+or\w*|crash\w*|died|dies|killed|aborted|stopped|got|gets|output|"
                             r"says?|said|message|shows?|showed)\b[^.:\n]{0,40}:[ \t]*$", re.IGNORECASE)


def says_it_failed(text: str, at: int) -> bool:
    """The words before offset ``at`` of ``text`` (a shell's message quoted after a colon) tell of the writer's own
    failure."""
    return _SAYS_IT_FAILED.search(text, 0, at) is not None
