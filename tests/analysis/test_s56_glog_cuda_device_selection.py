"""Session 56 (fix56c item 4): a glog CHECK (or LOG(FATAL)) that wraps CUDA's error at device selection, Caffe's
"F... common.cpp:152] Check failed: error == cudaSuccess (46 vs. 0)  all CUDA-capable devices are busy or
unavailable", is that error at start-up, as its bare line is read since session 55: an exception with the note of what
would settle it (triage.parsing.crashlog._check_line). glog's "*** Check failure stack trace: ***" and the shell's
"Aborted" after it stay how the process ended. Was: glog's SIGABRT, a crash of no note. A CHECK on another CUDA error
stays a CUDA crash through glog's abort."""

from __future__ import annotations

import re

import pytest

from tests.helpers.report import report_lines
from triage.parsing.crashlog import CrashLineKind, parse_crash_line
from triage.parsing.peers import CUDA_BUSY_NOTE, CUDA_DRIVER_NOTE, CUDA_NO_DEVICE_NOTE

_TRACE = ["*** Check failure stack trace: ***", "    @     0x7f2b8e6f3daa  (unknown)",
          "    @     0x7f2b8ed5a5f3  caffe::Caffe::SetDevice()", "    @           0x4071f0  main", "Aborted (core dumped)"]


@pytest.mark.parametrize(("line", "note"), [
    (("F0318 10:11:12.456789  4242 common.cpp:152] Check failed: error == cudaSuccess (46 vs. 0)  all CUDA-capable "
     "devices are busy or unavailable"), CUDA_BUSY_NOTE),
    (("F0318 10:11:12.456789  4242 common.cpp:152] Check failed: error == cudaSuccess (100 vs. 0)  no CUDA-capable "
     "device is detected"), CUDA_NO_DEVICE_NOTE),
    (("F0318 10:11:12.456789  4242 common.cpp:152] Check failed: error == cudaSuccess (35 vs. 0)  CUDA driver version "
     "is insufficient for CUDA runtime version"), CUDA_DRIVER_NOTE),
    (("2023-01-10 12:00:00.123456: F tensorflow/core/common_runtime/gpu/gpu_device.cc:120] Check failed: "
     "cuInit(0) == CUDA_SUCCESS, got CUDA_ERROR_NO_DEVICE"), CUDA_NO_DEVICE_NOTE),
])
def test_a_check_on_device_selection_is_that_error(line: str, note: str) -> None:
    crash = parse_crash_line(line)
    assert crash is not None and crash.kind is CrashLineKind.EXCEPTION and not crash.quoted, crash
    assert crash.text.endswith(note) and crash.text.startswith(("common.cpp:152: ", "gpu_device.cc:120: ")), crash.text
    # (glog's file:line before its words, which a summary's cut keeps: fix57c, session 57)
    report = report_lines("I0318 10:11:12.345678  4242 caffe.cpp:211] Use GPU with device ID 0", line, *_TRACE)
    assert report.verdict.kind.value == "exception", report.verdict.summary
    assert note in report.verdict.summary and "SIGABRT" not in report.verdict.summary, report.verdict.summary
    assert re.search(r"\b(?:common\.cpp:152|gpu_device\.cc:120): ", report.verdict.summary), report.verdict.summary


def test_a_check_on_another_cuda_error_stays_a_cuda_crash() -> None:
    crash = parse_crash_line("F0318 10:11:12.456789  4242 math_functions.cu:79] Check failed: error == cudaSuccess "
                             "(700 vs. 0)  an illegal memory access was encountered")
    assert crash is not None and crash.kind is CrashLineKind.CUDA_ERROR and crash.signal == "SIGABRT", crash


def test_digits_1566_caffe_check_is_the_busy_gpu() -> None:
    # (NVIDIA/DIGITS#1566, a reporter's Caffe run from DIGITS: the log as pasted)
    report = report_lines(
        "WARNING: Logging before InitGoogleLogging() is written to STDERR",
        "E1117 16:59:43.312531  5797 common.cpp:128] Cannot create cuDNN handle. cuDNN won't be available.",
        "F1117 16:59:43.356161  5797 gpu_memory.cpp:152] Check failed: error == cudaSuccess (46 vs. 0)  all "
        "CUDA-capable devices are busy or unavailable",
        "*** Check failure stack trace: ***")
    summary = report.verdict.summary
    assert report.verdict.kind.value == "exception" and CUDA_BUSY_NOTE in summary, summary
    assert "all CUDA-capable devices are busy or unavailable" in summary
