"""`triage dump` against a running `triage launch` job, and collection with the tools really gone."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.bundle import check_complete, pyspy_functions, status
from tests.helpers.launch import TORCHRUN, background_launch, job_env, launch_argv, run_launch, torchrun
from tests.helpers.paths import example, program
from tests.helpers.processes import triage_cmd
from triage.bundle import CollectorStatus, Trigger, read_manifest
from triage.exitcodes import ExitCode

pytestmark = pytest.mark.timeout(180)


def test_dump_on_a_healthy_job(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    argv = [a for a in launch_argv(run_dir, torchrun(program("collect_healthy.py")))]
    argv[argv.index("--console") + 1] = "all"
    with background_launch(argv, job_env(COLLECT_SECONDS="60"), run_dir) as launch:
        result = subprocess.run(triage_cmd("dump", "--run-dir", str(run_dir), "--wait", "60"),
                                capture_output=True, text=True, timeout=90, check=False)
        assert result.returncode == 0, result.stderr
        still_running = launch.poll() is None
    bundle = Path(result.stdout.strip().splitlines()[-1])
    assert f"next: triage report {run_dir}" in result.stderr
    manifest = check_complete(bundle, [0, 1])
    assert manifest.trigger == Trigger.MANUAL
    for rank in (0, 1):
        assert status(manifest, "pyspy", rank) == CollectorStatus.OK
        assert status(manifest, "fr", rank) == CollectorStatus.OK
        assert "train_loop" in pyspy_functions(bundle, rank)
    assert still_running, "a dump must not stop the job"


def _bare_path(tmp_path: Path) -> str:
    """A PATH with python, torchrun and dmesg, but no py-spy, gdb or strace."""
    bare = tmp_path / "bin"
    bare.mkdir()
    for name, target in (("python", sys.executable), ("python3", sys.executable), ("torchrun", TORCHRUN),
                         ("dmesg", "/usr/bin/dmesg")):
        (bare / name).symlink_to(target)
    return str(bare)


def _env_without_pyspy(tmp_path: Path) -> str:
    """A real virtual environment whose bin has no py-spy (triage looks there before PATH); it
    sees this environment's packages (triage, torch) through a .pth file. Returns its python."""
    import site
    import sysconfig

    env_dir = tmp_path / "bare-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True, timeout=120)
    python = env_dir / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                             capture_output=True, text=True, check=True, timeout=60).stdout.strip()
    paths = [sysconfig.get_path("purelib"), *site.getsitepackages(), str(Path(__file__).resolve().parents[2])]
    (Path(purelib) / "triage-test.pth").write_text("\n".join(dict.fromkeys(paths)) + "\n")
    assert not (env_dir / "bin" / "py-spy").exists()
    return str(python)


def test_hang_with_pyspy_gdb_strace_absent(tmp_path: Path) -> None:
    bare = _bare_path(tmp_path)
    python = _env_without_pyspy(tmp_path)
    check = subprocess.run(["/bin/sh", "-c", "command -v py-spy gdb strace"], env={"PATH": bare},
                           capture_output=True, text=True, check=False)
    assert check.stdout == "", check.stdout
    run_dir = tmp_path / "run"
    argv = launch_argv(run_dir, torchrun(example("mismatch_hang.py")))
    argv[0] = python                       # triage runs from the environment without py-spy
    done = run_launch(argv, job_env(PATH=bare), run_dir)
    assert done.returncode == int(ExitCode.HANG_DETECTED), done.explain()
    bundle = done.bundle()
    manifest = check_complete(bundle, [0, 1], also=frozenset({"pystack"}))
    for rank, op in ((0, "all_reduce"), (1, "all_gather")):
        records = {c.name: c for c in manifest.collectors if c.rank == rank}
        for name, hint in (("pyspy", "pip install py-spy"), ("gdb", "apt-get install gdb"),
                           ("strace", "apt-get install strace")):
            assert records[name].status == CollectorStatus.MISSING, (name, records[name])
            assert records[name].hint is not None and hint in records[name].hint
        # everything that does not need those tools is still there
        assert records["fr"].status == CollectorStatus.OK and records["stacks"].status == CollectorStatus.OK
        assert records["proc"].status == CollectorStatus.OK
        assert "all_" in (bundle / f"rank-{rank}" / "stacks.txt").read_text()
        # without py-spy, pystack read the rank's Python frames from its memory
        assert records["pystack"].status == CollectorStatus.OK, records["pystack"]
        assert f'"function": "{op}"' in (bundle / f"rank-{rank}" / "pystack.json").read_text()
    assert (bundle / "node" / "dmesg.txt").is_file()
    assert read_manifest(bundle).finished is not None
    assert os.environ.get("PATH") != bare


def test_dump_when_the_agent_died_collects_from_the_live_ranks(tmp_path: Path) -> None:
    import json
    import signal

    from tests.helpers.processes import kill_tree

    run_dir = tmp_path / "run"
    argv = launch_argv(run_dir, torchrun(program("collect_healthy.py")))
    argv[argv.index("--console") + 1] = "all"
    launcher_pid = None
    try:
        with background_launch(argv, job_env(COLLECT_SECONDS="60"), run_dir) as launch:
            node = json.loads(next(run_dir.glob("*/node.json")).read_text())
            launcher_pid = node["launcher_pid"]
            os.kill(launch.pid, signal.SIGKILL)          # the agent is gone, the ranks run on
            launch.wait(timeout=10)
            result = subprocess.run(triage_cmd("dump", str(run_dir), "--strace-seconds", "0.5"),
                                    capture_output=True, text=True, timeout=90, check=False)
    finally:
        if launcher_pid:
            kill_tree(launcher_pid)
    assert result.returncode == 0, result.stderr
    assert "no running agent: collecting directly from 2 rank(s)" in result.stderr
    bundle = Path(result.stdout.strip().splitlines()[-1])
    manifest = check_complete(bundle, [0, 1])
    assert manifest.extra.get("standalone") is True
    for rank in (0, 1):
        assert status(manifest, "fr", rank) == CollectorStatus.OK        # through the worker's socket
        assert "train_loop" in pyspy_functions(bundle, rank)
