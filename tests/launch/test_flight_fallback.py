"""The worker's Flight Recorder access without a recording FR (TORCH_FR_BUFFER_SIZE=0), on a real
2-rank gloo job: the groups' sequence numbers and the collective the main thread waits in."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.helpers.launch import HOST, TORCHRUN, job_env, launch_argv, torchrun
from tests.helpers.paths import program
from tests.helpers.processes import running_program, wait_for
from triage.bundle import CollectorStatus, read_manifest

pytestmark = pytest.mark.timeout(180)


def _beat(**env: str) -> dict[str, object]:
    job = [TORCHRUN, "--standalone", "--nproc-per-node", "2", str(program("flight_probe.py"))]
    done = subprocess.run(job, env=job_env(**env), capture_output=True, text=True, timeout=150, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    [line] = [ln for ln in done.stdout.splitlines() if ln.startswith("BEAT ")]
    return json.loads(line.removeprefix("BEAT "))  # type: ignore[no-any-return]


def test_without_a_recording_fr_the_heartbeat_has_sequence_numbers_and_the_frame() -> None:
    beat = _beat(TORCH_FR_BUFFER_SIZE="0")
    assert beat["fr_state"] == "unavailable: the Flight Recorder is off (TORCH_FR_BUFFER_SIZE=0)"
    assert beat["progress"] == {"0": {"enqueued": 3}}       # all_reduce, barrier, all_reduce
    waiting = beat["waiting_in"]
    assert isinstance(waiting, dict)
    assert (waiting["op"], waiting["pg"], waiting["seq"]) == ("all_reduce", "0", 3)
    assert str(waiting["where"]).endswith("flight_probe.py:36")


def test_with_the_fr_on_nothing_is_filled_in() -> None:
    beat = _beat()
    assert beat == {"progress": {}, "fr_state": "off"}


def test_a_rank_that_has_not_imported_torch_distributed_has_its_fr_skipped_not_failed(tmp_path: Path) -> None:
    """A bundle taken before a rank uses torch.distributed (a slow start-up suspected of a hang): the
    worker has no Flight Recorder to dump, and the manifest says so; it is no collector failure."""
    run = tmp_path / "run"
    argv = launch_argv(run, torchrun(program("cluster_sleeper.py"), 1), quick_hang=False, host=HOST)
    with running_program(argv, env=job_env(), timeout=90):
        requests = run / HOST / "dump-requests"
        (requests / "req1.json").write_text(json.dumps({"reason": "test request"}))
        wait_for(lambda: (requests / "req1.json.done").exists(), 60, "the dump request handled")
    [manifest] = [read_manifest(m.parent) for m in (run / HOST / "bundles").glob("*/manifest.json")]
    fr = next(c for c in manifest.collectors if c.name == "fr" and c.rank == 0)
    assert fr.status is CollectorStatus.SKIPPED, fr
    assert fr.error == "no Flight Recorder dump: torch.distributed is not in use in this process", fr
    stacks = next(c for c in manifest.collectors if c.name == "stacks" and c.rank == 0)
    assert stacks.status is CollectorStatus.OK, stacks
