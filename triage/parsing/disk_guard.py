"""The rank's disk guard line (triage.worker.diskguard writes it into the rank's output.log when the
run directory's file system falls below its reserve, then discards the rank's output):

    triage: the run directory's file system has 2093056 bytes free (reserve 3355443): this rank's
    output is discarded from here on, so that a full disk cannot stop the job

After it nothing of the rank reached the run directory: its exit record (exit.json) may be missing
for want of space, which says nothing about how the rank ended.
"""

from __future__ import annotations

from collections.abc import Iterable

from triage.lazy_regex import lazy_regex

_NOTE = lazy_regex(r"triage: the run directory's file system has (\d+) bytes free \(reserve (\d+)\): "
                   r"this rank's output is discarded")


def disk_full_note(lines: Iterable[str]) -> str | None:
    """What the disk guard's line among ``lines`` says (``the run directory's file system had N bytes
    free (reserve R)``), or None."""
    for line in lines:
        found = _NOTE.search(line)
        if found is not None:
            return f"the run directory's file system had {found.group(1)} bytes free (reserve {found.group(2)})"
    return None


__all__ = ["disk_full_note"]
