"""A full run directory must never stop the job.

A rank's fds 1 and 2 are its ``output.log`` in the run directory. When that file system fills up,
every ``print()`` raises ``OSError: [Errno 28] No space left on device`` and the rank dies of it,
where without triage its output went to a terminal or a pipe and it went on. So the heartbeat
thread looks at the free space each beat; below a reserve it says so in ``output.log`` (the node
agent shows that line, tagged with the rank and host, on the console) and points fds 1 and 2 at
``/dev/null``: from then on the rank's output is lost (there is no room for it) but the rank lives.

The reserve is ``TRIAGE_MIN_FREE_MB`` (default 64 MiB), at most a twentieth of the file system. A
rank that writes faster than the reserve per heartbeat interval can still meet the full disk first.
"""

from __future__ import annotations

import contextlib
import os
import time

DEFAULT_MIN_FREE = 64 << 20


def min_free_from_env() -> int:
    value = os.environ.get("TRIAGE_MIN_FREE_MB", "")
    try:
        megabytes = float(value) if value.strip() else DEFAULT_MIN_FREE / (1 << 20)
    except ValueError:
        return DEFAULT_MIN_FREE
    if not megabytes >= 0 or megabytes == float("inf"):   # NaN, negative or infinite: the default
        return DEFAULT_MIN_FREE
    return int(megabytes * (1 << 20))


def note(free: int, reserve: int) -> str:
    """The line the rank's output.log ends with (triage.parsing.disk_guard reads it back)."""
    return (f"\ntriage: the run directory's file system has {free} bytes free (reserve {reserve}): "
            f"this rank's output is discarded from here on, so that a full disk cannot stop the job\n")


class DiskGuard:
    def __init__(self, rank_dir: str, min_free: int) -> None:
        self.rank_dir = rank_dir
        self.min_free = min_free
        self.discarded_since: float | None = None
        self.free_at_switch: int | None = None

    def check(self) -> None:
        """Once the free space is below the reserve: say so, then discard the rank's output."""
        if self.discarded_since is not None:
            return
        st = os.statvfs(self.rank_dir)
        free = st.f_bavail * st.f_frsize
        reserve = min(self.min_free, st.f_blocks * st.f_frsize // 20)
        if free >= reserve:
            return
        with contextlib.suppress(OSError):
            os.write(2, note(free, reserve).encode())
        null = os.open(os.devnull, os.O_WRONLY | os.O_CLOEXEC)
        try:
            os.dup2(null, 1)
            os.dup2(null, 2)
        finally:
            os.close(null)
        self.discarded_since = time.time()
        self.free_at_switch = free
