"""Session 57 (round 79's lshiwjx/2s-AGCN#69): PyTorch 1.x's THC form of a CUDA error, "cuda runtime error (N) : text",
was read only with THC's space before the colon; retyped without it ("cuda runtime error (60): peer mapping resources
exhausted...") it was a failure of unknown place. Now both spellings read as the CUDA error they name, classed as
"CUDA error: <text>" is (an out-of-memory an OOM, a device-side assert a crash, a set-up error an exception of
set-up); cudaErrorTooManyPeers (60, "peer mapping resources exhausted": more GPUs set up to map each other's memory
than peer-to-peer allows) is now one of CUDA's set-up errors, with its note."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import report_log
from triage.parsing.crashlog import CrashLineKind, parse_crash_line
from triage.parsing.peers import CUDA_PEERS_NOTE, CUDA_SETUP_NOTE


@pytest.mark.parametrize("space", ["", " "])
@pytest.mark.parametrize(("code_text", "kind"), [
    ("(2){sp}: out of memory at /pytorch/aten/src/THC/THCCachingAllocator.cpp:510", CrashLineKind.CUDA_OOM),
    ("(59){sp}: device-side assert triggered at /pytorch/aten/src/THC/generic/THCTensorMath.cu:26",
     CrashLineKind.CUDA_ERROR),
    ("(77){sp}: an illegal memory access was encountered at /pytorch/aten/src/THC/THCCachingHostAllocator.cpp:278",
     CrashLineKind.CUDA_ERROR),
    ("(10){sp}: invalid device ordinal at /pytorch/torch/csrc/cuda/Module.cpp:59", CrashLineKind.EXCEPTION),
    ("(60){sp}: peer mapping resources exhausted at /pytorch/aten/src/THC/THCGeneral.cpp:141", CrashLineKind.EXCEPTION),
])
def test_thc_error_with_or_without_the_space(code_text: str, kind: CrashLineKind, space: str) -> None:
    got = parse_crash_line("cuda runtime error " + code_text.format(sp=space))
    assert got is not None and got.kind is kind, got


def test_too_many_peers_is_a_setup_error_in_every_spelling() -> None:
    for line in ("RuntimeError: CUDA error: peer mapping resources exhausted",
                 "cudaErrorTooManyPeers: peer mapping resources exhausted",
                 "RuntimeError: cuda runtime error (60) : peer mapping resources exhausted at THCGeneral.cpp:141"):
        got = parse_crash_line(line)
        assert got is not None and got.kind is CrashLineKind.EXCEPTION, (line, got)
        assert got.text.endswith(CUDA_PEERS_NOTE) and CUDA_SETUP_NOTE not in got.text


def test_the_retyped_line_alone(tmp_path: Path) -> None:
    _code, got = report_log("cuda runtime error (60): peer mapping resources exhausted\n", tmp_path)
    verdict = got["verdict"]
    assert verdict["kind"] == "exception" and verdict["culprit_ranks"] == [], verdict
    assert "eight" in verdict["summary"]


def test_a_retyped_oom_alone(tmp_path: Path) -> None:
    _code, got = report_log("cuda runtime error (2): out of memory at /pytorch/aten/src/THC/THCCachingAllocator.cpp:510\n",
                            tmp_path)
    assert got["verdict"]["subkind"] == "oom", got["verdict"]
