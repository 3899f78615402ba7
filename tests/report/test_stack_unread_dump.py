"""`triage dump` of two real processes, one of which no stack collector can read (not a Python process: py-spy
and pystack fail on it), then `triage report`: the unread rank is never named missing (it was alive and sampled);
the report says its stack is not recorded and why, from the bundle's own collector records."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.processes import running_program, triage_cmd

pytestmark = pytest.mark.timeout(240)


def test_a_rank_no_collector_could_read_is_not_recorded_never_missing(tmp_path: Path) -> None:
    env = dict(os.environ, WORLD_SIZE="2")
    python_rank = [sys.executable, "-c", "import time; print('READY', flush=True); time.sleep(600)"]
    other_rank = ["sh", "-c", "echo READY; exec sleep 600"]       # the same pid, no Python in it
    with running_program(python_rank, env={**env, "RANK": "0"}) as zero, \
            running_program(other_rank, env={**env, "RANK": "1"}) as one:
        out = tmp_path / "dump"
        dump = subprocess.run(triage_cmd("dump", "--pid", str(zero.pid), str(one.pid), "--out", str(out),
                                         "--strace-seconds", "0", "--gdb", "never"),
                              capture_output=True, text=True, timeout=180, check=False)
        assert dump.returncode in (0, 1), dump.stderr
    done = subprocess.run(triage_cmd("report", str(out), "--format", "json"), capture_output=True, text=True,
                          timeout=120, check=False)
    report = json.loads(done.stdout)
    verdict = report["verdict"]
    assert verdict["kind"] != "missing_rank" and 1 not in verdict["culprit_ranks"], verdict
    assert "what rank 1 (" in verdict["summary"] and "is not recorded: triage could not read its stack (" \
        in verdict["summary"], verdict["summary"]
    assert "pyspy failed" in verdict["summary"]
    [finding] = [f for f in report["findings"] if f["kind"] == "stack_not_recorded"]
    assert finding["ranks"] == [1] and "pyspy failed (" in finding["detail"]
    assert "Stack backtrace" not in finding["detail"]
    assert not any(f["kind"] == "missing_rank" for f in report["findings"])
