"""Ray's own OutOfMemoryError told apart from torch's (fix55d item 3, verl-project/verl-omni#402).

Ray's ``ray.exceptions.OutOfMemoryError`` (python/ray/exceptions.py: "Indicates that the node is running out of memory
and is close to full ... tasks or actors are being evicted to free up memory") is what ``ray.get`` raises for a task
whose worker Ray's memory monitor killed (SIGKILL) for the node's host memory: "Task was killed due to the node running
low on memory. Memory on the node (IP: ..., ID: ...) where the task (...) was running was 120.11GB / 125.80GB
(0.954793), which exceeds the memory usage threshold of 0.95. Ray killed this worker ...". torch's
``torch.OutOfMemoryError`` (``torch.cuda.OutOfMemoryError``) is a GPU allocator's: "CUDA out of memory. Tried to
allocate ...".

An exception raised inside a task reaches the driver as ``RayTaskError(Cause)``, the cause named by its class name
alone (``RayTaskError.as_instanceof_cause``): ``ray.exceptions.RayTaskError(OutOfMemoryError): ray::TaskRunner.run()
(pid=..., ip=...)`` is either. The module path (``ray.exceptions.``) or the memory monitor's words tell Ray's; the
allocator's words (``CUDA out of memory``, ``Tried to allocate``, ``torch.``) tell torch's. The wrapper alone, its
cause's message cut out of the paste, is read as Ray's kill (the error Ray's own tasks raise for memory), said with
what the input cannot tell, and as the wrapper of the cause it retells (collateral): the cause's own line, where the
paste has it (torch's CUDA out-of-memory, Ray's monitor's), is the failure."""

from __future__ import annotations

from triage.lazy_regex import lazy_regex

_RAY_OOM = lazy_regex(r"\bray\.exceptions\.OutOfMemoryError\b|"
                      r"Task was killed due to the node running low on memory|"
                      r"Memory on the node \(IP: [^)]{1,80}\) where the task .{1,400}? exceeds the memory usage "
                      r"threshold")
_WRAPPED = lazy_regex(r"\bRayTaskError\(OutOfMemoryError\)")
# torch's (or a device plugin's) allocator's own words: its out-of-memory, not Ray's
_ALLOCATOR = lazy_regex(r"\b(?:CUDA|HIP|NPU|XPU|MPS) out of memory|Tried to allocate|"
                        r"\btorch\.(?:cuda\.)?OutOfMemoryError")
KILLED = "a Ray worker was killed by SIGKILL (Ray's memory monitor: its node ran low on host memory)"
WRAPPED_NOTE = (", by Ray's OutOfMemoryError named by class alone (torch's CUDA one has the same name; this input "
                "does not tell which)")


def ray_oom(text: str) -> str | None:
    """How a line is Ray's out-of-memory error (above): "ray" (its module path or its memory monitor's words),
    "wrapped" (``RayTaskError(OutOfMemoryError)`` alone), or None (torch's, or neither)."""
    if "OutOfMemoryError" not in text or _ALLOCATOR.search(text) is not None:
        return None
    if _RAY_OOM.search(text) is not None:
        return "ray"
    return "wrapped" if _WRAPPED.search(text) is not None else None
