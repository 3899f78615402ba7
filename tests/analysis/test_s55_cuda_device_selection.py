"""Session 55 (fix55a item 1): CUDA's errors at device selection besides an invalid device ordinal are raised before
any kernel ran, by the launch's or the host's set-up: no GPU would take the process (cudaErrorDevicesUnavailable,
"all CUDA-capable devices are busy or unavailable", CUDA 11.x on "CUDA-capable device(s) is/are busy or unavailable":
a GPU in Exclusive Process mode another process holds), the process sees none ("no CUDA-capable device is
detected"), or the driver is older than the runtime ("CUDA driver version is insufficient for CUDA runtime
version"). Each is an exception at start-up with what would settle it; the busy one was read as a CUDA crash."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.paths import REPO
from tests.helpers.report import report_log
from triage.parsing.crashlog import CrashLineKind, parse_crash_line
from triage.parsing.peers import (
    CUDA_BUSY_NOTE,
    CUDA_DRIVER_NOTE,
    CUDA_NO_DEVICE_NOTE,
    CUDA_SETUP_NOTE,
    cuda_setup_note,
    shortened,
)

HINTS = ("CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might "
         "be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
         "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n")


@pytest.mark.parametrize(("line", "note"), [
    ("RuntimeError: CUDA error: all CUDA-capable devices are busy or unavailable", CUDA_BUSY_NOTE),
    ("torch.AcceleratorError: CUDA error: CUDA-capable device(s) is/are busy or unavailable", CUDA_BUSY_NOTE),
    ("runtimeerror: cuda error: all cuda-capable devices are busy or unavailable", CUDA_BUSY_NOTE),
    (("cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorDevicesUnavailable: CUDA-capable device(s) is/are "
     "busy or unavailable"), CUDA_BUSY_NOTE),
    (("jaxlib.xla_extension.XlaRuntimeError: INTERNAL: CUDA_ERROR_DEVICE_UNAVAILABLE: CUDA-capable device(s) is/are "
     "busy or unavailable"), CUDA_BUSY_NOTE),
    ("RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version", CUDA_DRIVER_NOTE),
    (("RuntimeError: cuda runtime error (35) : CUDA driver version is insufficient for CUDA runtime version at "
     "/pytorch/aten/src/THC/THCGeneral.cpp:50"), CUDA_DRIVER_NOTE),
    ("RuntimeError: CUDA error: no CUDA-capable device is detected", CUDA_NO_DEVICE_NOTE),
    ("RuntimeError: CUDA error: invalid device ordinal", CUDA_SETUP_NOTE),
])
def test_device_selection_errors_are_exceptions_with_their_note(line: str, note: str) -> None:
    got = parse_crash_line(line)
    assert got is not None and got.kind is CrashLineKind.EXCEPTION, line
    assert got.text.endswith(note) and not got.collateral


@pytest.mark.parametrize("line", [
    "CUDA error: all CUDA-capable devices are busy or unavailable",
    "cudaSetDevice failed: CUDA-capable device(s) is/are busy or unavailable",
])
def test_a_bare_line_is_the_exception_too(line: str) -> None:
    got = parse_crash_line(line)
    assert got is not None and got.kind is CrashLineKind.EXCEPTION and got.text.endswith(CUDA_BUSY_NOTE)


@pytest.mark.parametrize("line", [
    "RuntimeError: CUDA error: an illegal memory access was encountered",
    "The server is busy or unavailable, retrying in 5 s",
    "OSError: [Errno 16] Device or resource busy: '/dev/nvidia0'",
])
def test_neighbours_keep_their_reading(line: str) -> None:
    got = parse_crash_line(line)
    assert got is None or not got.text.endswith(CUDA_BUSY_NOTE), line
    if "illegal memory access" in line:
        assert got is not None and got.kind is CrashLineKind.CUDA_ERROR


def test_a_long_line_keeps_the_error_words_when_cut() -> None:
    line = ("THCudaCheck FAIL file=/opt/conda/conda-bld/pytorch_1502004572321/work/torch/lib/THC/generic/THCStorage.cu "
            "line=66 error=46 : all CUDA-capable devices are busy or unavailable")
    cut = shortened(line + cuda_setup_note(line))
    assert cut.endswith(CUDA_BUSY_NOTE) and "busy or unavailable" in cut


def test_rank_prefixed_traceback_is_that_ranks_exception(tmp_path: Path) -> None:
    text = "".join(f"[rank2]: {line}\n" for line in (
        "Traceback (most recent call last):",
        '  File "/srv/job/main.py", line 57, in <module>',
        "    torch.cuda.set_device(args.local_rank)",
        "torch.AcceleratorError: CUDA error: CUDA-capable device(s) is/are busy or unavailable",
        ("Search for `cudaErrorDevicesUnavailable' in https://docs.nvidia.com/cuda/cuda-runtime-api/"
        "group__CUDART__TYPES.html for more information."), *HINTS.splitlines()))
    code, got = report_log(text, tmp_path)
    assert code not in (0, 2, 70)
    assert got["verdict"]["kind"] == "exception" and got["verdict"]["culprit_ranks"] == [2]
    assert "nvidia-smi -q -d COMPUTE" in got["verdict"]["summary"]


@pytest.mark.parametrize("case", ["BUTSpeechFIT__safe_gpu__1", "iffiX__machin__25"])
def test_real_exclusive_process_errors(case: str, tmp_path: Path) -> None:
    log = (REPO / f"tests/realworld/cases/{case}/log.txt").read_text(encoding="utf-8")
    _code, got = report_log(log, tmp_path)
    assert got["verdict"]["kind"] == "exception" and got["verdict"]["culprit_ranks"] == []
    assert CUDA_BUSY_NOTE in got["verdict"]["summary"]


def test_real_thc_era_report(tmp_path: Path) -> None:
    # pytorch/pytorch#2704: THC's print, then the traceback of model.cuda() to the same error raised
    text = (
        "THCudaCheck FAIL file=/opt/conda/conda-bld/pytorch_1502004572321/work/torch/lib/THC/generic/THCStorage.cu "
        "line=66 error=46 : all CUDA-capable devices are busy or unavailable\n"
        "Traceback (most recent call last):\n"
        '  File "scripts/reader/train.py", line 544, in <module>\n'
        "    main(args)\n"
        '  File "scripts/reader/train.py", line 426, in main\n'
        "    model.cuda()\n"
        '  File "/people/sanjay/DrQA/drqa/reader/model.py", line 460, in cuda\n'
        "    self.netowork = self.network.cuda()\n"
        '  File "/people/sanjay/anaconda2/envs/drqa/lib/python3.6/site-packages/torch/nn/modules/module.py", line 147, '
        "in cuda\n"
        "    return self._apply(lambda t: t.cuda(device_id))\n"
        "RuntimeError: cuda runtime error (46) : all CUDA-capable devices are busy or unavailable at "
        "/opt/conda/conda-bld/pytorch_1502004572321/work/torch/lib/THC/generic/THCStorage.cu:66\n")
    code, got = report_log(text, tmp_path)
    assert code not in (0, 2, 70)
    assert got["verdict"]["kind"] == "exception" and got["verdict"]["culprit_ranks"] == []
    assert "busy or unavailable" in got["verdict"]["summary"] and CUDA_BUSY_NOTE in got["verdict"]["summary"]
