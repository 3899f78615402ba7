"""tests/conftest.py's private TMPDIR: what the tests and their jobs write there stays out of the machine's
/tmp and goes at the end of the session; pytest's own tmp_path is not moved."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.helpers.launch import job_env


def test_tmpdir_is_the_sessions_private_directory(private_tmpdir: Path) -> None:
    assert os.environ["TMPDIR"] == str(private_tmpdir)
    assert Path(tempfile.gettempdir()) == private_tmpdir
    info = private_tmpdir.stat()
    assert info.st_uid == os.geteuid() and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH | stat.S_IROTH)
    assert private_tmpdir.name.startswith("triage-tests-")


def test_a_child_writes_its_temporary_files_there(private_tmpdir: Path) -> None:
    code = "import tempfile; print(tempfile.mkdtemp(prefix='torchelastic_'))"
    made = Path(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                               env={**os.environ}).stdout.strip())
    assert made.parent == private_tmpdir
    made.rmdir()


def test_launched_jobs_too(private_tmpdir: Path) -> None:
    assert Path(job_env()["TMPDIR"]).parent == private_tmpdir


def test_pytest_tmp_path_is_not_moved(tmp_path: Path, private_tmpdir: Path) -> None:
    assert not tmp_path.is_relative_to(private_tmpdir)
    assert tmp_path.exists()
