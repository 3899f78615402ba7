"""Session 57's sweep (sgl-project/sglang#4289, a thread of a corpus repository, not a corpus case): the source line
Python prints under a traceback's frame was read as a failure line when its code held a failure's words: vLLM's and
SGLang's pynccl wrapper raises every NCCL error from ``raise RuntimeError(f"NCCL error: {error_str}")``, and that
line, before the exception line, was the report's first failure: the verdict quoted the template and lost the error's
kind (an exception, not NCCL's system error, a network error). A frame's source line, indented under its ``File
"...", line N, in f`` line, is code now (triage.parsing.raise_sites.frame_source_line): the exception line says what
was raised. A raise statement of literals alone where the exception line is cut stays the raise site it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import report_log
from triage.parsing.raise_sites import frame_source_line

FRAME = '  File "/opt/app/comm.py", line 88, in check'


@pytest.mark.parametrize(("before", "line", "code"), [
    (FRAME, '    raise RuntimeError(f"CUDA error: {msg}")', True),
    (FRAME, '    assert ok, f"Connection refused by {peer}"', True),
    ('File "/opt/app/comm.py", line 88, in check', '    dist.barrier()', True),
    (FRAME, "RuntimeError: CUDA error: an illegal memory access was encountered", False),
    # a paste that lost its indentation: the source line level with its frame is not told from a message
    ('File "/opt/app/comm.py", line 88, in check', 'raise RuntimeError(f"CUDA error: {msg}")', False),
    ("Traceback (most recent call last):", '    raise RuntimeError(f"CUDA error: {msg}")', False),
    (None, '    raise RuntimeError(f"CUDA error: {msg}")', False),
])
def test_a_frames_source_line(before: str | None, line: str, code: bool) -> None:
    assert frame_source_line(before, line) is code


@pytest.mark.parametrize(("template", "raised", "kind", "culprits"), [
    ('raise RuntimeError(f"CUDA error: {msg}")', "RuntimeError: CUDA error: an illegal memory access was encountered",
     "crash", [3]),
    # (a network error blames the link, not the rank that reported it)
    ('assert ok, f"Connection refused by {peer}"', "AssertionError: Connection refused by 10.1.0.7", "network_error",
     []),
    ('raise ValueError(f"NCCL error: {err}")', "ValueError: NCCL error: invalid usage", "exception", [3]),
])
def test_the_exception_line_is_the_failure_not_the_template(template: str, raised: str, kind: str,
                                                            culprits: list[int], tmp_path: Path) -> None:
    # a variant: rank 3's traceback whose last frame's code is an f-string template of the error
    text = ("[rank3]: Traceback (most recent call last):\n"
            '[rank3]:   File "/opt/app/train.py", line 40, in <module>\n'
            "[rank3]:     step(model)\n"
            f"[rank3]: {FRAME}\n"
            f"[rank3]:     {template}\n"
            f"[rank3]: {raised}\n")
    _code, got = report_log(text, tmp_path)
    verdict = got["verdict"]
    assert verdict["kind"] == kind and verdict["culprit_ranks"] == culprits, verdict
    assert raised.split(": ", 1)[1][:30] in verdict["summary"] and "{" not in verdict["summary"], verdict


def test_a_cut_raise_of_literals_stays_its_raise_site(tmp_path: Path) -> None:
    # the exception line cut off: the raise statement of literals alone still says what was raised
    text = ("Traceback (most recent call last):\n"
            '  File "/opt/app/train.py", line 40, in <module>\n'
            '    raise RuntimeError("NCCL communicator was aborted")\n')
    _code, got = report_log(text, tmp_path)
    assert "NCCL communicator was aborted" in got["verdict"]["summary"], got["verdict"]


def test_the_real_text(tmp_path: Path) -> None:
    # sgl-project/sglang#4289 (SGLang's TP group set-up: pynccl's ncclCommInitRank failed)
    text = """  File "/home/clouduser/miniconda3/envs/sglang/lib/python3.10/site-packages/sglang/srt/distributed/parallel_state.py", line 1100, in initialize_model_parallel
    _TP = init_model_parallel_group(
  File "/home/clouduser/miniconda3/envs/sglang/lib/python3.10/site-packages/sglang/srt/distributed/parallel_state.py", line 927, in init_model_parallel_group
    return GroupCoordinator(
  File "/home/clouduser/miniconda3/envs/sglang/lib/python3.10/site-packages/sglang/srt/distributed/parallel_state.py", line 255, in __init__
    self.pynccl_comm = PyNcclCommunicator(
  File "/home/clouduser/miniconda3/envs/sglang/lib/python3.10/site-packages/sglang/srt/distributed/device_communicators/pynccl.py", line 108, in __init__
    self.comm: ncclComm_t = self.nccl.ncclCommInitRank(
  File "/home/clouduser/miniconda3/envs/sglang/lib/python3.10/site-packages/sglang/srt/distributed/device_communicators/pynccl_wrapper.py", line 350, in ncclCommInitRank
    self.NCCL_CHECK(
  File "/home/clouduser/miniconda3/envs/sglang/lib/python3.10/site-packages/sglang/srt/distributed/device_communicators/pynccl_wrapper.py", line 329, in NCCL_CHECK
    raise RuntimeError(f"NCCL error: {error_str}")
RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)

[2025-03-11 15:02:53] Received sigquit from a child process. It usually means the child failed.
"""
    _code, got = report_log(text, tmp_path)
    verdict = got["verdict"]
    assert verdict["kind"] == "network_error", verdict
    assert "unhandled system error" in verdict["summary"] and "{error_str}" not in verdict["summary"]
