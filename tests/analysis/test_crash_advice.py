"""A crash whose input does not say how the process died (a serving engine's "worker died unexpectedly") is first
checked against the kernel's log (an OOM kill or a GPU fault), not told to re-run for CUDA errors; a crash that names
its signal or its CUDA error keeps the CUDA step (session 44)."""

from __future__ import annotations

import pytest

from triage.analysis.advice import excerpt_steps
from triage.analysis.analyze import analyze
from triage.load.inputs import load_log_texts


def _steps(*lines: str) -> tuple[str, ...]:
    report = analyze(load_log_texts([("job.log", "\n".join(lines) + "\n")]))
    assert report.verdict.kind.value == "crash", report.verdict.summary
    return excerpt_steps(report.verdict)


def test_a_worker_that_died_without_a_cause_is_checked_in_the_kernels_log_first() -> None:
    steps = _steps("(VllmWorker rank=0 pid=901) INFO 03-02 10:01:30 [parallel_state.py:1076] rank 0 in world size 2",
                   "(VllmWorker rank=1 pid=902) INFO 03-02 10:01:30 [parallel_state.py:1076] rank 1 in world size 2",
                   "ERROR 03-02 10:07:44 [multiproc_executor.py:140] Worker proc VllmWorker-1 died unexpectedly, "
                   "shutting down executor.")
    assert steps[0].startswith("the input does not say how it died"), steps
    assert not any("CUDA_LAUNCH_BLOCKING" in step for step in steps), steps


@pytest.mark.parametrize("line", [
    "[rank1]: RuntimeError: CUDA error: an illegal memory access was encountered",
    "torch.distributed.elastic.multiprocessing.api:failed (exitcode: -11) local_rank: 1 (pid: 4412) of binary: python",
])
def test_a_crash_that_says_how_keeps_the_cuda_step(line: str) -> None:
    steps = _steps("[rank0]: step 3 loss 2.1", line)
    assert not steps[0].startswith("the input does not say how it died"), steps
