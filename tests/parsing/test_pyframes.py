"""The one reader of pystack's frames (schema triage.pyframes/1): bounded, and turned into the
thread stacks the report reads from py-spy and faulthandler too."""

from __future__ import annotations

import json

from triage.parsing.pyframes import describe, parse_pyframes, thread_stacks
from triage.schemas import PYFRAMES_SCHEMA


def _doc(pid: int | None, threads: list[dict[str, object]]) -> str:
    return json.dumps({"schema": PYFRAMES_SCHEMA, "tool": "pystack", "version": "1.5.1", "pid": pid,
                       "threads": threads})


WORKER = {"tid": 812, "name": "pt_autograd_0", "gil": False,
          "frames": [{"file": "/usr/lib/python3.11/threading.py", "line": 320, "function": "wait"},
                     {"file": "/usr/lib/python3.11/threading.py", "line": 1002, "function": "_bootstrap"}]}
MAIN = {"tid": 800, "name": None, "gil": True,
        "frames": [{"file": "/opt/job/train.py", "line": 88, "function": "all_reduce_grads"},
                   {"file": "/opt/job/train.py", "line": 120, "function": "<module>"}]}


def test_a_live_process_main_thread_is_the_one_with_its_pid() -> None:
    frames = parse_pyframes(_doc(800, [WORKER, MAIN]))
    assert frames.error is None and frames.pid == 800 and frames.names == {812: "pt_autograd_0"}
    stacks = {t.thread_id: t for t in thread_stacks(frames)}
    assert stacks["800"].is_main and not stacks["812"].is_main
    assert stacks["800"].frames[0].function == "all_reduce_grads" and stacks["800"].frames[0].line == 88
    assert stacks["812"].thread_name == "pt_autograd_0" and stacks["800"].source == "pystack"


def test_a_core_has_no_pid_then_the_module_level_thread_is_main() -> None:
    stacks = {t.thread_id: t for t in thread_stacks(parse_pyframes(_doc(None, [WORKER, MAIN])))}
    assert stacks["800"].is_main and not stacks["812"].is_main


def test_failures_and_garbage_give_no_threads_and_say_why() -> None:
    assert parse_pyframes("", "Traceback ...\nRuntimeError: boom", 1).error == (
        "pystack gave no output: RuntimeError: boom")
    assert parse_pyframes(json.dumps({"error": "pystack: cannot attach"})).error == "pystack: cannot attach"
    assert parse_pyframes("[" * 100_000).threads == {}
    odd = parse_pyframes(json.dumps({"pid": "x", "threads": {"tid": 1}}))
    assert odd.threads == {} and odd.pid is None and thread_stacks(odd) == ()


def test_frames_for_and_describe() -> None:
    frames = parse_pyframes(_doc(800, [WORKER, MAIN]))
    assert describe(frames.frames_for(800)[0]) == "/opt/job/train.py:88 in all_reduce_grads"
    assert frames.frames_for(None) == frames.threads[812]          # the first thread that has frames
