"""Round 23's misses, closed as classes (issue 23): each on variants written here and on real text from public
reports (log text only), end to end through ``triage report``.

1. Rank 0 is inferred stuck outside a collective only from a line of the pasted log that rank 0 alone would
   print: never from the reporter's own words (a code fence above the timeouts, a first-person sentence, a
   sentence saying the job hangs) nor from a library logger's record that any rank prints (DeepSpeed's
   ``[file.py:N:func]`` head without ``[Rank N]``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import report_log as report
from triage.analysis.absent_rank import logger_record_of_any_rank, reporters_words


def _verdict(text: str, tmp_path: Path) -> dict[str, object]:
    code, out = report(text, tmp_path)
    assert code != 2, out
    verdict = out["verdict"]
    assert isinstance(verdict, dict)
    return verdict


# --- 1. rank 0 inferred only from the log's own lines --------------------------------------------------------

TIMEOUT = ("[rank3]:[E ProcessGroupNCCL.cpp:523] [Rank 3] Watchdog caught collective operation timeout: "
           "WorkNCCL(SeqNum=812, OpType=ALLREDUCE, NumelIn=4096, NumelOut=4096, Timeout(ms)=600000) ran for "
           "600412 milliseconds before timing out.\n")


@pytest.mark.parametrize("text", ["```", "~~~text", "I ran the job with 4 GPUs and it timed out:",
                                  "Hi, thanks for the great work", "after that the training really hangs :(",
                                  "My training gets stuck at epoch 3", "The log is as follows:"])
def test_the_reporters_words_are_no_ranks_line(text: str) -> None:
    assert reporters_words(text)


@pytest.mark.parametrize("text", ["Saving checkpoint to /ckpt/step_500", "Evaluating the results...",
                                  "compiling and loading fused kernels", "Epoch 3: 100%|##########| 50/50",
                                  "I0412 10:00:01.123 trainer.py:40] step 10", "shape: (3, 4)"])
def test_a_programs_lines_are_not_the_reporters(text: str) -> None:
    assert not reporters_words(text)


def test_a_library_loggers_source_head_is_a_record_of_any_rank() -> None:
    assert logger_record_of_any_rank("[torch_checkpoint_engine.py:33:commit] [Torch] Checkpoint step9 is ready now!")
    assert logger_record_of_any_rank("[2024-08-12 10:01:02,345] [INFO] [engine.py:3120:_save_checkpoint] Saving")
    # DeepSpeed's log_dist names the rank it chose: rank 0's own record
    assert not logger_record_of_any_rank("[2024-08-12 10:01:02,345] [INFO] [logging.py:96:log_dist] [Rank 0] Saving")


@pytest.mark.parametrize("above", [
    "My run freezes after the checkpoint, here is the log:\n```\n",
    "After two epochs the job hangs. Log:\n```\n",
    "[engine.py:3120:_save_checkpoint] [Torch] Saved ckpt/global_step900/mp_rank_00_model_states.pt.\n",
])
def test_no_rank0_inference_from_prose_or_any_ranks_record(above: str, tmp_path: Path) -> None:
    verdict = _verdict(above + TIMEOUT, tmp_path)
    assert verdict["kind"] == "hang"
    assert verdict["culprit_ranks"] == []
    assert "would settle it" in str(verdict["summary"])


def test_rank0s_own_line_above_the_timeouts_still_names_it(tmp_path: Path) -> None:
    above = "```\nepoch 3 done\n[2024-08-12 10:01:02,345] [INFO] [logging.py:96:log_dist] [Rank 0] Saving model\n"
    verdict = _verdict(above + TIMEOUT, tmp_path)
    assert verdict["kind"] == "stuck_outside_collective"
    assert verdict["culprit_ranks"] == [0]


# verl-project/verl#1158 (the reporter's sentence, then rank 7's timeout; the fence left out)
VERL_1158 = """the training process hangs and gets stuck when transitioning from epoch 1 to epoch 2. The following error is reported:
[rank7]:[E419 10:42:28.858931807 ProcessGroupNCCL.cpp:616] [Rank 7] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=4486, OpType=ALLTOALL, NumelIn=46684160, NumelOut=46684160, Timeout(ms)=600000) ran for 600013 milliseconds before timing out.
"""


def test_real_reporters_sentence_above_one_ranks_timeout(tmp_path: Path) -> None:
    verdict = _verdict(VERL_1158, tmp_path)
    assert verdict["kind"] == "hang"
    assert verdict["culprit_ranks"] == []
    assert "rank 7 timed out in ALL_TO_ALL SeqNum=4486" in str(verdict["summary"])
