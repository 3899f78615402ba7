"""A real torchrun gloo job under `triage launch --cores` where rank 1 segfaults mid-training,
and several cores of one job: the report names the crash that came first."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.paths import PROGRAMS, REPO
from tests.helpers.postmortem import core_pattern_is_relative_core, crash, find_core, report_json, triage_run
from triage.bundle import CollectorStatus, read_manifest

JOB_TIMEOUT_S = 120


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def segfault_job(tmp_path: Path):  # type: ignore[no-untyped-def]
    if not core_pattern_is_relative_core():
        pytest.skip("kernel.core_pattern is not 'core'")
    run_dir = tmp_path / "run"
    argv = [sys.executable, "-m", "triage", "launch", "--cores", "--run-dir", str(run_dir), "--kill-grace", "2",
            "--console", "none", "--", sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2",
            "--master-addr", "127.0.0.1", "--master-port", str(_free_port()), str(PROGRAMS / "pm_segfault_rank.py")]
    env = {**os.environ, "PM_CRASH_RANK": "1", "PM_CRASH_STEP": "3", "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(argv, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=JOB_TIMEOUT_S)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, 9)
            proc.wait()
    yield tmp_path, run_dir, proc.returncode, out.decode("utf-8", "replace")
    shutil.rmtree(tmp_path, ignore_errors=True)


def test_torchrun_rank_segfault_is_root_cause_others_collateral(segfault_job) -> None:  # type: ignore[no-untyped-def]
    cwd, run_dir, returncode, output = segfault_job
    assert returncode != 0, output
    cores = sorted(cwd.glob("core*"))
    assert len(cores) == 1, (cores, output)

    run, data = report_json(str(cores[0]), "--run-dir", str(run_dir))
    assert run.returncode == 1, run.stderr
    verdict = data["verdict"]
    assert verdict["kind"] == "crash" and verdict["culprit_ranks"] == [1]
    assert verdict["summary"].startswith("rank 1 on ")
    assert "pm_segfault_rank.py" in verdict["summary"] and "poke_null_pointer" in verdict["summary"]
    root = [f for f in data["findings"] if f["root_cause"]]
    assert len(root) == 1 and root[0]["ranks"] == [1]
    others = [f for f in data["findings"] if not f["root_cause"]]
    assert others and all(f["ranks"] == [0] for f in others)
    assert all("collateral" in f["detail"] for f in others)
    states = {r["rank"]: r["state"] for r in data["ranks"]}
    assert states[1] == "crashed" and states[0] in ("exited_error", "crashed", "unknown")
    item = data["extra"]["postmortem"][0]
    assert item["rank"] == 1 and item["kind"] == "segfault_user_extension"
    assert item["python_method"] in ("py-bt", "pystack", "faulthandler.log")
    assert any("poke_null_pointer" in frame for frame in item["python_frames"])
    # the gdb output was kept in a crash bundle of the run directory
    bundles = list(run_dir.glob("*/bundles/*-crash*/rank-1/gdb-core.txt"))
    assert bundles and "@@triage:bt@@" in bundles[-1].read_text()

    text = triage_run("postmortem", str(cores[0]), "--run-dir", str(run_dir), "--width", "120")
    assert "rank 1 on" in text.stdout.splitlines()[1]
    assert "root cause" in text.stdout


def test_several_cores_first_crash_is_named(built: dict[str, Path], tmp_path: Path) -> None:
    first = crash([str(built["pm_mt_crash"])], tmp_path / "a")
    time.sleep(1.1)
    second = crash([str(built["pm_assert"])], tmp_path / "b")
    try:
        run, data = report_json(str(second.core), str(first.core))
        assert run.returncode == 1, run.stderr
        assert data["extra"]["first_crash"]["pid"] == first.pid
        assert data["verdict"]["summary"].startswith(f"pid {first.pid} crashed first")
        kinds = [item["kind"] for item in data["extra"]["postmortem"]]
        assert kinds == ["segfault_user_extension", "assertion_abort"]
        assert [f["root_cause"] for f in data["findings"]] == [True, False]
        assert find_core(tmp_path / "a", first.pid) is not None
    finally:
        shutil.rmtree(tmp_path, ignore_errors=True)


def test_launch_backtraces_the_core_itself_and_ends_with_the_verdict(segfault_job) -> None:  # type: ignore[no-untyped-def]
    """Without any `triage postmortem`: the agent runs gdb on the crashed rank's core into the crash
    bundle, prints the report, and repeats the verdict as its last words."""
    _cwd, run_dir, returncode, output = segfault_job
    assert returncode == 1, output
    assert "rank 1: core " in output and "running gdb on it" in output, output
    verdicts = [line for line in output.splitlines() if line.startswith("triage: verdict: ")]
    assert verdicts and verdicts[-1].startswith("triage: verdict: CRASH: rank 1 "), output
    records = [record for bundle in run_dir.glob("*/bundles/*-crash*")
               for record in read_manifest(bundle).collectors if record.name == "core" and record.rank == 1]
    assert records and records[0].status == CollectorStatus.OK, records
    assert any(path.endswith("gdb-core.txt") for path in records[0].files), records[0]
