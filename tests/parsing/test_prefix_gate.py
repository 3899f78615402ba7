"""split_rank_prefix's gate (triage.parsing.log_prefix._ANY_HEAD: one match that says no head its loop reads starts
the rest of a line) leaves every answer as it was: on every line of the corpus and of the tests' logs, and on
random lines made of the heads it reads, nested, cut and glued, with and without ``prepend``."""

from __future__ import annotations

import random
import re

import pytest

from tests.helpers.logs import real_log_lines
from triage.parsing import log_prefix
from triage.parsing.log_prefix import split_rank_prefix

_HEADS = ["[rank3]:", "[rank: 3] ", "[RANK12]: ", "[node07:3] ", "[node07:3]+", "[node07:launcher] ", "[default0]:",
          "[trainer5]: ", "3: ", "  12 : ", "node07: ", "(RayTrainWorker pid=615, ip=10.0.0.6) ",
          "(VllmWorker TP2 pid=4757) ", "(worker1, rank=1, pid=2210, ip=10.164.0.9) ", "(task, pid=1918) ", "(VllmWorker rank=2 pid=5520) ", "(Worker_PP1_TP0 pid=77) ",
          "[2026-03-29 18:56:25 TP1] ", "TP1] ", "[2026-03-29 18:56:25 DP1 TP0] ", "[pod/train-worker-0/pytorch] ",
          "[pod/w-1/c] 2024-03-15T16:29:14.110799Z ", "[1,3]<stdout>:", "[3]<stderr>:", "5c902731 [rank=1] || ",
          "5c902731 || ", "[rank=2] || ", "job-name [stderr] ", "stderr: ", "stdout: ", "[proxy:0:1@node2] ", "trainer/0 [1]:", "[3] ",
          "[80746] ", "slurmstepd-n1: ", "slurmstepd: ", "ERROR 01-29 20:00:47 multiproc_worker_utils.py:240] ",
          "ERROR 09-11 17:45:52 [multiproc_executor.py:596] ", "node07:4121:4188 [3] ", "[host:4121] ",
          "[ProcessGroupNCCL.cpp:616] ", "[train.py:12] "]
_BODIES = ["step 5 loss 2.1", "NCCL INFO Channel 00/0 : 0[1020] -> 1[2030] via P2P", "*** Process received signal ***",
           "Signal: Segmentation fault (11)", "error: *** STEP 7.0 ON n1 CANCELLED AT 2024-01-01 ***",
           "RuntimeError: boom", "Traceback (most recent call last):", "", " ", "[", "]", "x:", "12:34:56 a clock",
           "torch.OutOfMemoryError: CUDA out of memory.", "1 more process has sent help message help-mpi-errors.txt"]


def _lines() -> list[str]:
    lines = real_log_lines()
    rnd = random.Random(0)
    for _ in range(20_000):
        line = "".join(rnd.choice(_HEADS) for _ in range(rnd.randrange(4))) + rnd.choice(_BODIES)
        cut = rnd.randrange(len(line) + 1)
        lines.append(line if rnd.random() < 0.8 else line[:cut] + rnd.choice(_HEADS) + line[cut:])
    return lines


def test_the_gate_leaves_every_answer_as_it_was(monkeypatch: pytest.MonkeyPatch) -> None:
    lines = _lines()
    assert len(lines) > 25_000
    gated = [(split_rank_prefix(line), split_rank_prefix(line, prepend=True)) for line in lines]
    monkeypatch.setattr(log_prefix, "_ANY_HEAD", re.compile(""))      # (matches everywhere: the loop reads on)
    ungated = [(split_rank_prefix(line), split_rank_prefix(line, prepend=True)) for line in lines]
    for line, with_gate, without in zip(lines, gated, ungated):
        assert with_gate == without, line


def test_the_gate_matches_wherever_one_of_its_heads_does() -> None:
    """Each head the loop reads, alone at the start of a line, passes the gate."""
    for head in _HEADS:
        for body in _BODIES:
            line = head + body
            for pattern in (log_prefix._RANK, log_prefix._MPI, log_prefix._HOST_RANK, log_prefix._IMPI,
                            log_prefix._TORCHX, log_prefix._DETERMINED, log_prefix._LOCAL, log_prefix._LINE_NO,
                            log_prefix._LOGGER_HEAD, log_prefix._STREAM_TAG, log_prefix._RAY, log_prefix._SGLANG,
                            log_prefix._K8S, log_prefix._SRUN, log_prefix._SLURMSTEPD, log_prefix._PDSH):
                if pattern.match(line) is not None:
                    assert log_prefix._ANY_HEAD.match(line) is not None, (line, pattern.pattern)
