"""The numerics watch: the first NaN or Inf a rank sees (``triage launch --numerics``; docs/numerics.md).

Opt-in (``TRIAGE_NUMERICS=cheap|full``, set by the launcher). The in-worker agent starts long before
the job imports torch and must not import torch itself: :func:`start` puts a finder at the head of
``sys.meta_path`` (:mod:`triage.worker.numerics_import`) that registers the hooks right after
``import torch`` has run, or registers them at once if torch is already imported.

Hooks (torch's own global registries; none changes a value, each catches everything):

- ``register_module_forward_pre_hook`` / ``register_module_forward_hook``: which module runs, its
  qualified name (:mod:`triage.worker.numerics_names`), and, in full mode, each module's output
  (absmax) and, through a tensor hook on it, the gradient backward brings to it. In cheap mode only
  the root's output is looked at, until the first ``optimizer.step()``: then the module hooks are
  removed (a global module hook sends every module call through torch's slow path) and come back
  at the first hit.
- ``register_post_accumulate_grad_hook`` on the parameters (:mod:`triage.worker.numerics_grads`):
  each local gradient, before DDP's all_reduce: its absmax (full) or its sum (cheap), read in the
  hook on CPU, once per iteration on a GPU (without waiting for it). The hook
  runs once per parameter per backward and does nothing else; a gradient that is not a plain tensor
  (FSDP2's DTensor shard) is left to the step hook; with no gradient hook in an iteration (FSDP1),
  cheap mode keeps the module hooks.
- ``register_optimizer_step_pre_hook`` / ``_post_hook``: the gradients at ``step()`` that no gradient
  hook saw, the parameters after it (full mode), and the step count.

Full-module backward hooks are not used: they break models that modify an output in place.
``numerics.json`` is written at the first hit, at most once a second after it when something new is
known, and at exit.

:func:`stop` removes every hook; :func:`start` installs a new watch the same way again
(``bench/bench_numerics.py`` alternates the two inside one job to measure the cost).
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
from triage.worker.numerics_backward import BackwardCheck
from triage.worker.numerics_import import TorchImportWatch
from triage.worker.numerics_names import class_name

MODES = ("cheap", "full")
HISTORY = 12                 # module calls kept before the first hit (Hugging Face's DebugUnderflowOverflow)
MAX_SKIPPED = 50
WRITE_EVERY_S = 1.0

_watch: Watch | None = None


class Watch(BackwardCheck):
    """One rank's watch: hook state and the record (see the module docstring)."""

    def __init__(self, path: str, mode: str, rank: int | None) -> None:
        super().__init__()
        self.path, self.mode, self.rank = path, mode, rank
        self.full = mode == "full"
        self.jit_tracing: Any = lambda: False               # torch.jit.is_tracing (its C function)
        self.module_hooks: list[Any] = []                   # handles of the global module hooks, while installed
        self.step_hooks: list[Any] = []                     # handles of the optimizer step hooks
        self.import_watch: TorchImportWatch | None = None   # on sys.meta_path until torch is imported
        self.last_output: Any = None            # a weak reference to the tensor looked at last (an id is reused)
        self.stack: list[Any] = []
        self.history: deque[dict[str, Any]] = deque(maxlen=HISTORY)
        self.steps: dict[int, int] = {}         # id(optimizer) -> its step() calls completed
        self.top_step = 0                       # the most of those (the step, read in every hook)
        self.iteration = -1
        self.iteration_step = 0
        self.iteration_grad_only = False      # the iteration_seen's only non-finite values were gradients
        self.iteration_seen = -1              # the last iteration with a non-finite value
        self.first: dict[str, Any] | None = None
        self.after_switch: dict[str, Any] | None = None
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
        return self.top_step

    def document(self, final: bool = False) -> dict[str, Any]:
        return {"schema": rec.SCHEMA, "rank": self.rank, "pid": os.getpid(), "mode": self.mode,
                "started": self.started, "time": time.time(), "final": final, "step": self.step,
                "iterations": self.iteration + 1, "hooks": list(self.installed), "first": self.first,
                "after_switch": self.after_switch, "switched_to_full": self.full and self.mode == "cheap",
                "watching": "every module" if self.full else "local gradients" if self.local else "the root's output",
                "nonfinite_iterations": self.nonfinite_iterations, "skipped_steps": self.skipped_steps[:100],
                "skipped_step_count": len(self.skipped_steps), "last_finite_iteration": self.last_finite_iteration,
                "unhooked": [{"module": k, "reason": v} for k, v in self.skipped.items()],
                "late_reads": self.reads.late_reads, "dropped_reads": self.reads.dropped,
                "gradient_check": {"path": self.grad_path, "reason": self.grad_path_reason,
                                   "one_call_backwards": self.one_call_checks}}

    def write(self, force: bool = False, final: bool = False) -> None:
        if not (force or self.dirty):
            return
        now = time.time()
        if os.getpid() != self.pid or not (force or now - self.last_write >= WRITE_EVERY_S):
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

    # -- hooks -----------------------------------------------------------------------------
    def tracing(self) -> bool:
        """torch.compile or torch.jit.trace is tracing: reading a value would change the trace."""
        return bool(self.compiling() or self.jit_tracing())

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
            self.seen_root(module, weakref.ref)
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
        for tensor, data in rec.tensors(output, torch):
            if self.last_output is not None and self.last_output() is tensor:
                continue                              # a wrapper's output: its inner module's, already seen
            self.last_output = weakref.ref(tensor)
            if self.capturing(data):
                return
            value = rec.absmax(data)
            self.history.append({"where": rec.FORWARD, "module": name, "type": class_name(module),
                                 "absmax": value})
            if not math.isfinite(value):
                self.found_in_turn(rec.FORWARD, name, self.type_of(module), rec.describe(data, torch),
                                   rec.any_nonfinite(args, torch))
                return
            if tensor.requires_grad and tensor.grad_fn is not None:     # cheap mode: the root's output only
                kind = self.type_of(module)
                tensor.register_hook(lambda grad, n=name, m=kind: self.on_output_grad(grad, n, m))

    def on_output_grad(self, grad: Any, name: str, kind: str) -> None:
        try:
            data = rec.plain(grad, self.torch)
            if data is None or self.capturing(data):
                return
            value = rec.absmax(data)
            self.history.append({"where": rec.BACKWARD, "module": name, "type": kind, "absmax": value})
            if not math.isfinite(value):
                self.found_in_turn(rec.BACKWARD, name, kind, rec.describe(data, self.torch), None, grad_only=True)
        except Exception as exc:  # noqa: BLE001
            self.skip(None, exc)

    def on_step_pre(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        try:
            usual = self.usual_iteration == self.iteration
            self.usual_iteration = -2         # used up: a second step() after one backward is no usual step
            if usual and self.one_call_hook is not None and not (self.reads.queue or self.pending or self.ready):
                groups = optimizer.param_groups       # the usual step (CPU): as below, from what is known already
                count = len(groups[0]["params"]) if len(groups) == 1 else sum(len(group["params"]) for group in groups)
                if self.covers.get(id(optimizer)) == count and not (self.compiling() or self.jit_tracing()):
                    self.fired.clear()
                    self.closed = True
                    return
            fired = self.fired
            if fired and self.one_call_hook is not None and not (self.reads.queue or self.pending or self.ready) \
                    and self.checked_all(optimizer, fired) and not self.tracing():
                if usual and self.optimizer_params[id(optimizer)] <= self.one_call_set:
                    self.covers[id(optimizer)] = self.optimizers[id(optimizer)]     # the same at each usual step
                fired.clear()                 # the one-call check saw each of its gradients: the usual step
                self.closed = True
                return
            if self.tracing():
                return
            self.learn_optimizer(optimizer)
            if self.covers.get(id(optimizer)) not in (None, self.optimizers.get(id(optimizer))):
                del self.covers[id(optimizer)]     # its parameters changed: found again at the next usual step
            if self.reads.queue:
                self.reads.poll()
            if self.pending or self.ready:
                self.flush_grads()
            fired, self.fired = self.fired, set()
            self.closed = True
            if self.local and not fired and self.one_call_hook is not None:
                self.one_call_stop(self.one_call_missed())
            if self.local and not fired and self.install_module_hooks():
                self.local = False            # the gradient hooks did not run (FSDP's own gradients): the root's output
            self.check_params(optimizer, rec.REDUCED_GRAD, skip=fired if self.local else None)
            if self.mode == "cheap" and not self.full and fired and self.module_hooks and self.first is None:
                self.local = True             # the gradient hooks run: the module hooks go from the next step
        except Exception as exc:  # noqa: BLE001
            self.skip(None, exc)

    def checked_all(self, optimizer: Any, fired: set[int]) -> bool:
        """Every parameter of ``optimizer`` (as :meth:`learn_optimizer` knows it, and it has not changed)
        had its local gradient checked in this iteration (``fired``)."""
        known = self.optimizer_params.get(id(optimizer))
        if known is None or not known <= fired:
            return False
        groups = optimizer.param_groups
        count = len(groups[0]["params"]) if len(groups) == 1 else sum(len(group["params"]) for group in groups)
        return self.optimizers.get(id(optimizer)) == count

    def on_step_post(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        try:
            key = id(optimizer)
            count = self.steps[key] = self.steps.get(key, 0) + 1
            self.top_step = max(self.top_step, count)
            if self.full:                         # cheap mode: a parameter made non-finite shows in the next gradients
                self.check_params(optimizer, rec.PARAM, shifted=True)
            elif self.local and self.module_hooks:
                self.remove_module_hooks()
                self.one_call_start()         # one check per backward where DDP allows it (numerics_backward)
            if self.reads.queue:
                self.reads.poll()
            if self.dirty:
                self.write()
        except Exception as exc:  # noqa: BLE001
            self.skip(None, exc)

    # -- iterations and hits ---------------------------------------------------------------
    def new_iteration(self) -> None:
        """A training iteration begins (the root's forward; in local mode, its backward): close the last."""
        reads = self.reads
        if not (reads.queue or self.pending or self.ready or self.dirty) and self.iteration_seen < 0:
            iteration = self.iteration        # the usual step: nothing pending, nothing non-finite seen yet
            if iteration >= 0:
                self.last_finite_iteration = iteration        # what end_iteration() would do
            self.iteration = iteration + 1
            self.iteration_step = self.top_step
            self.fired.clear()
            self.closed = False
            return
        if reads.queue:
            reads.poll()
        if self.pending or self.ready:
            self.flush_grads()
        step = self.top_step
        if self.iteration >= 0:
            ended, began = self.iteration, self.iteration_step
            if reads.queue:
                reads.later(lambda _host, _late: self.end_iteration(ended, began, step))
            else:
                self.end_iteration(ended, began, step)      # nothing pending (CPU): no closure to queue
        self.iteration += 1
        self.iteration_step = step
        self.fired.clear()
        self.closed = False
        if self.dirty:
            self.write()

    def end_iteration(self, iteration: int, began: int, step: int) -> None:
        """An iteration's end, in turn after its reads (:meth:`new_iteration` queues it): ``began`` and
        ``step`` are the optimizer steps completed at its start and at its end."""
        if self.iteration_seen == iteration and self.iteration_grad_only and step == began:
            self.skipped_steps.append(step)              # non-finite gradients and no optimizer.step()
            self.dirty = True
        if self.iteration_seen != iteration:
            self.last_finite_iteration = iteration

    def found_in_turn(self, where: str, module: str, kind: str | None, value: dict[str, Any],
                      input_nonfinite: bool | None, grad_only: bool = False) -> None:
        """A hit read now, handled after the reads still pending (those made before it)."""
        step, iteration, when, history = self.step, self.iteration, time.time(), list(self.history)
        self.reads.later(lambda _host, late: self.found(where, module, kind, value, input_nonfinite, step, when,
                                                        grad_only, iteration, late and iteration != self.iteration,
                                                        history))

    def found(self, where: str, module: str, kind: str | None, value: dict[str, Any], input_nonfinite: bool | None,
              step: int | None = None, when: float | None = None, grad_only: bool = False,
              iteration: int | None = None, late: bool = False, history: list[dict[str, Any]] | None = None) -> None:
        """A non-finite value made in ``iteration`` at ``step`` (now, by default); ``late``: read after its
        iteration ended, when the last collective is no longer the one before it (not recorded then)."""
        at = self.step if step is None else step
        it = self.iteration if iteration is None else iteration
        if self.iteration_seen != it:
            self.iteration_seen = it
            self.nonfinite_iterations += 1
            self.iteration_grad_only = grad_only
        elif not grad_only:
            self.iteration_grad_only = False
        self.dirty = True
        calls = list(self.history) if history is None else history
        if self.first is None:
            self.first = rec.hit(where, module, kind, value, at, it, input_nonfinite, calls, when, not late)
            self.switch_to_full()
            self.write(force=True)
        elif self.after_switch is None and self.mode == "cheap" and where in (rec.FORWARD, rec.BACKWARD) \
                and it > self.first["iteration"]:
            self.after_switch = rec.hit(where, module, kind, value, at, it, input_nonfinite, calls, when, not late)
            self.write(force=True)

    def switch_to_full(self) -> None:
        """Cheap mode, at the first hit: every module from the next forward on."""
        self.full = True
        self.one_call_stop()
        if self.local:
            self.local = False
            self.closed = True                # the module hooks open the next iteration at the root's forward
            self.install_module_hooks()

    # -- installation ----------------------------------------------------------------------
    def install_module_hooks(self) -> bool:
        """torch's global module hooks (every module's call); True when they were installed now."""
        module_mod = sys.modules.get("torch.nn.modules.module")
        if self.module_hooks or module_mod is None:
            return False
        self.stack = []
        for name, register, hook in (("forward_pre", "register_module_forward_pre_hook", self.on_pre_forward),
                                     ("forward", "register_module_forward_hook", self.on_forward)):
            try:
                self.module_hooks.append(getattr(module_mod, register)(hook))
                if name not in self.installed:
                    self.installed.append(name)
            except Exception as exc:  # noqa: BLE001
                self.skipped.setdefault(f"<{name} hook>", f"{type(exc).__name__}: {exc}")
        return bool(self.module_hooks)

    def remove_module_hooks(self) -> None:
        handles, self.module_hooks = self.module_hooks, []
        for handle in handles:
            with contextlib.suppress(Exception):
                handle.remove()
        self.stack = []

    def install(self, torch: Any) -> None:
        self.torch = torch
        self.tensor_type = torch.Tensor
        self.compiling = getattr(getattr(torch, "compiler", None), "is_compiling", None) or (lambda: False)
        # torch.jit.is_tracing() is torch._C._is_tracing() outside TorchScript (these hooks never run in it)
        self.jit_tracing = getattr(getattr(torch, "_C", None), "_is_tracing", None) \
            or getattr(getattr(torch, "jit", None), "is_tracing", None) or self.jit_tracing
        self.wide = (torch.float32, torch.float64)
        engine = getattr(getattr(getattr(torch, "autograd", None), "Variable", None), "_execution_engine", None)
        self.fuse = getattr(engine, "queue_callback", None)     # none: every gradient checked in its hook
        self.install_module_hooks()
        optim = sys.modules.get("torch.optim.optimizer")
        hooks: list[tuple[str, Any]] = []
        if optim is not None:
            hooks += [("optimizer_step_pre", lambda: optim.register_optimizer_step_pre_hook(self.on_step_pre)),
                      ("optimizer_step_post", lambda: optim.register_optimizer_step_post_hook(self.on_step_post))]
        for name, register in hooks:
            try:
                self.step_hooks.append(register())
                self.installed.append(name)
            except Exception as exc:  # noqa: BLE001
                self.skipped.setdefault(f"<{name} hook>", f"{type(exc).__name__}: {exc}")
        atexit.register(self.at_exit)
        self.write(force=True)

    def at_exit(self) -> None:
        """The rank's normal exit: the reads still pending (bounded), then the final record."""
        with contextlib.suppress(Exception):
            self.reads.finish()
        self.write(True, True)

    def uninstall(self) -> None:
        """Remove every hook this watch installed (module, gradient and optimizer hooks, the import hook)
        and write the record once more; the job is as before :meth:`install`, except that torch keeps
        an empty hook table on each parameter it hooked (torch has no way to drop it)."""
        with contextlib.suppress(ValueError):
            if self.import_watch is not None:
                sys.meta_path.remove(self.import_watch)
        self.remove_module_hooks()
        self.one_call_stop()
        with contextlib.suppress(Exception):
            self.reads.finish()
        handles, self.grad_hooks, steps, self.step_hooks = self.grad_hooks, [], self.step_hooks, []
        for handle in handles + steps:
            with contextlib.suppress(Exception):
                handle.remove()
        self.params.clear()
        self.pending, self.ready = [], []
        with contextlib.suppress(Exception):
            atexit.unregister(self.at_exit)
        self.write(force=True)


def current() -> Watch | None:
    """The watch started in this process, if any."""
    return _watch


def stop() -> None:
    """Stop this process's watch, if any: every hook it installed is removed (:meth:`Watch.uninstall`);
    a later :func:`start` begins a new watch, installed as the first was. Never raises."""
    global _watch
    watch, _watch = _watch, None
    if watch is not None:
        with contextlib.suppress(Exception):
            watch.uninstall()


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
            watch.import_watch = TorchImportWatch(watch.install)
            sys.meta_path.insert(0, watch.import_watch)
        return watch
    except Exception as exc:  # noqa: BLE001
        with contextlib.suppress(Exception):
            sys.stderr.write(f"triage: numerics watch disabled: {type(exc).__name__}: {exc}\n")
        return None
