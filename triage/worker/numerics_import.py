"""The numerics watch's import hook: run a function right after ``import torch`` has run, without
importing torch (see :mod:`triage.worker.numerics`)."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from typing import Any


class TorchImportWatch:
    """A meta-path finder that answers for no module: it notices ``import torch``, lets the other
    finders find it, wraps that one loader's ``exec_module`` to call ``install(torch)`` right after
    torch's ``__init__`` has run, and removes itself from ``sys.meta_path``."""

    def __init__(self, install: Callable[[Any], None]) -> None:
        self.install = install

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "torch":
            return None
        with contextlib.suppress(ValueError):
            sys.meta_path.remove(self)
        try:
            for finder in list(sys.meta_path):
                find = getattr(finder, "find_spec", None)
                spec = find(name, path, target) if find is not None else None
                if spec is not None:
                    self._wrap(spec.loader)
                    return spec
        except Exception:  # noqa: BLE001 - the import system asks the finders again and says what failed
            return None
        return None

    def _wrap(self, loader: Any) -> None:
        original = getattr(loader, "exec_module", None)
        if original is None:
            return
        install = self.install

        def exec_module(module: Any) -> None:
            with contextlib.suppress(Exception):
                del loader.exec_module            # back to the class's own method
            original(module)
            try:
                install(module)
            except Exception as exc:  # noqa: BLE001
                with contextlib.suppress(Exception):
                    sys.stderr.write(f"triage: numerics watch disabled: {type(exc).__name__}: {exc}\n")

        try:
            loader.exec_module = exec_module
        except Exception:  # noqa: BLE001 - a loader that takes no attribute: no watch, the job unchanged
            return
