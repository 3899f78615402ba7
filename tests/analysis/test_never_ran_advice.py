"""A job that never ran (Slurm refused its allocation, the launcher could not start the program) asks for no rank's
output and for no `triage launch` next time: no rank ran, so no rank's output, stack or Flight Recorder exists; what
would settle it is the set-up's own reason, said as such (session 44)."""

from __future__ import annotations

import pytest

from triage.analysis.advice import excerpt_steps
from triage.analysis.analyze import analyze
from triage.load.inputs import load_log_texts


@pytest.mark.parametrize("lines", [
    ("$ sbatch -N 4 --gres=gpu:8 train.sbatch",
     "sbatch: error: Batch job submission failed: Requested node configuration is not available"),
    ("srun: error: Unable to allocate resources: Invalid account or account/partition combination specified",),
    ("salloc: error: Unable to allocate resources: Requested time limit is invalid (missing or exceeds some limit)",),
])
def test_a_refused_allocation_asks_for_no_ranks_output(lines: tuple[str, ...]) -> None:
    report = analyze(load_log_texts([("job.log", "\n".join(lines) + "\n")]))
    summary = report.verdict.summary
    assert "never got its nodes" in summary, summary
    assert "every rank's output" not in summary and "triage launch" not in summary, summary
    assert "Slurm's reason after 'error:' would settle it" in summary, summary
    steps = excerpt_steps(report.verdict)
    assert steps and "Slurm's reason" in steps[0], steps
    assert not any("next time" in step for step in steps), steps


def test_a_rank_that_failed_still_gets_the_next_time_step() -> None:
    text = "[rank1]: Traceback (most recent call last):\n[rank1]:   File \"t.py\", line 3\n[rank1]: KeyError: 'x'\n"
    report = analyze(load_log_texts([("job.log", text)]))
    assert report.verdict.culprit_ranks == (1,), report.verdict.summary
    assert any(step.startswith("next time") for step in excerpt_steps(report.verdict))
