"""The worker's Flight Recorder access without a recording FR (TORCH_FR_BUFFER_SIZE=0), on a real
2-rank gloo job: the groups' sequence numbers and the collective the main thread waits in."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.helpers.launch import TORCHRUN, job_env
from tests.helpers.paths import program

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
