"""Session 54: a numbered list is no run of srun's task labels ("N: ", srun --label). R's recover() frames, R's
numbered warnings, R's traceback(), Node.js's native stack and Rust's backtrace were read as lines of ranks 1..k
(Bioconductor/BiocParallel#34's Coverage said ranks 1-5; a warning quoting a CUDA error was rank 1's failure). A list
is numbered 1..k (or k..1) once each, in order, after its head line or with a frame or a call in every item; srun's
labels repeat, interleave and start at 0 (triage.parsing.log_prefix.numbered_list_lines)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import report_lines
from triage.analysis.analyze import analyze
from triage.load.inputs import load_log_texts
from triage.parsing.log_owners import attribute_lines
from triage.parsing.log_prefix import numbered_list_lines

CASES = Path(__file__).resolve().parents[1] / "realworld" / "cases"


def keys(*lines: str) -> list[int | str]:
    return [owner.key for owner in attribute_lines(list(lines))]


@pytest.mark.parametrize("lines", [
    # R's recover() menu (options(error = recover))
    ("Error in solve.default(m) : Lapack routine dgesv: system is exactly singular", "",
     "Enter a frame number, or 0 to exit   ", "", "1: fit_all(data)", "2: lapply(models, fit_one)",
     "3: FUN(X[[i]], ...)", "4: solve(m)", "", "Selection: 0"),
    # R's numbered warnings, each warning's words indented under it
    ("Warning messages:", "1: In log(x) : NaNs produced", "2: In sqrt(-1) :", "  NaNs produced",
     "3: glm.fit: fitted probabilities numerically 0 or 1 occurred"),
    # R's traceback(), numbered down to 1
    ("> traceback()", "3: stop(\"bad input\") at utils.R#12", "2: check(x)", "1: main()"),
    # Node.js's native stack after its fatal error, old and new shapes, Linux and Windows addresses
    ("FATAL ERROR: Ineffective mark-compacts near heap limit Allocation failed - JavaScript heap out of memory",
     " 1: 0xa3ad50 node::Abort() [node]", " 2: 0x970199 node::FatalError(char const*, char const*) [node]",
     " 3: 0xbe2d2e v8::Utils::ReportOOMFailure(v8::internal::Isolate*, char const*, bool) [node]"),
    ("----- Native stack trace -----", "", " 1: 00007FF655E1542D node::SetCppgcReference+17693",
     " 2: 00007FF655D78248 SSL_get_quiet_shutdown+102712", " 3: 00007FF6568FED41 v8::Isolate::Dispose+65"),
    # Rust's backtrace, from 0, with each frame's place indented under it
    ("thread 'main' panicked at src/main.rs:4:5:", "stack backtrace:", "   0: rust_begin_unwind",
     "             at /rustc/abc/library/std/src/panicking.rs:645:5", "   1: core::panicking::panic_fmt",
     "   2: solver::main"),
    # no head, but a call in every item
    ("something went wrong", "1: outer(cfg)", "2: inner(cfg$k)"),
])
def test_a_numbered_list_is_no_ranks_lines(lines: tuple[str, ...]) -> None:
    assert not any(isinstance(key, int) for key in keys(*lines)), keys(*lines)


@pytest.mark.parametrize("lines", [
    # srun --label: tasks from 0, interleaved, numbers repeated
    ("0: epoch 1 loss 2.3", "1: epoch 1 loss 2.4", "0: epoch 2 loss 2.1", "1: epoch 2 loss 2.2"),
    ("0: Traceback (most recent call last):", "1: Traceback (most recent call last):", "0: main()", "1: main()"),
    # tasks 1 and 2 only (task 0 quiet), words that are no frames and no head before them
    ("srun: job 42 queued and waiting for resources", "1: RuntimeError: CUDA error: out of memory",
     "2: RuntimeError: CUDA error: out of memory"),
    # an item before the run: task 0's line, then tasks 1 and 2 with calls
    ("0: starting", "1: main()", "2: main()"),
    # a run followed at once by another label: tasks 1, 2 then 0
    ("1: f(x)", "2: f(x)", "0: f(x)"),
    # a head, then labels out of order
    ("Traceback (most recent call last):", "2: File \"a.py\", line 3", "1: File \"a.py\", line 3"),
    # a backtrace's head before labels from 0, but numbers repeated (srun's)
    ("stack backtrace:", "0: frame_a", "1: frame_a", "0: frame_b"),
])
def test_srun_labels_stay_ranks(lines: tuple[str, ...]) -> None:
    assert any(isinstance(key, int) for key in keys(*lines)), keys(*lines)


def test_a_list_from_zero_needs_a_backtraces_head() -> None:
    assert numbered_list_lines(["stack backtrace:", "   0: a", "   1: b"]) == frozenset({1, 2})
    assert numbered_list_lines(["Warning messages:", "0: f(x)", "1: g(y)"]) == frozenset()


def test_one_numbered_warning_under_rs_head() -> None:
    assert numbered_list_lines(["In addition: Warning message:", "1: In f(x) : NaNs produced"]) == frozenset({1})
    assert numbered_list_lines(["something", "1: In f(x) : NaNs produced"]) == frozenset()


def test_rs_numbered_warnings_quoting_a_cuda_error_are_not_rank_1s() -> None:
    result = report_lines("Error in fit_model(df, k = 5) : design matrix is singular", "Calls: main -> fit_model",
                          "In addition: Warning messages:",
                          "1: In py_call_impl(callable, dots$args) :",
                          "  RuntimeError: CUDA error: an illegal memory access was encountered",
                          "2: In fit_model(df, k = 5) : convergence not reached", "Execution halted")
    assert result.verdict.kind.value == "exception", result.verdict.summary
    assert "design matrix is singular" in result.verdict.summary and "rank 1" not in result.verdict.summary


def test_bioconductor_biocparallel_34_holds_no_rank() -> None:
    # R's recover() frames, twice, were ranks 1-5 (Coverage: "this input holds ranks 1-5")
    text = (CASES / "Bioconductor__BiocParallel__34" / "log.txt").read_text()
    assert not any(isinstance(owner.key, int) for owner in attribute_lines(text.splitlines()))
    result = analyze(load_log_texts([("log.txt", text)]))
    assert result.verdict.kind.value == "exception" and not result.verdict.culprit_ranks, result.verdict.summary
    assert not any(evidence.rank is not None for evidence in result.ranks)
