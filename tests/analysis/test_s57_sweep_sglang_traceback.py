"""Session 57's sweep (sgl-project/sglang#3460, a thread of a corpus repository, not a corpus case): SGLang logs a
scheduler's failure as one record, "[2025-02-09 21:23:00 TP2] Scheduler hit an exception: Traceback (most recent call
last):", its traceback after it without the prefix. Three words of that paste were misread:
- pasted without its indentation, the traceback's first frame ("File "...", line 1787, in run_scheduler_process")
  was taken for the exception line and its next line ended the traceback: the frames and the exception line were no
  rank's (triage.parsing.log_owners._carried now keeps a bare frame and the source line after it);
- the logger's head of the traceback was no traceback's start, so a traceback cut by the paste was no failure of its
  rank (triage/load/logs/text.py: a line ending in ": Traceback (most recent call last):" starts one);
- SGLang's parent's own word that a child failed, spelt "Received sigquit from a child proces." before 0.4.4, was a
  failure of unknown place that no reader knew (triage.parsing.launchers._SGLANG_CHILD: a consequence, as the newer
  spelling was)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import report_log
from triage.parsing.log_owners import attribute_lines

HEAD = "[2025-05-02 10:11:12 TP3] Scheduler hit an exception: Traceback (most recent call last):"
FRAMES_BARE = ['File "/sgl/python/sglang/srt/managers/scheduler.py", line 1900, in run_scheduler_process',
               "scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, dp_rank)",
               'File "/sgl/python/sglang/srt/model_executor/model_runner.py", line 211, in load_model',
               "self.model = get_model(model_config=self.model_config)"]
RAISED = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity of 79 GiB"


@pytest.mark.parametrize("frames", [FRAMES_BARE, [("  " if i % 2 == 0 else "    ") + f for i, f in
                                                  enumerate(FRAMES_BARE)]])
def test_the_traceback_under_a_tp_head_is_that_ranks(frames: list[str]) -> None:
    owners = attribute_lines([HEAD, *frames, RAISED, "[2025-05-02 10:11:13] Shutting down the server"])
    assert [o.key for o in owners] == [3, 3, 3, 3, 3, 3, "unknown"]


def test_its_exception_is_the_ranks_failure(tmp_path: Path) -> None:
    # a variant: SGLang's older parent word first, then TP3's traceback pasted without its indentation
    text = "\n".join(["[2025-05-02 10:11:12] Received sigquit from a child proces. It usually means the child failed.",
                      HEAD, *FRAMES_BARE, RAISED]) + "\n"
    _code, got = report_log(text, tmp_path)
    verdict = got["verdict"]
    assert verdict["kind"] == "exception" and verdict["subkind"] == "oom" and verdict["culprit_ranks"] == [3], verdict


def test_a_cut_traceback_under_the_head_is_its_ranks(tmp_path: Path) -> None:
    text = "\n".join([HEAD, *FRAMES_BARE]) + "\n"
    _code, got = report_log(text, tmp_path)
    summary = got["verdict"]["summary"]
    assert "rank 3 raised an exception; its exception line is not in this input" in summary, summary


def test_the_real_text(tmp_path: Path) -> None:
    # sgl-project/sglang#3460 (TP2's scheduler at init_torch_distributed, the paste cut before its exception line)
    text = """[2025-02-09 21:23:00] Received sigquit from a child proces. It usually means the child failed.
[2025-02-09 21:23:00] Received sigquit from a child proces. It usually means the child failed.
[2025-02-09 21:23:00 TP2] Scheduler hit an exception: Traceback (most recent call last):
File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 1787, in run_scheduler_process
scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, dp_rank)
File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 240, in init
self.tp_worker = TpWorkerClass(
File "/sgl-workspace/sglang/python/sglang/srt/managers/tp_worker_overlap_thread.py", line 63, in init
self.worker = TpModelWorker(server_args, gpu_id, tp_rank, dp_rank, nccl_port)
File "/sgl-workspace/sglang/python/sglang/srt/managers/tp_worker.py", line 68, in init
self.model_runner = ModelRunner(
File "/sgl-workspace/sglang/python/sglang/srt/model_executor/model_runner.py", line 178, in init
min_per_gpu_memory = self.init_torch_distributed()
File "/sgl-workspace/sglang/python/sglang/srt/model_executor/model_runner.py", line 253, in init_torch_distributed
initialize_model_parallel(tensor_model_parallel_size=self.tp_size)
"""
    _code, got = report_log(text, tmp_path)
    summary = got["verdict"]["summary"]
    assert "rank 2 raised an exception; its exception line is not in this input" in summary, summary
    assert "no reader for these words" not in summary
