"""A real small file system for the full-disk tests: a 64 MiB tmpfs mounted for one test, filled by
someone else's file while a real job writes to it (root only)."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

from tests.helpers.launch import HOST, job_env, launch_argv, rank_dir, torchrun
from tests.helpers.paths import program
from tests.helpers.processes import wait_for

# what a rank's disk guard writes when its output can no longer be kept
NOTE = b"this rank's output is discarded from here on"


@contextlib.contextmanager
def mounted_tmpfs(where: Path, size_mb: int = 64) -> Iterator[Path]:
    """A tmpfs of ``size_mb`` at ``where`` (created), unmounted (lazily) at the end."""
    where.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_mb}m,mode=0700", "tmpfs", str(where)], check=True)
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(disk: Path, leave: int) -> None:
    """Take all of ``disk``'s free space but ``leave`` bytes (a file of its own, allocated at once)."""
    st = os.statvfs(disk)
    fd = os.open(disk / f"filler-{leave}", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        size = st.f_bavail * st.f_frsize - leave
        if size > 0:
            os.posix_fallocate(fd, 0, size)
    finally:
        os.close(fd)


def rank_output(run: Path, rank: int) -> bytes:
    """Rank ``rank``'s output.log in ``run`` so far (b"" before it exists)."""
    with contextlib.suppress(OSError):
        return (rank_dir(run, rank) / "output.log").read_bytes()
    return b""


def disk_job_argv(run: Path, markers: Path) -> tuple[list[str], dict[str, str]]:
    """`triage launch` of tests/programs/launch_disk_full.py on 2 ranks into ``run``: each rank prints
    8 MiB once ``markers/go`` exists and writes ``markers/done-R`` at its end."""
    env = job_env(DISK_GO=str(markers / "go"), DISK_MB="8", DISK_MARKERS=str(markers))
    return launch_argv(run, torchrun(program("launch_disk_full.py"), 2), quick_hang=False, host=HOST), env


def fill_around_the_guard(disk: Path, run: Path, markers: Path) -> None:
    """Once both ranks are up: leave 2 MiB (someone else's checkpoint), wait until both ranks' disk
    guards have said so, take the last byte (exit.json and node.json cannot be written), then let the
    ranks print their 8 MiB and end."""
    wait_for(lambda: all(b"READY" in rank_output(run, r) for r in (0, 1)), 120, "both ranks ready")
    fill(disk, leave=2 << 20)
    wait_for(lambda: all(NOTE in rank_output(run, r) for r in (0, 1)), 120, "both ranks' disk guard")
    fill(disk, leave=0)
    (markers / "go").touch()
