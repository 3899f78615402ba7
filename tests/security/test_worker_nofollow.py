"""The in-worker agent never writes through a symlink planted at one of its files' names (docs/security.md:
every file is opened with O_NOFOLLOW). A real rank (the real bootstrap and agent in a plain python process):
a link at ``output.log`` or ``faulthandler.log`` leaves its target untouched, and the rank runs and ends as it
would without triage (the agent only says it is disabled). A link at the name of a dump's ``stacks.txt`` or
``fr-exit.json`` makes that one write fail (the writer's unit: ``write_bytes``)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.paths import REPO
from triage.worker.files import write_bytes, write_json

BOOTSTRAP = REPO / "triage" / "worker" / "bootstrap"


def _rank(run_dir: Path) -> subprocess.CompletedProcess[str]:
    real = socket.gethostname().split(".")[0]
    env = {**os.environ, "PYTHONPATH": str(BOOTSTRAP), "TRIAGE_RUN_DIR": str(run_dir), "TRIAGE_RANK_VARS": "RANK",
           "RANK": "0", "TRIAGE_HOST": "h", "TRIAGE_REAL_HOST": real, "TRIAGE_JOB_ID": "nofollow"}
    env.pop("TRIAGE_WORKER_PID", None)
    return subprocess.run([sys.executable, "-c", "print('rank says hello')"], env=env, capture_output=True,
                          text=True, timeout=120, check=False)


@pytest.mark.parametrize("name", ["output.log", "faulthandler.log"])
def test_a_link_planted_at_a_rank_file_is_never_written_through(tmp_path: Path, name: str) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    rank_dir = tmp_path / "run" / "h" / "ranks" / "0"
    rank_dir.mkdir(parents=True, mode=0o700)
    (rank_dir / name).symlink_to(victim)
    done = _rank(tmp_path / "run")
    assert done.returncode == 0, done.stderr
    assert victim.read_text() == "precious\n"
    assert (rank_dir / name).is_symlink()
    # (with output.log in place, the agent had already sent the rank's output there)
    said = done.stdout + done.stderr + ((rank_dir / "output.log").read_text() if name != "output.log" else "")
    assert "in-worker agent disabled" in said and "rank says hello" in said, said


def test_the_writer_refuses_a_link_and_replaces_none(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    link = tmp_path / "fr-exit.json"
    link.symlink_to(victim)
    with pytest.raises(OSError):
        write_bytes(str(link), b"{}")
    assert victim.read_text() == "precious\n"
    write_json(str(tmp_path / "exit.json"), {"a": 1})             # a plain write still works, 0600
    assert (tmp_path / "exit.json").stat().st_mode & 0o777 == 0o600
