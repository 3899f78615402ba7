"""A signal's name is a failure word of a rank's line in capitals alone (SIGSEGV, SIGKILL: as every runtime, shell and
launcher prints it); "sigma", "sigmoid" and "signature" are words of a job's progress, not its failure (named_failure's
_WHAT took SIG[A-Z]{2,6} caseless: a diffusion model's "[rank0]: step 10 loss 0.52 sigma 0.31" read as rank 0's
exception)."""

from __future__ import annotations

import pytest

from triage.analysis.analyze import analyze
from triage.load.inputs import load_log_texts
from triage.parsing.named_failure import named_failure


@pytest.mark.parametrize("line", [
    "rank 3 sigma 0.31 loss 1.2",
    "worker 2: signature verified",
    "Rank 0: sigmoid output 0.5",
    "process 1 Sigma: 14.6",
])
def test_a_word_that_opens_with_sig_is_no_failure_of_a_rank(line: str) -> None:
    assert named_failure(line) is None
    assert named_failure(line.split(" ", 2)[-1], prefix_rank=0) is None


@pytest.mark.parametrize(("line", "signal"), [
    ("rank 3 received SIGSEGV", "SIGSEGV"),
    ("Rank 1: SIGKILL", "SIGKILL"),
    ("worker 2 died with signal 11", "SIGSEGV"),
    ("process 4 got Signal 6", "SIGABRT"),
])
def test_a_signal_by_its_name_in_capitals_or_the_word_signal_stays_one(line: str, signal: str) -> None:
    read = named_failure(line)
    assert read is not None and read[1].signal == signal, read


def test_a_diffusion_runs_progress_with_sigma_under_torchruns_prefix_is_healthy() -> None:
    """torchrun's "[rankN]:" prefix (its --tee / local_ranks_filter output) on every line of a run that logs its noise
    level each step, then ends well: no failure."""
    text = "".join(f"[rank{rank}]: step {step} loss 0.{50 - step} sigma {80 / (step + 1):.3f}\n"
                   for step in range(1, 20) for rank in (0, 1)) + "[rank0]: training complete\n"
    verdict = analyze(load_log_texts([("train.log", text)])).verdict
    assert verdict.kind.value == "no_problem_found", verdict.summary
    broken = text + "[rank1]: received SIGSEGV in the data loader\n"
    verdict = analyze(load_log_texts([("train.log", broken)])).verdict
    assert verdict.kind.value != "no_problem_found" and 1 in verdict.culprit_ranks, verdict.summary
