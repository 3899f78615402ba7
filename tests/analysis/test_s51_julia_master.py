"""Julia's Distributed under its own name (rev50 F12): the master's `Worker 3 terminated.` is worker 3's death, the
headline over the master's `ERROR: LoadError: ProcessExitedException(3)` that follows from it (was the master's
exception); and what would name the failing process is a worker's lines, never torch.multiprocessing.spawn's rank tag
(Julia's ProcessExitedException(3) had been read as spawn's). A launcher's own record of the worker's end (srun's task
record) still says more than the master's word."""

from __future__ import annotations

from pathlib import Path

import pytest

from triage.analysis.advice import excerpt_steps
from triage.analysis.analyze import analyze
from triage.load.inputs import load_log_texts
from triage.parsing.launcher_kind import launcher_of

_CASES = Path(__file__).resolve().parents[1] / "realworld" / "cases"


def read(text: str) -> tuple[str, str]:
    verdict = analyze(load_log_texts([("job.log", text)])).verdict
    return verdict.summary, " ".join(excerpt_steps(verdict, launcher_of(text)))


@pytest.mark.parametrize("worker", [2, 3, 17])
@pytest.mark.parametrize("after", [
    ("ERROR: LoadError: ProcessExitedException({w})\nStacktrace:\n [1] remotecall_fetch at "
    "/usr/share/julia/stdlib/v1.10/Distributed/src/remotecall.jl:465"),
    "Unhandled Task ERROR: EOFError: read end of file\nERROR: LoadError: ProcessExitedException({w})",
])
def test_the_masters_word_of_a_workers_death_heads_its_exception(worker: int, after: str) -> None:
    summary, steps = read(f"[ Info: starting 4 workers\nWorker {worker} terminated.\n{after.format(w=worker)}\n")
    assert f"Julia's worker {worker} died" in summary and "not in this input" in summary, summary
    assert not summary.split(":", 1)[1].lstrip().startswith("LoadError"), summary
    assert "torch.multiprocessing" not in summary and "torchrun" not in summary, summary
    assert "triage launch" not in steps and "Flight Recorder" not in steps, steps


def test_a_workers_own_signal_report_stays_the_story() -> None:
    summary, _ = read("      From worker 3:\t[ Info: step 10\n      From worker 3:\tsignal (11): Segmentation fault\n"
                      "Worker 3 terminated.\nERROR: LoadError: ProcessExitedException(3)\n")
    assert "Segmentation fault" in summary and "Julia's worker 3" in summary, summary
    assert "torch.multiprocessing" not in summary and "which rank" not in summary, summary


def test_a_julia_failure_of_no_worker_asks_for_the_workers_lines() -> None:
    summary, _ = read("ERROR: LoadError: ProcessExitedException(4)\nStacktrace:\n [1] f at ./asyncmap.jl:177\n")
    assert "which worker" in summary and "torch.multiprocessing" not in summary, summary


def test_torch_multiprocessing_spawns_own_exception_stays_spawns() -> None:
    assert launcher_of("torch.multiprocessing.spawn.ProcessExitedException: process 1 terminated with signal "
                       "SIGSEGV\n") == "spawn"
    assert launcher_of("ERROR: LoadError: ProcessExitedException(3)\n") == "julia"


def test_a_python_workers_terminated_line_is_no_julias() -> None:
    summary, _ = read("[rank0]: step 4\nWorker 3 terminated.\n[rank1]: RuntimeError: CUDA error: out of memory\n")
    assert "Julia" not in summary, summary


def test_real_text_srun_names_the_worker_that_ended() -> None:
    # JuliaParallel/SlurmClusterManager.jl#64: Julia 0.5's master, "Worker 2 terminated.", then srun's record of task 0
    # on worker50 exiting with code 1: srun's record is the story
    summary, _ = read((_CASES / "JuliaParallel__SlurmClusterManager.jl__64" / "log.txt").read_text(encoding="utf-8"))
    assert summary.startswith("EXCEPTION: rank 0 (worker50) exited with code 1"), summary
