"""Session 57 (round 80's NVIDIA/pyxis#12): a launch that failed in Slurm's step set-up on the node, before the
program's exec: a required SPANK plugin's failure ("spank: required plugin spank_pyxis.so: task_init_privileged()
failed with rc=-1", after pyxis's and enroot's own lines) and slurmstepd's "write to unblock task 0 failed: Broken
pipe" (the task had already ended in its set-up) read as a network error of rank 0 (the broken pipe); now the program
never ran, no rank at fault, on the node srun's exit record names (triage.parsing.launch_failure; the node:
triage.load.logs.records)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import report_log
from triage.parsing.launch_failure import LAUNCH_TEXT, launch_failure


@pytest.mark.parametrize("line", [
    "slurmstepd: error: spank: required plugin spank_pyxis.so: task_init_privileged() failed with rc=-1",
    "slurmstepd: error: spank: required plugin libshifter_spank.so: task_init() failed with rc=1",
    "srun: error: spank: required plugin spank_container.so: init_post_opt() failed with rc=-2",
    "[2025-03-02T10:11:12.000] [4242.0] error: write to unblock task 3 failed: Broken pipe",
    "slurmstepd: error: write to unblock task 0 failed",
])
def test_step_setup_failures_are_launch_failures(line: str) -> None:
    said = launch_failure(line)
    assert said is not None and said.startswith(LAUNCH_TEXT), said


@pytest.mark.parametrize("line", [
    # (a callback after the program ran: its exit, no launch failure)
    "slurmstepd: error: spank: required plugin spank_pyxis.so: task_exit() failed with rc=-1",
    "slurmstepd: error: spank: optional plugin nccl_debug.so: init() failed with rc=-1 (ignored)",
])
def test_after_the_program_or_optional_is_none(line: str) -> None:
    assert launch_failure(line) is None


_ENROOT = """\
$ srun -N1 --container-image=nvcr.io#nvidia/pytorch:24.01-py3 python train.py
pyxis: importing docker image: nvcr.io#nvidia/pytorch:24.01-py3
slurmstepd: error: pyxis: child 88121 failed with error code: 1
slurmstepd: error: pyxis: failed to import docker image
slurmstepd: error: pyxis: printing enroot log file:
slurmstepd: error: pyxis:     [ERROR] No space left on device
slurmstepd: error: spank: required plugin spank_pyxis.so: task_init_privileged() failed with rc=-1
slurmstepd: error: spank_task_init_privileged failed
slurmstepd: error: write to unblock task 0 failed: Broken pipe
srun: error: gpu-a17: task 0: Exited with exit code 1
"""


def test_the_step_never_ran_on_the_node_srun_names(tmp_path: Path) -> None:
    _code, got = report_log(_ENROOT, tmp_path)
    verdict = got["verdict"]
    assert verdict["kind"] == "exception" and verdict["culprit_ranks"] == [], verdict
    assert verdict["culprit_host"] == "gpu-a17"
    assert "SPANK plugin spank_pyxis.so" in verdict["summary"] and "slurmd" in verdict["summary"]


def test_two_nodes_in_srun_records_name_none(tmp_path: Path) -> None:
    # (which node's set-up failed, the unprefixed slurmstepd line does not say where srun names two)
    text = _ENROOT.replace("srun: error: gpu-a17: task 0: Exited with exit code 1\n",
                           "srun: error: gpu-a17: task 0: Exited with exit code 1\n"
                           "srun: error: gpu-a18: task 1: Exited with exit code 1\n")
    _code, got = report_log(text, tmp_path)
    verdict = got["verdict"]
    assert verdict["kind"] == "exception" and verdict["culprit_ranks"] == [], verdict
    assert verdict["culprit_host"] is None
