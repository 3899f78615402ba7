"""ProcessGroupNCCL's own words of a collective's timeout and abort are PyTorch's (triage.parsing.stack_words): a paste
that holds only them, without their log head ("[E ProcessGroupNCCL.cpp:...]") nor another PyTorch word, is a PyTorch
job's, and keeps the next time's step (Flight Recorder) where it also shows mpirun or a TensorFlow import's log line
(was: an MPI program's or a TensorFlow job's, no Flight Recorder)."""

from __future__ import annotations

from pathlib import Path

import pytest

from triage.analysis.analyze import analyze
from triage.load.inputs import load_inputs, load_log_texts
from triage.parsing.stack_words import stack_of

_CASES = Path(__file__).resolve().parents[1] / "realworld" / "cases"
_FR = "TORCH_NCCL_TRACE_BUFFER_SIZE"
_WATCHDOG = ("[Rank 5] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=91, OpType=ALLGATHER, "
             "NumelIn=4096, NumelOut=32768, Timeout(ms)=600000) ran for 600342 milliseconds before timing out.\n")


def _steps(text: str) -> str:
    return "\n".join(analyze(load_log_texts([("job.log", text)])).next_steps)


@pytest.mark.parametrize("before", [
    "$ mpirun -np 8 -H n1:4,n2:4 python train.py\n",
    "2026-11-29 10:00:00.000000: I tensorflow/core/util/port.cc:113] oneDNN custom operations are on.\n",
    "cmd = mpiexec -n 16 -hostfile /job/hostfile python -u train.py\n",
])
def test_the_watchdog_s_words_are_pytorch_s(before: str) -> None:
    assert _FR in _steps(before + _WATCHDOG)


@pytest.mark.parametrize("words", [
    "WorkNCCL(SeqNum=3, OpType=BROADCAST, Timeout(ms)=1800000)",
    "Watchdog caught collective operation timeout:",
    "Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels",
])
def test_each_spelling(words: str) -> None:
    assert stack_of(words) == "torch"
    assert stack_of("NCCL WARN Timeout waiting for work; mpirun; tensorflow") == "tensorflow"


def test_real_paste_with_mpirun_before_it() -> None:
    """zai-org/GLM-130B#132: rank 4's watchdog, its WorkNCCL wrapped on the next line, no other PyTorch word."""
    text = (_CASES / "zai-org__GLM-130B__132" / "log.txt").read_text()
    assert stack_of(text) == "torch"
    assert _FR in _steps("$ mpirun -np 8 python pretrain_glm.py\n" + text)
    assert _FR in "\n".join(analyze(load_inputs([_CASES / "zai-org__GLM-130B__132" / "log.txt"])).next_steps)
