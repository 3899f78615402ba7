"""A rank's own error line in plain words among its last lines, as what failed: before its own MPI_Abort
(``own_words_before_abort``), or where another rank's failure line names it as the one lost
(``lost_rank_said_first``). (Part of triage.load.logs.finish's conclusions.)"""

from __future__ import annotations

import re
from dataclasses import replace

from triage.lazy_regex import lazy_regex
from triage.load.logs.scan import LogScan
from triage.parsing.crashlog import CrashLine, CrashLineKind
from triage.parsing.mpi_errors import ABORT_TEXT
from triage.parsing.named_failure import named_failure
from triage.parsing.progress import is_progress

# a rank's own error line in its own words: "Error: cannot open mesh file ...", "ERROR: mesh file ... has 0 cells",
# "Fatal error: ..." (a word of error at the line's start, a colon, then what)
_OWN_ERROR = lazy_regex(r"^\W{0,3}(?:error|fatal error|fatal)\s*:\s*\w", re.IGNORECASE)


def own_words_before_abort(scan: LogScan) -> None:
    """A rank whose only failure is its own MPI_Abort (Open MPI's record) and whose last own lines hold its error
    line in plain words (``Error: cannot open mesh file ...``), with no progress of its after that line: that line is
    what failed, the abort how it ended (the rule failure_of states for a signal line before MPI_Abort)."""
    for rank, items in scan.failures.items():
        if not items or not items[0][1].text.startswith(ABORT_TEXT):
            continue
        said = None
        for line in reversed(scan.last_lines.get(rank, ())):
            if _OWN_ERROR.match(line):
                said = line
                break
            if is_progress(line):
                break          # (its error line, if any, is one it went on past)
        if said is not None:
            order, abort, path = items[0]
            how = abort.text.split(" (", 1)[0].split(": ", 1)[0]
            own = CrashLine(CrashLineKind.EXCEPTION, f"{said} (then {how})"[:400])
            scan.failures[rank] = [(order, own, path), *items[1:]]


def _own_error_line(scan: LogScan, rank: int) -> str | None:
    """The rank's own error line in plain words among its last lines, with no progress of its after it."""
    for line in reversed(scan.last_lines.get(rank, ())):
        if _OWN_ERROR.match(line):
            return line
        if is_progress(line):
            return None         # (its error line, if any, is one it went on past)
    return None


def lost_rank_said_first(scan: LogScan) -> None:
    """A rank's failure line whose words name another rank as the one that failed or was lost (rank 0's ``FATAL ERROR:
    worker 2 stopped responding``), where that rank has no failure read but its own error line in plain words among
    its last lines (rank 2's ``ERROR: NaN detected ...``): the named rank's line is the first failure (the other
    rank's line is what it saw of it: collateral), by who the line names as by cause."""
    for rank, items in list(scan.failures.items()):
        first = next((item for item in items if not item[1].collateral), None)
        named = named_failure(first[1].text) if first is not None else None
        if first is None or named is None or named[0] == rank or scan.failures.get(named[0]):
            continue
        said = _own_error_line(scan, named[0])
        if said is None:
            continue
        order, _, path = first
        scan.failures[named[0]] = [(order - 1 if order > 0 else order, CrashLine(CrashLineKind.EXCEPTION, said[:400]),
                                    path)]
        scan.ranks_seen.add(named[0])
        scan.failures[rank] = [(o, replace(c, collateral=True) if (o, c, p) == first else c, p) for o, c, p in items]
