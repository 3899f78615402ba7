"""torch.multiprocessing.spawn's process index is the process's index on its node (spawn calls ``fn(i, *args)``), the
global rank only on a job of one node whose code passes it as the rank (``rank = node_rank * nprocs + i`` on several):
a failure read as rank N because it sits under ``-- Process N terminated with the following error:`` says so (rev50's
F18). The culprit stays N, as torchelastic's ``local_rank: N`` on an input of one node is read; where the failure's own
words or a ``[rankN]:`` prefix name the rank, no note."""

from __future__ import annotations

from pathlib import Path

import pytest

from triage.analysis.analyze import analyze
from triage.load.inputs import load_log_texts
from triage.model import Verdict

CASES = Path(__file__).resolve().parents[1] / "realworld" / "cases"

_PARENT = ("Traceback (most recent call last):", '  File "main.py", line 88, in <module>',
           "    mp.spawn(worker, nprocs=4, args=(cfg,))",
           '  File "/opt/py/lib/python3.10/site-packages/torch/multiprocessing/spawn.py", line 160, in join',
           "    raise ProcessRaisedException(msg, error_index, failed_process.pid)",
           "torch.multiprocessing.spawn.ProcessRaisedException:", "")


def _verdict(*lines: str) -> Verdict:
    return analyze(load_log_texts([("job.log", "\n".join(lines) + "\n")])).verdict


def _child(index: int, *tail: str) -> tuple[str, ...]:
    return (f"-- Process {index} terminated with the following error:", "Traceback (most recent call last):",
            '  File "/opt/py/lib/python3.10/site-packages/torch/multiprocessing/spawn.py", line 69, in _wrap',
            "    fn(i, *args)", '  File "/work/train.py", line 41, in worker', *tail)


@pytest.mark.parametrize("index,tail", [
    (2, ("    x = batch['img']", "KeyError: 'img'")),
    (0, ("    dist.init_process_group('nccl')", "RuntimeError: Distributed package doesn't have NCCL built in")),
    (3, ("    model = DDP(model, device_ids=[gpu])",)),            # the paste cut before the exception line
])
def test_a_spawn_processs_failure_says_its_index_is_not_a_global_rank(index: int, tail: tuple[str, ...]) -> None:
    verdict = _verdict(*_PARENT, *_child(index, *tail))
    assert list(verdict.culprit_ranks) == [index], verdict.summary
    assert f"mp.spawn's process {index}: rank {index} on one node" in verdict.summary, verdict.summary
    assert "its global rank is not in this input" in verdict.summary, verdict.summary


def test_a_failure_whose_own_words_name_the_rank_gets_no_note() -> None:
    verdict = _verdict(*_PARENT, *_child(1, "    dist.barrier()",
                                         "ValueError: rank 1 got an empty shard of the dataset"))
    assert list(verdict.culprit_ranks) == [1], verdict.summary
    assert "mp.spawn's process" not in verdict.summary, verdict.summary


def test_rank_prefixed_lines_get_no_note() -> None:
    verdict = _verdict("[rank1]: Traceback (most recent call last):", '[rank1]:   File "/work/train.py", line 41',
                       "[rank1]: KeyError: 'img'", "-- Process 1 terminated with the following error:")
    assert "mp.spawn's process" not in verdict.summary, verdict.summary


@pytest.mark.parametrize("case,index", [("bshall__hubert__1", 0), ("LSH9832__edgeyolo__20", 1),
                                        ("LeeDoYup__FixMatch-pytorch__2", 0)])
def test_real_spawn_blocks(case: str, index: int) -> None:
    text = (CASES / case / "log.txt").read_text(encoding="utf-8")
    verdict = analyze(load_log_texts([("log.txt", text)])).verdict
    assert list(verdict.culprit_ranks) == [index], verdict.summary
    assert f"mp.spawn's process {index}" in verdict.summary, verdict.summary
