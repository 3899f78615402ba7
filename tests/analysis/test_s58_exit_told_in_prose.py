"""Session 58 (fixds): a launcher's exit of a process by a signal quoted in the reporter's own sentence (DeepSpeed's
"exits with return code = -9", "return code -11", torchrun's "exitcode: -9", torch.multiprocessing's
"ProcessExitedException ... SIGKILL"), in English or in a Chinese sentence with no space before the words, above a
pasted log of healthy start-up lines cut before the end. Was no problem found (or refused: no line found), now a
CRASH told in prose, by that signal, of no rank (Tencent/TencentPretrain#38, WangRongsheng/XrayGLM#79). A sentence
that explains what the words mean, a negation, an exit the job went on after, a log that shows its own end, or a log
whose own lines show the failure, is never this verdict."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers.report import report_log
from triage.parsing.prose import read_prose

_START = (
    "[2024-02-11 08:30:12,501] [INFO] [runner.py:568:main] cmd = /opt/conda/bin/python -u -m deepspeed.launcher.launch "
    "--world_info=eyJub2RlMSI6IFswLCAxLCAyLCAzXX0= --master_addr=127.0.0.1 --master_port=29611 sft.py\n"
    "[2024-02-11 08:30:14,002] [INFO] [launch.py:145:main] WORLD INFO DICT: {'node1': [0, 1, 2, 3]}\n"
    "[2024-02-11 08:30:14,002] [INFO] [launch.py:151:main] nnodes=1, num_local_procs=4, node_rank=0\n"
    "[2024-02-11 08:30:14,003] [INFO] [launch.py:163:main] dist_world_size=4\n"
    "[2024-02-11 08:30:14,003] [INFO] [launch.py:165:main] Setting CUDA_VISIBLE_DEVICES=0,1,2,3\n"
    "[2024-02-11 08:30:19,870] [INFO] [comm.py:637:init_distributed] cdb=None\n"
    "Loading checkpoint shards: 100%|##########| 3/3 [00:21<00:00,  7.10s/it]\n")


def _verdict(text: str, tmp_path: Path) -> dict[str, Any]:
    code, got = report_log(text, tmp_path)
    assert code != 2, got
    verdict: dict[str, Any] = got["verdict"]
    return verdict


@pytest.mark.parametrize(("said", "signal"), [
    ('My SFT run on 4 GPUs dies and the launcher says "exits with return code = -9" after the shards load.', "SIGKILL"),
    ("跑sft.sh的时候出现exits with return code = -11，请问怎么解决？", "SIGSEGV"),
    ("Fine-tuning stops right after loading: torchrun reports exitcode: -9 for local_rank 2.", "SIGKILL"),
    ("The spawn run ends with ProcessExitedException: process 3 terminated with signal SIGKILL every time.", "SIGKILL"),
], ids=["english-quoted", "chinese-no-space", "torchrun-exitcode", "mp-spawn"])
def test_exit_told_in_prose_is_a_crash_by_that_signal(said: str, signal: str, tmp_path: Path) -> None:
    verdict = _verdict(said + "\n" + _START, tmp_path)
    assert verdict["kind"] == "crash", verdict
    assert verdict["signal"] == signal


def test_read_prose_names_the_signal() -> None:
    told = read_prose(["用deepspeed训练时遇到exits with return code = -9是什么问题？"])
    assert told.exit_signal == "SIGKILL" and told.exit is not None
    assert read_prose(["nothing failed here, the run is fine and quick."]).exit is None
    assert read_prose(["My run exits with return code = -11 when it loads the dataset."]).exit_signal == "SIGSEGV"


@pytest.mark.parametrize("said", [
    "DeepSpeed prints exits with return code = -9 when the kernel's OOM killer ends a process.",
    "For example exitcode: -9 means the process received SIGKILL from outside.",
    "After adding swap it no longer exits with return code = -9 on this machine.",
    "It exited with return code = -9 once, but then the job resumed and finished fine.",
    "The old runs used to end with exitcode: -9 on rank 1, fixed by adding swap; now the job is slow.",
], ids=["docs-when", "docs-means", "negated", "went-on", "fixed-since"])
def test_words_of_no_failure_are_no_crash_told_in_prose(said: str) -> None:
    assert read_prose([said]).exit is None


def test_a_log_that_shows_its_end_is_no_crash(tmp_path: Path) -> None:
    text = ('Earlier runs showed "exits with return code = -9" and I want to know why.\n' + _START
            + "[2024-02-11 09:55:02,114] [INFO] [launch.py:347:main] Process 8812 exits successfully.\n"
            + "[2024-02-11 09:55:02,114] [INFO] [launch.py:347:main] Process 8813 exits successfully.\n")
    verdict = _verdict(text, tmp_path)
    assert verdict["kind"] != "crash" or "(told in prose)" not in verdict["summary"], verdict


def test_the_logs_own_failure_keeps_its_verdict(tmp_path: Path) -> None:
    text = ("The run fails with exits with return code = -9 on my box.\n" + _START
            + "[2024-02-11 08:31:02,400] [ERROR] [launch.py:321:sigkill_handler] ['/opt/conda/bin/python', '-u', "
              "'sft.py', '--local_rank=0'] exits with return code = 1\n")
    verdict = _verdict(text, tmp_path)
    assert "(told in prose)" not in verdict["summary"], verdict


@pytest.mark.parametrize(("said", "signal"), [
    # Tencent/TencentPretrain#38's title
    ("单机8张3090，运行后exits with return code = -9，错误码信息在那里可以查询？", "SIGKILL"),
    # WangRongsheng/XrayGLM#79's description
    ("程序没有报错，但是进程被杀死，最后出现“exits with return code = -11”。请问有人遇到过这个问题吗？", "SIGSEGV"),
], ids=["TencentPretrain-38", "XrayGLM-79"])
def test_real_reports(said: str, signal: str, tmp_path: Path) -> None:
    verdict = _verdict(said + "\n" + _START, tmp_path)
    assert verdict["kind"] == "crash", verdict
    assert verdict["signal"] == signal
