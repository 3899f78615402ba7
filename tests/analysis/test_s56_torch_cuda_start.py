"""Session 56 (rev55 F7): torch's own words for CUDA's errors at its start ("RuntimeError: No CUDA GPUs are
available", c10/cuda/CUDAFunctions.cpp's device_count_ensure_non_zero for cudaErrorNoDevice; "Found no NVIDIA driver
on your system. ..." and "The NVIDIA driver on your system is too old (found version N). ..." from device_count_impl
and torch/cuda/__init__.py's _check_driver) got no note, where CUDA's own words for the same errors get the start-up
note (fix55a: peers.CUDA_NO_DEVICE_NOTE, CUDA_DRIVER_NOTE). Now they get it on an exception's line; a plain line
holding the words ("INFO: No CUDA GPUs are available, using CPU") stays no failure."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import report_log
from triage.parsing.crashlog import CrashLineKind, parse_crash_line
from triage.parsing.peers import CUDA_DRIVER_NOTE, CUDA_NO_DEVICE_NOTE

TOO_OLD = ("The NVIDIA driver on your system is too old (found version 11040). Please update your GPU driver by "
           "downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx "
           "Alternatively, go to: https://pytorch.org to install a PyTorch version that has been compiled with your "
           "version of the CUDA driver.")
NO_DRIVER = ("Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver "
             "from http://www.nvidia.com/Download/index.aspx")


@pytest.mark.parametrize(("line", "note"), [
    ("RuntimeError: No CUDA GPUs are available", CUDA_NO_DEVICE_NOTE),
    ("RuntimeError: " + NO_DRIVER, CUDA_NO_DEVICE_NOTE),
    ("AssertionError: " + NO_DRIVER, CUDA_NO_DEVICE_NOTE),          # (older torch's _check_driver)
    ("RuntimeError: " + TOO_OLD, CUDA_DRIVER_NOTE),
    ("AssertionError: " + TOO_OLD.replace("11040", "9010"), CUDA_DRIVER_NOTE),
])
def test_torchs_start_errors_get_their_note(line: str, note: str, tmp_path: Path) -> None:
    got = parse_crash_line(line)
    assert got is not None and got.kind is CrashLineKind.EXCEPTION and got.text.endswith(note), got
    text = ("[rank1]: Traceback (most recent call last):\n[rank1]:   File \"/w/train.py\", line 30, in <module>\n"
            "[rank1]:     torch.cuda.set_device(local_rank)\n[rank1]: " + line + "\n")
    _code, report = report_log(text, tmp_path)
    assert report["verdict"]["kind"] == "exception" and report["verdict"]["culprit_ranks"] == [1]
    assert note.strip(" ()")[:40] in report["verdict"]["summary"]


@pytest.mark.parametrize("line", ["INFO: No CUDA GPUs are available, using CPU",
                                  "warning: Found no NVIDIA driver on your system, running on the CPU"])
def test_a_plain_line_is_no_failure(line: str) -> None:
    got = parse_crash_line(line)
    assert got is None or got.kind is not CrashLineKind.EXCEPTION


def test_lazy_init_traceback_as_reported(tmp_path: Path) -> None:
    # the shape of jiaw-z/CoR-GS#23 (CUDA_VISIBLE_DEVICES naming a GPU the node lacks): torch.cuda.set_device, then
    # _lazy_init's torch._C._cuda_init() raising it (paths and lines here are this test's own)
    text = ("Traceback (most recent call last):\n  File \"train.py\", line 402, in <module>\n    setup(args)\n"
            "  File \"/home/u/proj/utils/general_utils.py\", line 88, in setup\n"
            "    torch.cuda.set_device(torch.device(\"cuda:0\"))\n"
            "  File \"/home/u/.local/lib/python3.8/site-packages/torch/cuda/__init__.py\", line 399, in set_device\n"
            "    torch._C._cuda_setDevice(device)\n"
            "  File \"/home/u/.local/lib/python3.8/site-packages/torch/cuda/__init__.py\", line 293, in _lazy_init\n"
            "    torch._C._cuda_init()\nRuntimeError: No CUDA GPUs are available\n")
    _code, report = report_log(text, tmp_path)
    assert report["verdict"]["kind"] == "exception"
    assert "sees no GPU" in report["verdict"]["summary"]
