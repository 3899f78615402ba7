"""A directory of per-rank logs that launchers write, found by their layout (reads names only, never contents).

What a user has after a job when the launcher kept each rank's output apart:

- torchrun ``--log-dir DIR`` (with ``--redirects``/``--tee``): ``DIR/<run id>/attempt_<N>/<local rank>/``
  ``stdout.log``, ``stderr.log`` and ``error.json`` (the ``@record`` error file). The number is the LOCAL
  rank: on one node that is the rank; a directory with the logs of several nodes cannot tell them apart,
  and says so (``LogTree.note``);
- Open MPI ``mpirun --output-filename DIR`` (and PRRTE's ``--output dir=DIR``):
  ``DIR/<job>/rank.<N>/stdout``, ``stderr``: the global rank;
- any tree whose directories or files carry a rank in their names (``rank3/``, ``rank_3.log``,
  ``node0/rank-3.err``).

Below the top directory, only files whose place names a rank are read (a project directory's other
text files are not logs); the top directory's log files are read as a directory of logs always was.

The walk is bounded (depth, entries) and never follows a symbolic link to a directory (no loops); files are
opened as every input is (triage.regular_files: never a FIFO or device, never another user's file for root).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from triage.lazy_regex import lazy_regex
from triage.rank_names import is_rank_name

MAX_DEPTH = 6
MAX_ENTRIES = 50_000
LOG_SUFFIXES = (".log", ".txt", ".out", ".err")
STREAM_NAMES = ("stdout", "stderr", "stddiag")          # Open MPI's files, no suffix
ERROR_FILE = "error.json"                               # torchelastic's @record error file
_RANK_DIR = lazy_regex(r"^rank[-_.]?(\d{1,7})$", re.IGNORECASE)
_RANK_IN_NAME = lazy_regex(r"rank[-_.]?(\d{1,7})", re.IGNORECASE)
_ATTEMPT = lazy_regex(r"^attempt_\d+$")


@dataclass(frozen=True)
class RankLog:
    """A log file of a directory, with the rank its path names."""
    path: Path
    rank: int | None          # from the layout; None when the path names none
    local: bool = False       # the number is torchrun's local rank


@dataclass(frozen=True)
class LogTree:
    """The log files of a directory and the ranks their paths name."""
    logs: tuple[RankLog, ...] = ()
    error_files: tuple[Path, ...] = ()
    note: str | None = None   # what the layout cannot tell (local ranks of several nodes, a walk cut short)


def rank_of(relative: Path) -> tuple[int | None, bool]:
    """(rank, is it a local rank) of a file from its path under the tree's root: the nearest component that
    names one; a bare number directly under torchrun's ``attempt_N`` is a local rank."""
    parts = relative.parts
    match = _RANK_IN_NAME.search(parts[-1])
    if match and is_rank_name(match.group(1)):
        return int(match.group(1)), False
    for index in range(len(parts) - 2, -1, -1):
        part = parts[index]
        if (found := _RANK_DIR.match(part)) and is_rank_name(found.group(1)):
            return int(found.group(1)), False
        if is_rank_name(part) and index > 0 and _ATTEMPT.match(parts[index - 1]):
            return int(part), True
    return None, False


def find_rank_logs(root: Path) -> LogTree:
    """The per-rank logs under ``root`` (its own files included), in path order; empty when it holds none."""
    logs: list[RankLog] = []
    errors: list[Path] = []
    seen = 0
    cut = False
    for directory, subdirs, files in os.walk(root, followlinks=False):
        here = Path(directory)
        depth = len(here.relative_to(root).parts)
        subdirs[:] = sorted(d for d in subdirs if not d.startswith(".")) if depth < MAX_DEPTH else []
        for name in sorted(files):
            seen += 1
            if seen > MAX_ENTRIES:
                cut = True
                break
            path = here / name
            if name.startswith("."):
                continue
            if name == ERROR_FILE and (depth == 0 or rank_of(path.relative_to(root))[0] is not None):
                errors.append(path)
            elif name in STREAM_NAMES or name.endswith(LOG_SUFFIXES):
                rank, local = rank_of(path.relative_to(root))
                if rank is not None or depth == 0:        # below the top, only files the layout gives a rank
                    logs.append(RankLog(path, rank, local))
        if cut:
            break
    notes = []
    runs = {log.path.parent.parent.parent for log in logs if log.local}
    if len(runs) > 1:
        notes.append(f"{len(runs)} torchrun runs' log directories: their numbers are local ranks, so ranks of "
                     "different nodes or runs may share a number (pass one node's run directory at a time)")
    if cut:
        notes.append(f"the walk stopped after {MAX_ENTRIES} files")
    return LogTree(tuple(logs), tuple(errors), "; ".join(notes) or None)
