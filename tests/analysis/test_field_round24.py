"""Classes of real pasted logs found by round 24 of the real-world corpus, each tested on a variant written
here (other ranks, hosts, programs and surrounding lines than the cases' own)."""

from __future__ import annotations

from triage.analysis.analyze import analyze
from triage.load.inputs import load_log_texts
from triage.model import Report


def report(*lines: str) -> Report:
    return analyze(load_log_texts([("job.log", "\n".join(lines) + "\n")]))


_PREPENDED = (
    "[0] step 0 loss 4.21",
    "[1] step 0 loss 4.19",
    "[0] broadcasting parameters",
    "[1] Traceback (most recent call last):",
    '[1]   File "train.py", line 40, in <module>',
    "[1]     hvd.broadcast_parameters(model.state_dict(), root_rank=0)",
    "[1] RuntimeError: ncclCommInitRank failed: unhandled cuda error",
)


def test_prepended_rank_heads_are_read_under_a_kubectl_pod_tag_too() -> None:
    # (deepmodeling/deepmd-kit#1774's horovodrun "[1] " heads, carried by `kubectl logs --prefix`)
    plain = report(*_PREPENDED)
    tagged = report(*("[pod/hvd-worker-3/main] " + line for line in _PREPENDED))
    stamped = report(*("[pod/hvd-worker-3/main] 2025-02-01T08:00:00.5Z " + line for line in _PREPENDED))
    assert plain.verdict.culprit_ranks == (1,), plain.verdict.summary
    assert tagged.verdict.culprit_ranks == plain.verdict.culprit_ranks, tagged.verdict.summary
    assert stamped.verdict.culprit_ranks == plain.verdict.culprit_ranks, stamped.verdict.summary


def test_a_one_off_bracketed_number_under_a_pod_tag_is_still_no_rank() -> None:
    result = report("[pod/w-0/main] [1] 100: loss 2.0", "[pod/w-0/main] RuntimeError: boom")
    assert 1 not in (result.verdict.culprit_ranks or ()), result.verdict.summary
