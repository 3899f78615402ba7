"""The postmortem hook: a crashed rank's gdb output in its bundle becomes a crash_analysis finding.

A real process is killed by SIGSEGV with core dumps enabled (for this child only); real gdb
reads the core; the run directory holds it the way collectors would."""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from triage.analysis.analyze import analyze
from triage.load.inputs import load_inputs
from triage.model import VerdictKind

GOLDEN = Path(__file__).resolve().parent.parent / "golden"


def _core_limit() -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))


@pytest.mark.skipif(shutil.which("gdb") is None, reason="gdb is not installed")
def test_gdb_of_crashed_rank_is_folded_in(tmp_path: Path) -> None:
    work = tmp_path / "crash"
    work.mkdir()
    proc = subprocess.run([sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"],
                          cwd=work, preexec_fn=_core_limit, check=False, timeout=60)
    assert proc.returncode == -11
    cores = sorted(work.glob("core*"))
    if not cores:
        pytest.skip("no core file was written (core_pattern sends cores elsewhere)")
    gdb = subprocess.run(["gdb", "-batch", "-ex", "thread apply all bt", os.path.realpath(sys.executable),
                          str(cores[0])], capture_output=True, text=True, timeout=120, check=False)
    for core in cores:
        core.unlink()  # tens of MB: do not leave it in the temp dir
    run = tmp_path / "run"
    shutil.copytree(GOLDEN / "crash/run", run)
    bundle = run / "node01/bundles/20261122T010000.000-crash"
    (bundle / "rank-0").mkdir(parents=True)
    (bundle / "rank-0/gdb.txt").write_text(gdb.stdout)
    (bundle / "manifest.json").write_text(
        '{"schema": "triage.bundle/1", "job_id": "golden", "host": "node01", "trigger": "crash", '
        '"created": 0, "ranks": [{"rank": 0, "pid": null}], "collectors": []}')
    report = analyze(load_inputs([run]))
    assert report.verdict.kind is VerdictKind.CRASH and report.verdict.culprit_ranks == (0,)
    analysis = [f for f in report.findings if f.kind == "crash_analysis"]
    assert len(analysis) == 1 and analysis[0].ranks == (0,)
    assert analysis[0].evidence == (str(bundle / "rank-0/gdb.txt"),)
    assert report.findings[1] == analysis[0]  # right under the root cause
    assert "SIGSEGV" in analysis[0].detail
