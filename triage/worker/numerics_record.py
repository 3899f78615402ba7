"""What the numerics watch writes: the first non-finite value of a rank, as plain JSON.

Helpers of :mod:`triage.worker.numerics` that look at tensors (torch is passed in, never imported
here: they run only once the job imported torch) and build the ``numerics.json`` record. The
schema and file name are the same as ``triage.schemas.NUMERICS_SCHEMA`` and
``triage.layout.RankPaths.NUMERICS`` (the in-worker agent imports nothing else of triage: a test
holds them equal).
"""

from __future__ import annotations

import math
import time
from typing import Any

from triage.worker import flight

SCHEMA = "triage.numerics/1"
FILE = "numerics.json"
MAX_TENSORS = 32            # tensors looked at in one output (nested tuples, lists, dicts)

# where a value was seen, in the order a training step goes through them
FORWARD = "forward_output"          # a module's output (the loss, in cheap mode: the root's output)
BACKWARD = "backward_gradient"      # the gradient of a module's output, as backward reaches it
LOCAL_GRAD = "local_gradient"       # a parameter's gradient as this rank's backward made it
REDUCED_GRAD = "gradient_before_step"  # a parameter's gradient at optimizer.step() (after DDP's all_reduce)
PARAM = "parameter_after_step"      # a parameter after optimizer.step()


def plain(tensor: Any, torch: Any) -> Any:
    """The tensor's values as a plain strided tensor, detached, or None: a ``DTensor`` (FSDP2, tensor
    parallel) gives its local shard, so that no check ever runs a collective; other subclasses (fake
    tensors while tracing), sparse and empty tensors, and integer tensors give None."""
    data = tensor.detach()
    if type(data) is not torch.Tensor:
        to_local = getattr(data, "to_local", None) if type(data).__name__ == "DTensor" else None
        data = to_local() if to_local is not None else None
        if data is None or type(data) is not torch.Tensor:
            return None
    if data.layout != torch.strided or not data.is_floating_point() or data.numel() == 0:
        return None
    return data


def tensors(value: Any, torch: Any, depth: int = 0) -> list[tuple[Any, Any]]:
    """The floating-point tensors in an output (a tensor, nested tuples/lists/dicts), at most
    MAX_TENSORS, each as (the tensor, its values as :func:`plain` gives them)."""
    if isinstance(value, torch.Tensor):
        data = plain(value, torch)
        return [] if data is None else [(value, data)]
    if depth > 3:
        return []
    items: Any = value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else ()
    out: list[tuple[Any, Any]] = []
    for item in items:
        out.extend(tensors(item, torch, depth + 1))
        if len(out) >= MAX_TENSORS:
            return out[:MAX_TENSORS]
    return out


def absmax(tensor: Any) -> float:
    """The largest absolute value of a plain tensor (NaN if any value is NaN, inf if any is infinite)."""
    return float(tensor.abs().amax())


def describe(tensor: Any, torch: Any) -> dict[str, Any]:
    """dtype, shape and the counts of NaN and Inf of a non-finite tensor (computed once, at the hit)."""
    data = tensor.detach()
    return {"dtype": str(data.dtype).replace("torch.", ""), "shape": list(data.shape),
            "nan": int(torch.isnan(data).sum()), "inf": int(torch.isinf(data).sum()),
            "numel": int(data.numel())}


def describe_gone(dtype: Any, shape: tuple[int, ...]) -> dict[str, Any]:
    """A gradient whose sum was non-finite and which was gone when the sum was read (``zero_grad()``
    after a step the grad scaler skipped): its dtype and shape; the counts are not recorded (null)."""
    numel = 1
    for size in shape:
        numel *= size
    return {"dtype": str(dtype).replace("torch.", ""), "shape": list(shape), "nan": None, "inf": None,
            "numel": numel}


def any_nonfinite(value: Any, torch: Any) -> bool | None:
    """True if a floating tensor in ``value`` has a NaN or Inf; None when it holds no such tensor."""
    found = tensors(value, torch)
    if not found:
        return None
    return any(not math.isfinite(absmax(data)) for _, data in found)


def last_collective() -> dict[str, Any] | None:
    """The last collective the default process group started (Flight Recorder), when there is one."""
    try:
        doc = flight.status()
        if doc is None:
            return None
        progress = flight.progress(doc)
        if not progress:
            return None
        pg = "0" if "0" in progress else min(progress)
        seq = progress[pg]["enqueued"]     # DDP waited for it before step(); "completed" can lag on gloo
        if seq <= 0:
            return {"pg": pg, "seq": None, "op": None}
        entries = flight.in_flight_entries([(pg, seq)], only_active=False)   # it may have completed
        op = entries[0].get("profiling_name") if entries else None
        if isinstance(op, str) and ":" in op:
            op = op.split(":", 1)[1]
        return {"pg": pg, "seq": seq, "op": op}
    except Exception:  # noqa: BLE001 - optional: the record is complete without it
        return None


def hit(where: str, module: str, module_type: str | None, value: dict[str, Any], step: int,
        iteration: int, input_nonfinite: bool | None, history: list[dict[str, Any]],
        when: float | None = None, collective: bool = True) -> dict[str, Any]:
    """One non-finite value (``value``: :func:`describe`'s or :func:`describe_gone`'s) as it goes into
    numerics.json; ``collective`` False: read later than it was made (on a GPU), when the last
    collective started is no longer the one before it, so none is recorded."""
    return {"where": where, "module": module, "module_type": module_type, "step": step,
            "iteration": iteration, "time": when if when is not None else time.time(),
            "input_nonfinite": input_nonfinite, **value,
            "collective": last_collective() if collective else None, "history": list(history)}
