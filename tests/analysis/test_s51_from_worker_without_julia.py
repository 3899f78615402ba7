"""`From worker N:` is Julia's only with Julia's own evidence (rev50 F15): Distributed's tab after the words on the line
(cluster.jl's redirect_worker_output prints "      From worker N:\\t<line>"), or Julia's own words elsewhere in the
input (its runtime's `signal (N):` report, `ERROR: LoadError`, the master's ProcessExitedException or `Worker N
terminated.`, a `.jl:` frame). A Python program's own `From worker 2: ...` lines (a pool's, a loader's wrapper) had been
called Julia's; they are "worker 2" of a program the input does not name, still no rank."""

from __future__ import annotations

from pathlib import Path

import pytest

from triage.analysis.analyze import analyze
from triage.load.inputs import load_log_texts

_CASES = Path(__file__).resolve().parents[1] / "realworld" / "cases"


def summary_of(text: str) -> str:
    return analyze(load_log_texts([("job.log", text)])).verdict.summary


@pytest.mark.parametrize("head", ["From worker 2: ", "From worker 2:   ", "  From worker 2: "])
def test_a_python_programs_from_worker_lines_are_no_julias(head: str) -> None:
    summary = summary_of(f"[rank0]: step 1\n{head}Traceback (most recent call last):\n"
                         f"{head}  File \"loader.py\", line 12, in load\n{head}OSError: [Errno 5] Input/output error\n")
    assert "OSError" in summary and "worker 2" in summary and "Julia" not in summary, summary
    assert "not a rank" in summary, summary


@pytest.mark.parametrize("julia", [
    "ERROR: LoadError: ProcessExitedException(2)",
    "Stacktrace:\n [1] top-level scope at /home/u/run.jl:41",
    "Worker 2 terminated.",
])
def test_julias_own_words_elsewhere_make_a_spaced_prefix_julias(julia: str) -> None:
    summary = summary_of("From worker 2:    [ Info: step 10\nFrom worker 2:    signal (11): Segmentation fault\n"
                         f"{julia}\n")
    assert "Segmentation fault" in summary and "Julia's worker 2" in summary, summary


def test_distributeds_tab_alone_is_julias() -> None:
    summary = summary_of("      From worker 5:\t[ Info: step 10\n      From worker 5:\tBoundsError: attempt to access "
                         "3-element Vector{Float64} at index [4]\n")
    assert "Julia's worker 5" in summary, summary


def test_real_text_a_julia_workers_abort_pasted_with_spaces() -> None:
    # RelationalAI-oss/XUnit.jl#4: the tab pasted as spaces; Julia's own "signal (6): Aborted" tells it is Julia's
    summary = summary_of((_CASES / "RelationalAI-oss__XUnit.jl__4" / "log.txt").read_text(encoding="utf-8"))
    assert "Aborted" in summary and "Julia's worker 3" in summary, summary
