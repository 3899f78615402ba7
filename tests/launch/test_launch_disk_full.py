"""A full run directory never stops the job (a real tmpfs, filled while a real torchrun job runs):
without the guard, each rank's next print() raised ENOSPC on its output.log and the rank died,
and the node agent died of ENOSPC writing node.json (an internal error, exit 70)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers.disk import disk_job_argv, fill_around_the_guard
from tests.helpers.launch import HOST, background_launch

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small tmpfs needs root")


@pytest.mark.timeout(240)
def test_a_full_run_directory_never_stops_the_job(small_disk: Path, tmp_path: Path) -> None:
    run = small_disk / "run"
    argv, env = disk_job_argv(run, tmp_path)
    with background_launch(argv, env, run) as proc:
        fill_around_the_guard(small_disk, run, tmp_path)   # 2 MiB left, 8 MiB to print; then not a byte
        out, err = proc.communicate(timeout=180)
    assert proc.returncode == 0, err
    for rank in (0, 1):
        assert (tmp_path / f"done-{rank}").read_text() == "ok", err
        assert f"[{HOST}:{rank}] triage: the run directory's file system has".encode() in out.encode()
    assert "internal error" not in err
    assert f"cannot write {run / HOST / 'node.json'} (No space left on device); the job goes on" in err
