"""Without a Flight Recorder (TORCH_FR_BUFFER_SIZE=0 here; torch 2.4 has none for gloo): real torchrun
gloo jobs under `triage launch`. Heartbeats carry each group's sequence number and the collective
the main thread is in, so the stall is detected with the same hang line, the rank holding the others
up is named with its frame, and a finished job is never called "all match"."""

from __future__ import annotations

import json
import re

import pytest

from tests.helpers.launch import TIMEOUT_S, job_env, launch_argv, run_launch, torchrun
from tests.helpers.paths import example, program
from tests.matrix.test_matrix import report_verdict
from triage.bundle import CollectorStatus, read_manifest
from triage.exitcodes import ExitCode

pytestmark = [pytest.mark.timeout(240), pytest.mark.slow]
NO_FR = {"TORCH_FR_BUFFER_SIZE": "0"}


def test_a_rank_spinning_in_python_is_detected_and_named_with_its_frame(tmp_path) -> None:  # type: ignore[no-untyped-def]
    run_dir = tmp_path / "run"
    done = run_launch(launch_argv(run_dir, torchrun(example("stuck_in_python.py")), "--stop-timeout", "8"),
                      job_env(**NO_FR), run_dir)
    assert done.returncode == int(ExitCode.HANG_DETECTED), done.explain()
    assert done.line("triage: hang suspected: ") == (
        f"triage: hang suspected: rank 0 waiting in all_reduce seq 3 (pg 0) for {int(TIMEOUT_S)} s; "
        "rank 1 has not entered it (last seq 2)")
    assert done.line("triage: rank 1 busy in busy_wait_for_data")
    beat = json.loads(next(run_dir.glob("*/ranks/0/heartbeat.json")).read_text())
    assert beat["fr_state"] == "unavailable: the Flight Recorder is off (TORCH_FR_BUFFER_SIZE=0)", beat
    manifest = read_manifest(done.bundle())
    fr = next(c for c in manifest.collectors if c.name == "fr" and c.rank == 0)
    assert fr.status == CollectorStatus.OK or "Flight Recorder" in (fr.error or ""), fr
    verdict = done.line("triage: verdict: ")
    assert "rank 1" in verdict and "busy_wait_for_data" in verdict, verdict
    report = " ".join(done.stdout.split())      # the printed report wraps its lines
    assert "collectives not recorded: the Flight Recorder is off (TORCH_FR_BUFFER_SIZE=0)" in report, report


def test_a_silent_dtype_mismatch_is_not_called_a_match(tmp_path) -> None:  # type: ignore[no-untyped-def]
    run_dir = tmp_path / "run"
    # a job that finishes: a long hang timeout (its teardown may take seconds on a loaded machine)
    done = run_launch(launch_argv(run_dir, torchrun(program("matrix_job.py"), 2, "dtype"), "--hang-timeout", "30"),
                      job_env(**NO_FR), run_dir)
    assert done.returncode == 0, done.explain()
    verdict = report_verdict(run_dir)
    assert "all match" not in verdict
    assert re.match(r"NO PROBLEM FOUND: the run finished and no rank failed; collectives not "
                    r"recorded: the Flight Recorder is off \(TORCH_FR_BUFFER_SIZE=0\); dtype and count mismatches "
                    r"cannot be ruled out$", verdict), verdict
