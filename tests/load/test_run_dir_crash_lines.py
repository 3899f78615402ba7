"""A run directory's rank reads its output.log the way `triage report output.log` does: the crash
line says what the failure was; exit.json and faulthandler.log only say how the rank ended."""

from __future__ import annotations

import json
from pathlib import Path

from triage.analysis.analyze import analyze
from triage.load.inputs import load_inputs

ASSERT_LOG = """step 40 loss 1.93
/opt/pytorch/aten/src/ATen/native/cuda/IndexKernel.cu:92: operator(): block: [3,0,0], thread: [17,0,0] Assertion `-sizes[i] <= index && index < sizes[i] && "index out of bounds"` failed.
Traceback (most recent call last):
  File "/job/train.py", line 51, in <module>
    loss = model(batch).sum()
RuntimeError: CUDA error: device-side assert triggered
CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.
For debugging consider passing CUDA_LAUNCH_BLOCKING=1
Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.
"""
WATCHDOG_LOG = """step 40 loss 1.93
[rank1]:[E1124 10:01:02.000000000 ProcessGroupNCCL.cpp:1595] [PG ID 0 PG GUID 0(default_pg) Rank 1] Process group watchdog thread terminated with exception: CUDA error: an illegal memory access was encountered
terminate called after throwing an instance of 'c10::DistBackendError'
  what():  [PG ID 0 PG GUID 0(default_pg) Rank 1] Process group watchdog thread terminated with exception: CUDA error: an illegal memory access was encountered
"""
ABORTED = "Fatal Python error: Aborted\n\nThread 0x00007f5ef19bab80 (most recent call first):\n  File \"/job/train.py\", line 60 in step\n"


def _rank(run: Path, rank: int, output: str, exit_json: dict[str, object] | None, faulthandler: str | None) -> None:
    directory = run / "node01" / "ranks" / str(rank)
    directory.mkdir(parents=True)
    (directory / "worker.json").write_text(json.dumps({"host": "node01", "local_rank": rank, "pid": 100 + rank,
                                                       "rank": rank, "world_size": 2}))
    (directory / "output.log").write_text(output)
    if exit_json is not None:
        (directory / "exit.json").write_text(json.dumps(exit_json))
    if faulthandler is not None:
        (directory / "faulthandler.log").write_text(faulthandler)


def _run(tmp_path: Path, rank: int, output: str, exit_json: dict[str, object] | None, fault: str | None) -> Path:
    run = tmp_path / "run"
    run.mkdir()
    (run / "run.json").write_text('{"layout": "triage.run/1", "job_id": "cuda"}')
    _rank(run, rank, output, exit_json, fault)
    _rank(run, 1 - rank, "step 40 loss 1.93\n", None, None)
    return run


def test_a_device_side_assert_reads_the_same_from_the_run_directory_as_from_the_log(tmp_path: Path) -> None:
    message = ("CUDA error: device-side assert triggered\nCUDA kernel errors might be asynchronously reported at "
               "some other API call, so the stacktrace below might be incorrect.")
    run = _run(tmp_path, 0, ASSERT_LOG, {"how": "exception", "exit_code": 1, "time": 1795309700.0,
                                         "exception": {"type": "RuntimeError", "message": message}}, None)
    report = analyze(load_inputs([run]))
    from_dir = report.verdict
    assert any("CUDA_LAUNCH_BLOCKING" in step for step in report.next_steps)
    log = tmp_path / "output.log"
    log.write_text(ASSERT_LOG)
    from_log = analyze(load_inputs([log])).verdict
    assert from_dir.kind.value == from_log.kind.value == "crash"
    assert from_dir.culprit_ranks == (0,)
    assert "device-side assert" in from_dir.summary


def test_a_watchdog_abort_on_a_cuda_error_is_that_cuda_error_not_fatal_python_error(tmp_path: Path) -> None:
    run = _run(tmp_path, 1, WATCHDOG_LOG, None, ABORTED)
    verdict = analyze(load_inputs([run])).verdict
    assert verdict.kind.value == "crash"
    assert verdict.culprit_ranks == (1,)
    assert "illegal memory access" in verdict.summary
