"""The CLI's first import: the standard library's modules a command's start imports without using them are loaded
at their first use instead. ``inspect`` (with ``ast``, ``dis`` and ``tokenize``: ~3.5 ms of a small log's report,
docs/performance.md, Parsing, session 51) is imported by the dataclasses module, which asks it only for the docstring
of a class that has none (every class a log's report makes has its own: tests/report/test_log_report_imports.py).

A deferred module is in ``sys.modules`` from the start, so that ``import inspect`` finds it; its body runs at the
first attribute asked of it that it lacks (``inspect.signature``, ``from inspect import isclass``), in whichever
thread asks first (another one waits for it), and from then on it is a plain module. Where the module is imported
already (a test run, a program that imported it first) or is not found, nothing is done."""

from __future__ import annotations

import _thread
import importlib.util
import sys
import types
from typing import Any

DEFERRED = ("inspect",)

_LOCK = _thread.RLock()
_running: set[str] = set()     # the deferred modules whose body runs now (in the thread that holds the lock)


class _Deferred(types.ModuleType):
    """A module whose body has not run yet: the first attribute asked of it that it lacks runs it."""

    def __getattr__(self, name: str) -> Any:
        with _LOCK:
            if type(self) is _Deferred and self.__name__ not in _running:
                _running.add(self.__name__)
                try:
                    self.__spec__.loader.exec_module(self)  # type: ignore[union-attr]
                    self.__class__ = types.ModuleType  # type: ignore[assignment]
                finally:
                    _running.discard(self.__name__)
        return types.ModuleType.__getattribute__(self, name)


def defer(name: str) -> bool:
    """Put ``name`` in ``sys.modules`` with its body not run; False where it is imported already or not found."""
    if name in sys.modules:
        return False
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
        return False
    module = importlib.util.module_from_spec(spec)
    module.__class__ = _Deferred
    sys.modules[name] = module
    return True


for _name in DEFERRED:
    defer(_name)
