"""Session 57's sweep (huggingface/accelerate#1473, a thread of a corpus repository, not a corpus case): a test
harness's subprocess runner prints each line of its child's output behind a bare label, "stderr: <line>" or "stdout:
<line>" (the `execute_subprocess_async` tee of accelerate's, transformers' and DeepSpeed's test utilities; `accelerate
test` shows torchrun's whole output so). Behind that label torchrun's failure record ("stderr:   rank      : 1
(local_rank: 1)") was not read: the report was a failure of no known place; the label is now a stream tag of no rank
(triage.parsing.log_prefix._STREAM_TAG), and the record under it names its rank and host."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import report_log
from triage.parsing.log_prefix import split_rank_prefix


@pytest.mark.parametrize(("line", "rank", "rest"), [
    ("stderr: [rank2]: RuntimeError: boom", 2, "RuntimeError: boom"),
    ("stdout: step 5 loss 2.1", None, "step 5 loss 2.1"),
    ("stderr:   exitcode  : -9 (pid: 4121)", None, "  exitcode  : -9 (pid: 4121)"),
])
def test_the_bare_stream_label_is_a_tag_of_no_rank(line: str, rank: int | None, rest: str) -> None:
    got = split_rank_prefix(line)
    assert (got.rank, got.rest) == (rank, rest)


def test_a_torchrun_record_behind_the_label_names_its_rank_and_host(tmp_path: Path) -> None:
    # a variant: a node's record of a rank killed by SIGKILL, under the harness's stderr label
    text = "".join(f"stderr: {line}\n" for line in (
        "============================================================",
        "train.py FAILED",
        "------------------------------------------------------------",
        "Failures:",
        "  <NO_OTHER_FAILURES>",
        "------------------------------------------------------------",
        "Root Cause (first observed failure):",
        "[0]:",
        "  time      : 2025-02-11_09:14:03",
        "  host      : gpu-node-17",
        "  rank      : 3 (local_rank: 3)",
        "  exitcode  : -9 (pid: 88121)",
        "  error_file: <N/A>",
        "  traceback : Signal 9 (SIGKILL) received by PID 88121",
        "============================================================"))
    _code, got = report_log(text, tmp_path)
    verdict = got["verdict"]
    assert verdict["kind"] == "crash" and verdict["culprit_ranks"] == [3], verdict
    assert verdict["culprit_host"] == "gpu-node-17"


def test_the_real_text(tmp_path: Path) -> None:
    # huggingface/accelerate#1473 (`accelerate test` on a DGX: torchrun's root cause, rank 1 exitcode 1)
    text = """stderr: ------------------------------------------------------------
stderr: Root Cause (first observed failure):
stderr: [0]:
stderr:   time      : 2023-06-15_00:47:44
stderr:   host      : dgx-a100-02.cse.iith.ac.in
stderr:   rank      : 1 (local_rank: 1)
stderr:   exitcode  : 1 (pid: 226263)
stderr:   error_file: <N/A>
stderr:   traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html
stderr: ============================================================
Traceback (most recent call last):
  File "/home/student/2022/ai22mtech12005/miniconda3/envs/climb/bin/accelerate", line 8, in <module>
    sys.exit(main())
  File "/home/student/2022/ai22mtech12005/miniconda3/envs/climb/lib/python3.11/site-packages/accelerate/commands/test.py", line 54, in test_command
    result = execute_subprocess_async(cmd, env=os.environ.copy())
  File "/home/student/2022/ai22mtech12005/miniconda3/envs/climb/lib/python3.11/site-packages/accelerate/test_utils/testing.py", line 383, in execute_subprocess_async
    raise RuntimeError(
"""
    _code, got = report_log(text, tmp_path)
    verdict = got["verdict"]
    assert verdict["kind"] == "exception" and verdict["culprit_ranks"] == [1], verdict
    assert verdict["culprit_host"] == "dgx-a100-02.cse.iith.ac.in"
