"""Round 58's class (triage/load/logs/owners.py ``_spawn_block_cut``): torch.multiprocessing.spawn's
``-- Process N terminated with the following error:`` over the child's traceback, the paste cut before the
traceback's exception line, is process N's error (spawn's parent prints that block only for a child that raised).
Variants written here (another process index, other frames, a Windows path, lines after the cut), with negatives:
the head with no traceback below it, and a whole block whose exception line is read as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import report_lines as report
from triage.analysis.analyze import analyze
from triage.errors import InputError
from triage.load.inputs import load_log_texts

CASES = Path(__file__).resolve().parents[1] / "realworld" / "cases"



_PARENT = ("Traceback (most recent call last):", '  File "main.py", line 88, in <module>',
           "    mp.spawn(worker, nprocs=4, args=(cfg,))",
           '  File "/opt/py/lib/python3.9/site-packages/torch/multiprocessing/spawn.py", line 230, in spawn',
           "    return start_processes(fn, args, nprocs, join, daemon, start_method='spawn')",
           '  File "/opt/py/lib/python3.9/site-packages/torch/multiprocessing/spawn.py", line 160, in join',
           "    raise ProcessRaisedException(msg, error_index, failed_process.pid)",
           "torch.multiprocessing.spawn.ProcessRaisedException:", "")


def _child(index: int, *frames: str) -> tuple[str, ...]:
    return (f"-- Process {index} terminated with the following error:", "Traceback (most recent call last):",
            '  File "/opt/py/lib/python3.9/site-packages/torch/multiprocessing/spawn.py", line 69, in _wrap',
            "    fn(i, *args)", *frames)


@pytest.mark.parametrize(("lines", "rank"), [
    # process 2's traceback cut inside its frames (the paste ends there)
    ((*_PARENT, *_child(2, '  File "/work/train.py", line 41, in worker',
                        "    dist.init_process_group('nccl', rank=rank, world_size=4)")), 2),
    # process 0, cut at the first frame of its own code, a Windows path
    (("epoch 0 start", *_PARENT, *_child(0, '  File "C:\\\\work\\\\train.py", line 12, in worker')), 0),
    # process 3, cut, then the reporter's next paste of a shell prompt (no failure line of its own)
    ((*_PARENT, *_child(3, '  File "/work/train.py", line 77, in worker', "    model = DDP(model, device_ids=[gpu])"),
      "", "$ nvidia-smi"), 3),
])
def test_a_spawn_block_cut_before_its_exception_is_that_processs_error(lines: tuple[str, ...], rank: int) -> None:
    verdict = report(*lines).verdict
    assert verdict.kind.value == "exception", verdict.summary
    assert sorted(verdict.culprit_ranks) == [rank], verdict.summary
    assert f"process {rank} terminated with an error" in verdict.summary, verdict.summary
    assert "not in this input" in verdict.summary, verdict.summary


def test_a_whole_spawn_block_keeps_its_own_exception() -> None:
    verdict = report(*_PARENT, *_child(1, '  File "/work/train.py", line 41, in worker', "    x = batch['img']",
                                       "KeyError: 'img'")).verdict
    assert verdict.kind.value == "exception", verdict.summary
    assert verdict.culprit_ranks == (1,) or list(verdict.culprit_ranks) == [1], verdict.summary
    assert "KeyError" in verdict.summary and "its exception line is not" not in verdict.summary, verdict.summary


@pytest.mark.parametrize("lines", [
    # the head alone, the paste ending on it: no child's traceback below
    (*_PARENT, "-- Process 1 terminated with the following error:"),
    # the head quoted in a sentence, not at a line's start
    ("step 1", "the docs say '-- Process 1 terminated with the following error:' comes with a traceback", "step 2"),
])
def test_no_childs_traceback_no_error_of_that_process(lines: tuple[str, ...]) -> None:
    try:
        summary = report(*lines).verdict.summary
    except InputError:
        return
    assert "terminated with an error" not in summary, summary


def test_the_real_case() -> None:
    text = (CASES / "LeeDoYup__FixMatch-pytorch__2" / "log.txt").read_text()
    verdict = analyze(load_log_texts([("log.txt", text)])).verdict
    assert verdict.kind.value == "exception", verdict.summary
    assert list(verdict.culprit_ranks) == [0], verdict.summary


def test_a_spawn_block_whose_last_line_is_read_as_a_wait_is_not_cut() -> None:
    # the child's exception line is there, read as the start-up wait it tells: that wait, not a cut block
    verdict = report(*_PARENT, *_child(2), "RuntimeError: Timed out initializing process group in store based barrier"
                     " on rank: 3, for key: store_based_barrier_key:1 (world_size=4, worker_count=2,"
                     " timeout=0:30:00)").verdict
    assert verdict.kind.value == "init_hang", verdict.summary
    assert "terminated with an error" not in verdict.summary, verdict.summary
