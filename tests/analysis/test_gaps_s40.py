"""Issue 23: general readers for what first sight still misses (session 40). Variants written here, none taken from
a round's case.

1. The unknown-failure fallback (triage.parsing.unread_failure) reads a logger's CRITICAL, a PANIC / ``panic:``, a
   "could not / cannot / unable to" + an action, and glog's/absl's error head (``E1127 10:00:01 ...``) whatever the
   line's words; with the same guards: only where nothing stronger fails, never after text shows success, never a
   false all-clear, warnings and fallbacks stay unread.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers.report import report_log
from triage.parsing.unread_failure import unread_failure


def report(text: str, tmp_path: Path) -> dict[str, Any]:
    code, out = report_log(text, tmp_path)
    assert code != 2, out.get("stderr")
    assert code not in (0, 70), out
    verdict: dict[str, Any] = out["verdict"]
    return verdict


_TWICE = ("E0000 00:00:1732700000.1 4242 cuda_dnn.cc:8310] Unable to register cuDNN factory: Attempting to register "
          "factory for plugin cuDNN when one has already been registered")
_WORK = "loading checkpoint shards: 100%\nepoch 0 step 10 loss 2.31\nepoch 0 step 20 loss 2.12\n"


# --- 1. the fallback's level words, "could not", glog heads -----------------------------------------------------

@pytest.mark.parametrize("line", [
    "2026-11-27 10:00:01,234 CRITICAL [engine] the transport went away under the collective engine",
    "[orchestrator] CRIT: heartbeat lost from the shard server",
    "PANIC: the memory pool is corrupt (pool 3, block 0x7f00)",
    "panic: runtime: unexpected nil pointer in the scheduler",
    "fabric: could not open the device mlx5_2 (no such device)",
    "Cannot allocate the pinned host buffer of 2 GiB",
    "loader: unable to launch the decode workers: resource temporarily unavailable",
    "Couldn't load the shared library libfoo_plugin.so",
    "the checkpoint could not be written to /scratch/ckpt/step_100",
    "E1127 10:00:01.123456 4242 transport.cc:88] the queue pair 0x3 went down",
    "E0000 00:00:1732700000.123456   4242 cuda_executor.cc:1001] the device memory pool is exhausted",
    "F1127 10:00:01.123456 4242 collective.cc:12] the group size does not match the mesh",
])
def test_a_level_word_or_a_could_not_is_a_failure_of_unknown_rank(line: str, tmp_path: Path) -> None:
    assert unread_failure(line) is not None
    verdict = report(_WORK + line + "\n", tmp_path)
    assert verdict["kind"] == "failure_unlocated"
    assert not verdict["culprit_ranks"]
    assert "a failure of unknown rank" in verdict["summary"]
    assert line.split()[-1] in verdict["summary"]


@pytest.mark.parametrize("line", [
    "WARNING: could not open the optional profile file, profiling is off",
    "could not import apex, using the default fused optimizer",
    "cannot find libnvtx: skipping the ranges",
    "Unable to load the fast tokenizer; falling back to the slow one",
    "I cannot tell which rank hung from this",
    "we could not reproduce it on two nodes",
    _TWICE,
    "W1127 10:00:01.123456 4242 transport.cc:88] could not connect yet",
    "I1127 10:00:01.123456 4242 transport.cc:88] CRITICAL path latency 3 ms",
    "python train.py --on-panic=dump",
])
def test_soft_lines_stay_unread(line: str) -> None:
    assert unread_failure(line) is None


@pytest.mark.parametrize("text", [
    _WORK + "WARNING: could not open the optional profile file, profiling is off\n",
    _WORK + "fabric: could not open the device mlx5_2\nstep 30 loss 2.0\nTraining completed successfully\n",
    _WORK + _TWICE + "\n",
])
def test_text_that_only_warns_or_ends_well_is_no_failure(text: str, tmp_path: Path) -> None:
    code, out = report_log(text, tmp_path)
    assert code == 2, out         # nothing recognisable: never an all-clear, never a failure it does not show


def test_a_could_not_never_displaces_a_ranks_exception(tmp_path: Path) -> None:
    text = ("[rank1]: Traceback (most recent call last):\n[rank1]:   File \"train.py\", line 9, in <module>\n"
            "[rank1]: ValueError: bad shape\nfabric: could not open the device mlx5_2\n"
            "PANIC: the memory pool is corrupt\n")
    verdict = report(text, tmp_path)
    assert verdict["kind"] == "exception"
    assert verdict["culprit_ranks"] == [1]
