"""Ray's OutOfMemoryError told apart from torch's (fix55d item 3, verl-project/verl-omni#402).

``ray.exceptions.OutOfMemoryError`` (or Ray's memory monitor's words) is Ray's kill of a worker by SIGKILL for the
node's host memory; ``torch.OutOfMemoryError`` / ``CUDA out of memory`` is the GPU allocator's. The driver's
``RayTaskError(OutOfMemoryError)`` names the cause by its class alone: the cause's own line, where the paste has it,
is the failure; alone, it is read as Ray's kill, said with what the input cannot tell."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.paths import REPO
from tests.helpers.report import report_log
from triage.parsing.crashlog import CrashLineKind, parse_crash_line

CASE = REPO / "tests/realworld/cases/verl-project__verl-omni__402/log.txt"

_HEAD = ("Traceback (most recent call last):\n  File \"/app/main.py\", line 40, in main\n"
         "    ray.get(runner.run.remote(config))\n"
         "  File \"/usr/lib/python3.11/site-packages/ray/_private/worker.py\", line 2630, in get\n"
         "    raise value.as_instanceof_cause()\n"
         "ray.exceptions.RayTaskError(OutOfMemoryError): ray::Runner.run() (pid=4411, ip=10.1.2.3, actor_id=aa01, "
         "repr=<main.Runner object at 0x7f00>)\n"
         "  File \"/app/main.py\", line 120, in run\n    trainer.fit()\n"
         "  File \"/app/trainer.py\", line 88, in fit\n    out = step(batch)\n")
_RAY_CAUSE = ("ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.\n"
              "Memory on the node (IP: 10.1.2.3, ID: 5f2a) where the task (actor ID: bb02, name=Rollout.__init__, "
              "pid=5120, memory used=61.20GB) was running was 120.11GB / 125.80GB (0.954793), which exceeds the memory "
              "usage threshold of 0.95. Ray killed this worker (ID: cc03) because it was the most recently scheduled "
              "task.\n")
_TORCH_CAUSE = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
                "79.15 GiB of which 1.02 GiB is free.\n")


@pytest.mark.parametrize("line", [
    ("ray.exceptions.OutOfMemoryError: Memory on the node (IP: 10.1.2.3, ID: 5f2a) where the task (task ID: 01, "
     "name=f, pid=77, memory used=3.1GB) was running was 30.2GB / 31.4GB (0.96), which exceeds the memory usage "
     "threshold of 0.95."),
    "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.",
])
def test_rays_own_out_of_memory_error_is_its_kill_for_host_memory(line: str) -> None:
    found = parse_crash_line(line)
    assert found is not None and found.kind is CrashLineKind.FATAL_SIGNAL and found.signal == "SIGKILL", found
    assert not found.collateral


def test_the_wrapper_by_class_name_is_rays_kill_as_a_retelling() -> None:
    found = parse_crash_line("RayTaskError(OutOfMemoryError): ray::Worker.step() (pid=81, ip=10.0.0.9)")
    assert found is not None and found.signal == "SIGKILL" and found.collateral, found
    assert "does not tell which" in found.text


@pytest.mark.parametrize("line", [
    "ray.exceptions.RayTaskError(OutOfMemoryError): ray::f() (pid=81) torch.OutOfMemoryError: CUDA out of memory.",
    "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB",
])
def test_torchs_out_of_memory_words_stay_the_gpus(line: str) -> None:
    found = parse_crash_line(line)
    assert found is not None and found.kind is CrashLineKind.CUDA_OOM, found


@pytest.mark.parametrize(("text", "subkinds", "words"), [
    # (subkind oom: the summary's own words say memory ran out, triage.analysis.oom; a kill by SIGKILL, said so)
    (_HEAD + _RAY_CAUSE, ("sigkill", "oom"), "memory"),
    (_HEAD, ("sigkill", "oom"), "does not tell which"),                 # the cause cut out of the paste
])
def test_rays_kill_is_a_crash_by_sigkill(text: str, subkinds: tuple[str, ...], words: str, tmp_path: Path) -> None:
    _, out = report_log(text, tmp_path)
    verdict = out["verdict"]
    assert verdict["kind"] == "crash" and verdict["subkind"] in subkinds, verdict
    assert words in verdict["summary"] and "SIGKILL" in verdict["summary"], verdict


def test_torchs_cause_after_the_wrapper_is_the_failure(tmp_path: Path) -> None:
    _, out = report_log(_HEAD + _TORCH_CAUSE, tmp_path)
    verdict = out["verdict"]
    assert "SIGKILL" not in verdict["summary"] and "CUDA out of memory" in verdict["summary"], verdict


def test_verl_omnis_taskrunner(tmp_path: Path) -> None:
    _, out = report_log(CASE.read_text(encoding="utf-8"), tmp_path)
    assert out["verdict"]["kind"] == "crash" and "SIGKILL" in out["verdict"]["summary"], out["verdict"]
