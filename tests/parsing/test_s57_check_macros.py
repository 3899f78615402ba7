"""Session 57 (round 79's laekov/fastmoe#149): a library's own check macro on an NCCL or CUDA call's result, which
prints the call's source place and the result and exits the process, was no failure line where its words were not
NCCL's or PyTorch's ("NCCL Error at .../global_exchange.cpp:16 value 4": the NCCL WARN lines before it read as a
failure of unknown place; "Cuda error in file 'x.cu' in line 55 : ...": refused). Now each is the process's error
exit on that call: NCCL's result by number named (1-7), CUDA's string read as "CUDA error: <text>" is read (an
out-of-memory an OOM, a set-up error an exception of set-up, a kernel's fault a crash)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import report_log
from triage.parsing.crashlog import CrashLineKind, parse_crash_line


@pytest.mark.parametrize(("line", "kind", "name"), [
    ("NCCL Error at /opt/src/moe/csrc/all2all.cu:88 value 4", CrashLineKind.NCCL_ERROR, "ncclInvalidArgument"),
    ("NCCL Error at comm_manager.h:31 value 5", CrashLineKind.NCCL_ERROR, "ncclInvalidUsage"),
    ("NCCL Error at comm_manager.h:31 value 1", CrashLineKind.NCCL_ERROR, "ncclUnhandledCudaError"),
    ("NCCL Error at comm_manager.h:31 value 3", CrashLineKind.NCCL_ERROR, "ncclInternalError"),
    ("NCCL Error at comm_manager.h:31 value 7", CrashLineKind.NCCL_ERROR, "ncclInProgress"),
    ("NCCL Error at comm_manager.h:31 value 2", CrashLineKind.NETWORK, "ncclSystemError"),
    ("NCCL Error at comm_manager.h:31 value 6", CrashLineKind.NETWORK, "ncclRemoteError"),
])
def test_nccl_check_by_number(line: str, kind: CrashLineKind, name: str) -> None:
    got = parse_crash_line(line)
    assert got is not None and got.kind is kind, got
    assert name in got.text


@pytest.mark.parametrize("line", [
    "Failed: NCCL error main.cu:42 'invalid usage'",
    "NCCL error allreduce_test.cu:97: invalid argument",
    "NCCL error src/comm.cpp:12 'internal error'",
])
def test_nccl_check_by_string(line: str) -> None:
    got = parse_crash_line(line)
    assert got is not None and got.kind is CrashLineKind.NCCL_ERROR, got


@pytest.mark.parametrize(("line", "kind"), [
    ("Cuda error in file 'src/solver/kernel.cu' in line 212 : an illegal memory access was encountered.",
     CrashLineKind.CUDA_ERROR),
    (("[Machine gpu03 - Device 1] Cuda error in file 'lib/scan.cu' in line 7 : unspecified launch failure "
      "(cudaErrorLaunchFailure)."), CrashLineKind.CUDA_ERROR),
    ("CUDA error in file 'vec.cu' in line 40: invalid argument.", CrashLineKind.CUDA_ERROR),
    ("Cuda error in file 'src/solver/kernel.cu' in line 99 : out of memory.", CrashLineKind.CUDA_OOM),
    ("Cuda error in file 'src/solver/kernel.cu' in line 12 : invalid device ordinal.", CrashLineKind.EXCEPTION),
])
def test_cuda_safe_call(line: str, kind: CrashLineKind) -> None:
    got = parse_crash_line(line)
    assert got is not None and got.kind is kind, got


@pytest.mark.parametrize("line", [
    "the NCCL error at startup went away after upgrading",
    "I think the CUDA error in file handling is a red herring",
])
def test_prose_is_no_check(line: str) -> None:
    assert parse_crash_line(line) is None


def test_nccl_check_after_nccl_warn_lines_is_the_exit(tmp_path: Path) -> None:
    # (NCCL's own argument check warns first; the library's check of the result is the process's exit)
    text = ("gpu7:44120:44120 [0] misc/argcheck.cc:30 NCCL WARN AllToAll : comm argument is NULL\n"
            "gpu7:44120:44120 [0] NCCL INFO enqueue.cc:1011 -> 4\n"
            "NCCL Error at /srv/build/moe_ext/src/exchange.cu:57 value 4\n")
    _code, got = report_log(text, tmp_path)
    verdict = got["verdict"]
    assert verdict["kind"] == "exception", verdict
    assert "ncclInvalidArgument" in verdict["summary"]
    assert verdict["culprit_ranks"] == []
