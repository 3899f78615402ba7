"""Session 54: a summary that quoted two lines glued where a paste lost a line end ("fatal error: cuda_runtime.h: No
such file or directorycompilation terminated.") ends at the C library's message that ended the first line; a failure
line that ends in its colon ("ERROR: worker 3 failed with:") takes the next line of the same owner as its message
(the summary quoted the colon and nothing after it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import failure_verdict
from triage.parsing.peers import shortened


@pytest.mark.parametrize(("glued", "kept"), [
    ("fatal error: cuda_runtime.h: No such file or directorycompilation terminated.",
     "fatal error: cuda_runtime.h: No such file or directory"),
    ("OSError: [Errno 28] No space left on deviceTraceback (most recent call last):",
     "OSError: [Errno 28] No space left on device"),
    ("connect to 10.0.0.7:29500 failed: Connection refusedERROR: retrying",
     "connect to 10.0.0.7:29500 failed: Connection refused"),
])
def test_a_strerror_glued_to_the_next_line_ends_the_summary(glued: str, kept: str) -> None:
    assert shortened(glued) == kept


@pytest.mark.parametrize("line", ["open('/data/x'): No such file or directory", "Permission denied (publickey).",
                                  "Is a directory: '/tmp/out'", "mkdir: cannot create directory 'x': File exists"])
def test_a_message_that_ends_its_line_is_kept(line: str) -> None:
    assert shortened(line) == line


def test_the_glued_line_in_a_report(tmp_path: Path) -> None:
    text = ("building extension\nIn file included from csrc/ops.cpp:3:\n/usr/include/foo.h:10:10: fatal error: "
            "cuda_runtime.h: No such file or directorycompilation terminated.\n")
    got = failure_verdict(text, tmp_path)
    assert "No such file or directory" in got["summary"] and "directorycompilation" not in got["summary"]


@pytest.mark.parametrize("lines", [
    ("step 1", "ERROR: worker 3 failed with:", "  disk quota exceeded while writing checkpoint"),
    ("step 1", "[rank3]: Worker failed with:", "[rank3]: disk quota exceeded while writing checkpoint"),
    ("step 1", "Fatal error in the solver:", "    the mesh has 0 cells"),
])
def test_a_failure_line_ending_in_its_colon_takes_the_next_line(lines: tuple[str, ...], tmp_path: Path) -> None:
    got = failure_verdict("\n".join(lines) + "\n", tmp_path)
    assert lines[2].split(":")[-1].strip() in got["summary"]


def test_real_compiler_lines_glued(tmp_path: Path) -> None:
    # nardholio/cve-2016-0728#1's two lines, the line end between them lost as a paste loses it
    got = failure_verdict("fatal error: sys/msg.h: No such file or directorycompilation terminated.\n", tmp_path)
    assert got["summary"].count("No such file or directory") == 1 and "compilation terminated" not in got["summary"]


@pytest.mark.parametrize("after", [
    ("epoch 3 step 1300 loss 0.69", "epoch 3 step 1400 loss 0.68"),        # rev54's variant: the loop's lines
    # tqdm's bar as a real run drew it (the corpus's Henry1iu/TNT-Trajectory-Prediction#33), then the loop's
    (" 31%|█████▉            | 331/1063 [01:06<03:59,  3.06it/s]", "epoch 3 step 1400 loss 0.68"),
    ("Progress: 45%", "epoch 3 step 1400 loss 0.68"),
])
def test_a_colon_line_takes_no_progress_line_as_its_message(after: tuple[str, ...], tmp_path: Path) -> None:
    # (session 55, rev54 F12: the all-clear quoted "FATAL: ...: epoch 3 step 1300 loss 0.69")
    from tests.helpers.report import report_log

    text = "\n".join(("epoch 3 step 1200 loss 0.71", "FATAL: the following ranks did not report in time:",
                      *after)) + "\n"
    code, out = report_log(text, tmp_path)
    assert code == 0, out
    summary = out["verdict"]["summary"]
    assert "in time:'" in summary and after[0].strip() not in summary, summary


def test_progress_bars_and_meters_are_progress_lines() -> None:
    from triage.parsing.progress import is_progress_line

    assert is_progress_line(" 45%|████▌     | 45/100 [00:10<00:12,  4.50it/s]")
    assert is_progress_line("  3% (30/1000)") and is_progress_line("Downloading: 12.3MB/s")
    assert not is_progress_line("  disk quota exceeded while writing checkpoint")
    assert not is_progress_line(" 45%|████▌     | 45/100 [00:10<00:12,  4.50it/s] RuntimeError: CUDA error")
