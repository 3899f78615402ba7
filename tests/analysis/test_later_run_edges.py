"""Which story heads an input of several runs of one program (a job script's retries under `set -x`, an older run's log
above a newer one; triage.load.logs.text._later_run): the last run is read where a run before it ended well, the
earlier failure a note; otherwise the first failure heads. Edges: a later run that is another program or another stage
(an evaluation) after a failed training, a later run cut off before its end, three runs."""

from __future__ import annotations

import pytest

from triage.analysis.analyze import analyze
from triage.load.inputs import load_log_texts

START = "+ torchrun --nproc-per-node 2 train.py{extra}\n"
STEPS = "[rank0]: step {n} loss 0.5\n[rank1]: step {n} loss 0.5\n"
VALUE = ('[rank1]: Traceback (most recent call last):\n[rank1]:   File "train.py", line 9, in <module>\n'
         "[rank1]: ValueError: bad shard 17\n")
KEY = ('[rank0]: Traceback (most recent call last):\n[rank0]:   File "train.py", line 12, in <module>\n'
       "[rank0]: KeyError: 'lr'\n")
ENDED = "[rank0]: Training complete\n"


def _run(extra: str = "", body: str = "") -> str:
    return START.format(extra=extra) + STEPS.format(n=1) + body


def _verdict(text: str) -> tuple[str, tuple[int, ...], str]:
    verdict = analyze(load_log_texts([("job.log", text)])).verdict
    return verdict.kind.value, verdict.culprit_ranks, verdict.summary


def test_a_failed_run_then_one_that_ended_well_then_a_failed_one_reads_the_last() -> None:
    """The third run's failure is its own, not collateral of the first run's (a run that ended well stands between)."""
    kind, ranks, summary = _verdict(_run(body=VALUE) + _run(body=STEPS.format(n=2) + ENDED) + _run(body=KEY))
    assert (kind, ranks) == ("exception", (0,)), summary
    assert "KeyError" in summary and "ValueError" not in summary and "collateral" not in summary, summary


def test_a_failed_run_then_one_that_ended_well_then_one_cut_off_is_no_failure() -> None:
    kind, _ranks, summary = _verdict(_run(body=VALUE) + _run(body=STEPS.format(n=2) + ENDED) + _run())
    assert kind == "no_problem_found", summary
    assert "an earlier run, before the program started again: ValueError" in summary, summary


@pytest.mark.parametrize("text", [
    _run(body=VALUE) + _run(body=KEY) + _run(body=STEPS.format(n=2) + ENDED),        # two failed, the third ended well
    _run(body=VALUE) + _run(" --resume", STEPS.format(n=2) + ENDED),                 # a resumed retry ended well
])
def test_a_last_run_that_ended_well_is_the_story(text: str) -> None:
    kind, _ranks, summary = _verdict(text)
    assert kind == "no_problem_found", summary
    assert "an earlier run, before the program started again: ValueError" in summary, summary


@pytest.mark.parametrize("text", [
    # another program after the failed training (an evaluation), ending well
    _run(body=VALUE) + "+ torchrun --nproc-per-node 2 eval.py\n[rank0]: eval step 1 acc 0.5\n[rank0]: Evaluation complete\n",
    # the same command with words added doing other work (an evaluation stage)
    _run(body=VALUE) + "+ torchrun --nproc-per-node 2 train.py --eval-only\n[rank0]: eval step 1 acc 0.5\n" + ENDED,
    # the retry cut off before its end
    _run(body=VALUE) + _run(body=STEPS.format(n=2)),
    # a failed run, a run that failed too: the first failure
    _run(body=VALUE) + _run(body=KEY),
])
def test_the_first_failure_heads_where_no_later_run_of_the_same_work_ended_well(text: str) -> None:
    kind, ranks, summary = _verdict(text)
    assert (kind, ranks) == ("exception", (1,)), summary
    assert "ValueError" in summary, summary
