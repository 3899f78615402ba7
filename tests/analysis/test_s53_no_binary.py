"""Session 53: a GPU runtime that finds no code object for the GPU's architecture in the build (HIP's
hipErrorNoBinaryForGpu, which the runtime prints and aborts on; CUDA's "no kernel image is available for execution on
the device") is a GPU/toolkit mismatch, the cause of the abort after it: it was the shell's bare SIGABRT with CUDA's
CUDA_LAUNCH_BLOCKING advice."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.paths import REPO
from tests.helpers.report import report_log
from triage.parsing.crashlog import NO_BINARY_NOTE, CrashLineKind, parse_crash_line

TF_HEAD = ("2023-01-02 10:00:00.123456: I tensorflow/stream_executor/platform/default/dso_loader.cc:49] Successfully "
           "opened dynamic library libamdhip64.so\n")


@pytest.mark.parametrize("line", ['"hipErrorNoBinaryForGpu: Unable to find code object for all current devices!"',
                                  "hipErrorNoBinaryForGPU: Unable to find code object for all current devices!",
                                  ("/opt/rocm/hip/src/hip_code_object.cpp:92: guarantee(false && \"hipErrorNoBinaryFor"
                                   "Gpu: Coudn't find binary for current devices!\")")])
def test_hip_runtime_print_is_its_abort(line: str) -> None:
    got = parse_crash_line(line)
    assert got is not None and got.kind is CrashLineKind.FATAL_SIGNAL and got.signal == "SIGABRT"
    assert got.text.endswith(NO_BINARY_NOTE)


@pytest.mark.parametrize("line", [("RuntimeError: HIP error: hipErrorNoBinaryForGpu: Unable to find code object for all "
                                   "current devices!"),
                                  "RuntimeError: CUDA error: no kernel image is available for execution on the device"])
def test_raised_error_is_a_gpu_error_with_the_note(line: str) -> None:
    got = parse_crash_line(line)
    assert got is not None and got.kind is CrashLineKind.CUDA_ERROR and got.text.endswith(NO_BINARY_NOTE)


def test_advice_names_the_arch_not_launch_blocking(tmp_path: Path) -> None:
    text = (TF_HEAD + '"hipErrorNoBinaryForGpu: Unable to find code object for all current devices!"\n'
            "Aborted (core dumped)\n")
    code, got = report_log(text, tmp_path)
    assert code not in (0, 2, 70)
    assert got["verdict"]["kind"] == "crash" and "no code object" in got["verdict"]["summary"]
    steps = " ".join(got["next_steps"])
    assert "HSA_OVERRIDE_GFX_VERSION" in steps and "CUDA_LAUNCH_BLOCKING" not in steps


def test_real_rocm_abort(tmp_path: Path) -> None:
    # rocm-arch/tensorflow-rocm#21: rocclr's guarantee, then zsh's "abort (core dumped)"
    log = (REPO / "tests/realworld/cases/rocm-arch__tensorflow-rocm__21/log.txt").read_text(encoding="utf-8")
    _code, got = report_log(log, tmp_path)
    assert got["verdict"]["kind"] == "crash" and got["verdict"]["culprit_ranks"] == []
    assert "hipErrorNoBinaryForGpu" in got["verdict"]["summary"] and NO_BINARY_NOTE in got["verdict"]["summary"]
    assert "HSA_OVERRIDE_GFX_VERSION" in " ".join(got["next_steps"])
