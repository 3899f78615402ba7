"""The numerics watch's gradient checks: each parameter's local gradient as backward makes it (before
DDP's all_reduce), and the gradients and parameters at ``optimizer.step()``. Part of
:mod:`triage.worker.numerics` (imports no torch).

The gradient hook runs once per parameter per backward, on the critical path, so it does the least
it can: in cheap mode one pass over the gradient (its sum: a NaN or Inf anywhere makes it
non-finite). On CPU the sum is read in the hook itself (nothing to wait for: no list, no stack, no
queued closure); on a GPU the sums are stacked once per iteration and read through
:mod:`triage.worker.numerics_defer` (when the copy made for them has arrived, never by waiting for
it), and so is a CPU sum made while an earlier read is still queued (the reads stay in order). The
name, dtype and shape are looked up only when a sum is non-finite."""

from __future__ import annotations

import math
import time
from math import isfinite
from typing import Any

from triage.worker import numerics_record as rec
from triage.worker.numerics_defer import Reads
from triage.worker.numerics_fused import abs_sums
from triage.worker.numerics_names import Names

FEW = 32        # up to this many sums on CPU: read one by one (.item()), cheaper than stacking them first


class GradChecks(Names):
    """The watch's gradient and parameter checks (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self.torch: Any = None
        self.tensor_type: Any = None                        # torch.Tensor
        self.compiling: Any = None                          # torch.compiler.is_compiling, when there is one
        self.wide: tuple[Any, ...] = ()                     # float32, float64
        self.full = False
        self.local = False             # cheap mode after the first step: local gradients only (no module hooks)
        self.closed = False            # optimizer.step() closed the iteration (local mode: the next gradient opens one)
        self.fired: set[int] = set()   # parameters whose gradient hook ran in this iteration
        # (id of the parameter, absmax or sum tensor, time) of the gradients this backward made
        self.pending: list[tuple[int, Any, float]] = []
        self.reads = Reads()           # check results not yet looked at (a GPU's, until they arrive)
        self.iteration = -1
        self.fuse: Any = None          # the autograd engine's queue_callback: cheap mode's fused check
        self.ready: list[tuple[Any, float]] = []   # (parameter, time) of this backward's gradients, fused path
        self.armed = False             # the fused check is queued for this backward's end
        self.views = False             # a gradient was a view of a flat buffer: every gradient in its hook
        self.fuse_on_cpu = False       # tests: the fused check for CPU gradients too (in their hooks otherwise)

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
              step: int | None = None, when: float | None = None, grad_only: bool = False,
              iteration: int | None = None, late: bool = False) -> None:
        """A non-finite value (the watch's)."""

    def skip(self, module: Any, exc: BaseException) -> None:
        """A hook that failed (the watch's: named in the record)."""

    @property
    def step(self) -> int:
        """optimizer.step() calls completed (the watch's)."""
        return 0

    def on_grad(self, param: Any) -> None:
        """A parameter's gradient as this rank's backward made it (before DDP's all_reduce): its absmax
        (full mode) or its sum (cheap mode). A CPU sum is read at once (nothing to wait for); others
        are read once per iteration (:meth:`flush_grads`)."""
        try:
            grad = param.grad
            if type(grad) is not self.tensor_type or grad.is_sparse or self.compiling():
                return                # None, or a DTensor's (FSDP2's) made by reduce_scatter: not this rank's own
            key, fired = id(param), self.fired
            if self.local and (self.closed or key in fired):
                self.new_iteration()          # local mode: a backward after step(), or a second one without
            fired.add(key)
            cuda = grad.is_cuda
            if (cuda or self.fuse_on_cpu) and self.fusing(grad) and (self.armed or self.arm()):
                self.ready.append((param, time.time()))         # checked with the others at the backward's end
                return
            if grad._base is not None:
                self.views = True             # a view of a flat buffer (DDP's bucket): reduced before the end
            if cuda and self.capturing(grad):
                return
            if grad.requires_grad:
                grad = grad.detach()          # backward(create_graph=True): no graph of ours
            if self.full:
                value = grad.abs().amax()
            elif grad.dtype in self.wide:
                value = grad.sum()
            else:                                # float16/bfloat16 summed in float32: no overflow of its own
                value = grad.sum(dtype=self.torch.float32)
            if cuda or self.reads.delay or self.reads.queue:
                self.pending.append((key, value, time.time()))
            elif not isfinite(value.item()):  # CPU, nothing pending before it: read now, no list, no stack
                self.check_values([value.item()], [(key, time.time())], self.iteration, self.step)
        except Exception as exc:  # noqa: BLE001
            self.skip(None, exc)

    def fusing(self, grad: Any) -> bool:
        """Cheap mode after the first step: a CUDA gradient that is no view goes to the fused check."""
        return bool(self.local and not self.full and self.fuse is not None and (grad.is_cuda or self.fuse_on_cpu)
                    and grad._base is None and not self.views)

    def arm(self) -> bool:
        """Queue :meth:`backward_done` at the end of this backward; if the engine refuses, the fused
        check is off for good (every gradient in its hook)."""
        try:
            self.fuse(self.backward_done)
        except Exception:  # noqa: BLE001 - e.g. no backward running on this thread
            self.fuse = None
            return False
        self.armed = True
        return True

    def backward_done(self) -> None:
        """The end of a backward (the autograd engine's callback, queued by the first gradient hook that
        ran in it in local mode): the fused check of its gradients (:meth:`flush_ready`)."""
        try:
            self.flush_ready()
        except Exception as exc:  # noqa: BLE001
            self.skip(None, exc)

    def flush_ready(self) -> None:
        """The gradients the hooks of this backward saw, checked with a few fused calls
        (:func:`~triage.worker.numerics_fused.abs_sums`) and read as :meth:`flush_grads`' are. It runs
        before DDP's own end-of-backward callback (queued at its last bucket, after ours), which copies
        the all_reduced values into the gradients: they are still this rank's. A gradient that has
        become a view of a flat buffer (DDP's ``gradient_as_bucket_view``) may be reduced already: it
        is left out, and from then on every gradient is checked in its hook."""
        ready, self.ready = self.ready, []
        self.armed = False
        if not ready:
            return
        torch = self.torch
        grads = [param.grad for param, _ in ready]
        if grads[0] is not None and self.capturing(grads[0]):
            return                            # a CUDA graph is being captured: no kernel of ours in it
        if any(grad is None or grad._base is not None for grad in grads):
            self.views = True
            kept = [(item, grad) for item, grad in zip(ready, grads) if grad is not None and grad._base is None]
            ready, grads = [item for item, _ in kept], [grad for _, grad in kept]
            if not ready:
                return
        with torch.no_grad():                 # backward(create_graph=True) runs its callbacks with grad mode on
            values = abs_sums(torch, grads)
        if self.capturing(values):
            return
        used, iteration, step = [(id(param), when) for param, when in ready], self.iteration, self.step
        self.reads.submit(torch, values, lambda host, late: self.check_values(host, used, iteration, step, late))

    def flush_grads(self) -> None:
        """Queue this backward's local gradient values for one read, in the order backward made them."""
        if self.ready:
            self.flush_ready()                # the backward raised before its end: checked now
        pending, self.pending = self.pending, []
        if not pending:
            return
        torch = self.torch
        used, iteration, step = [(key, when) for key, _, when in pending], self.iteration, self.step
        if len(pending) <= FEW and pending[0][1].device.type == "cpu" and not self.reads.delay:
            numbers = [value.item() for _, value, _ in pending]
            self.reads.later(lambda _host, late: self.check_values(numbers, used, iteration, step, late))
            return
        try:
            values = torch.stack([p[1] for p in pending])                   # one device, one dtype: the usual
        except RuntimeError:
            device = pending[0][1].device
            values = torch.stack([p[1].float().to(device) for p in pending])
        if self.capturing(values):
            return
        self.reads.submit(torch, values, lambda host, late: self.check_values(host, used, iteration, step, late))

    def check_values(self, values: Any, used: list[tuple[int, float]], iteration: int, step: int,
                     late: bool = False) -> None:
        """The sums ``values`` (a tensor on the host, or a list of numbers); the first gradient whose sum is
        non-finite and which holds a NaN or an Inf (counted exactly) is the hit: a sum that overflowed
        from finite values (a float32 or bfloat16 gradient near its range's end) is none.
        Read ``late`` (a GPU's, at a later hook) after its iteration ended, the gradient may be another
        step's: no counts then."""
        torch = self.torch
        late = late and iteration != self.iteration
        if isinstance(values, list):
            if all(map(math.isfinite, values)):
                return
            numbers = values
        elif math.isfinite(float(values.sum())):
            return
        else:
            numbers = values.tolist()
        for index, number in enumerate(numbers):
            if math.isfinite(number):
                continue
            key, when = used[index]
            entry = self.params.get(key)
            param = entry[0]() if entry is not None else None
            if entry is None or param is None:
                return
            grad = param.grad
            data = rec.plain(grad, torch) if grad is not None and not late else None
            if data is not None and data.shape == param.shape:
                value = rec.describe(data, torch)
                if not (value["nan"] or value["inf"]):
                    continue                  # finite values whose sum overflowed (float32, bfloat16): no hit
            else:
                value = rec.describe_gone(param.dtype, tuple(param.shape))  # zero_grad() came first, or read late
            self.found(rec.LOCAL_GRAD, entry[1], "parameter", value, None, step=step, when=when, grad_only=True,
                       iteration=iteration, late=late)
            return

    def check_params(self, optimizer: Any, where: str, shifted: bool = False, skip: set[int] | None = None) -> None:
        """The gradients at step() (after DDP's all_reduce; in local mode only those whose local hook did
        not run) or the parameters after it: the sums of their absolute values in a few fused calls
        (:func:`~triage.worker.numerics_fused.abs_sums`), read as :meth:`flush_grads`' are (:meth:`params_read`)."""
        torch = self.torch
        known = self.optimizer_params.get(id(optimizer))
        if skip is not None and known is not None and known <= skip:
            return                            # every gradient was checked by its hook
        params, datas = [], []
        for group in optimizer.param_groups:
            for param in group["params"]:
                if skip is not None and id(param) in skip:
                    continue
                tensor = param.grad if where == rec.REDUCED_GRAD else param
                data = rec.plain(tensor, torch) if tensor is not None else None
                if data is not None:
                    params.append(param)
                    datas.append(data)
        if not params:
            return
        with torch.no_grad():
            values = abs_sums(torch, datas, fuse=not datas[0].is_cpu)
        if self.capturing(values):
            return
        step = self.step - 1 if shifted else self.step       # the step that made it
        iteration, when = self.iteration, time.time()
        self.reads.submit(torch, values, lambda host, late: self.params_read(
            host, params, where, step, iteration, when, late))

    def params_read(self, values: Any, params: list[Any], where: str, step: int, iteration: int, when: float,
                    late: bool) -> None:
        """The sums of :meth:`check_params` on the host. Read in their iteration, a non-finite sum is checked
        exactly (a sum that only overflowed is no hit); read after it, the tensor may have changed since:
        a tensor still non-finite gives its counts, another gives none (not recorded)."""
        torch = self.torch
        late = late and iteration != self.iteration
        if math.isfinite(float(values.sum())):
            return
        flags = [not math.isfinite(v) for v in values.tolist()]
        for param, flag in zip(params, flags):
            if not flag:
                continue
            tensor = param.grad if where == rec.REDUCED_GRAD else param
            data = rec.plain(tensor, torch) if tensor is not None else None
            nonfinite = data is not None and not math.isfinite(rec.absmax(data))
            if nonfinite:
                value = rec.describe(data, torch)
            elif late:
                value = rec.describe_gone(param.dtype, tuple(param.shape))
            else:
                continue                      # finite values whose sum overflowed
            self.found(where, self.param_name(param), "parameter", value, None, step=step,
                       when=when if late else None, grad_only=where == rec.REDUCED_GRAD, iteration=iteration,
                       late=late)
            return
