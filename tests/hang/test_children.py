"""Evidence from a rank's child processes: a real DataLoader(num_workers=2) whose workers are
blocked in a read; the bundle holds one py-spy dump per worker."""

from __future__ import annotations

import pytest

from tests.helpers.launch import job_env, launch_argv, run_launch, torchrun
from tests.helpers.paths import program
from triage.bundle import CollectorStatus, read_manifest
from triage.exitcodes import ExitCode

pytestmark = [pytest.mark.timeout(240), pytest.mark.slow]


def test_dataloader_workers_of_a_stuck_rank_are_dumped_one_file_each(tmp_path) -> None:  # type: ignore[no-untyped-def]
    run_dir = tmp_path / "run"
    done = run_launch(launch_argv(run_dir, torchrun(program("agent_dataloader_hang.py"))), job_env(), run_dir)
    assert done.returncode == int(ExitCode.HANG_DETECTED), done.explain()
    bundle = done.bundle()
    children = [c for c in read_manifest(bundle).collectors if c.name == "pyspy-child"]
    assert len(children) >= 2, children
    assert {c.rank for c in children} == {1}
    for record in children:
        assert record.status == CollectorStatus.OK, record
        assert record.files == (f"rank-1/children/pyspy-{record.pid}.txt",)
        text = (bundle / record.files[0]).read_text()
        assert "read_from_store" in text and "_worker_loop" in text
