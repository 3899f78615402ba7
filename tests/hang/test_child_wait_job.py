"""The child a stuck rank waits on, named live and in `triage report`: a real torchrun gloo job
whose rank 1 waits on a real DataLoader(num_workers=2) where worker 1 blocks in a FIFO read."""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from tests.helpers.launch import job_env, launch_argv, run_launch, torchrun
from tests.helpers.paths import program
from tests.helpers.processes import triage_cmd
from triage.bundle import read_manifest
from triage.exitcodes import ExitCode

pytestmark = [pytest.mark.timeout(240), pytest.mark.slow]


def test_the_blocked_dataloader_worker_is_named_live_and_in_the_report(tmp_path) -> None:  # type: ignore[no-untyped-def]
    run_dir = tmp_path / "run"
    done = run_launch(launch_argv(run_dir, torchrun(program("agent_dataloader_worker.py"))), job_env(), run_dir)
    assert done.returncode == int(ExitCode.HANG_DETECTED), done.explain()
    bundle = done.bundle()
    entries = read_manifest(bundle).extra["children"]
    assert len(entries) == 2 and {e["rank"] for e in entries} == {1}, entries
    assert {e["kind"] for e in entries} == {"DataLoader worker"}
    # the worker id is read (py-spy locals) from the child the rank waits on only
    blocked = next(e for e in entries if e["worker_id"] is not None)
    idle = next(e for e in entries if e is not blocked)
    assert (blocked["worker_id"], blocked["worker_id_from"], idle["worker_id"]) == (1, "py-spy locals", None)
    assert "read_from_store" in (bundle / blocked["file"]).read_text()
    assert "read_from_store" not in (bundle / idle["file"]).read_text()
    named = (f"rank 1 waits on its DataLoader worker 1 (pid {blocked['pid']}), stuck in read_from_store "
             "(agent_dataloader_worker.py:")
    live = done.line("triage: rank 1 waits on its DataLoader worker")
    assert live.startswith(f"triage: {named}") and live.endswith("(it waits for its DataLoader's next batch)"), live
    verdict = done.line("triage: verdict: ")
    assert named in verdict and "the agent found it blocked (CPU " in verdict, verdict
    # the same from the run directory, afterwards
    report = subprocess.run(triage_cmd("report", str(run_dir), "--format", "json"), capture_output=True, text=True,
                            timeout=120, check=False)
    assert report.returncode != 2, report.stderr
    data = json.loads(report.stdout)
    assert named in data["verdict"]["summary"]
    assert verdict.removeprefix("triage: verdict: ") == data["verdict"]["summary"]
    child = next(f for f in data["findings"] if f["kind"] == "child_wait")
    assert child["ranks"] == [1] and child["evidence"][0].endswith(blocked["file"])
    activity = next(f for f in data["findings"] if f["kind"] == "activity")
    assert re.search(r"rank 1 blocked in main \(agent_dataloader_worker.py:\d+\) \(CPU \d+%", activity["detail"])
