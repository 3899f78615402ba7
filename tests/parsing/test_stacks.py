"""Stack parsers against real py-spy and faulthandler output of real processes (and fixtures)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.processes import python_program, running_program
from triage.parsing.stacks import (
    FatalBanner,
    Frame,
    ThreadStack,
    parse_fatal_banner,
    parse_faulthandler,
    parse_faulthandler_signal,
    parse_pyspy_json,
    parse_pyspy_text,
    stack_top,
    waiting_in_collective,
)

DATA = Path(__file__).parent / "data"
TARGET = Path(__file__).parent.parent / "programs" / "nccl_stack_target.py"
SLEEP_LINE = TARGET.read_text().splitlines().index("    time.sleep(600)") + 1
TARGET_TOP = f"nccl_stack_target.py:{SLEEP_LINE} in wait_for_peers"
needs_pyspy = pytest.mark.skipif(shutil.which("py-spy") is None, reason="py-spy not installed")


def test_pyspy_json_fixture() -> None:
    threads = parse_pyspy_json(json.loads((DATA / "pyspy_dump.json").read_text()))
    main = [t for t in threads if t.is_main]
    assert len(main) == 1
    assert main[0].thread_name == "MainThread"
    assert [f.function for f in main[0].frames] == ["inner", "outer", "<module>"]
    assert main[0].active is False and main[0].owns_gil is False
    assert stack_top(threads) == "spyt.py:6 in inner"
    worker = next(t for t in threads if t.thread_name == "bg-worker")
    assert not worker.is_main and worker.frames[-1].function == "Thread._bootstrap"


def test_pyspy_text_fixtures() -> None:
    plain = parse_pyspy_text((DATA / "pyspy_dump.txt").read_text())
    native = parse_pyspy_text((DATA / "pyspy_dump_native.txt").read_text())
    for threads in (plain, native):
        assert stack_top(threads) == "spyt.py:6 in inner"
        assert {t.thread_name for t in threads} == {"MainThread", "bg-worker"}
    main = next(t for t in native if t.is_main)
    assert main.frames[0] == Frame("clock_nanosleep", "", None, "libc.so.6")
    assert main.active is False


@needs_pyspy
def test_real_pyspy_on_a_live_process() -> None:
    with running_program(python_program("nccl_stack_target.py")) as proc:
        out = subprocess.run(["py-spy", "dump", "--pid", str(proc.pid), "--json"], capture_output=True, text=True,
                             timeout=30, check=True).stdout
        text = subprocess.run(["py-spy", "dump", "--pid", str(proc.pid)], capture_output=True, text=True,
                              timeout=30, check=True).stdout
    for threads in (parse_pyspy_json(json.loads(out)), parse_pyspy_text(text)):
        assert stack_top(threads) == TARGET_TOP
        main = next(t for t in threads if t.is_main)
        assert [f.function for f in main.frames[:3]] == ["wait_for_peers", "train_step", "main"]
        assert any(t.thread_name == "data-loader" and not t.is_main for t in threads)


def test_real_faulthandler_dump_of_all_threads() -> None:
    with running_program(python_program("nccl_stack_target.py")) as proc:
        os.kill(proc.pid, signal.SIGUSR1)
        assert proc.stdout is not None
        lines: list[str] = []
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            line = proc.stdout.readline().decode()
            lines.append(line)
            if "File" in line and "<module>" in line:
                break
    text = "".join(lines)
    threads = parse_faulthandler(text)
    assert len(threads) == 2
    assert stack_top(threads) == TARGET_TOP
    assert parse_faulthandler_signal(text) is None
    loader = next(t for t in threads if not t.is_main)
    assert loader.frames[0].function == "background_loader"


def test_real_segfault_banner() -> None:
    proc = subprocess.run([sys.executable, "-X", "faulthandler", "-c",
                           "import ctypes\ndef crash():\n    ctypes.string_at(0)\ncrash()"],
                          capture_output=True, text=True, timeout=30, check=False)
    assert proc.returncode == -signal.SIGSEGV
    assert parse_faulthandler_signal(proc.stderr) == "Segmentation fault"
    threads = parse_faulthandler(proc.stderr)
    assert stack_top(threads) == "<string>:3 in crash"


def test_torchrun_segfault_fixture_ignores_the_launcher_traceback() -> None:
    text = (DATA / "torchrun_segv.log").read_text()
    threads = parse_faulthandler(text)
    assert len(threads) == 1
    assert [f.function for f in threads[0].frames] == ["string_at", "main", "wrapper", "<module>"]
    assert stack_top(threads) == "crash.py:8 in main"
    assert parse_faulthandler_signal(text) == "Segmentation fault"


def test_faulthandler_with_rank_prefixes_and_names() -> None:
    text = """[rank2]:Fatal Python error: Aborted
[rank2]:
[rank2]:Thread 0x00007f00aa (most recent call first):
[rank2]:  File "/usr/lib/python3.11/threading.py", line 324 in wait
[rank2]:  File "/usr/lib/python3.11/threading.py", line 1002 in _bootstrap
[rank2]:
[rank2]:Current thread 0x00007f00bb [pt_main_thread] (most recent call first):
[rank2]:  File "/x/site-packages/torch/distributed/distributed_c10d.py", line 2501 in all_reduce
[rank2]:  File "/x/site-packages/torch/distributed/c10d_logger.py", line 83 in wrapper
[rank2]:  File "/job/train.py", line 42 in step
[rank2]:  File "/job/train.py", line 99 in <module>
"""
    threads = parse_faulthandler(text)
    assert parse_faulthandler_signal(text) == "Aborted"
    assert [t.thread_name for t in threads] == [None, "pt_main_thread"]
    assert stack_top(threads) == "train.py:42 in step"
    assert waiting_in_collective(threads) == "all_reduce"


def _thread(*frames: tuple[str, str, int]) -> ThreadStack:
    return ThreadStack("1", "MainThread", tuple(Frame(f, p, n) for f, p, n in frames), True)


def test_waiting_in_collective_variants() -> None:
    c10d = "/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py"
    logger = "/venv/lib/python3.11/site-packages/torch/distributed/c10d_logger.py"
    assert waiting_in_collective([_thread(("all_gather", c10d, 1), ("wrapper", logger, 2),
                                          ("step", "/job/t.py", 3))]) == "all_gather"
    assert waiting_in_collective([_thread(("barrier", c10d, 1), ("step", "/job/t.py", 3))]) == "barrier"
    assert waiting_in_collective([_thread(("sleep", "/job/t.py", 1))]) is None
    assert waiting_in_collective([]) is None
    assert stack_top([]) is None
    assert stack_top([_thread(("all_gather", c10d, 1))]) is None


@pytest.mark.parametrize("data", [None, 5, "x", [1, 2], {"threads": "x"}, [{"frames": [1, {"name": 2}]}]])
def test_pyspy_json_garbage(data: object) -> None:
    threads = parse_pyspy_json(data)
    assert isinstance(threads, tuple)


@pytest.mark.parametrize("text", ["", "Thread", "Thread 12 (idle):", "    f (x.py:1)", "Process 1: python\n\n"])
def test_text_garbage(text: str) -> None:
    assert isinstance(parse_pyspy_text(text), tuple)
    assert isinstance(parse_faulthandler(text), tuple)


def test_pyspy_locals_fixture() -> None:
    text = (DATA / "pyspy_dump_locals.txt").read_text()
    threads = parse_pyspy_text(text + "            tricky: value (looks.py:1)\n")
    loader = next(t for t in threads if t.thread_name == "data-loader")
    assert [f.function for f in loader.frames] == [
        "background_loader", "Thread.run", "Thread._bootstrap_inner", "Thread._bootstrap"]
    assert stack_top(threads).startswith("nccl_stack_target.py:")  # type: ignore[union-attr]


def test_fatal_banner() -> None:
    text = ('*** Aborted at 1757588325 (unix time) try "date -d @1757588325" if you are using GNU date ***\n'
            "PC: @ 0x0 (unknown)\n"
            "*** SIGSEGV (@0x0) received by PID 1234 (TID 0x7f7d6c5fe700) from PID 0; stack trace: ***\n")
    assert parse_fatal_banner(text) == FatalBanner(1757588325, "SIGSEGV", 1234)
    assert parse_fatal_banner("[rank3]:*** Aborted at 17 (unix time) try") == FatalBanner(17, None, None)
    assert parse_fatal_banner("all good") is None


def test_real_gloo_rank_blocked_in_all_reduce() -> None:
    """py-spy of a real 2-rank gloo job: rank 0 in all_reduce, rank 1 sleeping outside it."""
    as_json = parse_pyspy_json(json.loads((DATA / "pyspy_gloo_allreduce_rank0.json").read_text()))
    as_text = parse_pyspy_text((DATA / "pyspy_gloo_allreduce_rank0.txt").read_text())
    for threads in (as_json, as_text):
        assert waiting_in_collective(threads) == "all_reduce"
        assert stack_top(threads) == "job.py:4 in train_step"
    sleeping = parse_pyspy_text((DATA / "pyspy_gloo_sleep_rank1.txt").read_text())
    assert waiting_in_collective(sleeping) is None
    assert stack_top(sleeping) == "job.py:6 in train_step"


def test_waiting_in_collective_prefers_c10d_over_wrappers() -> None:
    c10d = "/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py"
    fsdp = "/venv/lib/python3.11/site-packages/torch/distributed/fsdp/_flat_param.py"
    thread = _thread(("all_gather_into_tensor", c10d, 1), ("_all_gather_flat_param", fsdp, 2),
                     ("unshard", fsdp, 3), ("forward", "/job/model.py", 4))
    assert waiting_in_collective([thread]) == "all_gather_into_tensor"
    assert waiting_in_collective([_thread(("unshard", fsdp, 3), ("forward", "/job/model.py", 4))]) == "unshard"
    assert waiting_in_collective([_thread(("_all_gather_base", c10d, 1))]) == "_all_gather_base"
