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

A sentence after which the job went on (progress, its own end: triage.parsing.progress.went_on_after) is a warning the
program recovered from, not the check that stopped the job."""

from __future__ import annotations

import re

from triage.lazy_regex import lazy_regex
from triage.parsing.progress import went_on_after

# the job's processes in a program's words
_PROCS = r"(?:MPI )?(?:processes|processors|procs|ranks|tasks|PEs)"
# a sentence's words, over at most one line break (a message wrapped by its program: NEST's "must be an integer\n
# multiple of the number of processes")
_WORDS = r"[^.\n]{0,80}?(?:\n[ \t]*[^.\n]{0,80}?)?"
_MISFIT = lazy_regex(
    # the count ... does not match / fit
    r"\b(?:number of " + _PROCS + r"|\d+ " + _PROCS + r")\b" + _WORDS
    + r"\b(?:does not|doesn't|do not|don't|did not)\s+(?:match|equal|fit|agree)\b"
    # ... must be a multiple of / divisible by / equal to the count
    + r"|\bmust\s+be\s+(?:an?\s+)?(?:integer\s+|exact\s+)?(?:multiple\s+of|divisible\s+by|equal\s+to)\s+the\s+"
      r"number\s+of\s+" + _PROCS + r"\b"
    # no decomposition for N ranks
    + r"|\bno (?:domain )?decomposition for \d+ " + _PROCS + r"\b",
    re.IGNORECASE)
_CUES = ("process", "rank", "task", "PEs", "procs")


def process_count_misfit(text: str) -> str | None:
    """The line(s) of ``text`` in which the program says the job's process count does not fit its configuration (the
    first such sentence the job did not go on after), or None."""
    if not any(cue in text for cue in _CUES):
        return None
    for match in _MISFIT.finditer(text):
        if went_on_after(text, match.end()):
            continue
        start = text.rfind("\n", 0, match.start()) + 1
        end = text.find("\n", match.end())
        said = " ".join(text[start:end if end >= 0 else len(text)].split())
        return said[:240]
    return None
