"""torchelastic's "failed (exitcode: N) local_rank: L" beside the same run's "[rankL]:" lines on one node (fix54d item
5; ByteDance-Seed/Bagel#86, Zeying-Gong/Falcon#12): on one node a local rank is the global rank, so the record is of
the rank those lines show; with another node in sight it stays a local rank of no known global rank."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.paths import REPO
from tests.helpers.report import failure_verdict, report_lines

_WARN = ("[rank1]:[W1107 10:02:11.118 ProcessGroupNCCL.cpp:1250] Warning: WARNING: process group has NOT been destroyed "
         "before we destruct ProcessGroupNCCL.")
_AGENT = ("E1107 10:02:13.791000 8810 site-packages/torch/distributed/elastic/multiprocessing/api.py:869] failed "
          "(exitcode: -11) local_rank: 1 (pid: 8871) of binary: /usr/bin/python3")


def test_one_nodes_local_rank_is_the_prefixed_rank() -> None:
    result = report_lines("[rank0]: step 100 loss 2.31", _WARN, _AGENT)
    assert result.verdict.culprit_ranks == (1,), result.verdict.summary
    assert result.verdict.kind.value == "crash", result.verdict.summary


@pytest.mark.parametrize("other_node", [
    "torchrun --nnodes 2 --nproc_per_node 2 train.py",
    "+ torchrun --nnodes=1:4 --nproc-per-node 8 train.py",
    "export NODE_RANK=1",
    "INFO:torch.distributed.elastic.agent.server.api:  group_rank=1",
])
def test_another_node_in_sight_leaves_it_local(other_node: str) -> None:
    result = report_lines(other_node, "[rank0]: step 100 loss 2.31", _WARN, _AGENT)
    assert 1 not in result.verdict.culprit_ranks, result.verdict.summary


def test_no_prefixed_line_of_that_rank_leaves_it_local() -> None:
    result = report_lines("[rank8]: step 100 loss 2.31", _WARN.replace("[rank1]", "[rank9]"), _AGENT)
    assert 1 not in result.verdict.culprit_ranks, result.verdict.summary


def test_two_agents_records_of_the_same_local_rank_leave_it_local() -> None:
    result = report_lines("[rank0]: step 100 loss 2.31", _WARN, _AGENT, _AGENT.replace("8810", "9120").replace(
        "8871", "9177"))
    assert 1 not in result.verdict.culprit_ranks, result.verdict.summary


@pytest.mark.parametrize(("case", "kind"), [("ByteDance-Seed__Bagel__86", "exception"),
                                             ("Zeying-Gong__Falcon__12", "crash")])
def test_real_single_node_records(case: str, kind: str, tmp_path: Path) -> None:
    log = (REPO / "tests/realworld/cases" / case / "log.txt").read_text(encoding="utf-8")
    verdict = failure_verdict(log, tmp_path)
    assert verdict["kind"] == kind and verdict["culprit_ranks"] == [0], verdict["summary"]


def test_a_launchers_label_in_place_of_torchs_prefix_counts() -> None:
    result = report_lines("[1,0]<stderr>: step 100 loss 2.31", "[1,1]<stderr>: Warning: process group not destroyed",
                          _AGENT)
    assert result.verdict.culprit_ranks == (1,), result.verdict.summary


def test_an_agents_record_under_srun_label_is_of_a_node_of_no_known_index() -> None:
    result = report_lines("0: [rank1]: step 100 loss 2.31", f"1: {_AGENT}")
    assert 1 not in result.verdict.culprit_ranks, result.verdict.summary


def test_ranks_of_two_hosts_are_no_one_node() -> None:
    result = report_lines("[pod/train-worker-0/pytorch] [rank1]: step 100 loss 2.31",
                          "[pod/train-worker-1/pytorch] [rank0]: step 100 loss 2.28", _AGENT)
    assert 1 not in result.verdict.culprit_ranks, result.verdict.summary


def test_the_first_observed_failures_cut_traceback_is_its_own_failure() -> None:
    result = report_lines("[rank1]:Traceback (most recent call last):", '[rank1]:  File "/w/train.py", line 40, in <module>',
                          "[rank1]:    main()", '[rank1]:  File "/w/train.py", line 33, in main',
                          "[rank1]:    dist.all_reduce(t)",
                          "W1107 10:02:13.000 8810 torch/distributed/elastic/multiprocessing/api.py:897] Sending process "
                          "8870 closing signal SIGTERM",
                          _AGENT.replace("exitcode: -11", "exitcode: 1"))
    assert result.verdict.kind.value == "exception", result.verdict.summary
    assert result.verdict.culprit_ranks == (1,), result.verdict.summary
