"""A full run directory never stops the job (a real tmpfs, filled while a real torchrun job runs):
without the guard, each rank's next print() raised ENOSPC on its output.log and the rank died,
and the node agent died of ENOSPC writing node.json (an internal error, exit 70)."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.launch import HOST, background_launch, job_env, launch_argv, rank_dir, torchrun
from tests.helpers.paths import program
from tests.helpers.processes import wait_for

NOTE = b"this rank's output is discarded from here on"

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small tmpfs needs root")


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    disk = tmp_path / "disk"
    disk.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m,mode=0700", "tmpfs", str(disk)], check=True)
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def _fill(disk: Path, leave: int) -> None:
    st = os.statvfs(disk)
    fd = os.open(disk / f"filler-{leave}", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        size = st.f_bavail * st.f_frsize - leave
        if size > 0:
            os.posix_fallocate(fd, 0, size)
    finally:
        os.close(fd)


@pytest.mark.timeout(240)
def test_a_full_run_directory_never_stops_the_job(small_disk: Path, tmp_path: Path) -> None:
    run = small_disk / "run"
    go = tmp_path / "go"
    env = job_env(DISK_GO=str(go), DISK_MB="8", DISK_MARKERS=str(tmp_path))
    argv = launch_argv(run, torchrun(program("launch_disk_full.py"), 2), quick_hang=False, host=HOST)
    with background_launch(argv, env, run) as proc:
        wait_for(lambda: all(b"READY" in _output(run, r) for r in (0, 1)), 120, "both ranks ready")
        _fill(small_disk, leave=2 << 20)          # someone else's checkpoint: 2 MiB left, 8 MiB to print
        wait_for(lambda: all(NOTE in _output(run, r) for r in (0, 1)), 120, "both ranks' disk guard")
        _fill(small_disk, leave=0)                # and then not a byte: exit.json and node.json cannot be written
        go.touch()
        out, err = proc.communicate(timeout=180)
    assert proc.returncode == 0, err
    for rank in (0, 1):
        assert (tmp_path / f"done-{rank}").read_text() == "ok", err
        assert f"[{HOST}:{rank}] triage: the run directory's file system has".encode() in out.encode()
    assert "internal error" not in err
    assert f"cannot write {run / HOST / 'node.json'} (No space left on device); the job goes on" in err


def _output(run: Path, rank: int) -> bytes:
    with contextlib.suppress(OSError):
        return (rank_dir(run, rank) / "output.log").read_bytes()
    return b""
