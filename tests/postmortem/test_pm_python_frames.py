"""Where a crash's Python frames come from (analysis: triage.analysis.crash.records.with_python_frames),
on gdb text in the shape gdb prints it; the real cores of test_pm_cores.py go through the same code."""

from __future__ import annotations

from dataclasses import replace

from triage.analysis.crash import CrashContext, classify_backtrace
from triage.analysis.crash.records import with_python_frames
from triage.parsing.gdb import parse_gdb_backtrace

NATIVE = """\
Program terminated with signal SIGSEGV, Segmentation fault.
[Current thread is 1 (Thread 0x7f00 (LWP 77))]

Thread 1 (Thread 0x7f00 (LWP 77)):
#0  0x00007f1b9c2a0000 in store_result () from /opt/app/libwork.so
#1  0x00007f1b9c2a1000 in main () from /opt/app/worker
"""

PYTHON = """\
Program terminated with signal SIGSEGV, Segmentation fault.
[Current thread is 1 (Thread 0x7f00 (LWP 77))]

Thread 1 (Thread 0x7f00 (LWP 77)):
#0  0x00007f1b9c2a0000 in my_op_forward () from /site-packages/myext/_C.so
#1  0x00000000005d6066 in _PyEval_EvalFrameDefault () from /usr/bin/python3.11
#2  0x00000000005d1d3a in PyEval_EvalCode () from /usr/bin/python3.11
"""
PYSTACK = ("train.py:42 in forward", "train.py:90 in main")


def _classified(text: str):  # type: ignore[no-untyped-def]
    bt = parse_gdb_backtrace(text)
    return classify_backtrace(bt, CrashContext(pid=77)), bt


def test_pystack_frames_fill_in_when_nothing_else_gave_any() -> None:
    item, bt = _classified(PYTHON)
    assert item.python_method == "none"
    done, not_python = with_python_frames(item, bt, {}, PYSTACK)
    assert not not_python
    assert done.python_method == "pystack" and done.python_frames == PYSTACK
    assert not any(n.startswith("no Python frames") for n in done.notes)


def test_a_python_core_without_frames_says_why() -> None:
    item, bt = _classified(PYTHON)
    done, not_python = with_python_frames(item, bt, {"pystack": {"error": "pystack is not installed"}})
    assert not not_python and done.python_frames == ()
    assert any(n.startswith("no Python frames: pystack is not installed;") for n in done.notes)


def test_a_native_program_is_said_and_pystack_never_wins_over_faulthandler() -> None:
    item, bt = _classified(NATIVE)
    done, not_python = with_python_frames(item, bt, {})
    assert not_python and "not a Python program's core: no Python frames to show" in done.notes
    from_log = replace(item, python_frames=("a.py:1 in f",), python_method="faulthandler.log")
    kept, _ = with_python_frames(from_log, parse_gdb_backtrace(PYTHON), {}, PYSTACK)
    assert kept.python_method == "faulthandler.log" and kept.python_frames == ("a.py:1 in f",)
