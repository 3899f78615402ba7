"""Waiting on the GPU: a rank whose main thread sits in a CUDA synchronize or an NCCL wait.

Such a rank may burn a whole core (CUDA spin-waits) with the same stack: by CPU alone it would
look busy, and triage would wait ``--stop-timeout`` for it. It is its own state instead, judged
by what the GPU does (NVML, read here in the agent, never in the rank):

- the GPU is idle, or its use cannot be read (no NVML, no GPU, another process's view): the rank
  waits for work that will not finish: a hang, stopped like a blocked rank;
- the GPU runs (utilization at least ``triage.model.gpu.GPU_BUSY_SHARE``): a long kernel may be legitimate: the rank
  is watched like a busy one (checked every --hang-timeout, stopped at --stop-timeout).

The stack forms recognised (innermost frames of the main thread, up to the first frame of the
user's own code): Python ``synchronize`` in a ``cuda`` or ``accelerator`` package
(``torch.cuda.synchronize``, ``Event.synchronize``, ``Stream.synchronize``); ``wait``,
``wait_tensor`` or ``_wait_for_pending_works`` in ``torch/distributed``; and, in native frames when
the sample has them, the CUDA/NCCL calls behind ``.item()``, ``.cpu()`` and ``work.wait()``.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Sequence
from typing import Any

from triage.parsing.stacks import Frame, ThreadStack

_LIBRARY_MARKERS = ("/site-packages/", "/dist-packages/", "/lib/python3", "<frozen ")
_NATIVE_WAITS = (
    ("cudaDeviceSynchronize", "torch.cuda.synchronize"), ("cuCtxSynchronize", "torch.cuda.synchronize"),
    ("cudaStreamSynchronize", "a CUDA stream synchronize"), ("cuStreamSynchronize", "a CUDA stream synchronize"),
    ("cudaEventSynchronize", "Event.synchronize"), ("cuEventSynchronize", "Event.synchronize"),
    ("_local_scalar_dense", ".item() on a CUDA tensor"), ("cudaMemcpy", "a copy from the GPU (.cpu(), .item())"),
    ("WorkNCCL::wait", "NCCL's work.wait()"), ("WorkNCCL::synchronize", "NCCL's work.wait()"),
)
_PY_WAITS = {"wait": "NCCL's work.wait()", "wait_tensor": "NCCL's wait_tensor",
             "_wait_for_pending_works": "_wait_for_pending_works"}
_SCAN_FRAMES = 16


def _parts(filename: str) -> list[str]:
    return filename.replace("\\", "/").split("/")


def _python_wait(frame: Frame) -> str | None:
    parts = _parts(frame.filename)
    if frame.function == "synchronize" and ("cuda" in parts or "accelerator" in parts):
        if parts[-1] == "streams.py":
            return "Event.synchronize / Stream.synchronize"
        return "torch.cuda.synchronize"
    if frame.function in _PY_WAITS and "torch/distributed/" in frame.filename.replace("\\", "/"):
        return _PY_WAITS[frame.function]
    return None


def _native_wait(frame: Frame) -> str | None:
    for marker, name in _NATIVE_WAITS:
        if marker in frame.function:
            return name
    return None


def gpu_wait(threads: Sequence[ThreadStack] | None) -> str | None:
    """``torch.cuda.synchronize (train.py:42)``-like text when the main thread waits on the GPU, else None."""
    mains = [t for t in threads or () if t.is_main]
    main = mains[0] if mains else None
    if main is None:
        return None
    for index, frame in enumerate(main.frames[:_SCAN_FRAMES]):
        found = _native_wait(frame) if frame.module else _python_wait(frame)
        if found is not None:
            caller = next((f for f in main.frames[index + 1:] if not f.module and not _library(f)), None)
            where = f" ({caller.function} at {caller.filename.rsplit('/', 1)[-1]}:{caller.line})" if caller else ""
            return found + where
        if not frame.module and not _library(frame):
            return None           # the user's own code runs above any wait
    return None


def _library(frame: Frame) -> bool:
    return any(marker in frame.filename for marker in _LIBRARY_MARKERS)


def gpu_utilization(pid: int) -> float | None:
    """The utilization (0..1) of the busiest GPU that ``pid`` uses, from NVML (nvidia-ml-py), read
    in the agent; None when NVML is missing, finds no GPU, or does not list the process."""
    try:    # optional (nvidia-ml-py), loaded only when a rank waits on the GPU
        pynvml: Any = importlib.import_module("pynvml")
    except ImportError:
        return None
    try:
        pynvml.nvmlInit()
    except Exception:  # noqa: BLE001 - no driver, no GPU: unknown
        return None
    try:
        return _busiest(pynvml, pid)
    except Exception:  # noqa: BLE001
        return None
    finally:
        with contextlib.suppress(Exception):
            pynvml.nvmlShutdown()


def _busiest(nvml: Any, pid: int) -> float | None:
    best: float | None = None
    for index in range(int(nvml.nvmlDeviceGetCount())):
        handle = nvml.nvmlDeviceGetHandleByIndex(index)
        procs = nvml.nvmlDeviceGetComputeRunningProcesses(handle)
        if not any(getattr(p, "pid", None) == pid for p in procs):
            continue
        share = float(nvml.nvmlDeviceGetUtilizationRates(handle).gpu) / 100.0
        best = share if best is None else max(best, share)
    return best
