"""`triage report` reads what the agent knew (the bundle manifest's extra): bundles made by real
agent runs (`triage launch` on real torchrun gloo jobs), then reported from the run directory.

- an init hang: the report's verdict is init_hang naming the rank that never joined (with its
  stack and the agent's CPU/I/O figures) and the store address the others waited on; it is the
  same line the agent printed;
- peers that never started: init_hang saying the ranks they wait for are not on this node;
- a manifest whose extra is damaged: the report still comes, with a one-line note per field.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.launch import job_env, launch_argv, run_launch, torchrun
from tests.helpers.paths import program
from tests.helpers.processes import triage_cmd
from triage.bundle import read_manifest
from triage.exitcodes import ExitCode

pytestmark = [pytest.mark.timeout(240), pytest.mark.slow]


def _report(run_dir: Path) -> dict[str, Any]:
    done = subprocess.run(triage_cmd("report", str(run_dir), "--format", "json"), capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.stdout.startswith("{"), done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def test_an_init_hang_bundle_reports_init_hang_as_the_agent_said(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    done = run_launch(launch_argv(run_dir, torchrun(program("agent_init_hang.py"), nproc=3)), job_env(), run_dir)
    assert done.returncode == int(ExitCode.HANG_DETECTED), done.explain()
    store = re.search(r"\(store ([^)]+:\d+)\)", done.line("triage: hang suspected: init hang: "))
    assert store, done.stderr
    init = read_manifest(done.bundle()).extra["init"]
    assert (init["waiting"], init["never_joined"], init["where"]) == ([1, 2], [0], "init_process_group")
    assert init["store"] == store.group(1) and init["seconds"] >= 3

    data = _report(run_dir)
    verdict = data["verdict"]
    assert verdict["kind"] == "init_hang" and verdict["culprit_ranks"] == [0], verdict
    assert re.match(r"INIT HANG: rank 0 \(\S+\) never joined init_process_group: blocked in load_before_init "
                    r"\(agent_init_hang.py:\d+\) \(CPU \d+%, I/O \d+ B/s, same stack\); ranks 1,2 waited in "
                    rf"init_process_group on the store {re.escape(store.group(1))} for \d+ s$", verdict["summary"])
    assert done.line("triage: verdict: ") == f"triage: verdict: {verdict['summary']}"
    stack = next(f for f in data["findings"] if f["kind"] == "stack")
    assert stack["ranks"] == [0] and "load_before_init (agent_init_hang.py:" in stack["detail"]
    assert stack["evidence"][0].endswith("rank-0/pyspy.json")

    # the same bundle, its extra damaged: reported all the same, each bad field named
    copy = tmp_path / "copy"
    shutil.copytree(run_dir, copy, symlinks=True)
    bundle = next(copy.glob("*/bundles/*-hang"))
    manifest = json.loads((bundle / "manifest.json").read_text())
    manifest["extra"].update(init=["not", "an", "object"], activity={"rank": 0},
                             children=[{"rank": 0, "pid": 1, "file": "../../../../etc/passwd"}])
    (bundle / "manifest.json").write_text(json.dumps(manifest))
    damaged = _report(copy)
    assert damaged["verdict"]["kind"] == "init_hang", damaged["verdict"]
    skipped = " | ".join(f["detail"] for f in damaged["findings"])
    assert "extra.init is not an object" in skipped and "extra.activity is not a list" in skipped
    assert "child dump '../../../../etc/passwd' missing or outside the bundle" in skipped


def test_peers_that_never_started_are_reported_as_an_init_hang(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    job = [sys.executable, str(program("agent_partial_world.py")), "2", "4", str(program("agent_init_hang.py"))]
    done = run_launch(launch_argv(run_dir, job), job_env(AGENT_INIT_RANK="99"), run_dir)
    assert done.returncode == int(ExitCode.HANG_DETECTED), done.explain()
    verdict = _report(run_dir)["verdict"]
    assert verdict["kind"] == "init_hang"
    assert verdict["summary"].startswith("INIT HANG: ranks 0,1 waited in init_process_group on the store 127.0.0.1:")
    assert verdict["summary"].endswith("the ranks they wait for are not on this node (never started, or on "
                                       "another node)")
