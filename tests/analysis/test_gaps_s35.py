"""Round 23's misses, closed as classes (issue 23): each on variants written here and on real text from public
reports (log text only), end to end through ``triage report``.

1. Rank 0 is inferred stuck outside a collective only from a line of the pasted log that rank 0 alone would
   print: never from the reporter's own words (a code fence above the timeouts, a first-person sentence, a
   sentence saying the job hangs) nor from a library logger's record that any rank prints (DeepSpeed's
   ``[file.py:N:func]`` head without ``[Rank N]``).
2. An exception line of no rank (NCCL's ``unhandled cuda error`` and the other NCCL set-up errors) pasted apart from
   mp.spawn's ``-- Process N terminated with the following error:`` block cut before its own exception: process N's.
3. Two ranks that fail with the same first error are both named: the launcher's ``exitcode: 2`` record of a rank
   beside another's argparse refusal of ``--local-rank`` (the same refusal, its usage line cut), and rankless CUDA
   OOM lines of two GPUs on one node (one glued to the other process's frame).
4. A failed ``monitored_barrier`` whose original exception is a reset or closed connection names the rank that did
   not answer (missing), never a network error: the reset is that peer going away.
5. ``shortened()`` cuts at a word boundary near its limit.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.paths import REPO
from tests.helpers.report import report_log as report
from triage.analysis.absent_rank import logger_record_of_any_rank, reporters_words
from triage.parsing.crashlog import shortened


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


# --- 2. an exception pasted apart from mp.spawn's block of process N -----------------------------------------

SPAWN_BLOCK = """Traceback (most recent call last):
  File "pretrain.py", line 211, in <module>
    mp.spawn(run, nprocs=4, args=(cfg,))
  File "/opt/env/lib/python3.9/site-packages/torch/multiprocessing/spawn.py", line 160, in join
    raise ProcessRaisedException(msg, error_index, failed_process.pid)
torch.multiprocessing.spawn.ProcessRaisedException:

-- Process 2 terminated with the following error:
Traceback (most recent call last):
  File "/opt/env/lib/python3.9/site-packages/torch/multiprocessing/spawn.py", line 69, in _wrap
    fn(i, *args)
  File "/work/pretrain.py", line 98, in run
    model = DDP(model, device_ids=[rank])
  File "/opt/env/lib/python3.9/site-packag
"""
NCCL_LINES = [
    ("RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:121, unhandled cuda error, "
    "NCCL version 2.10.3\nncclUnhandledCudaError: Call to CUDA function failed."),
    ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1691, "
    "invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.19.3"),
]


@pytest.mark.parametrize("line", NCCL_LINES)
@pytest.mark.parametrize("where", ["above", "below"])
def test_an_nccl_error_apart_from_spawns_block_is_that_process(line: str, where: str, tmp_path: Path) -> None:
    text = f"{line}\n\n{SPAWN_BLOCK}" if where == "above" else f"{SPAWN_BLOCK}\n{line}\n"
    verdict = _verdict(text, tmp_path)
    assert verdict["kind"] == "exception"
    assert verdict["culprit_ranks"] == [2]
    assert "NCCL error in:" in str(verdict["summary"])


def test_nccls_unhandled_cuda_error_says_what_would_settle_it(tmp_path: Path) -> None:
    code, out = report(f"{NCCL_LINES[0]}\n\n{SPAWN_BLOCK}", tmp_path)
    assert code == 1
    steps = " ".join(out["next_steps"])
    assert "NCCL_DEBUG=INFO" in steps and "supports the GPU" in steps


def test_two_spawned_blocks_or_rank_prefixes_name_no_process(tmp_path: Path) -> None:
    two = SPAWN_BLOCK + SPAWN_BLOCK.replace("Process 2", "Process 3")
    verdict = _verdict(f"{NCCL_LINES[0]}\n\n{two}", tmp_path)
    assert verdict["culprit_ranks"] == []
    assert "rank unknown" in str(verdict["summary"])
    # a child's own NCCL WARN line is any process's: no rank from the block
    warn = "node7:3191:3302 [1] NCCL WARN Cuda failure 'out of memory'\n"
    verdict = _verdict(warn + SPAWN_BLOCK, tmp_path)
    assert verdict["culprit_ranks"] == []
    assert "NCCL WARN" in str(verdict["summary"])


# hpcaitech/ColossalAI#1320 (pytest's "E" gutter removed; its exception line pasted first, as an issue's title)
COLOSSAL_1320 = """RuntimeError: NCCL error in: /opt/conda/conda-bld/pytorch_1640811803361/work/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:957, unhandled system error, NCCL version 21.0.3

torch.multiprocessing.spawn.ProcessRaisedException:

-- Process 3 terminated with the following error:
Traceback (most recent call last):
  File "/home/lcfjr/miniconda3/envs/cs/lib/python3.9/site-packages/torch/multiprocessing/spawn.py", line 59, in _wrap
    fn(i, *args)
  File "/home/lcfjr/codes/ColossalAI/tests/test_tensor/test_gpt2.py", line 105, in run_dist
    run_gpt(init_1d_row_spec, use_ddp)
  File "/home/lcfjr/codes/ColossalAI/tests/test_tensor/test_gpt2.py", line 68, in run_gpt
    torch_model = DDP(torch_model, device_ids=[pg.rank()], process_group=pg.dp_process_group())
"""


def test_real_nccl_error_above_spawns_cut_block(tmp_path: Path) -> None:
    verdict = _verdict(COLOSSAL_1320, tmp_path)
    assert verdict["kind"] == "network_error"      # NCCL's "unhandled system error": its set-up's socket calls
    assert "rank 3" in str(verdict["summary"])
    assert "rank unknown" not in str(verdict["summary"])


# --- 3. two ranks failing with the same first error, both named ----------------------------------------------

USAGE_TAIL = """                [--log-interval N] [--local_rank LOCAL_RANK] [--use-multi-epochs-loader]
                DIR
train.py: error: unrecognized arguments: --local-rank={shown}
[2024-06-13 17:39:24,518] torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: 2) local_rank: {other} (pid: 4411) of binary: /opt/env/bin/python3
Traceback (most recent call last):
  File "/opt/env/lib/python3.10/runpy.py", line 196, in _run_module_as_main
    return _run_code(code, main_globals, None,
"""


@pytest.mark.parametrize(("shown", "other"), [(1, 0), (0, 1), (3, 2)])
def test_a_launcher_record_of_exit_2_beside_an_argv_refusal_is_the_same_refusal(shown: int, other: int,
                                                                                 tmp_path: Path) -> None:
    verdict = _verdict(USAGE_TAIL.format(shown=shown, other=other), tmp_path)
    assert verdict["kind"] == "exception"
    assert verdict["culprit_ranks"] == sorted((shown, other))
    assert "collateral" not in str(verdict["summary"])


def test_another_exit_code_beside_an_argv_refusal_stays_apart(tmp_path: Path) -> None:
    text = USAGE_TAIL.format(shown=1, other=0).replace("exitcode: 2", "exitcode: -9")
    verdict = _verdict(text, tmp_path)
    assert verdict["culprit_ranks"] == [1]


OOM = ("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 128.00 MiB (GPU {gpu}; 23.65 GiB total "
       "capacity; 22.91 GiB already allocated; 91.06 MiB free; 23.02 GiB reserved in total by PyTorch)")
RECORD = ("ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 5102) of "
          "binary: /opt/env/bin/python\n")


@pytest.mark.parametrize("glue", ["", "    hidden = self.mlp(hidden)"])
def test_rankless_ooms_of_two_gpus_name_both_ranks(glue: str, tmp_path: Path) -> None:
    first = OOM.format(gpu=0).replace("CUDA out", f"{glue}CUDA out") if glue else OOM.format(gpu=0)
    text = f"{first}\n\n{OOM.format(gpu=1)}\n{RECORD}"
    verdict = _verdict(text, tmp_path)
    assert verdict["kind"] == "exception"
    assert verdict["culprit_ranks"] == [0, 1]
    assert "collateral" not in str(verdict["summary"])


def test_an_oom_after_another_failure_is_not_inferred(tmp_path: Path) -> None:
    text = f"RuntimeError: CUDA error: an illegal memory access was encountered\n{OOM.format(gpu=1)}\n"
    verdict = _verdict(text, tmp_path)
    assert 1 not in verdict["culprit_ranks"]  # type: ignore[operator]


# lmy98129/VLPD#6 (the first usage line of the paste left out, as an excerpt starts)
VLPD_6 = """trainval_distributed.py: error: unrecognized arguments: --local-rank=1
usage: trainval_distributed.py [-h] [--work-dir WORK_DIR] [--local_rank LOCAL_RANK]
[2023-12-08 01:40:46,962] torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: 2) local_rank: 0 (pid: 53342) of binary: /home/ashitha/miniconda3/envs/Ashenv/bin/python
"""


def test_real_argv_refusal_and_the_launchers_record_of_another_rank(tmp_path: Path) -> None:
    verdict = _verdict(VLPD_6, tmp_path)
    assert verdict["culprit_ranks"] == [0, 1]


# --- 4. monitored_barrier's original exception: the peer gone, not the network --------------------------------

BARRIER_WORKER = """Traceback (most recent call last):
  File "train.py", line 88, in <module>
    dist.monitored_barrier(timeout=timedelta(seconds=600))
RuntimeError: Rank 3 successfully reached monitoredBarrier, but received errors while waiting for send/recv from rank 0. Please check rank 0 logs for faulty rank.
 Original exception:
[../third_party/gloo/gloo/transport/tcp/pair.cc:534] Read error [10.10.1.4]:40021: {what}
"""
BARRIER_ROOT = """[rank0]: RuntimeError: [Rank 0]: Ranks 2 failed to pass monitoredBarrier in 600000 ms
[rank0]:  Original exception:
[rank0]: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Read error [10.10.1.6]:39177: {what}
"""


@pytest.mark.parametrize("what", ["Connection reset by peer", "Connection closed by peer"])
@pytest.mark.parametrize(("text", "missing"), [(BARRIER_WORKER, [0]), (BARRIER_ROOT, [2])])
def test_a_monitored_barriers_reset_names_the_rank_that_did_not_answer(what: str, text: str, missing: list[int],
                                                                       tmp_path: Path) -> None:
    verdict = _verdict(text.format(what=what), tmp_path)
    assert verdict["kind"] == "missing_rank"
    assert verdict["culprit_ranks"] == missing


def test_a_reset_of_its_own_stays_a_network_error(tmp_path: Path) -> None:
    text = ("RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Read error [10.10.1.4]:40021: "
            "Connection reset by peer\n")
    assert _verdict(text, tmp_path)["kind"] == "network_error"


# A real 2-rank gloo job here (torch 2.13, torchrun): rank 0 exits before monitored_barrier, rank 1's own lines
# (its prefix dropped as a paste of one process's output has none). No public report with this shape was found.
REAL_BARRIER = """Traceback (most recent call last):
  File "/tmp/mbrun/mb.py", line 10, in <module>
    dist.monitored_barrier(timeout=timedelta(seconds=30))
  File "/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", line 5435, in monitored_barrier
    return group_to_use.monitored_barrier(  # type:ignore[attr-defined]
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
RuntimeError: Rank 1 successfully reached monitoredBarrier, but received errors while waiting for send/recv from rank 0. Please check rank 0 logs for faulty rank.
 Original exception: 
[/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:553] Connection closed by peer [127.0.0.1]:24965. This is typically caused by a remote worker crashing. Check the logs of the remote worker before reporting an error. GLHF!
"""


def test_real_monitored_barrier_of_a_dead_rank0(tmp_path: Path) -> None:
    verdict = _verdict(REAL_BARRIER, tmp_path)
    assert verdict["kind"] == "missing_rank"
    assert verdict["culprit_ranks"] == [0]


# --- 5. shortened() cuts at a word boundary ------------------------------------------------------------------

def test_shortened_cuts_at_a_word_boundary_near_the_limit() -> None:
    text = "RuntimeError: " + "the allocator could not satisfy a request " * 12
    cut = shortened(text, 100)
    assert len(cut) <= 100
    assert text.startswith(cut)
    assert text[len(cut)] == " "           # the cut ends a word
    assert len(cut) >= 80


def test_shortened_cuts_one_long_token_at_the_limit() -> None:
    path = "/very/long/" + "x" * 400
    assert shortened(f"FileNotFoundError: {path}", 100) == f"FileNotFoundError: {path}"[:100]
    assert shortened("short line", 100) == "short line"


def test_real_summary_cut_ends_on_a_word(tmp_path: Path) -> None:
    # FlagOpen/FlagEmbedding#736 (a corpus case): DDP's reducer error, longer than a summary's cut
    text = (REPO / "tests/realworld/cases/FlagOpen__FlagEmbedding__736/log.txt").read_text(encoding="utf-8")
    summary = str(_verdict(text, tmp_path)["summary"])
    message = summary.split("): ", 1)[1].split(" [which rank", 1)[0]
    assert message.startswith("RuntimeError: Expected to have finished reduction")
    assert f"{message} " in text.replace("\n", " ")       # the cut ends a word
