"""A failure's words set in a Markdown code span inside a sentence of the writer's own (a how-to's or an issue's bullet:
"- the job prints `Segmentation fault (core dumped)` then hangs", "* if you see `NCCL error` on rank 3, set ...") are
quoted (triage.parsing.quoted): a failure only where the job did not go on past it. A line that is the tool's output
set in backticks alone ("- `RuntimeError: ...`", round 24's one-line span), and a user's sentence about their own
error with nothing after it, stay the failure they show."""

from __future__ import annotations

from pathlib import Path

import pytest

from triage.analysis.analyze import analyze
from triage.load.inputs import load_log_texts
from triage.model import Report
from triage.parsing.crashlog import parse_crash_line
from triage.parsing.named_failure import named_failure
from triage.parsing.quoted import is_advice

CASES = Path(__file__).resolve().parents[1] / "realworld" / "cases"
RUN = "".join(f"[rank0]: epoch 1 step {step} loss 2.{step // 100}\n" for step in range(100, 700, 100))
END = "[rank0]: training complete\n"

# bullets of a how-to or an issue that quote a failure's words in a code span inside their sentence (written here)
IN_PROSE = (
    "- the job prints `Segmentation fault (core dumped)` then hangs",
    "* if you see `NCCL error` on rank 3, set NCCL_DEBUG=INFO and rerun",
    "- a `Bus error` at start-up means /dev/shm is too small",
    "- when rank 2 prints `RuntimeError: CUDA error: an illegal memory access was encountered` the node is bad",
    "1. if worker 1 shows `killed by signal 9` then lower num_workers",
)


def _report(*lines: str) -> Report:
    return analyze(load_log_texts([("job.log", "".join(lines))]))


@pytest.mark.parametrize("line", IN_PROSE)
def test_a_failure_in_a_code_span_of_a_sentence_is_quoted(line: str) -> None:
    crash = parse_crash_line(line)
    named = named_failure(line)
    if is_advice(line):      # (a condition, then what to do: no failure at all, session 53's tests/analysis/test_s53_advice)
        assert crash is None and named is None, (crash, named)
        return
    assert crash is not None or named is not None or "Bus error" in line     # (that one: a failure of no known words)
    assert (crash is None or crash.quoted) and (named is None or named[1].quoted), (crash, named)


@pytest.mark.parametrize("line", IN_PROSE)
def test_a_bullet_quoting_a_failure_before_a_run_that_went_on_is_no_failure(line: str) -> None:
    result = _report(RUN, line + "\n", RUN, END)
    assert result.verdict.kind.value == "no_problem_found", result.verdict.summary


@pytest.mark.parametrize(("line", "kind"), [
    ("- `RuntimeError: CUDA error: an illegal memory access was encountered`", "crash"),   # the output alone
    ("`Segmentation fault (core dumped)`", "crash"),
    ("- when I run it, rank 2 prints `RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB` and stops",
     "exception"),                                                                        # their own error, no run after
])
def test_the_output_in_backticks_alone_or_a_users_own_error_stays_a_failure(line: str, kind: str) -> None:
    result = _report(line + "\n")
    assert result.verdict.kind.value == kind, result.verdict.summary
    result = _report(RUN, line + "\n")                   # the run before it, nothing after: still the failure
    assert result.verdict.kind.value == kind, result.verdict.summary


def test_the_output_in_backticks_alone_is_not_quoted() -> None:
    for line in ("- `RuntimeError: CUDA error: an illegal memory access was encountered`",
                 "`Segmentation fault (core dumped)`", "* `rank 3 died with signal 11`"):
        crash = parse_crash_line(line)
        named = named_failure(line)
        assert not (crash is not None and crash.quoted) and not (named is not None and named[1].quoted), line


def test_a_real_reporters_sentence_quoting_its_error_in_a_code_span_stays_its_failure() -> None:
    """facebookresearch/DiT#101: "... sometimes it fails at >49k with an error like: `RuntimeError: NCCL communicator
    was aborted on rank 3. ...`" (nothing of a run after it): quoted, and still the case's hang (its label)."""
    text = (CASES / "facebookresearch__DiT__101" / "log.txt").read_text(encoding="utf-8")
    line = next(row for row in text.splitlines() if "with an error like: `RuntimeError" in row)
    named = named_failure(line)
    assert named is None or named[1].quoted, named
    result = analyze(load_log_texts([("log.txt", text)]))
    assert result.verdict.kind.value == "hang", result.verdict.summary
