"""Session 53: a line of advice (a README's troubleshooting bullet pasted with a log: "- if you see `NCCL error` on rank 3,
set NCCL_DEBUG=INFO") names a failure the writer supposes, never one that happened (triage.parsing.quoted.is_advice):
it was rank 3's exception, the root cause of a log holding only such lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.paths import REPO
from tests.helpers.report import failure_verdict, report_log
from triage.parsing.crashlog import parse_crash_line
from triage.parsing.named_failure import named_failure
from triage.parsing.quoted import is_advice, says_it_failed
from triage.parsing.unread_failure import unread_failure

ADVICE = ["- if you see `NCCL error` on rank 3, set NCCL_DEBUG=INFO and rerun",
          "* If rank 2 reports `CUDA out of memory`, lower the batch size",
          "> 2. In case of \"RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1191\", check NCCL_SOCKET_IFNAME",
          "- When you get `Segmentation fault (core dumped)`, rebuild the extension",
          "if rank 0 dies with SIGKILL then add swap",
          "Whenever a worker is killed by signal 9, raise the memory limit",
          # (the advice as a list below the condition: a public README's troubleshooting section)
          "If you see `RuntimeError: CUDA out of memory`:",
          "If you see `RuntimeError: CUDA out of memory`, reduce `gpu_batch_size` in `config.yaml`."]
NOT_ADVICE = ["When rank 3 crashed with SIGSEGV, the others hung",
              "if rank == 3: raise RuntimeError('NCCL error, giving up')",
              "[rank3]: RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1191, unhandled system error",
              "rank 2 failed: if this persists, CUDA error: out of memory",
              "If the job fails"]


@pytest.mark.parametrize("line", ADVICE)
def test_advice_is_no_failure_line(line: str) -> None:
    assert is_advice(line)
    assert parse_crash_line(line) is None
    assert named_failure(line) is None
    assert unread_failure(line) is None


@pytest.mark.parametrize("line", NOT_ADVICE)
def test_not_advice(line: str) -> None:
    assert not is_advice(line)


def test_event_told_with_when_stays_a_failure() -> None:
    assert named_failure("When rank 3 crashed with SIGSEGV, the others hung") is not None


def test_advice_alone_names_no_failure(tmp_path: Path) -> None:
    code, got = report_log("## Troubleshooting\n\n" + "\n".join(ADVICE) + "\n", tmp_path)
    assert code == 2 or got.get("verdict", {}).get("kind") != "exception"


def test_advice_above_a_real_log_leaves_its_failure(tmp_path: Path) -> None:
    # deepseek-ai/DeepSeek-MoE#47 (rank 1's CUDA error under its watchdog) pasted under a README's troubleshooting
    # bullets that name rank 3 and rank 2
    log = (REPO / "tests/realworld/cases/deepseek-ai__DeepSeek-MoE__47/log.txt").read_text(encoding="utf-8")
    got = failure_verdict("Troubleshooting:\n" + "\n".join(ADVICE[:2]) + "\n\n" + log, tmp_path)
    assert got["kind"] == "crash" and got["culprit_ranks"] == [1]
    assert "if you see" not in got["summary"].lower()


def test_says_it_failed_lives_with_the_quotes() -> None:
    text = "MD run failed with following error: **Aborted (core dumped)** on GPU"
    assert says_it_failed(text, text.index("**"))
    text = "the messages to look for: **Aborted (core dumped)**"
    assert not says_it_failed(text, text.index("**"))
