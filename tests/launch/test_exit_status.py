"""The exit status a rank's record and the report give is the one the parent really sees (waitpid).

A rank's ``sys.exit(256)`` exits 0 (only the low 8 bits reach the parent), ``os._exit(300)`` exits 44,
``sys.exit("text")`` exits 1, an integer beyond a C long exits 255, and a ``SystemExit`` raised in a
thread ends only that thread. Each path runs once as a plain process (the truth: its returncode) and once
as rank 0 of a real torchrun job under ``triage launch``; exit.json and the report must agree with the
plain run. A ``SystemExit`` raised without ``sys.exit`` (``raise SystemExit(3)``, the ``exit()`` builtin)
is not seen inside the rank: the report takes the launcher's status and does not call it a teardown crash.
A ``sys.exit(3)`` the program catches (it goes on and exits 0) is recorded as exit 0 with what it caught
(``caught``): the agent's live line, its bundles, its closing line and the report all say 0; a sys.exit(3)
that only passes through a ``finally``, or a caught one followed by another SystemExit, is no catch.
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
         "thread sys.exit(5)": 0, "caught sys.exit(3)": 0, "KeyboardInterrupt": -2,
         "caught sys.exit(3) in a function": 0, "caught sys.exit(3), then raise SystemExit(5)": 5,
         "sys.exit(3) through a finally": 3}
RECORDED = {"sys.exit(256)", "sys.exit(false)", "sys.exit(-1)", "sys.exit(2**70)", "sys.exit(text)",
            "thread sys.exit(5)", "caught sys.exit(3)", "caught sys.exit(3) in a function",
            "sys.exit(3) through a finally"}       # paths whose status the rank's own record holds
CAUGHT = {"caught sys.exit(3)", "caught sys.exit(3) in a function"}


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
        assert record.get("caught") == ({"exit_code": 3, "exit_arg": None} if how in CAUGHT else None), record
    report = triage("report", str(run_dir), "--format", "json", timeout=120)
    data = json.loads(report.stdout)
    text = triage("report", str(run_dir), timeout=120).stdout
    if how in CAUGHT:    # no crash: not in the live line, no bundle, a clean closing line and report
        assert "exit code 3" not in finished.stderr and "exited 3" not in finished.stderr, finished.stderr
        assert not list(run_dir.glob("*/bundles/*")), finished.stderr
        assert "2 ranks exited 0" in finished.stderr, finished.stderr
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
    elif how == "caught sys.exit(3), then raise SystemExit(5)":
        # a failure of rank 0; the number is the sys.exit(3) its record saw: a SystemExit raised without
        # sys.exit() is not seen inside the rank (the parent saw 5)
        assert data["verdict"]["culprit_ranks"] == [0] and "code 3" in verdict, verdict
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
