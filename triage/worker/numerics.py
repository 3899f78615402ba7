"""The numerics watch: the first NaN or Inf a rank sees (``triage launch --numerics``).

Opt-in (``TRIAGE_NUMERICS=cheap|full``, set by the launcher). The in-worker agent starts at
interpreter start, long before the job imports torch, and must not import torch itself. So
:func:`start` puts a small finder at the head of ``sys.meta_path`` that answers nothing but notes
the import of ``torch``: it lets the regular finders find torch, and wraps that one loader's
``exec_module`` so that, right after ``import torch`` has run (and before any line of the job uses
it), the global hooks are registered and the finder removes itself. If torch is already imported,
the hooks are registered at once.

Hooks (all torch's own global registries; none changes a value, each catches everything):

- ``register_module_forward_pre_hook`` / ``register_module_forward_hook``: which module runs, its
  qualified name from the root module (wrappers' ``module.``/``_orig_mod.`` left out), and, in full
  mode, each module's output (absmax: NaN and Inf propagate through a max) and, through a tensor
  hook on that output, the gradient backward brings to it. In cheap mode only the root call's
  output (the model's output, a loss module's) is looked at.
- ``register_post_accumulate_grad_hook`` on the root's parameters: each parameter's local gradient
  (its absmax is kept as a tensor and read once per iteration: no sync per parameter).
- ``register_optimizer_step_pre_hook`` / ``_post_hook``: the gradients at ``step()`` (after DDP's
  all_reduce) and the parameters after it; the post hook counts the steps (completed ``step()``
  calls; the first iteration is step 0).

Full-module backward hooks (``register_module_full_backward_hook``) are not used: they wrap every
module's inputs and outputs in a ``BackwardHookFunction``, which breaks models that modify an
output in place (``ReLU(inplace=True)``). Tensor hooks see the same gradients without that.

The first non-finite value is written to ``numerics.json`` in the rank directory at once; the
file is rewritten (at most once a second) as later facts come (the grad scaler's skipped steps, the
module-level hit after cheap mode switched to every module) and at exit.
"""

from __future__ import annotations

import atexit
import contextlib
import math
import os
import sys
import time
import weakref
from collections import deque
from typing import Any

from triage.worker import numerics_record as rec
from triage.worker.files import write_json
from triage.worker.numerics_import import TorchImportWatch

MODES = ("cheap", "full")
HISTORY = 12                 # module calls kept before the first hit (Hugging Face's DebugUnderflowOverflow)
WRAPPER_TYPES = ("DistributedDataParallel", "FullyShardedDataParallel", "DataParallel", "OptimizedModule")
WRAPPER_ATTRS = ("module", "_orig_mod", "_fsdp_wrapped_module", "_checkpoint_wrapped_module")
MAX_SKIPPED = 50
WRITE_EVERY_S = 1.0

_watch: Watch | None = None


class Watch:
    """One rank's watch: hook state and the record (see the module docstring)."""

    def __init__(self, path: str, mode: str, rank: int | None) -> None:
        self.path, self.mode, self.rank = path, mode, rank
        self.full = mode == "full"
        self.torch: Any = None
        self.names: Any = weakref.WeakKeyDictionary()       # module -> qualified name
        # id(parameter) -> (weak reference, "module.weight"): tensors compare elementwise, so never dict keys
        self.params: dict[int, tuple[Any, str]] = {}
        self.last_output = 0                                # id() of the tensor looked at last
        self.stack: list[Any] = []
        self.history: deque[dict[str, Any]] = deque(maxlen=HISTORY)
        self.pending: list[tuple[str, Any, float]] = []     # (param name, absmax tensor, time) this backward
        self.steps: dict[int, int] = {}
        self.iteration = -1
        self.iteration_step = 0
        self.iteration_grad_only = False      # this iteration's only non-finite values were gradients
        self.iteration_seen = -1              # the last iteration with a non-finite value
        self.first: dict[str, Any] | None = None
        self.after_switch: dict[str, Any] | None = None
        self.skipped: dict[str, str] = {}
        self.skipped_steps: list[int] = []
        self.nonfinite_iterations = 0
        self.last_finite_iteration: int | None = None
        self.installed: list[str] = []
        self.started = time.time()
        self.pid = os.getpid()                  # a forked child (a DataLoader worker) never writes the record
        self.last_write = 0.0
        self.dirty = False

    # -- state -----------------------------------------------------------------------------
    @property
    def step(self) -> int:
        return max(self.steps.values(), default=0)

    def document(self, final: bool = False) -> dict[str, Any]:
        return {"schema": rec.SCHEMA, "rank": self.rank, "pid": os.getpid(), "mode": self.mode,
                "started": self.started, "time": time.time(), "final": final, "step": self.step,
                "iterations": self.iteration + 1, "hooks": list(self.installed), "first": self.first,
                "after_switch": self.after_switch, "switched_to_full": self.full and self.mode == "cheap",
                "nonfinite_iterations": self.nonfinite_iterations, "skipped_steps": self.skipped_steps[:100],
                "skipped_step_count": len(self.skipped_steps), "last_finite_iteration": self.last_finite_iteration,
                "unhooked": [{"module": k, "reason": v} for k, v in self.skipped.items()]}

    def write(self, force: bool = False, final: bool = False) -> None:
        now = time.time()
        if os.getpid() != self.pid or not (force or (self.dirty and now - self.last_write >= WRITE_EVERY_S)):
            return
        with contextlib.suppress(Exception):
            write_json(self.path, self.document(final))
            self.last_write, self.dirty = now, False

    def skip(self, module: Any, exc: BaseException) -> None:
        """A module whose hook failed: named in the record, never raised into the job."""
        if len(self.skipped) < MAX_SKIPPED:
            name = self.name_of(module) if module is not None else "?"
            self.skipped.setdefault(name or type(module).__name__, f"{type(exc).__name__}: {exc}"[:200])
            self.dirty = True

    # -- names -----------------------------------------------------------------------------
    def type_of(self, module: Any) -> str:
        """The class name; a wrapper's (DDP, FSDP, torch.compile) is the wrapped model's."""
        for _ in range(4):
            if type(module).__name__ not in WRAPPER_TYPES:
                break
            module = next((getattr(module, a) for a in WRAPPER_ATTRS if hasattr(module, a)), module)
        return type(module).__name__

    def name_of(self, module: Any) -> str:
        name = self.names.get(module)
        return name if name is not None else f"<{type(module).__name__}>"

    def learn(self, root: Any) -> None:
        """Name the modules and parameters under ``root`` (first name wins for shared ones)."""
        todo: list[tuple[Any, str]] = [(root, "")]
        while todo:
            module, path = todo.pop()
            if module in self.names:
                continue
            self.names[module] = path
            kind = type(module).__name__
            if kind == "OptimizedModule":
                self.skipped.setdefault(path or kind, "compiled by torch.compile: only its outputs are seen")
            for pname, param in module.named_parameters(recurse=False):
                if id(param) not in self.params or self.params[id(param)][0]() is not param:
                    self.params[id(param)] = (weakref.ref(param), f"{path}.{pname}" if path else pname)
                    self._hook_param(param)
            for attr, child in reversed(list(module.named_children())):
                through = kind in WRAPPER_TYPES and attr in WRAPPER_ATTRS
                todo.append((child, path if through else (f"{path}.{attr}" if path else attr)))

    def param_name(self, param: Any) -> str:
        entry = self.params.get(id(param))
        return entry[1] if entry is not None and entry[0]() is param else "?"

    def _hook_param(self, param: Any) -> None:
        if not param.requires_grad:
            return
        try:
            param.register_post_accumulate_grad_hook(self.on_grad)
        except Exception as exc:  # noqa: BLE001
            self.skipped.setdefault(self.param_name(param), f"gradient hook: {type(exc).__name__}: {exc}")

    # -- hooks -----------------------------------------------------------------------------
    def tracing(self) -> bool:
        """torch.compile or torch.jit.trace is tracing: reading a value would change the trace."""
        compiler = getattr(self.torch, "compiler", None)
        jit = getattr(self.torch, "jit", None)
        return bool((compiler is not None and compiler.is_compiling()) or (jit is not None and jit.is_tracing()))

    def on_pre_forward(self, module: Any, args: Any) -> None:
        try:
            if self.tracing():
                return
            if not self.stack or module is self.stack[0]:
                self.stack = [module]
                self.on_root_call(module)
            else:
                self.stack.append(module)
        except Exception as exc:  # noqa: BLE001
            self.skip(module, exc)

    def on_root_call(self, module: Any) -> None:
        if module not in self.names:
            self.learn(module)
        if module.training and self.torch.is_grad_enabled():
            self.new_iteration()

    def on_forward(self, module: Any, args: Any, output: Any) -> None:
        try:
            if self.tracing():
                return
            root = bool(self.stack) and self.stack[0] is module
            if self.stack and self.stack[-1] is module:
                self.stack.pop()
            if not (self.full or root):
                return
            self.check_output(module, args, output)
        except Exception as exc:  # noqa: BLE001
            self.skip(module, exc)

    def check_output(self, module: Any, args: Any, output: Any) -> None:
        torch = self.torch
        name = self.name_of(module)
        for tensor in rec.tensors(output, torch):
            if id(tensor) == self.last_output:
                continue                              # a wrapper's output: its inner module's, already seen
            self.last_output = id(tensor)
            value = rec.absmax(tensor)
            self.history.append({"where": rec.FORWARD, "module": name, "type": type(module).__name__,
                                 "absmax": value})
            if not math.isfinite(value):
                self.found(rec.FORWARD, name, self.type_of(module), tensor, rec.any_nonfinite(args, torch))
                return
            if tensor.requires_grad and tensor.grad_fn is not None:     # cheap mode: the root's output only
                kind = self.type_of(module)
                tensor.register_hook(lambda grad, n=name, m=kind: self.on_output_grad(grad, n, m))

    def on_output_grad(self, grad: Any, name: str, kind: str) -> None:
        try:
            value = rec.absmax(grad)
            self.history.append({"where": rec.BACKWARD, "module": name, "type": kind, "absmax": value})
            if not math.isfinite(value):
                self.found(rec.BACKWARD, name, kind, grad, None, grad_only=True)
        except Exception as exc:  # noqa: BLE001
            self.skip(None, exc)

    def on_grad(self, param: Any) -> None:
        try:
            grad = param.grad
            if self.full and grad is not None and grad.layout == self.torch.strided and not self.tracing():
                self.pending.append((self.param_name(param), grad.detach().abs().amax(), time.time()))
        except Exception as exc:  # noqa: BLE001
            self.skip(None, exc)

    def flush_grads(self) -> None:
        """Read this backward's local gradient maxima (one sync), in the order backward made them."""
        pending, self.pending = self.pending, []
        if not pending:
            return
        torch = self.torch
        values = torch.stack([p[1].float() for p in pending])
        if math.isfinite(float(values.max())):
            return
        bad = int(torch.nonzero(~torch.isfinite(values))[0][0])
        pname, _, when = pending[bad]
        param = next((r() for r, n in self.params.values() if n == pname), None)
        if param is not None and param.grad is not None:
            self.found(rec.LOCAL_GRAD, pname, "parameter", param.grad, None, when=when, grad_only=True)

    def on_step_pre(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        try:
            self.flush_grads()
            self.check_params(optimizer, rec.REDUCED_GRAD)
        except Exception as exc:  # noqa: BLE001
            self.skip(None, exc)

    def on_step_post(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        try:
            self.steps[id(optimizer)] = self.steps.get(id(optimizer), 0) + 1
            if self.full:                         # cheap mode: a parameter made non-finite shows in the next forward
                self.check_params(optimizer, rec.PARAM, shifted=True)
            self.write()
        except Exception as exc:  # noqa: BLE001
            self.skip(None, exc)

    def check_params(self, optimizer: Any, where: str, shifted: bool = False) -> None:
        torch = self.torch
        items = [p for group in optimizer.param_groups for p in group["params"]]
        tensors = [(p.grad if where == rec.REDUCED_GRAD else p) for p in items]
        pairs = [(p, t) for p, t in zip(items, tensors) if t is not None and t.layout == torch.strided]
        if not pairs:
            return
        # one pass per tensor, one sync: a NaN or Inf anywhere makes the sum non-finite (a sum that only
        # overflowed is checked exactly below and is no hit)
        total = torch.stack([t.detach().sum().float() for _, t in pairs]).sum()
        if math.isfinite(float(total)):
            return
        bad = next((pair for pair in pairs if not math.isfinite(rec.absmax(pair[1]))), None)
        if bad is None:
            return
        param, tensor = bad
        step = self.step - 1 if shifted else self.step       # the step that made it
        self.found(where, self.param_name(param), "parameter", tensor, None, step=step,
                   grad_only=where == rec.REDUCED_GRAD)

    # -- iterations and hits ---------------------------------------------------------------
    def new_iteration(self) -> None:
        """A training forward of the root begins: close the previous iteration."""
        self.flush_grads()
        if self.iteration >= 0:
            if self.iteration_grad_only and self.step == self.iteration_step:
                self.skipped_steps.append(self.step)     # non-finite gradients and no optimizer.step()
                self.dirty = True
            if self.iteration != self.iteration_seen:
                self.last_finite_iteration = self.iteration
        self.iteration += 1
        self.iteration_step = self.step
        self.iteration_grad_only = False
        self.write()

    def found(self, where: str, module: str, kind: str | None, tensor: Any, input_nonfinite: bool | None,
              step: int | None = None, when: float | None = None, grad_only: bool = False) -> None:
        if self.iteration_seen != self.iteration:
            self.iteration_seen = self.iteration
            self.nonfinite_iterations += 1
            self.iteration_grad_only = grad_only
        elif not grad_only:
            self.iteration_grad_only = False
        self.dirty = True
        at = self.step if step is None else step
        if self.first is None:
            self.first = rec.hit(where, module, kind, tensor, self.torch, at, self.iteration, input_nonfinite,
                                 list(self.history), when)
            self.full = True                  # cheap mode: every module from the next forward on
            self.write(force=True)
        elif self.after_switch is None and self.mode == "cheap" and where in (rec.FORWARD, rec.BACKWARD) \
                and self.iteration > self.first["iteration"]:
            self.after_switch = rec.hit(where, module, kind, tensor, self.torch, at, self.iteration,
                                        input_nonfinite, list(self.history), when)
            self.write(force=True)

    # -- installation ----------------------------------------------------------------------
    def install(self, torch: Any) -> None:
        self.torch = torch
        module_mod = sys.modules.get("torch.nn.modules.module")
        hooks: list[tuple[str, Any]] = []
        if module_mod is not None:
            hooks += [("forward_pre", lambda: module_mod.register_module_forward_pre_hook(self.on_pre_forward)),
                      ("forward", lambda: module_mod.register_module_forward_hook(self.on_forward))]
        optim = sys.modules.get("torch.optim.optimizer")
        if optim is not None:
            hooks += [("optimizer_step_pre", lambda: optim.register_optimizer_step_pre_hook(self.on_step_pre)),
                      ("optimizer_step_post", lambda: optim.register_optimizer_step_post_hook(self.on_step_post))]
        for name, register in hooks:
            try:
                register()
                self.installed.append(name)
            except Exception as exc:  # noqa: BLE001
                self.skipped.setdefault(f"<{name} hook>", f"{type(exc).__name__}: {exc}")
        atexit.register(self.write, True, True)
        self.write(force=True)


def current() -> Watch | None:
    """The watch started in this process, if any."""
    return _watch


def start(rank_dir: str, rank: int | None, mode: str | None = None) -> Watch | None:
    """Start the watch in this rank when ``TRIAGE_NUMERICS`` (or ``mode``) asks for it; never raises."""
    global _watch
    try:
        mode = (mode or os.environ.get("TRIAGE_NUMERICS") or "").strip().lower()
        if mode not in MODES or _watch is not None:
            return _watch
        watch = Watch(os.path.join(rank_dir, rec.FILE), mode, rank)
        _watch = watch
        torch = sys.modules.get("torch")
        if torch is not None and "torch.nn.modules.module" in sys.modules:
            watch.install(torch)
        else:
            sys.meta_path.insert(0, TorchImportWatch(watch.install))
        return watch
    except Exception as exc:  # noqa: BLE001
        with contextlib.suppress(Exception):
            sys.stderr.write(f"triage: numerics watch disabled: {type(exc).__name__}: {exc}\n")
        return None
