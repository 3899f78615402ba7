"""The exit status a rank's record and the report give is the one the parent really sees (waitpid).

A rank's ``sys.exit(256)`` exits 0 (only the low 8 bits reach the parent), ``os._exit(300)`` exits 44,
``sys.exit("text")`` exits 1, an integer beyond a C long exits 255, and a ``SystemExit`` raised in a
thread ends only that thread. Each path runs once as a plain process (the truth: its returncode) and once
as rank 0 of a real torchrun job under ``triage launch``; exit.json and the report must agree with the
plain run. A ``SystemExit`` raised without ``sys.exit`` (``raise SystemExit(3)``, the ``exit()`` builtin)
is not seen inside the rank: the report takes the launcher's status and does not call it a teardown crash.
A ``sys.exit(3)`` the program catches (it goes on and exits 0) leaves 3 in the rank's own record; the
launcher's 0 is what the report and the agent's closing line say.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.launch import HOST, TORCHRUN, job_env, launch_argv, rank_dir, read_json, run_launch
from tests.helpers.paths import PROGRAMS
from tests.security.sec_util import triage

PROGRAM = PROGRAMS / "exit_paths.py"
# path -> the status the plain run must give (checked, so a Python that differs shows here first)
PATHS = {"sys.exit(256)": 0, "sys.exit(false)": 0, "sys.exit(-1)": 255, "sys.exit(2**70)": 255,
         "sys.exit(text)": 1, "raise SystemExit(3)": 3, "exit(4)": 4, "os._exit(300)": 44, "SIGKILL": -9,
         "thread sys.exit(5)": 0, "caught sys.exit(3)": 0, "KeyboardInterrupt": -2}
RECORDED = {"sys.exit(256)", "sys.exit(false)", "sys.exit(-1)", "sys.exit(2**70)", "sys.exit(text)",
            "thread sys.exit(5)"}       # paths whose status the rank's own record holds


def _plain_status(how: str) -> int:
    run = subprocess.run([sys.executable, str(PROGRAM), how], env={**os.environ, "RANK": "0"},
                         capture_output=True, timeout=60, check=False)
    return run.returncode


@pytest.mark.slow
@pytest.mark.parametrize("how", sorted(PATHS))
def test_the_recorded_and_reported_status_is_the_one_the_parent_sees(tmp_path: Path, how: str) -> None:
    status = _plain_status(how)
    assert status == PATHS[how], (how, status)
    run_dir = tmp_path / "run"
    job = [TORCHRUN, "--standalone", "--nproc-per-node", "2", str(PROGRAM), how]
    finished = run_launch(launch_argv(run_dir, job, host=HOST), job_env(), run_dir, timeout=240)
    assert (finished.returncode == 0) == (status == 0), (finished.returncode, finished.stderr)
    exit_json = rank_dir(run_dir, 0) / "exit.json"
    if how in RECORDED:
        record = read_json(exit_json)
        assert record["exit_code"] == status, record
    report = triage("report", str(run_dir), "--format", "json", timeout=120)
    data = json.loads(report.stdout)
    text = triage("report", str(run_dir), timeout=120).stdout
    if how == "caught sys.exit(3)":    # its record saw sys.exit(3); the launcher's 0 is the truth
        assert "rank 0 exited 0 (the launcher's record; its own exit record said 3" in finished.stderr, finished.stderr
    if status == 0:
        assert report.returncode == 0, text
        return
    assert report.returncode == 1, text
    verdict = json.dumps(data.get("verdict", data))
    if how == "KeyboardInterrupt":     # a stop, as torchrun says (Signal 2 (SIGINT) received), not a failure
        assert data["verdict"]["kind"] == "stopped" and "was interrupted" in verdict, verdict
        assert "not in this input" not in text, text
    elif status < 0:
        assert "SIGKILL" in verdict, verdict
    else:
        assert f"code {status}" in verdict, verdict
        assert "crash in the process's teardown" not in verdict, verdict
    if how == "sys.exit(text)":
        assert "stopping: bad config" in text, text


@pytest.mark.slow
def test_an_uncaught_keyboard_interrupt_still_ends_the_rank_by_sigint(tmp_path: Path) -> None:
    """CPython ends a process whose KeyboardInterrupt went unhandled by SIGINT (so its parent knows of the
    ^C). The agent's exception hook must not change that: importing ``traceback`` in it made CPython forget
    the interrupt, and the rank exited 1. The rank here is the launched process itself: triage launch is
    its parent and node.json holds its waitpid status."""
    assert _plain_status("KeyboardInterrupt") == -2
    run_dir = tmp_path / "run"
    job = [sys.executable, str(PROGRAM), "KeyboardInterrupt"]
    finished = run_launch(launch_argv(run_dir, job, host=HOST), job_env(RANK="0"), run_dir, timeout=120)
    node = read_json(run_dir / HOST / "node.json")
    assert node["launcher_returncode"] == -2, finished.explain()
    record = read_json(rank_dir(run_dir, 0) / "exit.json")
    assert record["exception"]["type"] == "KeyboardInterrupt", record
    assert record["exception"]["where"].endswith(" in <module>") and "exit_paths.py:" in record["exception"]["where"]
