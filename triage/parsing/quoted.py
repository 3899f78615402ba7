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

``in_quoted_prose(text, at)`` -> bool. Never raises.
"""

from __future__ import annotations

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
