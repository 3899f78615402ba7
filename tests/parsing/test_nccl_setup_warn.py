"""A CUDA failure NCCL warns of while a communicator of its process is being set up (after that communicator's first
set-up line, before its "Init COMPLETE") is that set-up failing, where it is one:

- never a collective's (enqueue.cc) nor a kernel's fault (an illegal memory access or address, a misaligned address,
  a launch failure: sticky, any later CUDA call reports it);
- from a file other than NCCL's set-up files (init.cc, bootstrap.cc, proxy.cc, transport/*, graph/*...) only where no
  communicator of that process had completed its set-up before (nothing of it could run a collective yet);
- and never where every communicator then being set up completed its set-up after it (NCCL got past it).
The tracker keeps what it knows of warnings' set-up for the warnings it keeps only (capped as they are)."""

from __future__ import annotations

import pytest

from tests.helpers.report import report_lines as report
from triage.parsing.nccl.tracker import NcclTracker

_WORLD_START = ("n7:4410:4410 [1] NCCL INFO ncclCommInitRank comm 0x7f10a0 rank 1 nranks 4 cudaDev 1 nvmlDev 1 busId "
                "2000 commId 0x91aa - Init START")
_WORLD_DONE = ("n7:4410:4410 [1] NCCL INFO comm 0x7f10a0 rank 1 nranks 4 cudaDev 1 busId 2000 commId 0x91aa "
               "- Init COMPLETE")
_SPLIT_START = ("n7:4410:4470 [1] NCCL INFO ncclCommSplit comm 0x9b2230 rank 1 nranks 2 cudaDev 1 nvmlDev 1 busId 2000 "
                "parent 0x7f10a0 color 3 key 1 commId 0x77cd - Init START")
_SPLIT_DONE = ("n7:4410:4470 [1] NCCL INFO comm 0x9b2230 rank 1 nranks 2 cudaDev 1 busId 2000 commId 0x77cd "
               "- Init COMPLETE")
_STEP = "[rank1]: iteration 120 | lm loss 4.1"


def _summary(*lines: str) -> tuple[str, str]:
    verdict = report(*lines).verdict
    return verdict.kind.value, verdict.summary


@pytest.mark.parametrize("warn", [
    "n7:4410:4471 [1] enqueue.cc:1530 NCCL WARN Cuda failure 'an illegal memory access was encountered'",
    "n7:4410:4471 [1] enqueue.cc:1530 NCCL WARN Cuda failure 'unspecified launch failure'",
    "n7:4410:4471 [1] transport/net.cc:610 NCCL WARN Cuda failure 'misaligned address'",
    "n7:4410:4471 [1] register.cc:88 NCCL WARN Cuda failure 'invalid argument'",
])
def test_a_collectives_or_kernels_cuda_failure_while_a_split_is_set_up_is_no_set_up_failure(warn: str) -> None:
    kind, summary = _summary(_WORLD_START, _WORLD_DONE, _STEP, _SPLIT_START, warn)
    assert kind == "crash", summary
    assert "set-up" not in summary, summary


@pytest.mark.parametrize("warn", [
    ("n7:4410:4471 [1] transport/p2p.cc:301 NCCL WARN Cuda failure 'peer access is not supported between these two "
     "devices'"),
    "n7:4410:4471 [1] proxy.cc:1210 NCCL WARN Cuda failure 'operation not permitted when stream is capturing'",
])
def test_a_set_up_files_cuda_failure_while_a_split_is_set_up_is_its_set_up_failing(warn: str) -> None:
    _, summary = _summary(_WORLD_START, _WORLD_DONE, _STEP, _SPLIT_START, warn)
    assert "set-up failed on a CUDA call" in summary, summary


def test_any_files_cuda_failure_before_any_communicator_completed_is_its_set_up_failing() -> None:
    _, summary = _summary(_WORLD_START, "n7:4410:4440 [1] misc/strongstream.cc:212 NCCL WARN Cuda failure 'invalid "
                          "resource handle'")
    assert "set-up failed on a CUDA call" in summary, summary


def test_a_cuda_failure_nccl_got_past_in_set_up_is_no_failure_of_its_own() -> None:
    warn = ("n7:4410:4471 [1] transport/p2p.cc:301 NCCL WARN Cuda failure 'peer access is not supported between these "
            "two devices'")
    kind, summary = _summary(_WORLD_START, warn, _WORLD_DONE, _STEP, "[rank1]: iteration 130 | lm loss 4.0")
    assert kind != "crash" and "set-up" not in summary, summary
    # the same WARN where the split's set-up never completed, though the world's had: the split's set-up failed
    kind, summary = _summary(_WORLD_START, _WORLD_DONE, _SPLIT_START, warn)
    assert "set-up failed on a CUDA call" in summary, summary
    # and where the split completed after it: got past
    kind, summary = _summary(_WORLD_START, _WORLD_DONE, _SPLIT_START, warn, _SPLIT_DONE, _STEP)
    assert kind != "crash" and "set-up" not in summary, summary


def test_the_set_up_reading_is_kept_for_the_warnings_kept_only() -> None:
    tracker = NcclTracker(max_warnings=10)
    tracker.feed(_WORLD_START)
    for i in range(5000):
        tracker.feed(f"n7:4410:4471 [1] transport/p2p.cc:{i} NCCL WARN Cuda failure 'peer access is not supported'")
    kept = tracker.warnings()
    assert len(kept) == 10 and tracker.warnings_dropped == 4990
    assert len(tracker._setup_first) + len(tracker._setup_late) == 10
    assert all(tracker.setup_reading(w) == "failed" for w in kept)
    tracker.feed(_WORLD_DONE)
    assert all(tracker.setup_reading(w) == "recovered" for w in kept)
