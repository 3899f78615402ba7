"""Session 57 (fix57c item 9): a glog CHECK on CUDA's device selection ("F... common.cpp:152] Check failed: error ==
cudaSuccess (46 vs. 0)  all CUDA-capable devices are busy or unavailable") is worded with its note of what would
settle it, and its place was dropped from the verdict ("its place: the evidence's lines"); the summary now says it
first, as a compiler's "file:line: message", where a summary's cut keeps it (triage.parsing.crashlog._check_line)."""

from __future__ import annotations

from tests.helpers.report import report_lines

_TRACE = ("*** Check failure stack trace: ***", "    @     0x7f0c1d2e3f4a  google::LogMessage::Fail()", "Aborted")


def test_the_checks_place_is_in_the_summary() -> None:
    report = report_lines("[rank2]: I0907 08:15:02.118833 90211 solver.cpp:60] Initializing solver",
                          "[rank2]: F0907 08:15:02.204457 90211 device_alternate.cpp:311] Check failed: error == "
                          "cudaSuccess (100 vs. 0)  no CUDA-capable device is detected",
                          *(f"[rank2]: {line}" for line in _TRACE))
    summary = report.verdict.summary
    assert report.verdict.culprit_ranks == (2,), summary
    assert "device_alternate.cpp:311: Check failed: error == cudaSuccess (100 vs. 0)" in summary, summary


def test_a_long_path_keeps_its_last_part() -> None:
    report = report_lines("2024-05-02 11:00:00.123456: F third_party/xla/xla/stream_executor/cuda/cuda_platform.cc:88] "
                          "Check failed: cuInit(0) == CUDA_SUCCESS, got CUDA_ERROR_NO_DEVICE", *_TRACE)
    assert "cuda_platform.cc:88: Check failed" in report.verdict.summary, report.verdict.summary


def test_digits_1566_says_where() -> None:
    # (NVIDIA/DIGITS#1566's CHECK line as its reporter pasted it)
    report = report_lines("F1117 16:59:43.356161  5797 gpu_memory.cpp:152] Check failed: error == cudaSuccess (46 vs. "
                          "0)  all CUDA-capable devices are busy or unavailable", "*** Check failure stack trace: ***")
    assert "gpu_memory.cpp:152: Check failed" in report.verdict.summary, report.verdict.summary
