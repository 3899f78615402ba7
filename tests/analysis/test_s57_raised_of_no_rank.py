"""Session 57 (the lead, after rounds 81 and 82's first sight): where all an input shows failing is exceptions of no
rank (a Python traceback the paste cuts before its exception line, or an exception whose own words say its cause is
elsewhere: vLLM's "Engine core initialization failed. See root cause above."), the verdict is an exception of no rank,
as the same traceback of a known rank is that rank's exception, with what would settle which exception and whose; it was
"FAILURE, CULPRIT NOT IN THIS INPUT". Anything else failing (a rank's failure, a timeout, an NCCL warning, a fault, a
signal) keeps the verdict it had (triage.analysis.verdict.unlocated)."""

from __future__ import annotations

from tests.helpers.report import report_lines
from triage.model import VerdictKind

_CUT = ["Traceback (most recent call last):", '  File "/opt/app/train.py", line 120, in <module>', "    run(cfg)",
        '  File "/opt/app/train.py", line 77, in run', "    model = shard_model(model, mesh)",
        ('  File "/usr/lib/python3.11/site-packages/torch/distributed/fsdp/_fully_shard/_fully_shard.py", line 176, '
         "in fully_shard"), "    state._fsdp_param_group = FSDPParamGroup("]


def test_a_cut_traceback_of_no_rank_is_an_exception_of_no_rank() -> None:
    report = report_lines("$ torchrun --nproc_per_node=2 -m app.train", "loading the model", *_CUT)
    verdict = report.verdict
    assert verdict.kind is VerdictKind.EXCEPTION, verdict.summary
    assert verdict.culprit_ranks == ()
    assert verdict.summary.startswith("EXCEPTION (rank unknown: no line of this input ties it to a rank): "), \
        verdict.summary
    assert "its exception line is not in this input" in verdict.summary


def test_an_exception_that_points_at_a_cause_not_shown_is_an_exception_of_no_rank() -> None:
    lines = ["(worker pid=4242) Traceback (most recent call last):",
             '(worker pid=4242)   File "/srv/engine/utils.py", line 484, in wait_for_startup',
             '(worker pid=4242)     raise RuntimeError("Engine start-up failed. See root cause above.")',
             "(worker pid=4242) RuntimeError: Engine start-up failed. See root cause above. Failed procs: {}"]
    verdict = report_lines(*lines).verdict
    assert verdict.kind is VerdictKind.EXCEPTION, verdict.summary
    assert verdict.culprit_ranks == ()
    assert "See root cause above" in verdict.summary


def test_a_timeout_beside_the_cut_traceback_keeps_its_own_verdict() -> None:
    timeout = ("[rank1]:[E1130 03:00:00.000000000 ProcessGroupNCCL.cpp:632] [Rank 1] Watchdog caught collective "
               "operation timeout: WorkNCCL(SeqNum=12, OpType=ALLREDUCE, NumelIn=8, NumelOut=8, Timeout(ms)=600000) "
               "ran for 600010 milliseconds before timing out.")
    verdict = report_lines(*_CUT, timeout).verdict
    assert verdict.kind is not VerdictKind.EXCEPTION or verdict.culprit_ranks, verdict.summary
    assert verdict.kind is VerdictKind.HANG, verdict.summary


def test_a_signal_of_no_rank_beside_the_cut_traceback_is_no_exception() -> None:
    verdict = report_lines(*_CUT, "Segmentation fault (core dumped)").verdict
    assert verdict.kind is not VerdictKind.EXCEPTION, verdict.summary
