"""The numerics watch's one-call check of the local gradients (cheap mode, under DDP): one Python call
per backward instead of one gradient hook per parameter. Part of :mod:`triage.worker.numerics`
(imports no torch).

Why it sees this rank's own gradients (torch's ``reducer.cpp`` and ``engine.cpp``, torch 2.4 on):
with ``gradient_as_bucket_view=False`` (DDP's default), DDP's reducer copies each gradient into its
bucket (``mark_variable_ready_dense``: ``mul_out`` or ``copy_`` into the bucket's view; the
gradient itself is not written) and all_reduces the bucket; ``param.grad`` keeps this rank's local
gradient until ``finalize_backward`` copies the averaged bucket back into it. ``finalize_backward``
runs in an autograd final callback that the reducer queues (``queue_callback``) when its last
bucket is ready, so after the last parameter's gradient was accumulated; the engine runs the final
callbacks in the order they were queued (``GraphTask::exec_post_processing``). The watch queues its
callback before that, so it runs first and reads every local gradient in one call, before the
all_reduce's result replaces them. It queues it from one of two hooks:

- DDP without ``find_unused_parameters`` and ``static_graph`` (every parameter gets a gradient in each
  backward through DDP's forward, or DDP raises at the next forward): a gradient hook
  (``register_post_accumulate_grad_hook``) on one parameter, the one backward usually makes first.
  Torch runs it inside that parameter's ``AccumulateGrad``, before the node's post hooks, one of which
  is the reducer's hook that marks the gradient ready: whichever gradient it is, the reducer has not
  yet queued its callback. It costs one Python call per backward and nothing in the forward.
- otherwise (a parameter may go without a gradient): a tensor hook on the DDP model's output, which
  backward runs before any parameter's gradient is accumulated (every parameter's gradient flows
  through that output), registered from a forward hook on the model at each forward.

Where that does not hold, the per-parameter gradient hooks stay (:func:`refusal` names why, and the
record says which path the rank used): ``gradient_as_bucket_view=True`` (each gradient is a view of
the bucket DDP all_reduces while backward goes on), FSDP and models without DDP (a framework may
reduce gradients in place inside its own hooks), DDP without its C++ reducer (the Python reducer of
compiled autograd, all-parameter delayed all_reduce), DDP options whose copy into the bucket was not
checked here (``batched_grad_copy``, ``mixed_precision``, optimizers applied in backward), a torch
without ``queue_callback``, several models trained at once, and a step with gradients in which the
hook that queues the check did not run (then for good).
"""

from __future__ import annotations

import contextlib
import math
import time
from typing import Any

from triage.worker.numerics_grads import GradChecks

DDP = "DistributedDataParallel"
ONE_CALL = "one call per backward"
PER_PARAMETER = "a hook per parameter"
FIRST_GRADIENT = "the first gradient's hook"     # DDP reduces every parameter's gradient in every backward
OUTPUT = "the model's output"                    # DDP may leave parameters without a gradient


def refusal(root: Any, queue_callback: Any, many_roots: bool) -> str | None:
    """Why the one-call check cannot watch ``root``'s gradients (None: it can)."""
    if queue_callback is None:
        return "this torch has no autograd queue_callback"
    if many_roots:
        return "several models are trained (each its own root module)"
    if root is None:
        return "no training root module seen"
    if type(root).__name__ != DDP:
        return f"the model ({type(root).__name__}) is not DDP: its gradients may be reduced in hooks"
    if getattr(root, "gradient_as_bucket_view", True) is not False:
        return "gradient_as_bucket_view=True: each gradient is a view of the bucket DDP all_reduces during backward"
    if getattr(root, "reducer", None) is None or getattr(root, "_use_python_reducer", False) \
            or getattr(root, "_delay_all_reduce_all_params", False) or getattr(root, "_delay_all_reduce_params", None):
        return "DDP reduces these gradients outside its C++ reducer"
    for option in ("batched_grad_copy", "mixed_precision"):
        if getattr(root, option, None):
            return f"DDP's {option} (not checked against torch's source)"
    return None


def every_parameter_reduced(root: Any) -> bool:
    """DDP gives every parameter a gradient in each backward that goes through its forward (without
    ``find_unused_parameters`` or ``static_graph`` it raises at the next forward otherwise): a hook on
    any one parameter's gradient then runs in every such backward."""
    return getattr(root, "find_unused_parameters", True) is False and getattr(root, "static_graph", True) is False


def output_tensors(output: Any, tensor_type: Any) -> list[Any]:
    """The tensors of a model's output that backward can go through (a tensor, or one level of a
    tuple, list or dict)."""
    if type(output) is tensor_type or isinstance(output, tensor_type):
        return [output] if output.grad_fn is not None else []
    items: Any = output.values() if isinstance(output, dict) else output if isinstance(output, (list, tuple)) else ()
    return [t for t in items if isinstance(t, tensor_type) and t.grad_fn is not None]


class BackwardCheck(GradChecks):
    """The one-call check (see the module docstring); the watch turns it on in local mode."""

    def __init__(self) -> None:
        super().__init__()
        self.root_ref: Any = None              # a weak reference to the training root module seen last
        self.many_roots = False
        self.grad_path = PER_PARAMETER
        self.grad_path_reason: str | None = "before the first optimizer.step()"
        self.one_call_off = False              # refused for good (the reason is in grad_path_reason)
        self.one_call_hook: Any = None         # the handle of the hook that queues the check, while on
        self.one_call_trigger: str | None = None    # which hook that is (FIRST_GRADIENT or OUTPUT)
        self.one_call_params: list[Any] = []   # the root's parameters, in backward's usual order
        self.one_call_ids: list[int] = []      # their ids
        self.one_call_set: frozenset[int] = frozenset()
        self.bw_armed = False                  # this backward's callback is queued
        self.one_call_checks = 0               # backwards checked in one call
        self.end_callback: Any = None          # on_backward_end, bound once
        # the iteration whose backward the one-call check read in full on CPU with nothing pending (then the
        # gradients checked are exactly one_call_ids), and the optimizers known to hold only those parameters:
        # id(optimizer) -> its parameter count when that was found (the step pre-hook's usual case)
        self.usual_iteration = -2
        self.covers: dict[int, int] = {}
        self.dirty = False

    def seen_root(self, module: Any, ref: Any) -> None:
        """A training forward of the root ``module`` (``ref``: weakref.ref)."""
        known = self.root_ref() if self.root_ref is not None else None
        if known is not None and known is not module:
            self.many_roots = True
        self.root_ref = ref(module)

    def one_call_start(self) -> None:
        """Local mode begins: the one-call check when :func:`refusal` allows it (the gradient hooks then
        go), else the gradient hooks stay and the reason is recorded."""
        if self.one_call_hook is not None or self.one_call_off:
            return
        root: Any = self.root_ref() if self.root_ref is not None else None
        reason = refusal(root, self.fuse, self.many_roots)
        if reason is None:
            try:
                params = [p for p in root.parameters() if p.requires_grad and p.is_floating_point()]
                if any(hasattr(p, "_in_backward_optimizers") for p in params):
                    reason = "an optimizer applied in backward (gradients set to None there)"
                elif not params:
                    reason = "the model has no floating-point parameter that requires a gradient"
                else:
                    self.one_call_params = params[::-1]      # backward makes the last layer's first
                    self.one_call_ids = [id(param) for param in self.one_call_params]
                    self.one_call_set = frozenset(self.one_call_ids)
                    self.end_callback = self.on_backward_end         # bound once, queued at each backward
                    if every_parameter_reduced(root):        # one hook, on the gradient backward makes first
                        self.one_call_hook = self.one_call_params[0].register_post_accumulate_grad_hook(
                            self.on_first_grad)
                        self.one_call_trigger = FIRST_GRADIENT
                    else:
                        self.one_call_hook = root.register_forward_hook(self.on_root_output)
                        self.one_call_trigger = OUTPUT
            except Exception as exc:  # noqa: BLE001
                reason = f"{type(exc).__name__}: {exc}"[:200]
        if reason is not None:
            self.one_call_off, self.grad_path, self.grad_path_reason = True, PER_PARAMETER, reason
            self.dirty = True
            return
        handles, self.grad_hooks = self.grad_hooks, []
        for handle in handles:
            with contextlib.suppress(Exception):
                handle.remove()
        self.covers.clear()
        self.grad_path, self.grad_path_reason, self.dirty = ONE_CALL, None, True

    def one_call_stop(self, reason: str | None = None) -> None:
        """Back to a gradient hook per parameter: ``reason`` (for good) is recorded; without one (the switch
        to every module at the first hit, the watch's stop) the record keeps the path that was in use."""
        if reason is not None:
            self.one_call_off, self.grad_path, self.grad_path_reason, self.dirty = True, PER_PARAMETER, reason, True
        handle, self.one_call_hook = self.one_call_hook, None
        self.covers.clear()
        self.usual_iteration = -2
        if handle is None:
            return
        with contextlib.suppress(Exception):
            handle.remove()
        self.one_call_params, self.one_call_ids, self.bw_armed = [], [], False
        self.dirty = True
        for entry in list(self.params.values()):
            param = entry[0]()
            if param is not None and param.requires_grad and param.is_floating_point():
                try:
                    self.grad_hooks.append(param.register_post_accumulate_grad_hook(self.on_grad))
                except Exception:  # noqa: BLE001, S112
                    continue

    def one_call_missed(self) -> str:
        """Why the one-call check did not run in a step that had gradients (then the hooks per parameter)."""
        if self.one_call_trigger == FIRST_GRADIENT:
            return "a backward in which the gradient hook of the model's first gradient did not run"
        return "a backward that did not go through the model's output"

    def on_root_output(self, module: Any, args: Any, output: Any) -> None:
        """The root's forward hook (one-call mode): a hook on its output for the start of backward."""
        try:
            if self.compiling() or not self.torch.is_grad_enabled():
                return
            for tensor in output_tensors(output, self.tensor_type):
                tensor.register_hook(self.on_backward_start)
        except Exception as exc:  # noqa: BLE001
            self.skip(module, exc)

    def on_backward_start(self, grad: Any) -> None:
        """Backward reached the model's output: queue the check for its end (once per backward), before
        any parameter's gradient is made and so before DDP queues its own end-of-backward callback."""
        try:
            if self.bw_armed or self.one_call_hook is None:
                return
            if self.closed or self.fired:
                self.new_iteration()          # after step(), or a second backward without one
            self.fuse(self.end_callback)
            self.bw_armed = True
        except Exception as exc:  # noqa: BLE001
            self.skip(None, exc)

    def on_first_grad(self, param: Any) -> None:
        """The gradient hook of the parameter backward makes first (:data:`FIRST_GRADIENT`): queue the
        check for the backward's end, as :meth:`on_backward_start` does. The hook runs inside the
        parameter's gradient accumulation, before DDP's reducer hears of that gradient, so before the
        reducer can queue its own end-of-backward callback (at its last gradient), whichever
        gradient this one is."""
        if self.bw_armed or self.one_call_hook is None:
            return
        try:
            if self.closed or self.fired:
                self.new_iteration()
            self.fuse(self.end_callback)
            self.bw_armed = True
        except Exception as exc:  # noqa: BLE001
            self.skip(None, exc)

    def on_backward_end(self) -> None:
        """The backward's end, before DDP's callback: every local gradient of the root, checked at once."""
        try:
            self.bw_armed = False
            self.check_local_grads()
        except Exception as exc:  # noqa: BLE001
            self.skip(None, exc)

    def check_local_grads(self) -> None:
        """The sums of this rank's gradients (on CPU one sum per gradient, read here; on a GPU the fused
        check of :meth:`flush_ready`, read without waiting); a non-finite one is the hit."""
        tensor_type, params, wide, float32 = self.tensor_type, self.one_call_params, self.wide, self.torch.float32
        numbers: list[float] = []
        add = numbers.append
        for param in params:                  # the usual backward (CPU): one loop, one sum and one read a gradient
            grad = param.grad
            if type(grad) is not tensor_type or grad.is_sparse or grad.requires_grad or grad.is_cuda:
                break
            add((grad.sum() if grad.dtype in wide else grad.sum(dtype=float32)).item())
        else:
            self.fired.update(self.one_call_ids)
            self.one_call_checks += 1
            if not math.isfinite(sum(numbers)):
                self.local_sums_read(numbers, params)
            elif not (self.reads.queue or self.pending or self.ready):
                self.usual_iteration = self.iteration
            return
        grads = [param.grad for param in params]
        if all(type(grad) is tensor_type and not grad.is_sparse and not grad.requires_grad for grad in grads):
            self.fired.update(self.one_call_ids)     # every parameter has a plain gradient (on a GPU)
        else:
            kept = [(param, grad) for param, grad in zip(params, grads)
                    if type(grad) is tensor_type and not grad.is_sparse]
            params = [param for param, _ in kept]
            grads = [grad.detach() if grad.requires_grad else grad for _, grad in kept]
            self.fired.update(map(id, params))
            if not grads:
                return
        self.one_call_checks += 1
        if grads[0].is_cuda:
            now = time.time()
            self.ready = [(param, now) for param in params]
            self.flush_ready()
            return
        numbers = [(g.sum() if g.dtype in wide else g.sum(dtype=float32)).item() for g in grads]
        if not math.isfinite(sum(numbers)):
            self.local_sums_read(numbers, params)

    def local_sums_read(self, numbers: list[float], params: list[Any]) -> None:
        """The sums of :meth:`check_local_grads` (one per parameter of ``params``), one of them or their
        total non-finite: checked exactly (:meth:`check_values`), in turn after any read still queued."""
        now = time.time()
        used, iteration, step = [(id(param), now) for param in params], self.iteration, self.step
        if self.reads.queue or self.reads.delay:
            self.reads.later(lambda _host, late: self.check_values(numbers, used, iteration, step, late))
        else:
            self.check_values(numbers, used, iteration, step)
