"""Session 46's fixes of the review rev45's open findings (issue 23): each class on variants written here, with a
negative beside each."""

from __future__ import annotations

import pytest

from triage.analysis.analyze import analyze
from triage.load.inputs import load_log_texts
from triage.model import Report


def report(*lines: str) -> Report:
    return analyze(load_log_texts([("job.log", "\n".join(lines) + "\n")]))


def _steps(*ranks: int, step: int = 1) -> list[str]:
    return [f"[rank{r}]: step {step} loss 2.{r}1" for r in ranks]


# (1) a rank-less exception line or traceback, after which every rank this input shows printed progress and a rank
# said the run ended well: a trace a library logged or one it handled, a note, never the failure
_LOGGED = {
    "java debug trace": ["24/11/28 09:00:01 DEBUG ipc.Client: closing ipc connection",
                         "java.lang.Exception: Stack trace",
                         "\tat org.apache.hadoop.ipc.Client$Connection.close(Client.java:1234)"],
    "py4j": ["py4j.protocol.Py4JNetworkError: Answer from Java side is empty"],
    "handled bare StopIteration": ["WARNING:prefetch:worker thread ended, restarting the iterator:",
                                   "Traceback (most recent call last):",
                                   '  File "/opt/venv/lib/python3.11/site-packages/mylib/prefetch.py", line 40, in w',
                                   "    batch = next(self.it)", "StopIteration"],
    "logging thread's traceback": ["Exception in thread uploader:", "Traceback (most recent call last):",
                                   '  File "/opt/venv/lib/python3.11/site-packages/tracker/upload.py", line 9, in run',
                                   "ConnectionResetError: [Errno 104] Connection reset by peer"],
}


@pytest.mark.parametrize("name", sorted(_LOGGED))
def test_a_rank_less_trace_every_rank_went_on_past_and_ended_is_no_failure(name: str) -> None:
    result = report(*_steps(0, 1, 2), *_LOGGED[name], *_steps(0, 1, 2, step=2), *_steps(0, 1, 2, step=3),
                    "[rank0]: Training complete", "[rank1]: Training complete")
    assert result.verdict.kind.value == "no_problem_found", result.verdict.summary
    assert "went on after an error line" in result.verdict.summary, result.verdict.summary


@pytest.mark.parametrize("name", sorted(_LOGGED))
def test_a_rank_less_trace_one_rank_printed_nothing_after_stays_the_failure(name: str) -> None:
    # rank 2 printed nothing after it: the trace may be rank 2's, its last words
    result = report(*_steps(0, 1, 2), *_LOGGED[name], *_steps(0, 1, step=2), "[rank0]: Training complete")
    assert result.verdict.kind.value != "no_problem_found", result.verdict.summary


@pytest.mark.parametrize("name", sorted(_LOGGED))
def test_a_rank_less_trace_every_rank_stepped_after_but_none_ended_stays_the_failure(name: str) -> None:
    # every rank printed one more step (the work in flight) and then nothing: no rank said the run ended
    result = report(*_steps(0, 1, 2), *_LOGGED[name], *_steps(0, 1, 2, step=2), "+ echo Done.", "Done.")
    assert result.verdict.kind.value != "no_problem_found", result.verdict.summary


def test_a_ranks_own_trace_the_others_went_on_past_stays_that_ranks_failure() -> None:
    result = report(*_steps(0, 1), "[rank1]: Traceback (most recent call last):",
                    "[rank1]: ValueError: bad shard 7", *_steps(0, step=2), "[rank0]: Training complete")
    assert result.verdict.kind.value == "exception", result.verdict.summary
    assert tuple(result.verdict.culprit_ranks) == (1,), result.verdict.summary


# a metric named "...Error" logged with its value is no exception at all
@pytest.mark.parametrize("metric", ["eval.Error: 0.3912", "top1.Error: 29.4%", "val.MeanSquaredError: 1.2e-03",
                                    "test.Error: .05"])
def test_a_metric_named_error_with_its_value_is_no_exception(metric: str) -> None:
    result = report(*_steps(0, 1), metric, *_steps(0, 1, step=2), metric)
    assert result.verdict.kind.value == "no_problem_found", result.verdict.summary


@pytest.mark.parametrize("last", ["KeyError: 0", "ValueError: 0.5 is not a valid probability"])
def test_an_exception_whose_message_is_not_only_a_fraction_stays_one(last: str) -> None:
    result = report(*_steps(0, 1), "[rank1]: Traceback (most recent call last):", f"[rank1]: {last}")
    assert result.verdict.kind.value == "exception", result.verdict.summary
    assert tuple(result.verdict.culprit_ranks) == (1,), result.verdict.summary

