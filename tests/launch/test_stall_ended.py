"""A hang the agent dumped under --on-hang wait that then ended by itself: the job exits 0, the agent
says the stall ended, and the report says STALL (what the bundle showed, then that every rank exited
0), never "never reached"."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from tests.helpers.launch import job_env, launch_argv, torchrun, triage_cmd
from tests.helpers.paths import program
from tests.helpers.processes import running_program


def test_a_stall_that_ends_by_itself_is_said_as_one(tmp_path: Path) -> None:
    run, go = tmp_path / "run", tmp_path / "go"
    argv = launch_argv(run, torchrun(program("stall_then_finish.py"), 2, str(go)), "--on-hang", "wait")
    with running_program(argv, env=job_env(), ready="job left running (--on-hang wait)", timeout=240) as proc:
        go.touch()
        assert proc.wait(timeout=240) == 0
        assert proc.stdout is not None
        rest = proc.stdout.read().decode(errors="replace")
    assert "triage: the job finished after 1 hang bundle(s): the stall ended by itself" in rest, rest
    done = subprocess.run([*triage_cmd("report", str(run), "--format", "json")], capture_output=True, text=True,
                          timeout=120, check=False)
    doc = json.loads(done.stdout)
    verdict = doc["verdict"]
    assert verdict["summary"].startswith("STALL: rank 1 "), verdict
    assert re.search(r"^STALL: rank 1 \(\S+\) had not reached seq \d+ when the agent dumped the job: outside any "
                     r"collective at stall_then_finish\.py:\d+ in wait_for_go, while rank 0 waited in all_reduce",
                     verdict["summary"]), verdict
    assert verdict["summary"].endswith("it ended by itself: the job went on and every rank exited 0"), verdict
    assert "never reached" not in done.stdout
    assert verdict["culprit_ranks"] == [1] and verdict["kind"] == "stuck_outside_collective", verdict
    assert doc["next_steps"][0].startswith("the job finished: this was a stall"), doc["next_steps"]


def test_two_stalls_are_counted_and_the_latest_is_said(tmp_path: Path) -> None:
    """Rank 1 stalls twice; each time the agent dumps the job and leaves it running, and each stall ends:
    the report says the latest and that there were 2 (the agent's line counts the bundles too)."""
    run, go = tmp_path / "run", tmp_path / "go"
    argv = launch_argv(run, torchrun(program("stall_then_finish.py"), 2, str(go), "2"), "--on-hang", "wait")
    with running_program(argv, env=job_env(), ready="job left running (--on-hang wait)", timeout=240) as proc:
        go.touch()
        assert proc.stdout is not None
        seen = b""
        for line in iter(proc.stdout.readline, b""):     # the second dump's line (or the agent's end: EOF)
            seen += line
            if b"job left running (--on-hang wait)" in line:
                break
        assert b"job left running" in seen, seen
        Path(f"{go}.2").touch()
        assert proc.wait(timeout=240) == 0
        rest = proc.stdout.read().decode(errors="replace")
    assert "triage: the job finished after 2 hang bundle(s): the stall ended by itself" in rest, rest
    done = subprocess.run([*triage_cmd("report", str(run), "--format", "json")], capture_output=True, text=True,
                          timeout=120, check=False)
    verdict = json.loads(done.stdout)["verdict"]
    assert verdict["summary"].startswith("STALL: rank 1 "), verdict
    assert verdict["summary"].endswith("every rank exited 0 (the latest of 2 stalls the agent dumped: each ended by "
                                       "itself)"), verdict
