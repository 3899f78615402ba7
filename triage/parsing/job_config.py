"""A program's own check that the number of processes the job was started with does not fit its configuration
(pure): every rank runs the same check at set-up, and the rank that reports it (rank 0 by rule, or each of them) and
aborts the job is not the culprit: the job's configuration is (its launch's process count, or the input's decomposition
or threads per process). Read in the program's words, one sentence:

- a count of the job's processes that does not match or fit what the configuration needs: miniAMR's ``number of
  processors used does not match number allocated``, ``the number of MPI ranks (6) does not match px*py*pz (8)``;
- what the configuration needs of the count: NEST's ``Number of virtual processes (threads*processes) must be an
  integer multiple of the number of processes``, ``the grid size must be divisible by the number of ranks``;
- a decomposition that cannot be made for the count: GROMACS's ``There is no domain decomposition for 54 ranks that is
  compatible with the given box``.

A sentence after which the job went on (progress, its own end: triage.parsing.progress.went_on_after), or with no abort
or fatal-error words within 30 lines of it (a note a rank went on from before another rank's error), is not the check
that stopped the job."""

from __future__ import annotations

import re
from collections.abc import Iterator

from triage.lazy_regex import lazy_regex
from triage.parsing.log_prefix import split_rank_prefix
from triage.parsing.progress import went_on_after

# the job's processes in a program's words ("number of" also glued to the line before it, where a wrap joiner met a
# record that ends in a digit: "... - process 0number of processors used ...")
_PROCS = r"(?:MPI )?(?:processes|processors|procs|ranks|tasks|PEs)"
# a sentence's words, over at most one line break (a message wrapped by its program: NEST's "must be an integer\n
# multiple of the number of processes")
_WORDS = r"[^.\n]{0,80}?(?:\n[ \t]*[^.\n]{0,80}?)?"
_MISFIT = lazy_regex(
    # the count ... does not match / fit
    r"(?:(?<![A-Za-z])number of " + _PROCS + r"|\b\d+ " + _PROCS + r")\b" + _WORDS
    + r"\b(?:does not|doesn't|do not|don't|did not)\s+(?:match|equal|fit|agree)\b"
    # ... must be a multiple of / divisible by / equal to the count
    + r"|\bmust\s+be\s+(?:an?\s+)?(?:integer\s+|exact\s+)?(?:multiple\s+of|divisible\s+by|equal\s+to)\s+the\s+"
      r"number\s+of\s+" + _PROCS + r"\b"
    # no decomposition for N ranks
    + r"|\bno (?:domain )?decomposition for \d+ " + _PROCS + r"\b",
    re.IGNORECASE)
_CUES = ("process", "rank", "task", "PEs", "procs")
# the check stops the job: its abort or fatal-error words within this many lines of the sentence (GROMACS's banner
# head above it, an MPI_Abort record below it), or the text ends there; a note the program went on from is no check
_NEAR = 30
_STOPS = ("MPI_Abort", "MPI_ABORT", "Abort(", "abort", "Fatal", "FATAL", "fatal")


def _stops_near(text: str, start: int, end: int) -> bool:
    before = start
    for _ in range(_NEAR):
        before = text.rfind("\n", 0, before - 1) if before > 0 else -1
        if before < 0:
            before = 0
            break
    after = end
    for _ in range(_NEAR):
        after = text.find("\n", after + 1)
        if after < 0:
            return True             # (the text ends within the window: the paste ends at the check)
    window = text[before:after]
    return any(word in window for word in _STOPS)


# where a match can start, in the lower-cased text: "number of", "must", "no (domain )decomposition", and a number
# before one of these words (its digits' start)
_STARTS = ("number of", "must", "no decomposition", "no domain decomposition")
_AFTER_COUNT = (" process", " proc", " rank", " task", " pe", " mpi ")


def _find_all(text: str, literal: str, into: set[int], shift: int = 0) -> None:
    at = text.find(literal)
    while at >= 0:
        into.add(at + shift)
        at = text.find(literal, at + 1)


def _misfits(text: str) -> Iterator[re.Match[str]]:
    """``_MISFIT.finditer(text)``'s matches, the same ones: the pattern ignores case, and Python's ``re`` then tries
    it at every place of the text (0.5 s per alternative over 20 MB); here it is tried only where a match can start,
    found by plain searches in the lower-cased text (an ASCII text: the same places)."""
    if not text.isascii():
        yield from _MISFIT.finditer(text)
        return
    low = text.lower()
    starts: set[int] = set()
    for literal in _STARTS:
        _find_all(low, literal, starts)
    counts: set[int] = set()
    for literal in _AFTER_COUNT:
        _find_all(low, literal, counts)
    for at in counts:
        first = at
        while first > 0 and low[first - 1].isdigit():
            first -= 1
        if first < at:
            starts.add(first)           # (the digits' start: within them no word boundary precedes a digit)
    end = 0
    for start in sorted(starts):
        if start < end:
            continue
        match = _MISFIT.match(text, start)
        if match is not None:
            yield match
            end = match.end()


def process_count_misfit(text: str) -> str | None:
    """The line(s) of ``text`` in which the program says the job's process count does not fit its configuration (the
    first such sentence the job did not go on after), or None."""
    found = misfit_and_rank(text)
    return None if found is None else found[0]


def misfit_and_rank(text: str) -> tuple[str, int | None] | None:
    """:func:`process_count_misfit`'s line(s), and the rank its line's own prefix names (``[0] ``, ``[rank3]: ``),
    None where the line carries none."""
    if not any(cue in text for cue in _CUES):
        return None
    for match in _misfits(text):
        if went_on_after(text, match.end()) or not _stops_near(text, match.start(), match.end()):
            continue
        start = text.rfind("\n", 0, match.start()) + 1
        end = text.find("\n", match.end())
        said = " ".join(text[start:end if end >= 0 else len(text)].split())
        head = split_rank_prefix(text[start:match.start() + 1])
        return said[:240], (None if head.host_tag else head.rank)
    return None
