"""Session 56 (fix56d item 8): torch's CUDA out-of-memory inside a Ray worker, retold by the driver's
``ray.exceptions.RayTaskError(OutOfMemoryError): ray::Runner.run() (pid=4411, ip=10.1.2.3, ...)`` and the cause's own
``torch.OutOfMemoryError: CUDA out of memory`` after its frames, is read as torch's CUDA OOM is (an exception, subkind
oom), of no rank, said in the worker Ray's line names: its task or actor method, its pid and its node (was: the
exception of no rank on host 10.1.2.3, which worker not said)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import report_log

_WRAPPER = ("ray.exceptions.RayTaskError({cls}): ray::{call}() (pid=4411, ip=10.1.2.3, actor_id=aa01, "
            "repr=<main.Runner object at 0x7f00>)\n  File \"/app/main.py\", line 120, in run\n    trainer.fit()\n"
            "  File \"/app/trainer.py\", line 88, in fit\n    out = step(batch)\n")
_DRIVER = ("Traceback (most recent call last):\n  File \"/app/main.py\", line 40, in main\n"
           "    ray.get(runner.run.remote(config))\n"
           "  File \"/usr/lib/python3.11/site-packages/ray/_private/worker.py\", line 2630, in get\n"
           "    raise value.as_instanceof_cause()\n")
_TORCH_OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
              "79.15 GiB of which 1.02 GiB is free.\n")


@pytest.mark.parametrize("driver", ["", _DRIVER])
@pytest.mark.parametrize("call", ["Runner.run", "RolloutWorker.generate_sequences"])
def test_torchs_cuda_oom_in_a_ray_worker_is_a_gpu_oom_of_that_worker(driver: str, call: str, tmp_path: Path) -> None:
    code, out = report_log(driver + _WRAPPER.format(cls="OutOfMemoryError", call=call) + _TORCH_OOM, tmp_path)
    verdict = out["verdict"]
    assert code == 1 and verdict["kind"] == "exception" and verdict["subkind"] == "oom", verdict
    assert verdict["culprit_ranks"] == [] and verdict["culprit_host"] == "10.1.2.3"
    assert "CUDA out of memory" in verdict["summary"] and "SIGKILL" not in verdict["summary"]
    assert f"in Ray's worker running {call}(), pid 4411 on 10.1.2.3" in verdict["summary"], verdict


def test_another_exception_in_a_ray_worker_names_the_worker_too(tmp_path: Path) -> None:
    text = _WRAPPER.format(cls="ValueError", call="f") + "ValueError: bad shard 7\n"
    _code, out = report_log(text, tmp_path)
    assert "ValueError: bad shard 7" in out["verdict"]["summary"]
    assert "in Ray's worker running f(), pid 4411 on 10.1.2.3" in out["verdict"]["summary"], out["verdict"]


def test_a_rank_prefixed_cuda_oom_is_read_the_same_way(tmp_path: Path) -> None:
    _code, out = report_log("[rank1]: " + _TORCH_OOM, tmp_path)
    assert (out["verdict"]["kind"], out["verdict"]["subkind"]) == ("exception", "oom")
