"""pystack gives a live rank's Python frames when py-spy cannot (a Python it does not know yet, a
missing py-spy): on real processes, read by the same loader as py-spy's dumps."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers.processes import python_program, running_program, triage_cmd
from triage.bundle import CollectorStatus, Trigger, read_manifest
from triage.collectors.common import Target
from triage.collectors.node_bundle import JobInfo, collect_node_bundle, collect_rank
from triage.collectors.pyframes import collect_pystack_live, pystack_available
from triage.layout import BundlePaths, RunPaths
from triage.options import CollectSettings, GdbMode
from triage.private_files import make_private_dir

pytestmark = pytest.mark.skipif(not pystack_available(), reason="pystack is not installed")
QUIET = CollectSettings(gdb=GdbMode.NEVER, strace_seconds=0.0)


def test_pystack_reads_a_live_python_rank(tmp_path: Path) -> None:
    with running_program(python_program("collect_target.py", "sleep"), env=None) as proc:
        out = make_private_dir(tmp_path / "rank-0")
        record = collect_pystack_live(Target(rank=0, pid=proc.pid), out, tmp_path, QUIET, "py-spy failed")
        assert proc.poll() is None                    # read, not stopped for good
    assert record.status == CollectorStatus.OK, record.error
    assert "sleep_forever" in (out / "pystack.json").read_text()


def test_the_report_takes_pystack_frames_when_py_spy_left_none(tmp_path: Path) -> None:
    out = tmp_path / "dump"
    with running_program(python_program("collect_target.py", "sleep"), env=None) as proc:
        dump = subprocess.run(triage_cmd("dump", "--pid", str(proc.pid), "--out", str(out), "--gdb", "never",
                                         "--strace-seconds", "0"),
                              check=False, capture_output=True, text=True, timeout=120)
        assert dump.returncode == 0, dump.stderr
        (bundle,) = RunPaths(out).hosts()[0].bundles()
        files = BundlePaths(bundle).rank(0)
        for path in (files.pyspy_json, files.pyspy_txt, files.stacks):    # as if py-spy could not read it
            path.unlink(missing_ok=True)
        record = collect_pystack_live(Target(rank=0, pid=proc.pid), files.root, bundle, QUIET, "py-spy failed")
    assert record.status == CollectorStatus.OK, record.error
    report = subprocess.run(triage_cmd("report", str(out), "--format", "json"), check=False, capture_output=True,
                            text=True, timeout=120)
    doc = json.loads(report.stdout)
    assert doc["ranks"][0]["stack_top"].endswith("in sleep_forever"), doc["ranks"]
    assert str(files.pystack) in doc["evidence"]


def test_a_rank_py_spy_cannot_read_gets_a_pystack_record(tmp_path: Path) -> None:
    sleep = shutil.which("sleep")
    assert sleep is not None
    with running_program([sleep, "60"], ready=None) as proc:          # not Python: py-spy and pystack fail
        records = {r.name: r for r in collect_rank(Target(rank=0, pid=proc.pid), tmp_path, QUIET)}
    assert records["pyspy"].status in (CollectorStatus.FAILED, CollectorStatus.MISSING)
    assert records["pystack"].status != CollectorStatus.OK and records["pystack"].error
    assert "\n" not in records["pystack"].error and "py-spy" in records["pystack"].error


def test_pystack_does_not_run_when_py_spy_read_the_rank(tmp_path: Path) -> None:
    with running_program(python_program("collect_target.py", "sleep"), env=None) as proc:
        bundle = collect_node_bundle(JobInfo("job1", started=None), [Target(rank=0, pid=proc.pid)], Trigger.MANUAL,
                                     "test", QUIET, tmp_path / "bundles")
    names = [r.name for r in read_manifest(bundle).collectors]
    assert "pyspy" in names and "pystack" not in names
