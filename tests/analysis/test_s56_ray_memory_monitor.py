"""Session 56 (rev55 F5): Ray's memory monitor's kill (the task's "Task was killed due to the node running low on
memory. Memory on the node (IP: ...) where the task (... pid=N ...) was running was ...", the raylet's "N Workers
(tasks / actors) killed due to memory pressure (OOM) ... at node (ID: ..., IP: ...)") was the failure even where Ray
retried the task and the run went on to its end, and where it was the failure it had no subkind and the kernel OOM
killer's advice (dmesg). Now a kill the run went on past is a note (triage.parsing.frameworks.ray_kills_gone_past),
and a kill that is the failure is an oom with Ray's advice (RAY_memory_usage_threshold, ray logs raylet.out, fewer
tasks per node) (triage.analysis.oom, triage.analysis.advice)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import report_log
from triage.parsing.frameworks import RAY_RETRIED, ray_kills_gone_past

CASES = Path(__file__).resolve().parent.parent / "realworld" / "cases"

RAYLET = ("(raylet) [2025-04-02 08:11:00,000 E 77 77] (raylet) node_manager.cc:3219: 2 Workers (tasks / actors) killed "
          "due to memory pressure (OOM), 0 Workers crashed due to other reasons at node (ID: 4be, IP: 10.3.0.8) over the "
          "last time period. To see more information about the Workers killed on this node, use `ray logs raylet.out "
          "-ip 10.3.0.8`\n")
TASK = ("(tokenize pid=9031) Task was killed due to the node running low on memory. Memory on the node (IP: 10.3.0.8, "
        "ID: 4be) where the task (task ID: 0a, name=tokenize, pid=9031, memory used=30.4GB) was running was 241.9GB / "
        "251.5GB (0.961828), which exceeds the memory usage threshold of 0.95. Ray killed this worker (ID: 77) because "
        "it was the most recently scheduled task; to see more information about memory usage on this node, use `ray "
        "logs raylet.out -ip 10.3.0.8`.\n")
WENT_ON = "(tokenize pid=9177) tokenizing part 12 again\nstep 100/400 loss 1.92\nstep 200/400 loss 1.71\nDone training.\n"


@pytest.mark.parametrize("kill", [RAYLET + TASK, TASK, RAYLET])
def test_a_kill_the_run_went_on_past_is_a_note(kill: str, tmp_path: Path) -> None:
    text = "step 0/400 loss 2.41\n" + kill + WENT_ON
    assert ray_kills_gone_past(text)
    _code, got = report_log(text, tmp_path)
    assert got["verdict"]["kind"] == "no_problem_found", got["verdict"]
    assert RAY_RETRIED in got["verdict"]["summary"]


@pytest.mark.parametrize("kill", [RAYLET + TASK, TASK, RAYLET])
def test_a_kill_that_ends_the_input_is_an_oom_with_rays_advice(kill: str, tmp_path: Path) -> None:
    text = "step 0/400 loss 2.41\n" + kill
    assert not ray_kills_gone_past(text)
    _code, got = report_log(text, tmp_path)
    assert got["verdict"]["kind"] == "crash" and got["verdict"]["subkind"] == "oom", got["verdict"]
    steps = " ".join(got["next_steps"])
    assert "RAY_memory_usage_threshold" in steps and "ray logs raylet.out" in steps
    assert "dmesg" not in steps


def test_the_drivers_error_after_the_others_progress_stays_the_failure(tmp_path: Path) -> None:
    text = (TASK + "(train pid=12) step 300 loss 1.5\nTraceback (most recent call last):\n  File \"run.py\", line 9, "
            "in <module>\n    ray.get(refs)\nray.exceptions.OutOfMemoryError: Task was killed due to the node running "
            "low on memory.\n")
    _code, got = report_log(text, tmp_path)
    assert got["verdict"]["kind"] == "crash" and got["verdict"]["subkind"] == "oom", got["verdict"]
    assert "RAY_memory_usage_threshold" in " ".join(got["next_steps"])


@pytest.mark.parametrize("case", ["flwrlabs__flower__2157", "WM-PO__WMPO__3", "real-stanford__flingbot__11"])
def test_real_ray_kills_get_rays_advice(case: str, tmp_path: Path) -> None:
    # flwrlabs/flower#2157, WM-PO/WMPO#3 (the raylet's count), real-stanford/flingbot#11 (the driver's OutOfMemoryError)
    _code, got = report_log((CASES / case / "log.txt").read_text(), tmp_path)
    assert got["verdict"]["kind"] == "crash" and got["verdict"]["subkind"] == "oom"
    steps = " ".join(got["next_steps"])
    assert "RAY_memory_usage_threshold" in steps and "usually the kernel OOM killer" not in steps
