"""Session 57 (fix57c item 6): a rank's traceback whose exception line a wait reader took (PyTorch's "RuntimeError: [5]
is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key '0', but
store->get('0') got error: ...", read as a wait before the first collective) was worded "rank 5 raised an exception;
its exception line is not in this input" beside another rank's NCCL error: the line is in the input. Now that rank's
failure is that line (triage.load.logs.line_events._ended_in_a_wait); a traceback the paste does cut keeps the cut
wording."""

from __future__ import annotations

import pytest

from tests.helpers.report import report_lines as report

_RANK2 = ("[rank2]: Traceback (most recent call last):",
          '[rank2]:   File "/opt/run/pretrain.py", line 140, in <module>',
          "[rank2]:     dist.all_reduce(flag)",
          ("[rank2]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
           "ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version "
           "2.21.5"),
          "[rank2]: Last error:",
          "[rank2]: socketStartConnect: Connect to 10.20.0.14<51033> failed : Software caused connection abort")


@pytest.mark.parametrize("exception", [
    ("RuntimeError: [5] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store "
     "by key '0', but store->get('0') got error: Connection reset by peer"),
    ("torch.distributed.DistBackendError: [5] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via "
     "c10d key-value store by key '1', but store->get('1') got error: wait timeout after 600000ms, keys: /default_pg/0//"
     "nccl//1"),
])
def test_the_ranks_exception_line_read_as_a_wait_is_its_failure(exception: str) -> None:
    result = report(*_RANK2, "[rank5]: Traceback (most recent call last):",
                    '[rank5]:   File "/opt/run/pretrain.py", line 140, in <module>',
                    "[rank5]:     dist.all_reduce(flag)", f"[rank5]: {exception}")
    assert result.verdict.kind.value == "network_error", result.verdict.summary
    rank5 = [f.detail for f in result.findings if f.ranks == (5,)]
    assert rank5 and "is setting up NCCL communicator" in rank5[0], [f.detail for f in result.findings]
    assert "not in this input" not in rank5[0]


def test_a_traceback_the_paste_cuts_keeps_its_words() -> None:
    result = report(*_RANK2, "[rank5]: Traceback (most recent call last):",
                    '[rank5]:   File "/opt/run/pretrain.py", line 140, in <module>', "[rank5]:     dist.all_reduce(flag)")
    rank5 = [f.detail for f in result.findings if f.ranks == (5,)]
    assert rank5 and "its exception line is not in this input" in rank5[0], [f.detail for f in result.findings]
