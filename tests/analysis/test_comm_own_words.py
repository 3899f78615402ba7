"""Communication libraries', accelerator runtimes' and frameworks' own failure lines, read from their sources (session
44), each tested on variants written here (other ranks, hosts, tags), with a negative beside each class."""

from __future__ import annotations

import pytest

from triage.analysis.analyze import analyze
from triage.load.inputs import load_log_texts
from triage.model import Report


def report(*lines: str) -> Report:
    return analyze(load_log_texts([("job.log", "\n".join(lines) + "\n")]))


_HVD_HEAD = ("One or more tensors were submitted to be reduced, gathered or broadcasted by subset of ranks and are "
             "waiting for remainder of ranks for more than 60 seconds. This may indicate that different ranks are "
             "trying to submit different tensors or that only subset of ranks is submitting tensors, which will cause "
             "deadlock. ")


# (1) Horovod's stall inspector: "Missing ranks:" then one line per rank that has not submitted the tensor the others
# wait to reduce ("2: [grad_0, grad_1]", "2!: [...]" past the shutdown time): those ranks never reached it
@pytest.mark.parametrize(("lines", "ranks"), [
    (("[1,0]<stdout>:Epoch 1 step 100 loss 0.91", "[1,1]<stdout>:Epoch 1 step 100 loss 0.93",
      "[1,0]<stderr>:[2025-11-28 05:20:11.345678: W /tmp/pip-install-x/horovod/horovod/common/stall_inspector.cc:107] "
      + _HVD_HEAD, "[1,0]<stderr>:Missing ranks:", "[1,0]<stderr>:2: [DistributedAdam_Allreduce/HorovodAllreduce_g_0]",
      "[1,0]<stderr>:3: [DistributedAdam_Allreduce/HorovodAllreduce_g_0, DistributedAdam_Allreduce/HorovodAllreduce_g_1]"),
     (2, 3)),
    (("step 10 loss 2.2", "[2024-03-01 10:00:00.000001: E horovod/common/stall_inspector.cc:120] " + _HVD_HEAD,
      "Missing ranks:", "5!: [allreduce.noname.17]",
      'One or more rank (marked by "!") is stalled for longer than 120 seconds. Will shutdown.'), (5,)),
    (("[2021-02-02 21:19:07.345988: W horovod/common/stall_inspector.cc:105] " + _HVD_HEAD, "Missing ranks:",
      "0: [cond_1/DistributedSGD_Allreduce/HorovodAllreduce_grads_0]"), (0,)),
])
def test_horovods_stall_inspector_names_the_missing_ranks(lines: tuple[str, ...], ranks: tuple[int, ...]) -> None:
    result = report(*lines)
    assert result.verdict.kind.value == "missing_rank", result.verdict.summary
    assert tuple(result.verdict.culprit_ranks) == ranks, result.verdict.summary
    assert "Horovod's stall inspector" in result.verdict.summary


@pytest.mark.parametrize("lines", [
    # the job went on after the report: a slow rank that caught up
    ("[1,0]<stderr>:[2025-11-28 05:20:11.345678: W horovod/common/stall_inspector.cc:107] " + _HVD_HEAD,
     "[1,0]<stderr>:Missing ranks:", "[1,0]<stderr>:1: [allreduce.grad_3]", "[1,0]<stdout>:Epoch 2 step 300 loss 0.41",
     "[1,1]<stdout>:Epoch 2 step 300 loss 0.42"),
    # the words quoted in prose, no list of ranks under them
    (("Horovod prints 'One or more tensors were submitted to be reduced, gathered or broadcasted by subset of ranks "
      "and are waiting for remainder of ranks' when a rank is slow."), "[rank0]: step 10 loss 2.0",
     "[rank1]: step 10 loss 2.1", "[rank0]: Training finished."),
])
def test_horovods_stall_words_without_a_stall_name_no_missing_rank(lines: tuple[str, ...]) -> None:
    result = report(*lines)
    assert result.verdict.kind.value != "missing_rank", result.verdict.summary
    assert "Horovod" not in result.verdict.summary
