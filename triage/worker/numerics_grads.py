"""The numerics watch's gradient checks: each parameter's local gradient as backward makes it (before
DDP's all_reduce), and the gradients and parameters at ``optimizer.step()``. Part of
:mod:`triage.worker.numerics` (imports no torch).

The gradient hook runs once per parameter per backward, on the critical path, so it does the least
it can: in cheap mode one pass over the gradient (its sum, in float32: a NaN or Inf anywhere makes
it non-finite) written into the next slot of one preallocated buffer (:class:`Slots`; no tensor is
made per gradient); the buffer is read once per iteration (one sum, one sync). The name, dtype and
shape are looked up only when a sum is non-finite."""

from __future__ import annotations

import math
import time
from typing import Any

from triage.worker import numerics_record as rec
from triage.worker.numerics_names import Names

FIRST_SLOTS = 64
MAX_DIMS = 8


class Slots:
    """One float32 buffer on the gradients' device, a 0-d view per slot, and for each slot used in
    this iteration the parameter (its id) and the time its gradient was summed."""

    def __init__(self) -> None:
        self.buffer: Any = None
        self.views: list[Any] = []
        self.device: Any = None
        self.used: list[tuple[int, float]] = []
        self.wanted = FIRST_SLOTS          # the size the next buffer gets (grown when an iteration ran out)
        self.dims = [tuple(range(n)) for n in range(MAX_DIMS + 1)]

    def add(self, torch: Any, grad: Any, key: int) -> bool:
        """The gradient's sum into the next slot; False when it takes none (float64, a 0-d or >8-d tensor,
        another device than this iteration's, the buffer full): the caller keeps the sum itself."""
        n = len(self.used)
        ndim = grad.dim()
        if grad.dtype is torch.float64 or not 0 < ndim <= MAX_DIMS:
            return False                   # float64 summed in float32 could overflow: a false alarm
        if n == 0 and (self.buffer is None or len(self.views) < self.wanted or grad.device != self.device):
            self.buffer = torch.empty(self.wanted, dtype=torch.float32, device=grad.device)
            self.views = list(self.buffer.unbind())
            self.device = self.buffer.device
        elif n >= len(self.views) or grad.device != self.device:
            self.wanted = max(self.wanted, 2 * len(self.views))
            return False
        torch.sum(grad, self.dims[ndim], dtype=torch.float32, out=self.views[n])
        self.used.append((key, time.time()))
        return True

    def take(self) -> tuple[Any, list[tuple[int, float]]]:
        """This iteration's sums (a view of the buffer) and their parameters; the slots are free again."""
        used, self.used = self.used, []
        return (self.buffer[:len(used)] if used else None), used


class GradChecks(Names):
    """The watch's gradient and parameter checks (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self.torch: Any = None
        self.tensor_type: Any = None                        # torch.Tensor
        self.compiling: Any = None                          # torch.compiler.is_compiling, when there is one
        self.full = False
        self.local = False             # cheap mode after the first step: local gradients only (no module hooks)
        self.closed = False            # optimizer.step() closed the iteration (local mode: the next gradient opens one)
        self.fired: set[int] = set()   # parameters whose gradient hook ran in this iteration
        self.slots = Slots()
        # (id of the parameter, absmax or sum tensor, time): full mode's gradients, and cheap mode's without a slot
        self.pending: list[tuple[int, Any, float]] = []

    def capturing(self, data: Any) -> bool:
        """A CUDA graph is being captured on the current stream: no read (a sync would break the capture)."""
        if not data.is_cuda:
            return False
        cuda = getattr(self.torch, "cuda", None)
        check = getattr(cuda, "is_current_stream_capturing", None)
        return bool(check is None or check())

    def new_iteration(self) -> None:
        """A training iteration begins (the watch's)."""

    def found(self, where: str, module: str, kind: str | None, value: dict[str, Any], input_nonfinite: bool | None,
              step: int | None = None, when: float | None = None, grad_only: bool = False) -> None:
        """A non-finite value (the watch's)."""

    def skip(self, module: Any, exc: BaseException) -> None:
        """A hook that failed (the watch's: named in the record)."""

    @property
    def step(self) -> int:
        """optimizer.step() calls completed (the watch's)."""
        return 0

    def on_grad(self, param: Any) -> None:
        """A parameter's gradient as this rank's backward made it (before DDP's all_reduce): its absmax
        (full mode) or its sum (cheap mode), read once per iteration (:meth:`flush_grads`)."""
        try:
            grad = param.grad
            if type(grad) is not self.tensor_type or grad.is_sparse or self.compiling():
                return                # None, or a DTensor's (FSDP2's) made by reduce_scatter: not this rank's own
            key = id(param)
            if self.local and (self.closed or key in self.fired):
                self.new_iteration()          # local mode: a backward after step(), or a second one without
            self.fired.add(key)
            if grad.is_cuda and self.capturing(grad):
                return
            if grad.requires_grad:
                grad = grad.detach()          # backward(create_graph=True): no graph of ours
            if self.full:
                self.pending.append((key, grad.abs().amax(), time.time()))
            elif not self.slots.add(self.torch, grad, key):
                self.pending.append((key, grad.sum(dtype=self.torch.float32 if grad.dtype is not self.torch.float64
                                                   else None), time.time()))
        except Exception as exc:  # noqa: BLE001
            self.skip(None, exc)

    def flush_grads(self) -> None:
        """Read this backward's local gradient values (one sync each for the slots and for the others),
        in the order backward made them."""
        values, used = self.slots.take()
        if values is not None:
            self.check_values(values, used)
        pending, self.pending = self.pending, []
        if not pending:
            return
        torch = self.torch
        try:
            values = torch.stack([p[1] for p in pending])                   # one device, one dtype: the usual
        except RuntimeError:
            device = pending[0][1].device
            values = torch.stack([p[1].float().to(device) for p in pending])
        self.check_values(values, [(key, when) for key, _, when in pending])

    def check_values(self, values: Any, used: list[tuple[int, float]]) -> None:
        """One read of the sum of ``values``; at a non-finite one, the first such gradient is the hit."""
        torch = self.torch
        if self.capturing(values) or math.isfinite(float(values.sum())):
            return
        bad = torch.nonzero(~torch.isfinite(values))
        if bad.numel() == 0:
            return                            # finite values whose sum overflowed
        key, when = used[int(bad[0][0])]
        entry = self.params.get(key)
        param = entry[0]() if entry is not None else None
        if entry is None or param is None:
            return
        grad = param.grad
        data = rec.plain(grad, torch) if grad is not None else None
        value = rec.describe(data, torch) if data is not None and data.shape == param.shape else None
        if value is None or not (value["nan"] or value["inf"]):
            value = rec.describe_gone(param.dtype, tuple(param.shape))  # zero_grad() came first (a skipped step)
        self.found(rec.LOCAL_GRAD, entry[1], "parameter", value, None, when=when, grad_only=True)

    def check_params(self, optimizer: Any, where: str, shifted: bool = False, skip: set[int] | None = None) -> None:
        """The gradients at step() (after DDP's all_reduce; in local mode only those whose local hook did
        not run) or the parameters after it: one pass per tensor, one sync (a NaN or Inf anywhere makes
        the sum non-finite; a sum that only overflowed is checked exactly below and is no hit)."""
        torch = self.torch
        known = self.optimizer_params.get(id(optimizer))
        if skip is not None and known is not None and known <= skip:
            return                            # every gradient was checked by its hook
        pairs = []
        for group in optimizer.param_groups:
            for param in group["params"]:
                if skip is not None and id(param) in skip:
                    continue
                tensor = param.grad if where == rec.REDUCED_GRAD else param
                data = rec.plain(tensor, torch) if tensor is not None else None
                if data is not None:
                    pairs.append((param, data))
        if not pairs:
            return
        device = pairs[0][1].device
        total = torch.stack([t.sum(dtype=torch.float32).to(device) for _, t in pairs]).sum()
        if self.capturing(total) or math.isfinite(float(total)):
            return
        bad = next((pair for pair in pairs if not math.isfinite(rec.absmax(pair[1]))), None)
        if bad is None:
            return
        param, data = bad
        step = self.step - 1 if shifted else self.step       # the step that made it
        self.found(where, self.param_name(param), "parameter", rec.describe(data, torch), None, step=step,
                   grad_only=where == rec.REDUCED_GRAD)
