"""Node.js's (V8's) fatal out-of-memory ending, read as the process's own words of its end (session 54).

Node's OOMErrorHandler prints ``FATAL ERROR: <where> <message>`` on stderr, then the native stack and aborts
(SIGABRT: the shell's ``Aborted (core dumped)``, npm's ``Command failed with exit code 134``). ``<message>`` is V8's:

- ``Allocation failed - JavaScript heap out of memory``: the JavaScript heap reached its limit (``<where>`` is V8's
  place: ``Reached heap limit``, ``Ineffective mark-compacts near heap limit``, ``CALL_AND_RETRY_LAST``, ``invalid
  table size`` ...): Node's ``--max-old-space-size`` sets it;
- ``Allocation failed - process out of memory``: an allocation outside the JavaScript heap failed (``Zone``,
  ``RegExpCompiler``, older Node's ``JS``): the host's or the container's memory, no heap limit.

V8 without an embedder's handler prints ``# Fatal javascript OOM in <where>`` (``process`` for the other) instead.
Node's native stack after it (`` 1: 0xb09c10 node::Abort() [node]``) is a numbered list, no ranks' lines
(triage.parsing.log_prefix.numbered_list_lines). A memory exhaustion of the process's own allocator: an exception of
that process whose words show memory ran out (as Python's MemoryError), never the kernel's OOM killer.

Not read: the words quoted in a sentence (triage.parsing.quoted).

``endings(text)`` -> [(rank or None, signal or None, host or None, words, start, end)] in text order, the shape of
triage.parsing.fatal_ending's. Never raises.
"""

from __future__ import annotations

import re

from triage.lazy_regex import lazy_regex
from triage.parsing.quoted import in_quoted_prose
from triage.parsing.regex_gate import finditer

MARKERS = ("Allocation failed - ", " OOM in ")
# what a summary of this reader's starts with (triage.analysis.advice reads it)
HEAP_WORDS = "Node.js's JavaScript heap reached its limit"
PROCESS_WORDS = "Node.js's process could not allocate memory outside its JavaScript heap"

_LEAD = r"^[ \t>*`]*(?:\[\d{1,7}\][ \t]*)?"
_NODE = lazy_regex(_LEAD + r"(?P<line>FATAL ERROR: (?:(?P<where>[^\n]{1,120}?) )?Allocation failed - "
                   r"(?P<what>JavaScript heap|process) out of memory)[ \t*`]*$", re.MULTILINE)
_V8 = lazy_regex(_LEAD + r"(?P<line>#? ?Fatal (?P<what>javascript|process) OOM in (?P<where>[^\n]{1,120}?))"
                 r"[ \t*`]*$", re.MULTILINE)

Ending = tuple[int | None, str | None, str | None, str, int, int]


def endings(text: str) -> list[Ending]:
    """Node's (V8's) fatal out-of-memory lines in ``text``: (rank, signal, host, words, start, end), in text order."""
    if not any(marker in text for marker in MARKERS):
        return []
    found: list[Ending] = []
    for pattern in (_NODE, _V8):
        for m in finditer(pattern, text):
            if _quoted(text, m):
                continue
            heap = m.group("what").lower() == "javascript heap" or m.group("what") == "javascript"
            words = HEAP_WORDS if heap else PROCESS_WORDS
            found.append((None, None, None, f"{words}: {m.group('line').strip()}", m.start(), m.end()))
    return sorted(found, key=lambda item: item[4])


def _quoted(text: str, m: re.Match[str]) -> bool:
    line_start = text.rfind("\n", 0, m.start()) + 1
    return in_quoted_prose(text[line_start:m.end()], m.start("line") - line_start)
