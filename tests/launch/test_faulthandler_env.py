"""A job that turns faulthandler on itself (``PYTHONFAULTHANDLER=1``) gets the same crash verdict and stack.

The in-worker agent points faulthandler at the rank's ``faulthandler.log`` either way (faulthandler writes
into one file only), so the report must read the dump from there whether or not the job asked for
faulthandler: a real rank that segfaults (``ctypes.string_at(0)`` in ``poke_null_pointer``) gives the same
verdict kind, culprit, signal and top Python frame in both runs, and its output.log keeps every byte.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.helpers.launch import HOST, TORCHRUN, job_env, launch_argv, rank_dir, run_launch
from tests.helpers.paths import PROGRAMS
from tests.security.sec_util import triage


def _crash_report(tmp_path: Path, faulthandler_env: bool) -> tuple[dict, str]:  # type: ignore[type-arg]
    run_dir = tmp_path / ("with" if faulthandler_env else "without") / "run"
    run_dir.parent.mkdir(parents=True)
    extra = {"PYTHONFAULTHANDLER": "1"} if faulthandler_env else {}
    env = job_env(PM_CRASH_RANK="1", PM_CRASH_STEP="2", **extra)
    if not faulthandler_env:
        env.pop("PYTHONFAULTHANDLER", None)
    job = [TORCHRUN, "--standalone", "--nproc-per-node", "2", str(PROGRAMS / "pm_segfault_rank.py")]
    finished = run_launch(launch_argv(run_dir, job, host=HOST), env, run_dir, timeout=300)
    assert finished.returncode != 0, finished.stderr
    dump = (rank_dir(run_dir, 1) / "faulthandler.log").read_text(errors="replace")
    assert "Segmentation fault" in dump and "poke_null_pointer" in dump, dump
    report = triage("report", str(run_dir), "--format", "json", timeout=180)
    assert report.returncode == 1, report.stderr
    return json.loads(report.stdout), str(run_dir)


@pytest.mark.slow
def test_the_crash_verdict_and_stack_are_the_same_with_the_jobs_own_faulthandler(tmp_path: Path) -> None:
    plain, plain_dir = _crash_report(tmp_path, faulthandler_env=False)
    own, own_dir = _crash_report(tmp_path, faulthandler_env=True)
    for data in (plain, own):
        verdict = data["verdict"]
        assert verdict["kind"] == "crash" and verdict["culprit_ranks"] == [1], verdict
        assert "SIGSEGV" in verdict["summary"], verdict
        crashed = next(r for r in data["ranks"] if r["rank"] == 1)
        assert crashed["state"] == "crashed" and "poke_null_pointer" in crashed["stack_top"], crashed
        root = [f for f in data["findings"] if f["root_cause"]]
        assert [f["ranks"] for f in root] == [[1]] and root[0]["evidence"][0].endswith("faulthandler.log"), root

    def shape(data: dict, run_dir: str) -> str:  # type: ignore[type-arg]
        rank1 = next(r for r in data["ranks"] if r["rank"] == 1)
        text = json.dumps([data["verdict"], rank1["state"], rank1["stack_top"]]).replace(run_dir, "RUN")
        return re.sub(r"\d\d:\d\d:\d\d", "T", text)

    assert shape(plain, plain_dir) == shape(own, own_dir)
