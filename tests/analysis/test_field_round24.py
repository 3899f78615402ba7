"""Classes of real pasted logs found by round 24 of the real-world corpus, each tested on a variant written
here (other ranks, hosts, programs and surrounding lines than the cases' own)."""

from __future__ import annotations

from tests.helpers.report import report_lines as report

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


# torchelastic's SignalException named without its signal: an issue's title, or the exception's last line cut short
# (keyu-tian/SparK#19's shape, rewritten with another module path and surrounding words)
def test_the_agents_signal_exception_without_its_signal_is_a_stop_from_outside() -> None:
    result = report("Epoch 3: 100%|##########| 500/500 [02:11<00:00]",
                    "torch.distributed.elastic.multiprocessing.api.SignalException",
                    "it happens every night when my VPN drops")
    assert result.verdict.kind.value == "stopped", result.verdict.summary
    assert "does not name" in result.verdict.summary


def test_a_rank_that_failed_before_the_bare_signal_exception_stays_the_verdict() -> None:
    result = report("[rank2]: RuntimeError: CUDA error: an illegal memory access was encountered",
                    "torch.distributed.elastic.multiprocessing.api.SignalException")
    assert result.verdict.kind.value != "stopped", result.verdict.summary
    assert result.verdict.culprit_ranks == (2,), result.verdict.summary


def test_the_raise_line_of_a_traceback_is_no_signal_exception_of_its_own() -> None:
    result = report('    raise SignalException(f"Process {os.getpid()} got signal: {sigval}", sigval=sigval)',
                    "[rank1]: RuntimeError: boom")
    assert result.verdict.kind.value != "stopped", result.verdict.summary


# an exception line pasted as a one-line ```code span``` (guoqincode/Open-AnimateAnyone#88's shape): read, not refused
def test_an_exception_inside_a_one_line_triple_backtick_span_is_read() -> None:
    result = report("I keep getting",
                    "```ValueError: expected sequence of length 4 at dim 1 (got 3) on rank 2```",
                    "before the first step.")
    assert result.verdict.kind.value == "exception", result.verdict.summary
    assert "expected sequence of length 4" in result.verdict.summary


def test_a_fence_line_with_its_language_tag_is_still_a_fence() -> None:
    result = report("```python", "[rank0]: RuntimeError: boom", "```")
    assert result.verdict.culprit_ranks == (0,), result.verdict.summary
