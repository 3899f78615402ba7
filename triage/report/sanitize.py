"""Text from inputs made safe for a terminal before any report is rendered.

Process-group names, log lines, exception messages and stack frames come from files a job (or
whoever could write into its run directory) controls. Terminal escape sequences in them could
retitle the terminal, clear it or hide lines of the report. Every control character except newline
and tab is shown as a visible escape (``\\x1b``) instead: the report stays truthful about what the
input held, and the terminal interprets nothing.
"""

from __future__ import annotations

import dataclasses
import enum
import re
from typing import Any, TypeVar

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
T = TypeVar("T")


def visible(text: str) -> str:
    """``text`` with every control character but newline and tab written as ``\\xNN``."""
    if not _CONTROL.search(text):
        return text
    return _CONTROL.sub(lambda match: f"\\x{ord(match.group()):02x}", text)


def terminal_safe(value: T) -> T:
    """A copy of ``value`` (a report, or any frozen dataclass, tuple, list or dict of them) in which
    every string has been passed through :func:`visible`. Enums and numbers are kept as they are."""
    return _clean(value)  # type: ignore[no-any-return]


def _clean(value: Any) -> Any:
    if isinstance(value, enum.Enum) or value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        return visible(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: _clean(getattr(value, f.name)) for f in dataclasses.fields(value) if f.init}
        return dataclasses.replace(value, **changes)
    if isinstance(value, tuple):
        return tuple(_clean(item) for item in value)
    if isinstance(value, list):
        return [_clean(item) for item in value]
    if isinstance(value, dict):
        return {_clean(key): _clean(item) for key, item in value.items()}
    if isinstance(value, (set, frozenset)):
        return type(value)(_clean(item) for item in value)
    return value
