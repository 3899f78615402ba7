"""Issue 23: the known gaps of rounds 24-25 and the refusals noticed after them, as classes. Each class: what text,
what a careful engineer concludes from it alone; variants written here and real text from public reports (log
lines only).

1. A traceback whose line ends a paste lost: the frame, its source, the exception line, the chaining sentence and
   the next ``Traceback`` glued into one line. The exception line is the failure (split by
   triage.parsing.glued_traceback).
2. A traceback's last source line alone, a ``raise Name("literal")`` statement: that exception was raised, with that
   message (no deeper frame can run while a statement of literals raises); taken only where nothing else failed.
3. NCCL's shared-memory transport at set-up (``failed to extend /dev/shm``, ``posix_fallocate failed``, ``Error
   while creating shared memory segment``) with or without NCCL's ``host:pid:tid [dev]`` head: a set-up failure
   whose fix is /dev/shm's size, never refused, never "failure unlocated"; a source file's ``proxy.cc:1587`` is no
   ``host:rank``.
4. A watchdog line without some of its fields: said "not recorded", never ``None`` or ``?``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers.report import report_log
from triage.load.logs.line_events import watchdog_detail
from triage.parsing.glued_traceback import split_glued
from triage.parsing.named_failure import named_rank
from triage.parsing.raise_sites import RaiseSiteKind, raise_site


def report(text: str, tmp_path: Path) -> dict[str, Any]:
    code, out = report_log(text, tmp_path)
    assert code != 2, out.get("stderr")
    assert code not in (0, 70), out
    return out


# --- 1. a traceback glued into one line ------------------------------------------------------------------------

def test_a_glued_frame_is_split_into_frame_source_and_exception() -> None:
    line = ('  File "/opt/env/lib/python3.10/site-packages/deepspeed/launcher/runner.py", line 258, in <listcomp>'
            '    slots = [int(x) for x in slots.split(SLOT_SEP)]ValueError: invalid literal for int() with base 10: \'\'')
    assert split_glued(line) == [
        '  File "/opt/env/lib/python3.10/site-packages/deepspeed/launcher/runner.py", line 258, in <listcomp>',
        "    slots = [int(x) for x in slots.split(SLOT_SEP)]",
        "ValueError: invalid literal for int() with base 10: ''",
    ]


def test_a_glued_chain_keeps_the_rank_prefix_on_every_part() -> None:
    line = ('[rank2]:   File "/w/train.py", line 88, in step    loss.backward()torch.OutOfMemoryError: CUDA out of '
            'memory.The above exception was the direct cause of the following exception:Traceback (most recent call '
            'last):  File "/w/train.py", line 120, in <module>    main()')
    assert split_glued(line) == [
        '[rank2]:   File "/w/train.py", line 88, in step',
        "[rank2]:     loss.backward()",
        "[rank2]: torch.OutOfMemoryError: CUDA out of memory.",
        "[rank2]: The above exception was the direct cause of the following exception:",
        "[rank2]: Traceback (most recent call last):",
        '[rank2]: File "/w/train.py", line 120, in <module>',
        "[rank2]:     main()",
    ]


@pytest.mark.parametrize("line", [
    '  File "/w/train.py", line 88, in step',                                   # a frame alone
    "    raise ValueError(f'bad {x}')",                                           # no frame
    'RuntimeError: failed at File "/w/a.py", line 3',                          # a frame quoted in a message
])
def test_lines_that_are_not_glued_are_left_alone(line: str) -> None:
    assert split_glued(line) == [line]


def test_an_exception_name_inside_the_source_is_no_exception_line() -> None:
    line = '  File "/w/a.py", line 3, in f    except (KeyError, ValueError):'
    assert split_glued(line) == ['  File "/w/a.py", line 3, in f', "    except (KeyError, ValueError):"]


GLUED_RANK = """\
[rank0]: step 40 loss 2.113
[rank1]: Traceback (most recent call last):
[rank1]:   File "/w/train.py", line 61, in <module>    main()  File "/w/train.py", line 44, in main    batch = batch_of(it)KeyError: 'labels'
"""


def test_a_glued_exception_is_the_ranks_exception(tmp_path: Path) -> None:
    verdict = report(GLUED_RANK, tmp_path)["verdict"]
    assert verdict["kind"] == "exception"
    assert verdict["culprit_ranks"] == [1]
    assert "KeyError: 'labels'" in verdict["summary"]


# deepspeedai/DeepSpeed#2601 (the DeepSpeed launcher's own traceback at start-up): its real lines, with the line
# ends after each frame lost the way a paste loses them
DEEPSPEED_2601_GLUED = (
    "[2022-12-13 10:10:54,376] [WARNING] [runner.py:179:fetch_hostfile] Unable to find hostfile, will proceed with "
    "training with local resources only.\n"
    "Traceback (most recent call last):\n"
    '  File "/home/da981116/.conda/envs/gfmn/bin/deepspeed", line 6, in <module>    main()\n'
    '  File "/home/da981116/.conda/envs/gfmn/lib/python3.9/site-packages/deepspeed/launcher/runner.py", line 258, in '
    "<listcomp>    slots = [int(x) for x in slots.split(SLOT_SEP)]ValueError: invalid literal for int() with base 10: ''\n"
)


def test_real_text_a_launchers_glued_traceback_is_an_exception(tmp_path: Path) -> None:
    verdict = report(DEEPSPEED_2601_GLUED, tmp_path)["verdict"]
    assert verdict["kind"] == "exception"
    assert not verdict.get("culprit_ranks")
    assert "ValueError: invalid literal for int()" in verdict["summary"]
    assert "exception line is not in this input" not in verdict["summary"]


# --- 2. a raise statement alone --------------------------------------------------------------------------------

@pytest.mark.parametrize(("line", "said"), [
    ('raise RuntimeError("Distributed package doesn\'t have NCCL " "built in")',
     "RuntimeError: Distributed package doesn't have NCCL built in"),
    ("    raise torch.distributed.DistBackendError('NCCL communicator was aborted')",
     "torch.distributed.DistBackendError: NCCL communicator was aborted"),
])
def test_a_raise_statement_of_literals_is_its_exception(line: str, said: str) -> None:
    site = raise_site(line)
    assert site is not None and site.kind is RaiseSiteKind.RAISE_STATEMENT
    assert site.text.startswith(said)


@pytest.mark.parametrize("line", [
    'raise RuntimeError(f"rank {rank} failed")',           # a formatted message can call code: a deeper frame
    "raise RuntimeError(describe(err))",
    "raise",                                                # a re-raise says nothing of what
    '            raise ValueError("something")',           # deep in a function body: code, not a traceback
    'raise ValueError("x") from err',
])
def test_other_raise_statements_say_nothing(line: str) -> None:
    assert raise_site(line) is None


RAISE_ALONE = """\
launching 2 processes with backend nccl
    raise ValueError("world_size must be a multiple of tensor_parallel_size")
"""
RAISE_BESIDE_A_FAILURE = """\
[rank1]: RuntimeError: CUDA error: an illegal memory access was encountered
    raise ValueError("world_size must be a multiple of tensor_parallel_size")
"""


def test_a_raise_statement_alone_is_an_exception_of_no_rank(tmp_path: Path) -> None:
    verdict = report(RAISE_ALONE, tmp_path)["verdict"]
    assert verdict["kind"] == "exception"
    assert not verdict.get("culprit_ranks")
    assert "ValueError: world_size must be a multiple of tensor_parallel_size" in verdict["summary"]


def test_a_raise_statement_never_outranks_a_real_failure(tmp_path: Path) -> None:
    verdict = report(RAISE_BESIDE_A_FAILURE, tmp_path)["verdict"]
    assert verdict["culprit_ranks"] == [1]
    assert "world_size must be" not in verdict["summary"]


# FacePerceiver/FaRL#10: the raise statement cut over two lines, then the exception line: read once, as the exception
FARL_10 = """\
  raise RuntimeError("Distributed package doesn't have NCCL "
RuntimeError: Distributed package doesn't have NCCL built in
"""


def test_real_text_the_exception_line_after_its_raise_statement(tmp_path: Path) -> None:
    verdict = report(FARL_10, tmp_path)["verdict"]
    assert verdict["kind"] == "exception"
    assert "RuntimeError: Distributed package doesn't have NCCL built in" in verdict["summary"]
    assert "raise statement" not in verdict["summary"]


# --- 3. NCCL's shared-memory transport at set-up ---------------------------------------------------------------

SHM_VARIANTS = [
    # headless (a paste that kept NCCL's source file only)
    ("misc/shmutils.cc:87 NCCL WARN Error: failed to extend /dev/shm/nccl-Q2xk9a to 9637892 bytes, error: No space "
     "left on device (28)\n"),
    "include/shm.h:28 NCCL WARN Call to posix_fallocate failed : No space left on device\n",
    # NCCL's full head, the fallocate line alone (was "failure unlocated")
    ("node3:4411:4502 [2] include/shm.h:28 NCCL WARN Call to posix_fallocate failed : No space left on device\n"
     "node3:4411:4502 [2] NCCL INFO include/shm.h:41 -> 2\n"),
    # a timestamp before the source file
    ("[2025-01-09 10:00:01] misc/shmutils.cc:129 NCCL WARN Error while creating shared memory segment "
     "/dev/shm/nccl-a8Kq1Z (size 33030528), error: No space left on device (28)\n"),
]


@pytest.mark.parametrize("text", SHM_VARIANTS)
def test_shared_memory_set_up_failures_are_network_failures_with_the_shm_advice(text: str, tmp_path: Path) -> None:
    verdict = report(text, tmp_path)["verdict"]
    assert verdict["kind"] == "network_error"
    assert "/dev/shm" in verdict["summary"]


# deepseek-ai/DeepEP#53 (two H800 nodes, /dev/shm full): NCCL's lines as pasted, without their heads
DEEPEP_53 = """\
proxy.cc:1587 NCCL WARN [Service thread] Accept failed No space left on device
misc/shmutils.cc:87 NCCL WARN Error: failed to extend /dev/shm/nccl-nyj24T to 10486116 bytes, error: No space left on device (28)
"""
# NVIDIA/nccl#290 (Horovod under mpirun, 4 GPUs of one node): the fallocate failure with NCCL's head
NCCL_290 = """\
gpu2-ru7:2144:2556 [2] NCCL INFO Ring 00 : 2[3d000] -> 3[3e000] via direct shared memory
gpu2-ru7:2143:2561 [1] NCCL INFO Ring 00 : 1[1b000] -> 2[3d000] via direct shared memory
gpu2-ru7:2145:2555 [3] NCCL INFO Ring 00 : 3[3e000] -> 0[1a000] via direct shared memory
gpu2-ru7:2142:2554 [0] NCCL INFO Ring 00 : 0[1a000] -> 1[1b000] via direct shared memory

gpu2-ru7:2143:2561 [1] include/shm.h:28 NCCL WARN Call to posix_fallocate failed : No space left on device
gpu2-ru7:2143:2561 [1] NCCL INFO include/shm.h:41 -> 2
"""


@pytest.mark.parametrize("text", [DEEPEP_53, NCCL_290])
def test_real_text_shared_memory_exhaustion(text: str, tmp_path: Path) -> None:
    verdict = report(text, tmp_path)["verdict"]
    assert verdict["kind"] == "network_error"
    assert "/dev/shm" in verdict["summary"]
    assert "1587" not in str(verdict.get("culprit_ranks"))


@pytest.mark.parametrize(("line", "rank"), [
    ("proxy.cc:1587 NCCL WARN [Service thread] Accept failed", None),
    ("transport.cpp:33 failed", None),
    ("init.cu:80 error", None),
    ("node07:3 exit status 137", 3),
])
def test_a_source_files_line_number_is_no_rank(line: str, rank: int | None) -> None:
    assert named_rank(line) == rank


# --- 4. a watchdog line's missing fields -----------------------------------------------------------------------

def test_a_watchdog_detail_says_what_is_not_recorded() -> None:
    assert watchdog_detail("all_reduce", 12, "", 600123) == "all_reduce SeqNum=12 ran for 600123 ms"
    said = watchdog_detail(None, None, " on pg 3", None)
    assert "None" not in said and "?" not in said
    assert said == "a collective (its op not recorded) SeqNum not recorded on pg 3 ran for a time not recorded"


WATCHDOG_CUT = """\
[rank3]:[E ProcessGroupNCCL.cpp:563] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600123 milliseconds before timing out.
[rank1]:[E ProcessGroupNCCL.cpp:563] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=12, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for
"""


def test_a_report_never_prints_none_or_a_question_mark_for_a_watchdog_field(tmp_path: Path) -> None:
    out = report(WATCHDOG_CUT, tmp_path)
    text = str(out)
    assert "SeqNum=None" not in text and "ran for ? ms" not in text
    assert "SeqNum not recorded" in text


# --- 5. rank 0 is not inferred at other work from a line told again and again ----------------------------------

REPEATED_BEFORE_TIMEOUT = """\
[2025-03-02 11:00:01.100] Number of active data workers: 8
[2025-03-02 11:00:02.310] Number of active data workers: 8
[2025-03-02 11:00:03.520] Number of active data workers: 8
[2025-03-02 11:00:04.730] Number of active data workers: 8
[rank5]:[E302 11:10:05.000000000 ProcessGroupNCCL.cpp:629] [Rank 5] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=88120, OpType=ALLREDUCE, NumelIn=40960, NumelOut=40960, Timeout(ms)=600000) ran for 600004 milliseconds before timing out.
"""
ONCE_BEFORE_TIMEOUT = """\
[2025-03-02 11:00:01.100] Number of active data workers: 8
[2025-03-02 11:00:04.730] Saving checkpoint to /ckpt/step_88000
[rank5]:[E302 11:10:05.000000000 ProcessGroupNCCL.cpp:629] [Rank 5] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=88120, OpType=ALLREDUCE, NumelIn=40960, NumelOut=40960, Timeout(ms)=600000) ran for 600004 milliseconds before timing out.
"""


def test_a_line_told_again_and_again_is_no_rank0_work(tmp_path: Path) -> None:
    verdict = report(REPEATED_BEFORE_TIMEOUT, tmp_path)["verdict"]
    assert verdict["kind"] == "hang"
    assert not verdict.get("culprit_ranks")
    assert "inferred" not in verdict["summary"]


def test_a_line_told_once_still_shows_rank0_at_work(tmp_path: Path) -> None:
    verdict = report(ONCE_BEFORE_TIMEOUT, tmp_path)["verdict"]
    assert verdict["culprit_ranks"] == [0]
    assert "Saving checkpoint" in verdict["summary"]


def test_a_metric_dict_after_a_viewers_stamp_is_routine_progress() -> None:
    from triage.analysis.absent_rank import metric_dict

    assert metric_dict("[2025-08-18 18:02:05.261] {'loss': 0.0196, 'epoch': 2.47}")
    assert metric_dict("{'loss': 0.0196, 'epoch': 2.47}")
    assert not metric_dict("[2025-08-18 18:02:05.261] Saving checkpoint")
