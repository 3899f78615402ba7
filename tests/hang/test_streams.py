"""Detection from live streams: NCCL debug lines in nccl.log, and PyTorch watchdog lines in the output."""

from __future__ import annotations

import time

import pytest

from tests.helpers.bundle import check_complete
from tests.helpers.launch import job_env, launch_argv, run_launch, torchrun
from tests.helpers.paths import program
from triage.bundle import Trigger, read_manifest
from triage.exitcodes import ExitCode

pytestmark = pytest.mark.timeout(120)


def test_live_nccl_stream_is_detected(tmp_path) -> None:  # type: ignore[no-untyped-def]
    run_dir = tmp_path / "run"
    started = time.time()
    done = run_launch(launch_argv(run_dir, torchrun(program("collect_nccl_stream.py")), "--nccl-debug"),
                      job_env(), run_dir)
    assert done.returncode == int(ExitCode.HANG_DETECTED), done.explain()
    line = done.line("triage: hang suspected: ")
    assert line.startswith("triage: hang suspected: NCCL: rank 0 issued all_reduce opCount 0x14, no NCCL op for ")
    assert "rank 1 stopped at all_reduce opCount 0x13" in line
    assert "NCCL WARN on rank 1: NET/Socket : peer 127.0.0.1<43521> message truncated" in line
    manifest = check_complete(done.bundle(), [0, 1])
    assert manifest.trigger == Trigger.HANG and manifest.reason in line
    # the NCCL rule needs hang_timeout of silence: not reported before that
    assert manifest.created - started >= 3.0


def test_watchdog_line_in_output_is_detected_at_once(tmp_path) -> None:  # type: ignore[no-untyped-def]
    run_dir = tmp_path / "run"
    argv = launch_argv(run_dir, torchrun(program("collect_watchdog_line.py")), "--on-hang", "report-and-stop")
    argv[argv.index("--hang-timeout") + 1] = "600"
    done = run_launch(argv, job_env(), run_dir, timeout=90)
    assert done.returncode == int(ExitCode.HANG_DETECTED), done.explain()
    assert done.line("triage: hang suspected: ") == (
        "triage: hang suspected: PyTorch watchdog on rank 1: collective timeout: all_reduce seq 42 (pg 0) "
        "ran for 600012 ms")
    assert read_manifest(done.bundle()).trigger == Trigger.HANG
