"""One value per tensor for many tensors in a few calls: the numerics watch's fused check of the
gradients (cheap mode) and of the parameters at ``optimizer.step()``. Part of
:mod:`triage.worker.numerics` (imports no torch: it is passed in).

The value of a tensor, fused, is the sum of its absolute values (``torch._foreach_norm(..., 1)``),
summed into float32 (its ``dtype`` argument, torch 2.4 on): a NaN anywhere makes it NaN, an Inf
makes it Inf, and finite values make it finite unless their sum overflows float32 (the caller then
looks at that one tensor exactly; a finite float16 or bfloat16 tensor never overflows that way).
Tensors on one device (the usual model, whatever its number of parameters) take two calls:
``_foreach_norm`` and ``stack``. Tensors on several devices are fused a device at a time; where no
fused kernel runs (a torch or a device without it), and where the caller asks for it (on CPU, where
a fused kernel is a loop over the tensors too and the L1 norm's is several times slower than
``sum``), each tensor is summed on its own (its plain sum, float16 and bfloat16 into float32).
The result is one float32 tensor on the first tensor's device, in the order of the tensors given.
"""

from __future__ import annotations

from typing import Any

ORD = 1                # the L1 norm: NaN and Inf propagate; an exact absmax (inf) is not NaN-safe everywhere


def _one_by_one(torch: Any, tensors: list[Any]) -> Any:
    """One sum per tensor, stacked (on CPU the fastest: a fused kernel there is a loop over the tensors
    too, and the L1 norm's is several times slower than ``sum``)."""
    device, wide = tensors[0].device, (torch.float32, torch.float64)
    return torch.stack([(t.sum() if t.dtype in wide else t.sum(dtype=torch.float32)).to(device, torch.float32)
                        for t in tensors])


def abs_sums(torch: Any, tensors: list[Any], fuse: bool = True) -> Any:
    """One value per tensor, non-finite where the tensor holds a NaN or an Inf (see the module
    docstring), as one float32 tensor on the first one's device; ``tensors`` is not empty and holds
    plain floating-point tensors. ``fuse`` False: one sum per tensor (the caller's choice on CPU)."""
    norm = getattr(torch, "_foreach_norm", None)
    if norm is None or not fuse:
        return _one_by_one(torch, tensors)
    wide = torch.float64 if tensors[0].dtype == torch.float64 else torch.float32     # no narrowing
    try:
        return torch.stack(norm(tensors, ORD, dtype=wide)).float()      # one device: two calls in all
    except (RuntimeError, TypeError, NotImplementedError):
        pass
    groups: dict[Any, list[int]] = {}
    for index, tensor in enumerate(tensors):
        groups.setdefault(tensor.device, []).append(index)
    if len(groups) == 1:
        return _one_by_one(torch, tensors)                 # no fused kernel for them on this device
    out = torch.empty(len(tensors), dtype=torch.float32, device=tensors[0].device)
    for indices in groups.values():
        part = [tensors[i] for i in indices]
        try:
            values = torch.stack(norm(part, ORD, dtype=torch.float32))
        except (RuntimeError, TypeError, NotImplementedError):
            values = _one_by_one(torch, part)
        out[torch.tensor(indices, device=out.device)] = values.to(out.device)
    return out
