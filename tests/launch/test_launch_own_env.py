"""Tools that ship as Python packages come from triage's own environment: `triage launch`
started by its full path from a virtual environment that is not activated (as pipx runs it),
with PATH holding only the system directories, still takes py-spy dumps."""

from __future__ import annotations

import os
import shutil
import sysconfig
from pathlib import Path

import pytest

from tests.helpers.bundle import check_complete, status
from tests.helpers.launch import TORCHRUN, run_launch
from tests.helpers.paths import program
from triage.bundle import CollectorStatus, read_manifest
from triage.collectors.executable import find_environment_tool, own_environment_dirs
from triage.exitcodes import ExitCode

SYSTEM_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"
SCRIPTS = Path(sysconfig.get_path("scripts"))


def test_pyspy_is_found_in_the_environment_before_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", SYSTEM_PATH)
    tool, dirs = find_environment_tool("py-spy")
    assert dirs[0] == SCRIPTS
    assert tool == str(SCRIPTS / "py-spy")


def test_a_tool_missing_everywhere_is_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", SYSTEM_PATH)
    assert find_environment_tool("no-such-tool-triage") == (None, own_environment_dirs())


@pytest.mark.timeout(180)
def test_launch_by_full_path_from_an_inactive_venv_collects_pyspy(tmp_path: Path) -> None:
    assert shutil.which("py-spy", path=SYSTEM_PATH) is None, "py-spy is on the system PATH: nothing to show"
    triage = SCRIPTS / "triage"
    assert triage.is_file()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("TRIAGE_") and k not in ("VIRTUAL_ENV", "PYTHONHOME", "PYTHONPATH")}
    env.update(PATH=SYSTEM_PATH, COLLECT_SLEEP_SECONDS="120")
    run_dir = tmp_path / "run"
    argv = [str(triage), "launch", "--run-dir", str(run_dir), "--hang-timeout", "3", "--console", "none",
            "--strace-seconds", "0", "--", TORCHRUN, "--standalone", "--nproc-per-node", "2",
            str(program("collect_sleep_rank.py"))]
    done = run_launch(argv, env, run_dir)
    assert done.returncode == int(ExitCode.HANG_DETECTED), done.explain()
    bundle = done.bundle()
    manifest = check_complete(bundle, [0, 1])
    for rank in (0, 1):
        assert status(manifest, "pyspy", rank) == CollectorStatus.OK, read_manifest(bundle).collectors
    assert "sleep_in_python" in (bundle / "rank-1" / "pyspy.txt").read_text()
