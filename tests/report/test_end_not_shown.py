"""An excerpt whose last lines are the middle of the work: its all-clear says the input does not show the job's end.

A job that hangs without a word leaves a log that stops in its progress lines. "No problem found" alone would read as
"the job is fine" to the user who pasted it because it stopped; the all-clear says, right after "no rank failed",
that no line says the job finished and quotes where it stops, and the step says to take the stacks if it hangs.
Where the text shows the end (the run's own word that it ended well, a rank's exit) nothing is added. Unit variants
written here, and a real torchrun job read while one of its ranks hangs.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from tests.helpers.launch import TORCHRUN
from tests.helpers.paths import PROGRAMS, REPO
from tests.helpers.report import report_log
from triage.analysis.unrecorded import END_NOT_SHOWN
from triage.parsing.progress import says_it_ended

STEPS = "".join(f"[rank{r}]: Epoch 2 | iter {i}/500 | loss {0.9 - i / 1000:.3f}\n" for i in (10, 20, 30) for r in (0, 1))


@pytest.mark.parametrize("line", ["Training finished.", "Training complete in 3h 12m", "Done.", "done!",
                                  "Saved checkpoint to /ckpt/final.pt", "***** eval metrics *****",
                                  "Final validation accuracy: 0.873", "job completed successfully",
                                  "worker exited with code 0"])
def test_the_runs_own_word_that_it_ended(line: str) -> None:
    assert says_it_ended(line)


@pytest.mark.parametrize("line", ["Epoch 2 | iter 30/500 | loss 0.870", "Training failed: loss is NaN",
                                  "done loading the dataset in 3.2 s", "checkpoint save failed", "saving tensors"])
def test_a_line_that_is_not_the_end(line: str) -> None:
    assert not says_it_ended(line)


def test_progress_that_stops_is_an_all_clear_that_says_the_end_is_not_in_the_input(tmp_path: Path) -> None:
    code, out = report_log(STEPS, tmp_path)
    assert code == 0, out
    summary = out["verdict"]["summary"]
    assert summary.startswith(f"NO PROBLEM FOUND: no rank failed; {END_NOT_SHOWN}"), summary
    assert "'Epoch 2 | iter 30/500 | loss 0.870'" in summary and "rank 0" in summary
    assert any("take the stacks of every rank" in step for step in out["next_steps"]), out["next_steps"]


@pytest.mark.parametrize("end", ["[rank0]: Training finished.\n[rank1]: Training finished.\n",
                                 "[rank0]: Saved checkpoint to /ckpt/final.pt\n",
                                 "[rank1]: ***** eval metrics *****\n[rank1]:   eval_loss = 0.8512\n"])
def test_a_shown_end_adds_nothing(tmp_path: Path, end: str) -> None:
    code, out = report_log(STEPS + end, tmp_path)
    assert code == 0, out
    assert END_NOT_SHOWN not in out["verdict"]["summary"], out["verdict"]["summary"]
    assert not any("take the stacks" in step for step in out["next_steps"])


def _process(pid: int) -> psutil.Process | None:
    try:
        return psutil.Process(pid)
    except psutil.NoSuchProcess:
        return None


def test_a_real_job_read_while_a_rank_hangs(tmp_path: Path) -> None:
    proc = subprocess.Popen([TORCHRUN, "--standalone", "--nproc-per-node", "2", "--tee", "3",
                             str(PROGRAMS / "quiet_hang_job.py")], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    lines: list[str] = []
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and sum("step 3 loss" in line for line in lines) < 2:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line)
    finally:
        # torchrun starts each rank in a session of its own: kill the ranks too, not only torchrun's group
        family = [proc.pid, *(child.pid for child in psutil.Process(proc.pid).children(recursive=True))]
        for pid in family:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        proc.wait(timeout=60)
        psutil.wait_procs([p for p in map(_process, family[1:]) if p is not None], timeout=60)
    assert sum("step 3 loss" in line for line in lines) == 2, lines
    log = tmp_path / "hung.log"             # what the user pastes: the output so far, while the job hangs
    log.write_text("".join(lines))
    report = subprocess.run([sys.executable, "-m", "triage", "report", str(log), "--format", "text"], cwd=REPO,
                            capture_output=True, text=True, timeout=300, check=False)
    out = " ".join(report.stdout.split())
    assert report.returncode == 0, report.stdout + report.stderr
    head = out.split("Coverage")[0]
    assert "NO PROBLEM FOUND: no rank failed; " + END_NOT_SHOWN in head and "step 3 loss 0.333" in head, out
    assert "take the stacks of every rank" in out, out
