"""Names for the numerics watch: each module's qualified name from the root module, each
parameter's (``fc1.weight``), with the wrappers of DDP, FSDP and ``torch.compile`` left out, so that
names are the same with and without them (a submodule shared by two parents keeps its first name).
Part of :mod:`triage.worker.numerics` (imports no torch)."""

from __future__ import annotations

import weakref
from typing import Any

WRAPPER_TYPES = ("DistributedDataParallel", "FullyShardedDataParallel", "DataParallel", "OptimizedModule")
WRAPPER_ATTRS = ("module", "_orig_mod", "_fsdp_wrapped_module", "_checkpoint_wrapped_module")


def class_name(module: Any) -> str:
    """The module's class name; FSDP2's ``fully_shard`` swaps a module's class for a subclass of it and
    of ``FSDPModule`` (``FSDPNet``): the class it was made from is named."""
    cls = type(module)
    if cls.__name__.startswith("FSDP") and any(b.__name__ == "FSDPModule" for b in cls.__mro__[1:]):
        base = next((b for b in cls.__bases__ if b.__name__ != "FSDPModule"), None)
        if base is not None:
            return base.__name__
    return cls.__name__


class Names:
    """Module and parameter names; the watch's gradient hook goes on every parameter named."""

    def __init__(self) -> None:
        self.names: Any = weakref.WeakKeyDictionary()       # module -> qualified name
        # id(parameter) -> (weak reference, "module.weight"): tensors compare elementwise, so never dict keys
        self.params: dict[int, tuple[Any, str]] = {}
        self.optimizers: dict[int, int] = {}                # id(optimizer) -> parameters seen in it
        self.optimizer_params: dict[int, frozenset[int]] = {}   # id(optimizer) -> the ids of its parameters
        self.skipped: dict[str, str] = {}                   # what could not be hooked -> why
        self.grad_hooks: list[Any] = []                     # handles of the gradient hooks (removed by stop())

    def on_grad(self, param: Any) -> None:
        """The gradient hook (the watch's)."""

    def type_of(self, module: Any) -> str:
        """The class name; a wrapper's (DDP, FSDP, torch.compile) is the wrapped model's."""
        for _ in range(4):
            if type(module).__name__ not in WRAPPER_TYPES:
                break
            module = next((getattr(module, a) for a in WRAPPER_ATTRS if hasattr(module, a)), module)
        return class_name(module)

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
            try:
                for pname, param in module.named_parameters(recurse=False):
                    self.add_param(param, f"{path}.{pname}" if path else pname)
                children = list(module.named_children())
            except Exception as exc:  # noqa: BLE001 - a module that cannot be walked: named, the others go on
                self.skipped.setdefault(path or kind, f"{type(exc).__name__}: {exc}"[:200])
                continue
            for attr, child in reversed(children):
                through = kind in WRAPPER_TYPES and attr in WRAPPER_ATTRS
                todo.append((child, path if through else (f"{path}.{attr}" if path else attr)))

    def learn_optimizer(self, optimizer: Any) -> None:
        """The optimizer's parameters that no module named (a model the hooks never saw as a root)."""
        groups = optimizer.param_groups
        count = sum(len(group["params"]) for group in groups)
        if self.optimizers.get(id(optimizer)) == count:
            return
        self.optimizers[id(optimizer)] = count
        self.optimizer_params[id(optimizer)] = frozenset(id(p) for group in groups for p in group["params"])
        for g, group in enumerate(groups):
            for i, param in enumerate(group["params"]):
                self.add_param(param, f"param_groups[{g}][{i}]")

    def add_param(self, param: Any, name: str) -> None:
        entry = self.params.get(id(param))
        if entry is not None and entry[0]() is param:
            return
        self.params[id(param)] = (weakref.ref(param), name)
        if not param.requires_grad or not param.is_floating_point():
            return                                      # no gradient, or a complex one: not watched
        try:
            self.grad_hooks.append(param.register_post_accumulate_grad_hook(self.on_grad))
        except Exception as exc:  # noqa: BLE001
            self.skipped.setdefault(name, f"gradient hook: {type(exc).__name__}: {exc}")

    def param_name(self, param: Any) -> str:
        entry = self.params.get(id(param))
        return entry[1] if entry is not None and entry[0]() is param else "?"
