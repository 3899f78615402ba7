"""Simulation frameworks' own fatal-error banners, which every code built on the framework prints before it
exits (the solver's own error, in its own words: an exception of that process, not a signal):

- OpenFOAM's (src/OpenFOAM/db/error, every solver and utility built on it: simpleFoam, decomposePar,
  blastFoam, sedFoam, ...)::

      --> FOAM FATAL ERROR:
      Attempt to cast type  to type fvMesh

  or ``--> FOAM FATAL IO ERROR:``, then ``FOAM exiting`` / ``FOAM aborting`` / ``FOAM parallel run exiting``.
  In a parallel run every line of a process is prefixed ``[N] `` (Pstream's rank in MPI_COMM_WORLD); without
  the prefix the banner is a serial run's, or the master's that names no rank;
- WRF's (frame/module_wrf_error.F, wrf_error_fatal; real.exe, wrf.exe, ndown.exe, the WPS programs)::

      -------------- FATAL CALLED ---------------
      FATAL CALLED FROM FILE:  <stdin>  LINE:     987

  printed into the task's own RSL file, which starts ``taskid: 20 hostname: node172`` (RSL_LITE's header: the
  task is the MPI rank); the banner belongs to the last such header before it;
- GROMACS's (src/gromacs/utility/fatalerror.cpp, gmx_fatal and its exceptions; mdrun, grompp and every gmx
  tool)::

      Program:     gmx mdrun, version 2022
      Source file: src/gromacs/domdec/domdec.cpp (line 2232)
      MPI rank:    0 (out of 10)

      Fatal error:
      There is no domain decomposition for 10 ranks that is compatible with the

  ``Fatal error:`` alone on its line, the message on the lines after; the ``MPI rank: N (out of M)`` line of the
  same banner (a few lines above it) names the rank that reports it, and without it the banner names no rank.

A banner is read only at a line's start (the words quoted in a sentence are not the program's), and not where the
run went on after it (progress or the run's own end word in the lines after: a banner a wrapper printed and retried
after).

``parse_solver_errors(text)`` -> RankDeath records (raised: the process's own error) in text order. Never raises.
"""

from __future__ import annotations

import re

from triage.lazy_regex import lazy_regex
from triage.parsing.launchers import RankDeath
from triage.parsing.progress import went_on_after

MARKERS = ("FOAM FATAL", "FATAL CALLED", "Fatal error:")

# (Markdown quoting or a code span's backtick may come before it; "[N] " is the rank of a parallel run)
_FOAM = lazy_regex(r"^[ \t>*`]*(?:\[(?P<rank>\d{1,7})\] )?--> FOAM FATAL (?P<io>IO )?ERROR:?[ \t]*(?P<head>[^\n]*)$",
                   re.MULTILINE)
_FOAM_PREFIX = lazy_regex(r"^[ \t]*(?:\[\d{1,7}\][ \t]*)?")
_WRF = lazy_regex(r"^[ \t>*`]*-{5,} FATAL CALLED -{5,}[ \t]*$", re.MULTILINE)
_WRF_TASK = lazy_regex(r"^[ \t>*`]*taskid: (?P<rank>\d{1,7}) hostname: (?P<host>[\w.-]+)", re.MULTILINE)
# GROMACS: the line alone (its message follows on the next lines), and the banner's own rank line above it
_GMX = lazy_regex(r"^[ \t>*`]*Fatal error:[ \t]*$", re.MULTILINE)
_GMX_RANK = lazy_regex(r"^[ \t>*`]*MPI rank:[ \t]+(?P<rank>\d{1,7}) \(out of \d{1,7}\)[ \t]*$", re.MULTILINE)
_GMX_RANK_REACH = 400           # characters above "Fatal error:" where the banner's rank line may be
_NEXT_LINES = 6


def parse_solver_errors(text: str) -> tuple[RankDeath, ...]:
    """The banners above in ``text``, in text order. Never raises."""
    if not any(marker in text for marker in MARKERS):
        return ()
    out: list[RankDeath] = []
    seen: set[int | None] = set()
    for match in _FOAM.finditer(text):
        rank = int(match.group("rank")) if match.group("rank") else None
        if rank in seen or went_on_after(text, match.end()):
            continue
        seen.add(rank)                  # (a rank's first banner: its own copy in the master's echo repeats it)
        what = match.group("head").strip() or _message_after(text, match.end())
        kind = "FOAM FATAL IO ERROR" if match.group("io") else "FOAM FATAL ERROR"
        out.append(RankDeath(rank, None, None, None, None,
                             f"OpenFOAM's {kind}: {what}"[:400] if what else f"OpenFOAM's {kind}",
                             offset=match.start(), raised=True, mpi=rank is not None))
    for match in _WRF.finditer(text):
        if went_on_after(text, match.end()):
            continue
        task = None
        for task in _WRF_TASK.finditer(text, 0, match.start()):
            pass
        rank = int(task.group("rank")) if task else None
        if rank in seen:
            continue
        seen.add(rank)
        what = _message_after(text, match.end())
        out.append(RankDeath(rank, None, None, task.group("host") if task else None, None,
                             f"WRF's fatal error (wrf_error_fatal){': ' + what if what else ''}"[:400],
                             offset=match.start(), raised=True, mpi=rank is not None))
    for match in _GMX.finditer(text):
        what = _message_after(text, match.end())
        if not what or went_on_after(text, match.end()):
            continue                    # (a bare "Fatal error:" with nothing after it is no banner)
        found = None
        for found in _GMX_RANK.finditer(text, max(0, match.start() - _GMX_RANK_REACH), match.start()):
            pass
        rank = int(found.group("rank")) if found else None
        if rank in seen:
            continue
        seen.add(rank)
        out.append(RankDeath(rank, None, None, None, None, f"GROMACS's fatal error: {what}"[:400],
                             offset=match.start(), raised=True, mpi=rank is not None))
    return tuple(sorted(out, key=lambda death: death.offset))


def _message_after(text: str, end: int) -> str:
    """The first non-empty line after offset ``end``'s line, without a rank prefix: the banner's message."""
    at = text.find("\n", end) + 1
    for _ in range(_NEXT_LINES):
        if at <= 0 or at >= len(text):
            return ""
        stop = text.find("\n", at)
        line = text[at:stop if stop >= 0 else len(text)]
        line = line[_FOAM_PREFIX.match(line).end():].strip()        # type: ignore[union-attr]
        if line and not line.startswith("---"):
            return " ".join(line.split())[:300]
        at = stop + 1 if stop >= 0 else -1
    return ""
