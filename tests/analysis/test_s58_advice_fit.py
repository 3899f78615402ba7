"""Session 58 (fix58c): the "what to do next" steps fitted to what failed, and the verdict's signal in JSON.

- A driver's record of a subprocess it ran, naming an executable of its own (Python's CalledProcessError, SPAdes'
  ``system call for: "[...]" finished abnormally``), killed by SIGKILL: the kernel's OOM killer step, and no PyTorch
  step (`triage launch -- torchrun`, the Flight Recorder): the process is that program, no torch.distributed rank
  (triage.parsing.stack_words ``program``). An argv of an interpreter or a launcher may start a PyTorch job: the step
  stays.
- A network error in gloo's words: its interface knob, GLOO_SOCKET_IFNAME, not NCCL's debug variables.
- Verdict.to_json carries the Cause's signal by name (docs/report.md's JSON schema).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import report_log
from triage.parsing.stack_words import stack_of


def _report(text: str, tmp_path: Path) -> dict[str, object]:
    _code, got = report_log(text, tmp_path)
    return got


@pytest.mark.parametrize("line", [
    ("subprocess.CalledProcessError: Command '['/opt/tools/bwa-0.7.17/bwa', 'mem', '-t', '32', 'ref.fa', 'r1.fq']' "
     "returned non-zero exit status -9."),
    ('== Error ==  system call for: "[\'/opt/SPAdes-3.15.5-Linux/bin/spades-hammer\', \'/data/run7/corrected/configs/'
     'config.info\']" finished abnormally, OS return value: -9'),
])
def test_a_subprocess_of_its_own_program_killed_gets_no_pytorch_step(line: str, tmp_path: Path) -> None:
    assert stack_of(line) == "program"
    got = _report(line + "\n", tmp_path)
    verdict = got["verdict"]
    assert isinstance(verdict, dict) and verdict["kind"] == "crash" and verdict["signal"] == "SIGKILL", verdict
    steps = " | ".join(got["next_steps"])  # type: ignore[arg-type]
    assert "OOM killer" in steps, steps
    assert "Flight Recorder" not in steps and "triage launch" not in steps, steps


@pytest.mark.parametrize("program", ["python3.11", "/usr/bin/torchrun", "bash", "/opt/conda/bin/python"])
def test_an_argv_that_may_start_a_pytorch_job_keeps_the_step(program: str, tmp_path: Path) -> None:
    line = (f"subprocess.CalledProcessError: Command '['{program}', 'run.py', '--nodes', '2']' returned non-zero "
            "exit status -9.")
    assert stack_of(line) != "program"
    steps = " | ".join(_report(line + "\n", tmp_path)["next_steps"])  # type: ignore[arg-type]
    assert "Flight Recorder" in steps, steps


def test_a_gloo_network_error_names_gloo_socket_ifname(tmp_path: Path) -> None:
    text = ("[rank2]: Traceback (most recent call last):\n"
            '[rank2]:   File "/srv/job/fit.py", line 88, in step\n'
            "[rank2]:     dist.all_reduce(grad)\n"
            "[rank2]: RuntimeError: [/opt/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:534] Read error "
            "[10.4.0.12]:40213: Connection reset by peer\n")
    got = _report(text, tmp_path)
    assert got["verdict"]["kind"] == "network_error", got["verdict"]  # type: ignore[index]
    steps = " | ".join(got["next_steps"])  # type: ignore[arg-type]
    assert "GLOO_SOCKET_IFNAME" in steps and "NCCL_DEBUG=INFO" not in steps, steps


def test_an_nccl_network_error_keeps_nccls_step(tmp_path: Path) -> None:
    text = ("[rank1]: torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, remote process "
            "exited or there was a network error, NCCL version 2.20.5\n"
            "[rank1]: ncclRemoteError: A call failed possibly due to a network error or a remote process exiting "
            "prematurely.\n")
    got = _report(text, tmp_path)
    steps = " | ".join(got["next_steps"])  # type: ignore[arg-type]
    assert "NCCL_DEBUG" in steps and "GLOO_SOCKET_IFNAME" not in steps, steps


def test_the_verdict_of_an_exception_says_no_signal(tmp_path: Path) -> None:
    got = _report("[rank0]: ValueError: bad shape (3, 4)\n", tmp_path)
    verdict = got["verdict"]
    assert isinstance(verdict, dict) and verdict["kind"] == "exception" and verdict["signal"] is None, verdict
